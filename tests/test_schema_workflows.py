"""Issue 37's schemas (SQLite 5, PostgreSQL 6) on stores written by the code
before them (tests/data/schema4.db, schema5_postgres.sql, made by
tests/data/make_pre_workflows.py with main's code at fd4fdb7): every job
is still there, the waiting edges read ``settled = 0`` with the "cancel"
policy, the new columns, table and indexes are there, the blocked jobs run
once their upstream completes (their edges then kept, settled), a
completed job's result reads back, and a newer schema is still refused.

Runs on asyncio only: the stores work in threads (see test_durable.py).
"""

from __future__ import annotations

import secrets
import shutil
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from pg import SECRET

import jobsched as js
from jobsched._exceptions import StoreUnavailableError
from jobsched.store import Member

pytestmark = pytest.mark.anyio

S = js.JobStatus
DATA = Path(__file__).resolve().parent / "data"
#: The schema version each store's code writes.
CURRENT = {"sqlite": 5, "postgres": 6}
#: The jobs the fixtures hold, by id: name, status.
JOBS = {
    1: ("done add", S.COMPLETED),
    2: ("broken", S.FAILED),
    1025: ("pending 1", S.PENDING),
    1026: ("pending 2", S.PENDING),
    2049: ("up", S.PENDING),
    2050: ("down", S.PENDING),
    2051: ("fan-in", S.PENDING),
    2052: ("orphan", S.CANCELLED),
}
#: The edges the code before left (a completion deleted its own): "up"'s two.
EDGES = [(2049, 2050, 0, 0), (2049, 2051, 0, 0)]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def kind(url: str) -> str:
    return "sqlite" if url.startswith("sqlite:///") else "postgres"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def old_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A store as the code before issue 37 left it: a copy of the file, or
    the dump loaded into a schema of its own."""
    if request.param == "sqlite":
        path = tmp_path / "schema4.db"
        shutil.copy(DATA / "schema4.db", path)
        yield f"sqlite:///{path}"
        return
    import psycopg

    database_url = request.getfixturevalue("pg_session_database")
    name = f"s5_{secrets.token_hex(6)}"
    text = (DATA / "schema5_postgres.sql").read_text().replace("jobsched_fixture_s5", name)
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(text)  # type: ignore[arg-type]  # a dump of statements, no parameters
    yield f"{database_url}?options=-csearch_path%3D{name}"


def rows(url: str, sql: str) -> list[tuple[Any, ...]]:
    """The rows of one statement, read (or written) directly."""
    if kind(url) == "sqlite":
        conn = sqlite3.connect(url.removeprefix("sqlite:///"))
        try:
            got = conn.execute(sql).fetchall()
            conn.commit()
        finally:
            conn.close()
        return got
    import psycopg

    with psycopg.connect(url, autocommit=True) as pg:
        cursor = pg.execute(sql)  # type: ignore[arg-type]
        return cursor.fetchall() if cursor.description else []


def table(url: str, name: str) -> str:
    return name if kind(url) == "sqlite" else f"jobsched_{name}"


def indexes(url: str) -> set[str]:
    if kind(url) == "sqlite":
        return {n for (n,) in rows(url, "SELECT name FROM sqlite_master WHERE type = 'index'")}
    return {n for (n,) in rows(url, "SELECT indexname FROM pg_indexes "
                                    "WHERE schemaname = current_schema()")}  # fmt: skip


async def opened(url: str) -> None:
    store = js.open_store(url, secret=SECRET)
    await store.open()
    await store.close()


async def test_the_old_store_opens_at_the_workflows_schema(old_url: str) -> None:
    """The version; every job as it was; the waiting edges settled 0 with the
    "cancel" policy; the new columns read NULL; the workflows table (empty)
    and the indexes are there."""
    await opened(old_url)
    assert rows(old_url, "SELECT value FROM jobsched_meta WHERE key = 'schema'") == [
        (CURRENT[kind(old_url)],)
    ]
    deps = table(old_url, "deps")
    got = rows(old_url, f"SELECT upstream, downstream, on_failure, settled FROM {deps} "
                        "ORDER BY 1, 2")  # fmt: skip
    assert got == EDGES
    assert rows(
        old_url,
        f"SELECT count(*) FROM {table(old_url, 'jobs')} WHERE workflow IS NOT NULL "
        "OR progress IS NOT NULL OR progress_message IS NOT NULL",
    ) == [(0,)]
    assert rows(old_url, f"SELECT count(*) FROM {table(old_url, 'workflows')}") == [(0,)]
    wanted = (
        {"jobs_workflow", "deps_downstream", "deps_waiting"}
        if kind(old_url) == "sqlite"
        else {"jobsched_jobs_workflow", "jobsched_deps_downstream"}
    )
    assert wanted <= indexes(old_url)
    store = js.open_store(old_url, secret=SECRET)
    await store.open()
    try:
        for job_id, (name, status) in JOBS.items():
            job = await store.fetch(job_id)
            assert job is not None and (job.name, job.status) == (name, status), job_id
        down, fan_in = await store.fetch(2050), await store.fetch(2051)
        assert down is not None and down.depends_on == (2049,)
        assert fan_in is not None and fan_in.depends_on == (2049,)
        orphan = await store.fetch(2052)
        assert orphan is not None and orphan.last_error == "upstream job-2 failed"
    finally:
        await store.close()


async def test_the_old_stores_blocked_jobs_run_when_their_upstream_completes(
    old_url: str,
) -> None:
    """The code before's pickles run here: "up" completes, "down" and
    "fan-in" (its other upstream completed before the migration) run after
    it; the old result reads back; the cancelled one stays."""
    store = js.open_store(old_url, secret=SECRET)
    async with js.JobScheduler(store=store, num_workers=2) as s:
        assert await s.result("job-1") == 5
        with anyio.fail_after(60):
            assert await s.result("job-2050", timeout=60) == 11
            assert await s.result("job-2051", timeout=60) == 3
            assert await s.result("job-2049", timeout=60) == 7
        assert (await s.fetch("job-2052")).status is S.CANCELLED
        assert (await s.fetch("job-2")).status is S.FAILED
    # "up"'s edges are kept, met, where the code before deleted them.
    deps = table(old_url, "deps")
    got = rows(old_url, f"SELECT upstream, downstream, on_failure, settled FROM {deps} "
                        "ORDER BY 1, 2")  # fmt: skip
    assert got == [(2049, 2050, 0, 1), (2049, 2051, 0, 1)]


async def test_a_member_reports_its_level_into_an_old_members_table(old_url: str) -> None:
    """A members table the code before made (without ``level``), made even
    after the migration by a member of that code still running: a report of
    this code's adds the column and says its schema."""
    old = (
        "CREATE TABLE members (owner TEXT PRIMARY KEY, workers INTEGER NOT NULL, "
        "busy INTEGER NOT NULL, started_at REAL NOT NULL, seen_at REAL NOT NULL, names TEXT) "
        "WITHOUT ROWID"
        if kind(old_url) == "sqlite"
        else "CREATE TABLE jobsched_members (owner text PRIMARY KEY, workers integer NOT NULL, "
        "busy integer NOT NULL, started_at double precision NOT NULL, "
        "seen_at double precision NOT NULL, names text[])"
    )
    await opened(old_url)
    rows(old_url, old)
    store = js.open_store(old_url, secret=SECRET)
    await store.open()
    try:
        await store.report_member(Member("h:1:a", 4, 0, 1.0, time.time()))
        assert [m.owner for m in await store.members()] == ["h:1:a"]
    finally:
        await store.close()
    members = table(old_url, "members")
    assert rows(old_url, f"SELECT owner, level FROM {members}") == [
        ("h:1:a", CURRENT[kind(old_url)])
    ]


async def test_a_newer_schema_is_still_refused(old_url: str) -> None:
    """The schema after this code's, written by a later jobsched: refused,
    nothing changed."""
    await opened(old_url)
    current = CURRENT[kind(old_url)]
    rows(old_url, f"UPDATE jobsched_meta SET value = {current + 1} WHERE key = 'schema'")
    with pytest.raises(
        StoreUnavailableError,
        match=rf"schema version {current + 1}.*newer.*knows up to {current}",
    ):
        await js.open_store(old_url, secret=SECRET).open()
    assert rows(old_url, "SELECT value FROM jobsched_meta WHERE key = 'schema'") == [(current + 1,)]
