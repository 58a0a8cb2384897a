"""How the pre-workflow fixtures were made (run once, with the code before
issue 37's schemas: main at fd4fdb7, SQLite schema 4, PostgreSQL schema 5):

    uv run python tests/data/make_pre_workflows.py

Writes tests/data/schema4.db and tests/data/schema5_postgres.sql: on each
store the jobs and the stored schedule of the schema-3 fixtures
(make_schema3.fill: a completed job, a failed one, two pending ones,
"hourly"), then dependency edges as that code keeps them (a completion
deletes its edges): "up" (add(3, 4)) waiting with no upstream; "down"
(add(10, 1)) blocked on "up"; "fan-in" (add(1, 2)) on the completed job-1
and on "up" (the edge from job-1 is gone, unmet 1); "orphan" on the failed
job-2, cancelled at its add. Signed with tests/pg.py's SECRET. The dump is
of the schema SCHEMA, with INSERTs, so a test can run it statement by
statement.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import make_schema3  # noqa: E402
import migration_jobs  # noqa: E402
import pg  # noqa: E402

import jobsched as js  # noqa: E402

#: The schema the dump names; a test replaces it with its own.
SCHEMA = "jobsched_fixture_s5"
#: The version the code that runs this must write, by store.
VERSIONS = {"sqlite": 4, "postgres": 5}


async def fill(url: str) -> None:
    await make_schema3.fill(url)
    store = js.open_store(url, secret=pg.SECRET)
    async with js.JobScheduler(store=store, num_workers=0) as producer:
        up = await producer.enqueue(js.FunctionJob(migration_jobs.add, (3, 4), name="up"))
        await producer.enqueue(
            js.FunctionJob(migration_jobs.add, (10, 1), name="down"), depends_on=[up]
        )
        await producer.enqueue(
            js.FunctionJob(migration_jobs.add, (1, 2), name="fan-in"), depends_on=["job-1", up]
        )
        await producer.enqueue(
            js.FunctionJob(migration_jobs.add, (0, 0), name="orphan"), depends_on=["job-2"]
        )


def version(url: str) -> int:
    if url.startswith("sqlite:///"):
        import sqlite3

        conn = sqlite3.connect(url.removeprefix("sqlite:///"))
        (value,) = conn.execute("SELECT value FROM jobsched_meta WHERE key = 'schema'").fetchone()
        conn.close()
        return int(value)
    import psycopg

    with psycopg.connect(url) as conn:
        row = conn.execute(f"SELECT value FROM {SCHEMA}.jobsched_meta WHERE key = 'schema'")
        return int(row.fetchone()[0])  # type: ignore[index]


def main() -> None:
    db = HERE / "schema4.db"
    db.unlink(missing_ok=True)
    anyio.run(fill, f"sqlite:///{db}")
    assert version(f"sqlite:///{db}") == VERSIONS["sqlite"], "run this with the code before"
    import sqlite3

    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.execute("VACUUM")
    conn.close()
    with pg.database() as url:
        import psycopg

        with psycopg.connect(url, autocommit=True) as pgconn:
            pgconn.execute(f"CREATE SCHEMA {SCHEMA}")
        anyio.run(fill, f"{url}?options=-csearch_path%3D{SCHEMA}")
        assert version(url) == VERSIONS["postgres"], "run this with the code before"
        dump = subprocess.run(
            ["pg_dump", "--no-owner", "--no-privileges", "--inserts", f"--schema={SCHEMA}", url],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    # psql's meta-commands (\restrict) go: the test runs the statements itself.
    lines = [line for line in dump.splitlines() if not line.startswith("\\")]
    (HERE / "schema5_postgres.sql").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
