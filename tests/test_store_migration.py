"""Schema 3 to 4 (and on PostgreSQL to 5) on stores written by the code
before (tests/data/, made by tests/data/make_schema3.py with that code):
every job is still there and runnable, results and errors read as before,
the stored schedule is kept, the version is the current one and ``args``
NULL on every row; a newer schema is refused. And PostgreSQL's schema 4 to
5 on a store written by the code of schema 4 (make_schema4.py): the column,
trigger and index a claim's bounds rely on (issue 34), the old rows'
``entered_xid`` NULL, every job claimed and run.

Runs on asyncio only: the stores work in threads (see test_durable.py).
"""

from __future__ import annotations

import secrets
import shutil
import sqlite3
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from pg import SECRET

import jobsched as js
from jobsched._exceptions import StoreUnavailableError
from jobsched.store import Member, NewJob

pytestmark = pytest.mark.anyio

S = js.JobStatus
DATA = Path(__file__).resolve().parent / "data"
#: The schema make_schema3.py dumped the PostgreSQL store from.
DUMPED_SCHEMA = "jobsched_fixture_s3"
#: The schema version each store's code writes.
CURRENT = {"sqlite": 5, "postgres": 6}
#: The jobs the fixtures hold, by id: name, status.
JOBS = {
    1: ("done add", S.COMPLETED),
    2: ("broken", S.FAILED),
    1025: ("pending 1", S.PENDING),
    1026: ("pending 2", S.PENDING),
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """A copy of the schema-3 file (the test may change it)."""
    path = tmp_path / "schema3.db"
    shutil.copy(DATA / "schema3.db", path)
    return f"sqlite:///{path}"


def kind(url: str) -> str:
    return "sqlite" if url.startswith("sqlite:///") else "postgres"


def load_dump(database_url: str, version: int = 3) -> str:
    """The schema-``version`` dump loaded into a schema of its own; a URL of it."""
    import psycopg

    name = f"s{version}_{secrets.token_hex(6)}"
    dumped = f"jobsched_fixture_s{version}"
    text = (DATA / f"schema{version}_postgres.sql").read_text().replace(dumped, name)
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(text)  # type: ignore[arg-type]  # a dump of statements, no parameters
    return f"{database_url}?options=-csearch_path%3D{name}"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def old_url(request: pytest.FixtureRequest, sqlite_url: str) -> Iterator[str]:
    """A store as the code of schema 3 left it: the file, or the dump loaded."""
    if request.param == "sqlite":
        yield sqlite_url
        return
    yield load_dump(request.getfixturevalue("pg_session_database"))


def version_and_args(url: str) -> tuple[int, list[object]]:
    """The schema version and every job row's ``args``, read directly."""
    if url.startswith("sqlite:///"):
        conn = sqlite3.connect(url.removeprefix("sqlite:///"))
        try:
            (version,) = conn.execute(
                "SELECT value FROM jobsched_meta WHERE key = 'schema'"
            ).fetchone()
            args = [a for (a,) in conn.execute("SELECT args FROM jobs ORDER BY id")]
        finally:
            conn.close()
        return version, args
    import psycopg

    with psycopg.connect(url) as pg:
        row = pg.execute("SELECT value FROM jobsched_meta WHERE key = 'schema'").fetchone()
        assert row is not None
        args = [a for (a,) in pg.execute("SELECT args FROM jobsched_jobs ORDER BY id")]
    return int(row[0]), args


@pytest.fixture
async def migrated(old_url: str) -> AsyncIterator[js.JobStore]:
    store = js.open_store(old_url, secret=SECRET)
    await store.open()
    yield store
    await store.close()


async def test_the_old_store_opens_at_the_current_schema_with_its_jobs(
    migrated: js.JobStore, old_url: str
) -> None:
    """Every job, its status, result and error as they were; args NULL."""
    version, args = version_and_args(old_url)
    assert version == CURRENT[kind(old_url)]
    assert len(args) == len(JOBS) and all(a is None for a in args)
    for job_id, (name, status) in JOBS.items():
        job = await migrated.fetch(job_id)
        assert job is not None, job_id
        assert (job.name, job.status, job.args) == (name, status, None)
    failed = await migrated.fetch(2)
    assert failed is not None and failed.last_error == "ValueError: broken"
    assert [s.id for s in await migrated.schedules()] == ["hourly"]
    assert await migrated.waiting_for_names(()) == {}


async def test_the_old_stores_jobs_run_and_its_results_read(old_url: str) -> None:
    """A scheduler of this code on the migrated store: the pickled result of
    the code before reads back, the pending jobs run (their payloads were
    signed by it), the failure stays."""
    store = js.open_store(old_url, secret=SECRET)
    async with js.JobScheduler(store=store, num_workers=2) as s:
        assert await s.result("job-1") == 5
        with anyio.fail_after(60):
            assert await s.result("job-1025", timeout=60) == 2
            assert await s.result("job-1026", timeout=60) == 42
        assert (await s.fetch("job-2")).status is S.FAILED
        # A registered job of this code's joins the old ones.
        await store.add(
            [
                NewJob(
                    store.reserve_ids(1), name="shop.jobs.send_email", executor="async",
                    key=(0.0,), run_at=0.0, submitted_at=0.0, payload=b"J", args='{"to": "a@b"}',
                )
            ],
            0.0,
        )  # fmt: skip
        assert await store.waiting_for_names(()) == {"shop.jobs.send_email": 1}


#: The members table as the code of schema 3 made it (on a member's first report).
OLD_MEMBERS = {
    "sqlite": "CREATE TABLE members (owner TEXT PRIMARY KEY, workers INTEGER NOT NULL, "
    "busy INTEGER NOT NULL, started_at REAL NOT NULL, seen_at REAL NOT NULL) WITHOUT ROWID",
    "postgres": "CREATE TABLE jobsched_members (owner text PRIMARY KEY, "
    "workers integer NOT NULL, busy integer NOT NULL, started_at double precision NOT NULL, "
    "seen_at double precision NOT NULL)",
}


def execute(url: str, statement: str) -> None:
    if url.startswith("sqlite:///"):
        conn = sqlite3.connect(url.removeprefix("sqlite:///"))
        conn.execute(statement)
        conn.commit()
        conn.close()
        return
    import psycopg

    with psycopg.connect(url, autocommit=True) as pg:
        pg.execute(statement)  # type: ignore[arg-type]


async def test_an_old_members_table_gets_the_members_names(old_url: str) -> None:
    """The members list the code before made takes the names a member runs."""
    kind = "sqlite" if old_url.startswith("sqlite:///") else "postgres"
    execute(old_url, OLD_MEMBERS[kind])
    store = js.open_store(old_url, secret=SECRET)
    await store.open()
    try:
        names = ("shop.jobs.send_email", "shop.jobs.sync")
        await store.report_member(Member("h:1:a", 4, 0, 1.0, time.time(), names=names))
        await store.report_member(Member("h:2:b", 4, 0, 1.0, time.time()))
        got = {m.owner: m.names for m in await store.members()}
        assert got == {"h:1:a": names, "h:2:b": ()}
    finally:
        await store.close()


async def test_a_newer_schema_is_still_refused(old_url: str) -> None:
    """The schema after this code's, written by a later jobsched: refused,
    nothing changed."""
    store = js.open_store(old_url, secret=SECRET)
    await store.open()
    await store.close()
    current = CURRENT[kind(old_url)]
    execute(old_url, f"UPDATE jobsched_meta SET value = {current + 1} WHERE key = 'schema'")
    with pytest.raises(
        StoreUnavailableError,
        match=rf"schema version {current + 1}.*newer.*knows up to {current}",
    ):
        await js.open_store(old_url, secret=SECRET).open()
    assert version_and_args(old_url)[0] == current + 1


# ── PostgreSQL: schema 4 to 5 ───────────────────────────────────────────────


@pytest.fixture
def schema4_url(pg_session_database: str) -> str:
    """A store as the code of schema 4 left it (tests/data/schema4_postgres.sql)."""
    return load_dump(pg_session_database, version=4)


def _rows(url: str, sql: str) -> list[tuple[Any, ...]]:
    import psycopg

    with psycopg.connect(url) as pg:
        return pg.execute(sql).fetchall()  # type: ignore[arg-type]


#: The jobs make_schema4.py left, by id: name, status.
JOBS_4 = {
    **JOBS,
    2049: ("later", S.PENDING),
    3073: ("shop.jobs.send_email", S.PENDING),
}


@pytest.mark.postgres
async def test_schema_4_opens_at_5_with_what_the_claims_bounds_need(schema4_url: str) -> None:
    """Version 5; every job as it was; the entered_xid column (NULL on the rows
    there: ready before any claim's snapshot), its default, its trigger and
    its index, valid."""
    store = js.open_store(schema4_url, secret=SECRET)
    await store.open()
    try:
        for job_id, (name, status) in JOBS_4.items():
            job = await store.fetch(job_id)
            assert job is not None and (job.name, job.status) == (name, status), job_id
        registered = await store.fetch(3073)
        assert registered is not None and registered.args == '{"to": "a@b"}'
    finally:
        await store.close()
    assert version_and_args(schema4_url)[0] == CURRENT["postgres"]
    stamped = _rows(schema4_url, "SELECT count(*) FROM jobsched_jobs WHERE entered_xid IS NOT NULL")
    assert stamped == [(0,)]
    assert _rows(
        schema4_url,
        "SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d JOIN pg_attribute a "
        "ON a.attrelid = d.adrelid AND a.attnum = d.adnum "
        "WHERE d.adrelid = 'jobsched_jobs'::regclass AND a.attname = 'entered_xid'",
    ) == [("pg_current_xact_id()",)]
    assert _rows(
        schema4_url,
        "SELECT tgname FROM pg_trigger WHERE tgrelid = 'jobsched_jobs'::regclass "
        "AND tgname = 'jobsched_entered_xid'",
    ) == [("jobsched_entered_xid",)]
    assert _rows(
        schema4_url,
        "SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass('jobsched_jobs_entered')",
    ) == [(True,)]


@pytest.mark.postgres
async def test_schema_4_jobs_are_claimed_from_the_front_then_from_the_bounds(
    schema4_url: str,
) -> None:
    """The migrated store's member claims the rows written before (entered_xid
    NULL) at its first claim, then a job made ready since (the delayed one,
    promoted: stamped by the trigger); the pickled jobs run to their results."""
    # The delayed job's time, as the dump has it (an hour after it was made).
    ((due,),) = _rows(schema4_url, "SELECT run_at FROM jobsched_jobs WHERE id = 2049")
    store = js.open_store(schema4_url, secret=SECRET)
    await store.open()
    try:
        names = ["shop.jobs.send_email"]
        first = await store.claim("m", 10, {"thread": 10, "async": 10}, due - 1, 30,
                                  names=names)  # fmt: skip
        assert sorted(c.id for c in first) == [1025, 1026, 3073]
        later = await store.claim("m", 10, {"thread": 10, "async": 10}, due + 1, 30,
                                  names=names)  # fmt: skip
        assert [c.id for c in later] == [2049]
        assert _rows(
            schema4_url, "SELECT entered_xid IS NOT NULL FROM jobsched_jobs WHERE id = 2049"
        ) == [(True,)]
        await store.release("m", [1025, 1026, 2049])
    finally:
        await store.close()
    async with js.JobScheduler(store=js.open_store(schema4_url, secret=SECRET),
                               num_workers=2) as s:  # fmt: skip
        with anyio.fail_after(60):
            assert await s.result("job-1025", timeout=60) == 2
            assert await s.result("job-1026", timeout=60) == 42
