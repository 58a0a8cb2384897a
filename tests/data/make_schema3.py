"""How the schema-3 fixtures were made (run once, with the code of schema 3):

    uv run python tests/data/make_schema3.py

Writes tests/data/schema3.db and tests/data/schema3_postgres.sql: on each
store, a completed job with its result (add(2, 3) -> 5), a failed one
(fail("broken")), two pending ones (add(1, 1), add(40, 2)) and a stored
schedule ("hourly", every hour). Signed with tests/pg.py's SECRET. The
PostgreSQL dump is of the schema SCHEMA, with INSERTs, so a test can run it
statement by statement.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import migration_jobs  # noqa: E402
import pg  # noqa: E402

import jobsched as js  # noqa: E402

RETRY = js.RetryPolicy(max_retries=0)
#: The schema the dump names; a test replaces it with its own.
SCHEMA = "jobsched_fixture_s3"


async def fill(url: str) -> None:
    async with js.JobScheduler(store=js.open_store(url, secret=pg.SECRET), num_workers=1) as s:
        done = s.submit(js.FunctionJob(migration_jobs.add, (2, 3), name="done add"))
        failed = s.submit(
            js.FunctionJob(migration_jobs.fail, ("broken",), name="broken", retry=RETRY)
        )
        assert await s.result(done) == 5
        with anyio.fail_after(30):
            await s.wait(failed)
        s.schedule_recurring(migration_jobs.hourly_job, 3600, start_in=3600, id="hourly")
        await s.flush()
    store = js.open_store(url, secret=pg.SECRET)
    async with js.JobScheduler(store=store, num_workers=0) as producer:
        await producer.enqueue(js.FunctionJob(migration_jobs.add, (1, 1), name="pending 1"))
        await producer.enqueue(js.FunctionJob(migration_jobs.add, (40, 2), name="pending 2"))


def main() -> None:
    db = HERE / "schema3.db"
    db.unlink(missing_ok=True)
    anyio.run(fill, f"sqlite:///{db}")
    import sqlite3

    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.execute("VACUUM")
    conn.close()
    with pg.database() as url:
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {SCHEMA}")
        anyio.run(fill, f"{url}?options=-csearch_path%3D{SCHEMA}")
        dump = subprocess.run(
            ["pg_dump", "--no-owner", "--no-privileges", "--inserts", f"--schema={SCHEMA}", url],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    # psql's meta-commands (\restrict) go: the test runs the statements itself.
    lines = [line for line in dump.splitlines() if not line.startswith("\\")]
    (HERE / "schema3_postgres.sql").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
