"""How the schema-4 PostgreSQL fixture was made (run once, with the code of
schema 4: main at d644a56, before issue 34's schema 5, from a checkout of it):

    cd <checkout of schema 4> && uv run python <this checkout>/tests/data/make_schema4.py

Writes tests/data/schema4_postgres.sql: the jobs and the stored schedule of
the schema-3 fixtures (make_schema3.fill: a completed job, a failed one, two
pending ones, "hourly"), plus a job delayed by an hour (add(5, 5)) and a
registered job waiting (``shop.jobs.send_email``, ``{"to": "a@b"}``, schema
4's ``args``). Signed with tests/pg.py's SECRET. A dump of the schema
:data:`SCHEMA`, with INSERTs, so a test can run it statement by statement.
The SQLite store has no schema 5: its schema-3 fixture stays the one.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import anyio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import make_schema3  # noqa: E402
import migration_jobs  # noqa: E402
import pg  # noqa: E402

import jobsched as js  # noqa: E402
from jobsched.store import NewJob  # noqa: E402

#: The schema the dump names; a test replaces it with its own.
SCHEMA = "jobsched_fixture_s4"


async def fill(url: str) -> None:
    await make_schema3.fill(url)
    store = js.open_store(url, secret=pg.SECRET)
    async with js.JobScheduler(store=store, num_workers=0) as producer:
        producer.submit(js.FunctionJob(migration_jobs.add, (5, 5), name="later"), delay=3600)
        await producer.flush()
    await store.open()
    try:
        now = time.time()
        await store.add(
            [
                NewJob(
                    store.reserve_ids(1), name="shop.jobs.send_email", executor="async",
                    key=(0.0,), run_at=now, submitted_at=now, payload=b"J", args='{"to": "a@b"}',
                )
            ],
            now,
        )  # fmt: skip
    finally:
        await store.close()


def main() -> None:
    with pg.database() as url:
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {SCHEMA}")
            anyio.run(fill, f"{url}?options=-csearch_path%3D{SCHEMA}")
            (version,) = conn.execute(f"SELECT value FROM {SCHEMA}.jobsched_meta "
                                      "WHERE key = 'schema'").fetchone()  # fmt: skip
            assert version == 4, f"run this with the code of schema 4, not {version}"
        dump = subprocess.run(
            ["pg_dump", "--no-owner", "--no-privileges", "--inserts", f"--schema={SCHEMA}", url],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    # psql's meta-commands (\restrict) go: the test runs the statements itself.
    lines = [line for line in dump.splitlines() if not line.startswith("\\")]
    (HERE / "schema4_postgres.sql").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
