"""The PostgreSQL store on its own: the JobStore operations against a real server.

The same behaviour as tests/test_store_sqlite.py (claims in key order, leases
and fencing, the dependency cascade, schedules), and what a fleet adds:
per-executor rooms, token buckets and fair share in the claim, NOTIFY
wake-ups, the claim's plan at 100k rows, the operator reads, and every way
opening can go wrong. Each test gets a schema of its own (tests/pg.py).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import psycopg
import pytest
from pg import SECRET, age, require_server, schema_url, url_of
from pg_store import plan_nodes
from psycopg_pool import ConnectionPool

import jobsched as js
from jobsched._exceptions import StoreUnavailableError
from jobsched.store import NewJob, Outcome
from jobsched_postgres import PostgresStore
from jobsched_postgres import _connect as pg_connect
from jobsched_postgres import _pool as pg_pool
from jobsched_postgres import _prune as pg_prune
from jobsched_postgres import _schema as pg_schema
from jobsched_postgres import _sql as pg_sql
from jobsched_postgres import _store as pg_store
from jobsched_postgres._reads import attempts_query

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]

NOW = 1_700_000_000.0
ALL = {"async": 99}


@pytest.fixture
def anyio_backend() -> str:
    # The store's logic does not depend on the backend; its threads do not
    # run on trio's mock clock. The scheduler's tests cover both backends.
    return "asyncio"


@pytest.fixture
def url(pg_session_database: str) -> str:
    """A new, empty schema of the session's database: as separate as a
    database of its own, and made in milliseconds instead of a second."""
    return schema_url(pg_session_database)


@pytest.fixture
async def store(url: str) -> AsyncIterator[PostgresStore]:
    s = PostgresStore(url, secret=SECRET)
    await s.open()
    yield s
    await s.close()


def new(job_id: int, key: tuple[float, ...] = (0.0,), **kw: object) -> NewJob:
    fields: dict[str, object] = {
        "name": f"j{job_id}",
        "executor": "async",
        "run_at": NOW,
        "submitted_at": NOW,
        "payload": b"P" + bytes([job_id % 256]),
    }
    fields.update(kw)
    return NewJob(job_id, key=key, **fields)  # type: ignore[arg-type]


def done(
    job_id: int, attempt: int = 1, status: js.JobStatus = js.JobStatus.COMPLETED, **kw: object
) -> Outcome:
    return Outcome(job_id, attempt, status, NOW + 1, **kw)  # type: ignore[arg-type]


def sql(url: str, statement: str) -> list[tuple[object, ...]]:
    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute(statement)
        return cur.fetchall() if cur.description else []


# ── opening, and bad input ───────────────────────────────────────────────


@pytest.mark.parametrize(
    "bad",
    [
        "mysql://u@h/db",
        "postgresql://u@h:notaport/db",
        "postgresql://u:hunter2@h/db?no_such_option=1",
    ],
)
def test_malformed_urls_raise_value_error(bad: str) -> None:
    with pytest.raises(ValueError, match="malformed PostgreSQL store URL") as info:
        PostgresStore(bad, secret=SECRET)
    assert "hunter2" not in str(info.value)


def test_the_store_refuses_to_start_without_a_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JOBSCHED_SECRET", raising=False)
    with pytest.raises(ValueError, match="needs a secret.*JOBSCHED_SECRET"):
        PostgresStore("postgresql://u:pw@127.0.0.1/db")
    with pytest.raises(ValueError, match="needs a secret"):
        js.open_store("postgresql://u:pw@127.0.0.1/db")
    monkeypatch.setenv("JOBSCHED_SECRET", "from-the-environment")
    assert PostgresStore("postgresql://u:pw@127.0.0.1/db").secret == b"from-the-environment"


def test_the_entry_points_serve_both_schemes() -> None:
    for scheme in ["postgresql", "postgres", "postgresql+psycopg"]:
        store = js.open_store(f"{scheme}://u:pw@127.0.0.1/db", secret=SECRET, lease=5)
        assert isinstance(store, PostgresStore) and store.lease == 5
        assert store.url == f"{scheme}://u:***@127.0.0.1/db"


async def test_an_unreachable_server_is_named_with_its_password_masked() -> None:
    # Port 1 on this machine: nothing listens there, the refusal is immediate.
    store = PostgresStore("postgresql://app:hunter2@127.0.0.1:1/jobs", secret=SECRET)
    with pytest.raises(StoreUnavailableError, match="cannot connect") as info:
        await store.open()
    assert "hunter2" not in str(info.value)
    assert "postgresql://app:***@127.0.0.1:1/jobs" in str(info.value)
    with pytest.raises(StoreUnavailableError, match="cannot connect"):
        store.reserve_ids(1)  # submit() before start opens it too


async def test_an_unknown_user_is_refused_with_the_password_masked(url: str) -> None:
    """The server's refusal reaches the user, naming the URL without its password.

    (A wrong password cannot be tested here: the test server trusts
    127.0.0.1 and checks no password; the refusal takes the same path.)
    """
    bad = url.replace("postgres@", "no_such_user_here:hunter2@")
    store = PostgresStore(bad, secret=SECRET)
    with pytest.raises(StoreUnavailableError, match="no_such_user_here") as info:
        await store.open()
    assert "hunter2" not in str(info.value) and "no_such_user_here:***@" in str(info.value)


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        ("postgresql://", "names no host"),
        ("postgresql:///jobs", "names no host"),
        ("postgresql://u:hunter2@/jobs", "names no host"),
        ("postgresql://u:hunter2@127.0.0.1", "names no database"),
        ("postgresql://127.0.0.1:5432/?password=hunter2", "names no database"),
    ],
)
def test_a_url_without_host_or_database_is_refused(bad: str, says: str) -> None:
    """libpq's defaults would pick a host and a database the user never named."""
    with pytest.raises(ValueError, match=says) as info:
        PostgresStore(bad, secret=SECRET)
    assert "hunter2" not in str(info.value)


def test_a_socket_directory_is_a_host() -> None:
    assert PostgresStore("postgresql:///jobs?host=/var/run/postgresql", secret=SECRET)


@pytest.mark.parametrize(
    "bad",
    [
        "postgresql://app@127.0.0.1:1/jobs?password=hunter2",
        "postgresql://app@127.0.0.1:1/jobs?sslmode=disable&password=hunter2",
        "postgresql://app:hunter2@127.0.0.1:1/jobs?sslpassword=hunter2",
    ],
)
async def test_a_password_given_as_an_option_is_masked_too(bad: str) -> None:
    store = PostgresStore(bad, secret=SECRET)
    assert "hunter2" not in store.url
    with pytest.raises(StoreUnavailableError, match="cannot connect") as info:
        await store.open()
    assert "hunter2" not in str(info.value) and "password=***" in str(info.value)


async def test_exists_asks_without_creating_the_schema(url: str) -> None:
    store = PostgresStore(url, secret=SECRET)
    assert await store.exists() is False
    assert sql(url, "SELECT to_regclass('jobsched_meta') IS NULL") == [(True,)]
    await store.open()
    await store.close()
    assert await store.exists() is True


async def test_a_missing_database_is_named(url: str) -> None:
    del url  # the server is there, the database is not
    store = PostgresStore(url_of("jobsched_no_such_database"), secret=SECRET)
    with pytest.raises(StoreUnavailableError, match="does not exist"):
        await store.open()


async def test_a_new_database_gets_the_schema_once(url: str) -> None:
    stores = [PostgresStore(url, secret=SECRET) for _ in range(4)]
    async with anyio.create_task_group() as tg:  # members starting together
        for s in stores:
            tg.start_soon(s.open)
    assert sql(url, "SELECT value FROM jobsched_meta WHERE key = 'schema'") == [
        (pg_schema.VERSION,)
    ]
    for s in stores:
        await s.close()
    again = PostgresStore(url, secret=SECRET)
    await again.open()
    assert await again.unfinished() == 0
    await again.close()


async def test_a_newer_schema_is_refused(url: str) -> None:
    store = PostgresStore(url, secret=SECRET)
    await store.open()
    await store.close()
    sql(url, "UPDATE jobsched_meta SET value = 99 WHERE key = 'schema'")
    with pytest.raises(StoreUnavailableError, match="schema version 99.*newer.*upgrade"):
        await PostgresStore(url, secret=SECRET).open()


async def test_a_server_older_than_13_is_refused_by_name(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL 12 has no xid8 (the claims' snapshots): the store says so
    at open, and creates nothing, rather than fail on the schema's DDL."""
    from jobsched_postgres import _connect

    monkeypatch.setattr(_connect, "server_version", lambda conn: 120017)
    with pytest.raises(StoreUnavailableError, match=r"120017.*needs PostgreSQL 13 or later"):
        await PostgresStore(url, secret=SECRET).open()
    assert sql(url, "SELECT to_regclass('jobsched_meta') IS NULL") == [(True,)]
    monkeypatch.setattr(_connect, "server_version", lambda conn: 130000)
    store = PostgresStore(url, secret=SECRET)
    await store.open()
    await store.close()


async def test_an_older_schema_is_migrated_once(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from jobsched_postgres import _schema

    store = PostgresStore(url, secret=SECRET)
    await store.open()
    await store.close()
    later = _schema.VERSION + 1
    monkeypatch.setattr(_schema, "VERSION", later)
    monkeypatch.setattr(
        _schema, "MIGRATIONS", {later: ["ALTER TABLE jobsched_jobs ADD COLUMN note text"]}
    )
    members = [PostgresStore(url, secret=SECRET) for _ in range(3)]
    async with anyio.create_task_group() as tg:  # starting together: one migrates
        for member in members:
            tg.start_soon(member.open)
    for member in members:
        await member.close()
    assert sql(url, "SELECT value FROM jobsched_meta WHERE key = 'schema'") == [(later,)]
    assert sql(
        url,
        "SELECT count(*) FROM information_schema.columns WHERE table_schema = current_schema() "
        "AND table_name = 'jobsched_jobs' AND column_name = 'note'",
    ) == [(1,)]


def indexes(url: str) -> set[object]:
    return {
        name
        for (name,) in sql(
            url, "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()"
        )
    }


async def test_schema_1_gets_schema_2s_indexes_and_counts_unfinished_jobs_by_queue(
    url: str,
) -> None:
    store = PostgresStore(url, secret=SECRET)
    await store.open()
    await store.add([new(10)], NOW)
    await store.claim("old-member", 1, ALL, NOW, 30)
    await store.close()
    # Back to schema 1: one index of every unfinished row, none of the blocked,
    # no ran_by, and a running attempt's row written at its claim.
    sql(url, "ALTER TABLE jobsched_jobs DROP COLUMN ran_by")
    sql(
        url,
        "INSERT INTO jobsched_attempts (job_id, attempt, owner, started_at, status) "
        f"VALUES (10, 1, 'old-member', {NOW}, 'running')",
    )
    sql(url, "DROP INDEX jobsched_jobs_blocked")
    sql(url, "DROP INDEX jobsched_jobs_finished")
    sql(
        url,
        "CREATE INDEX jobsched_jobs_finished ON jobsched_jobs (finished_at) "
        "WHERE finished_at IS NOT NULL",
    )
    sql(
        url, "CREATE INDEX jobsched_jobs_unfinished ON jobsched_jobs (id) WHERE finished_at IS NULL"
    )
    sql(url, "UPDATE jobsched_meta SET value = 1 WHERE key = 'schema'")
    store = PostgresStore(url, secret=SECRET)
    await store.open()
    assert "jobsched_jobs_blocked" in indexes(url)
    assert "jobsched_jobs_unfinished" not in indexes(url)
    finished = sql(
        url, "SELECT indexdef FROM pg_indexes WHERE indexname = 'jobsched_jobs_finished'"
    )
    assert "(finished_at, id)" in str(finished)
    assert sql(url, "SELECT value FROM jobsched_meta WHERE key = 'schema'") == [
        (pg_schema.VERSION,)
    ]

    # The running attempt is its job's row now, once, with its member.
    def history() -> list[tuple[int, str | None, js.JobStatus]]:
        return [(a.attempt, a.owner, a.status) for a in attempts]

    attempts = await store.attempts(job_id=10)
    assert history() == [(1, "old-member", js.JobStatus.RUNNING)]
    assert (await store.record("old-member", [done(10)])).refused == []
    attempts = await store.attempts(job_id=10)
    assert history() == [(1, "old-member", js.JobStatus.COMPLETED)]
    # Ready, delayed, blocked and running all count; finished ones do not.
    await store.add(
        [new(1), new(2, run_at=NOW + 100), new(3, depends_on=(1,)), new(4), new(5)], NOW
    )
    claims = await store.claim("m", 2, ALL, NOW, 30)
    assert [c.id for c in claims] == [1, 4]
    assert await store.unfinished() == 5
    await store.record("m", [done(4, claims[1].attempt)])
    assert await store.unfinished() == 4
    await store.close()


async def test_a_connection_the_server_dropped_is_replaced(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Dropped while it sat idle: longer than CHECK_IDLE, so it is checked.
    monkeypatch.setattr(pg_pool, "CHECK_IDLE", 0.0)
    store = PostgresStore(url + "&application_name=jobsched_victim", secret=SECRET)
    await store.open()
    await store.add([new(1)], NOW)
    killed = sql(
        url,
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        "WHERE application_name = 'jobsched_victim'",
    )
    assert killed and all(ok for (ok,) in killed)
    assert await store.unfinished() == 1
    await store.close()


async def test_a_connection_used_a_moment_ago_is_not_checked_again(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    checks: list[object] = []
    check = ConnectionPool.check_connection
    monkeypatch.setattr(
        ConnectionPool, "check_connection", staticmethod(lambda c: checks.append(c) or check(c))
    )
    store = PostgresStore(url, secret=SECRET)
    await store.open()
    for _ in range(20):
        await store.unfinished()  # a round trip each, not two
    # Each pooled connection is asked once at most: at its first use.
    assert len(checks) <= pg_store.POOL_SIZE
    monkeypatch.setattr(pg_pool, "CHECK_IDLE", 0.0)
    before = len(checks)
    await store.unfinished()
    assert len(checks) == before + 1
    await store.close()


async def test_a_closed_store_says_to_open_it(url: str) -> None:
    store = PostgresStore(url, secret=SECRET)
    with pytest.raises(StoreUnavailableError, match="not open"):
        await store.unfinished()


# ── ids ──────────────────────────────────────────────────────────────────


async def test_id_blocks_are_disjoint_across_openers(url: str) -> None:
    a, b = PostgresStore(url, secret=SECRET), PostgresStore(url, secret=SECRET)
    await a.open()
    await b.open()
    assert [a.reserve_ids(100), b.reserve_ids(100), a.reserve_ids(5)] == [1, 101, 201]
    await a.close()
    await b.close()
    c = PostgresStore(url, secret=SECRET)  # and across restarts, opened by reserve_ids
    assert c.reserve_ids(1) == 206
    await c.close()


# ── claims ───────────────────────────────────────────────────────────────


async def test_claims_follow_the_key_and_count_attempts(store: PostgresStore) -> None:
    await store.add([new(1, (2.0, 1)), new(2, (1.0, 2)), new(3, (1.0, 3)), new(4, (0.5, 4))], NOW)
    first = await store.claim("m1", 2, ALL, NOW, lease=30)
    assert [(c.id, c.attempt) for c in first] == [(4, 1), (2, 1)]
    assert [c.id for c in await store.claim("m1", 10, ALL, NOW, lease=30)] == [3, 1]
    assert await store.claim("m1", 10, ALL, NOW, lease=30) == []
    job = await store.fetch(4)
    assert job is not None and job.status is js.JobStatus.RUNNING and job.owner == "m1"


async def test_a_member_claims_only_its_executors_within_their_room(store: PostgresStore) -> None:
    await store.add(
        [new(i, (float(i),), executor="process" if i % 2 else "async") for i in range(1, 9)], NOW
    )
    assert [c.id for c in await store.claim("m", 5, {"async": 99, "thread": 99}, NOW, 30)] == [
        2, 4, 6, 8,
    ]  # fmt: skip
    # Room for one process job, though the limit allows three.
    assert [c.id for c in await store.claim("m", 3, {"process": 1}, NOW, 30)] == [1]
    assert [c.id for c in await store.claim("m", 3, {"process": 0, "async": 9}, NOW, 30)] == []


async def test_delayed_jobs_wait_for_their_time(store: PostgresStore) -> None:
    await store.add([new(1, run_at=NOW + 60), new(2)], NOW)
    assert await store.next_due() == NOW + 60
    assert [c.id for c in await store.claim("m", 5, ALL, NOW, 1000)] == [2]
    assert await store.claim("m", 5, ALL, NOW + 59, 1000) == []
    assert [c.id for c in await store.claim("m", 5, ALL, NOW + 60, 1000)] == [1]
    assert await store.next_due() is None


async def test_members_racing_never_claim_one_job_twice(url: str) -> None:
    setup = PostgresStore(url, secret=SECRET)
    await setup.open()
    await setup.add([new(i, (float(i),)) for i in range(1, 601)], NOW)
    await setup.close()
    claimed: dict[str, list[int]] = {}

    async def member(name: str) -> None:
        s = PostgresStore(url, secret=SECRET)
        await s.open()
        mine = claimed.setdefault(name, [])
        while batch := await s.claim(name, 7, ALL, NOW, 30):
            mine.extend(c.id for c in batch)
        await s.close()

    async with anyio.create_task_group() as tg:
        for name in ["a", "b", "c", "d"]:
            tg.start_soon(member, name)
    every = [i for ids in claimed.values() for i in ids]
    assert sorted(every) == list(range(1, 601))  # each exactly once
    assert sum(1 for ids in claimed.values() if ids) > 1  # and shared


def _prune_plans(conn: psycopg.Connection[Any], aged: dict[str, Any]) -> list[str]:
    """The plans of a prune's two picks, each with the plan of the DELETE of
    the rows it picked (locked), which asks the guard again; the pick by age
    from the oldest end with its count of the rows it passed (PASSED)."""
    plans = []
    aged = {**aged, "after": float("-inf")}
    for q, p in ((pg_prune.AGED, aged), (pg_prune.OLDEST, {"batch": 1000})):
        rows = conn.execute(q, p).fetchall()
        picked = [r[0] for r in rows]
        lines = [r[0] for r in conn.execute("EXPLAIN (ANALYZE, COSTS OFF) " + q, p)]
        if q == pg_prune.AGED:
            explain = "EXPLAIN (ANALYZE, COSTS OFF) " + pg_prune.PASSED
            lines += [r[0] for r in conn.execute(explain, {**p, "reach": rows[-1][1]})]
        lines += [
            r[0]
            for r in conn.execute(
                "EXPLAIN (ANALYZE, COSTS OFF) " + pg_prune.DELETE, {"ids": picked}
            )
        ]
        plans.append("\n".join(lines))
    return plans


async def test_prune_reads_the_finished_index_and_primary_keys_at_100k_rows(
    store: PostgresStore, url: str
) -> None:
    """The plan at scale: the oldest finished rows from their index (by
    status and finish time for an age, by finish time for the count), each
    DELETE by primary key; never a scan or a sort of a table, and no OFFSET
    walk over the rows kept."""
    sql(
        url,
        "INSERT INTO jobsched_jobs (id, name, executor, status, k0, k1, k2, run_at, "
        "submitted_at, finished_at, payload) SELECT i, 'j', 'async', "
        "CASE WHEN i % 50 = 0 THEN 'failed' ELSE 'completed' END, 0, 0, 0, "
        "0, 0, i, '\\x00' FROM generate_series(1, 100000) i",
    )
    sql(
        url,
        "INSERT INTO jobsched_attempts (job_id, attempt, owner, started_at, finished_at, "
        "status) SELECT i, 1, 'm', i, i, 'completed' FROM generate_series(1, 100000) i",
    )
    sql(url, "ANALYZE")
    # Failures (2%) by age: the index by status skips the completions among them.
    aged = {"status": "failed", "cutoff": 50_000.0, "batch": 1000}
    with psycopg.connect(url) as conn:  # a transaction, rolled back: the plan only
        plans = _prune_plans(conn, aged)
        conn.rollback()
    for plan, index in zip(plans, ("jobsched_jobs_ended", "jobsched_jobs_finished"), strict=True):
        assert index in plan, plan
        # jobsched_deps is empty here (no job has an upstream), so the guard's
        # probe of it is a scan of no page; with edges it is by index (the
        # next test).
        scanned = set(re.findall(r"Seq Scan on (\w+)", plan))
        assert scanned <= {"jobsched_deps"} and "Sort" not in plan, plan
    assert sql(url, "SELECT count(*) FROM jobsched_deps") == [(0,)]
    # The failures before 50,000 by age, then the oldest beyond 10,000.
    assert await store.prune(None, {js.JobStatus.FAILED: 50_000.0}) == 999
    assert await store.prune(10_000) == 89_001
    assert sql(url, "SELECT min(id), count(*) FROM jobsched_jobs") == [(90_001, 10_000)]
    assert sql(url, "SELECT min(job_id), count(*) FROM jobsched_attempts") == [(90_001, 10_000)]


async def test_the_prune_guard_probes_the_edges_by_index_at_100k_rows(
    store: PostgresStore, url: str
) -> None:
    """The retention guard's NOT EXISTS and the edges' DELETEs at scale (a
    chain edge from each odd job to the next, 50,000 edges): each candidate
    probes jobsched_deps' primary key, the edges go by it and by
    jobsched_deps_downstream; no scan or sort of a table. Five upstreams of
    a waiting job stay through both prunes, and only their edges stay."""
    sql(
        url,
        "INSERT INTO jobsched_jobs (id, name, executor, status, k0, k1, k2, run_at, "
        "submitted_at, finished_at, payload) SELECT i, 'j', 'async', "
        "CASE WHEN i % 50 = 0 THEN 'failed' ELSE 'completed' END, 0, 0, 0, "
        "0, 0, i, '\\x00' FROM generate_series(1, 100000) i",
    )
    sql(
        url,
        "INSERT INTO jobsched_jobs (id, name, executor, status, queue, unmet, k0, k1, k2, "
        "run_at, submitted_at, payload) VALUES "
        "(100001, 'j', 'async', 'pending', 2, 1, 0, 0, 0, 0, 0, '\\x00')",
    )
    sql(
        url,
        "INSERT INTO jobsched_deps (upstream, downstream, settled) SELECT i, i + 1, 1 "
        "FROM generate_series(1, 99999, 2) i",
    )
    sql(
        url,
        "INSERT INTO jobsched_deps (upstream, downstream, settled) SELECT i, 100001, 1 "
        "FROM generate_series(2, 10, 2) i UNION ALL SELECT 100000, 100001, 0",
    )
    sql(
        url,
        "INSERT INTO jobsched_attempts (job_id, attempt, owner, started_at, finished_at, "
        "status) SELECT i, 1, 'm', i, i, 'completed' FROM generate_series(1, 100000) i",
    )
    sql(url, "ANALYZE")
    aged = {"status": "failed", "cutoff": 50_000.0, "batch": 1000}
    with psycopg.connect(url) as conn:  # a transaction, rolled back: the plan only
        plans = _prune_plans(conn, aged)
        conn.rollback()
    # The guard in the pick by age, and again in the DELETE of each batch.
    for plan, index in zip(plans, ("jobsched_jobs_ended", "jobsched_jobs_finished"), strict=True):
        names = [index, "jobsched_deps_pkey", "jobsched_deps_downstream"]
        for name in names if index == "jobsched_jobs_ended" else [index]:
            assert name in plan, plan
        assert "Seq Scan" not in plan and "Sort" not in plan, plan
    held = [2, 4, 6, 8, 10]
    assert await store.prune(None, {js.JobStatus.FAILED: 50_000.0}) == 999
    assert await store.prune(10_000) == 89_001 - len(held)
    assert sql(url, "SELECT id FROM jobsched_jobs WHERE id < 90001 ORDER BY id") == [
        (i,) for i in held
    ]
    # The kept jobs' edges (each odd job's from 90,001 on, and 100,000's to
    # the waiting job), and the held ones'.
    assert sql(url, "SELECT min(upstream), count(*) FROM jobsched_deps WHERE upstream > 10") == [
        (90_001, 5_001)
    ]
    assert sql(url, "SELECT count(*) FROM jobsched_deps WHERE downstream = 100001") == [(6,)]


async def test_a_store_made_before_the_index_by_status_gets_it_on_open(
    store: PostgresStore, url: str
) -> None:
    """jobsched_jobs_ended (retention's prune) is no schema version: a store
    without it gets it when a member opens it, and one with it is left alone."""
    assert sql(url, "SELECT to_regclass('jobsched_jobs_ended') IS NOT NULL") == [(True,)]
    sql(url, "DROP INDEX jobsched_jobs_ended")
    assert sql(url, "SELECT to_regclass('jobsched_jobs_ended') IS NOT NULL") == [(False,)]
    for _ in range(2):
        again = PostgresStore(url, secret=SECRET)
        await again.open()
        await again.close()
        assert sql(url, "SELECT to_regclass('jobsched_jobs_ended') IS NOT NULL") == [(True,)]


async def test_the_recent_attempts_come_from_indexes_at_100k_rows(
    store: PostgresStore, url: str
) -> None:
    """A timeline's read (attempts since a moment) at scale: completed jobs
    stand for their attempts, found through the finished index; no table is
    scanned whole."""
    sql(
        url,
        "INSERT INTO jobsched_jobs (id, name, executor, status, k0, k1, k2, run_at, "
        "submitted_at, started_at, finished_at, attempts, ran_by, payload) SELECT i, 'j', "
        "'async', 'completed', 0, 0, 0, 0, 0, i - 0.5, i, 2, 'm', '\\x00' "
        "FROM generate_series(1, 100000) i",
    )
    sql(  # each job's first attempt failed and was retried: a row each
        url,
        "INSERT INTO jobsched_attempts (job_id, attempt, owner, started_at, finished_at, "
        "status) SELECT i, 1, 'first', i - 1, i - 0.75, 'retry_wait' "
        "FROM generate_series(1, 100000) i",
    )
    sql(url, "ANALYZE")
    query, params = attempts_query(since=99_999.0, job_id=None, limit=1000)
    with psycopg.connect(url) as conn:
        plan = "\n".join(r[0] for r in conn.execute("EXPLAIN (COSTS OFF) " + query, params))
    assert "jobsched_jobs_finished" in plan, plan
    assert "Seq Scan" not in plan, plan
    recent = await store.attempts(since=99_999.0)
    assert [(a.job_id, a.attempt, a.status, a.owner) for a in recent] == [
        (99_999, 2, js.JobStatus.COMPLETED, "m"),
        (100_000, 1, js.JobStatus.RETRY_WAIT, "first"),
        (100_000, 2, js.JobStatus.COMPLETED, "m"),
    ]


async def test_the_claim_reads_the_ready_index_at_100k_rows(store: PostgresStore, url: str) -> None:
    """The plan at scale: an index scan in key order, never a sort of the table."""
    sql(
        url,
        "INSERT INTO jobsched_jobs (id, name, executor, status, queue, k0, k1, k2, run_at, "
        "submitted_at, payload) SELECT i, 'j', CASE WHEN i % 10 = 0 THEN 'process' ELSE "
        "'async' END, 'pending', 0, random(), i, 0, 0, 0, '\\x00' "
        "FROM generate_series(1, 100000) i",
    )
    sql(url, "ANALYZE jobsched_jobs")
    from jobsched.store._codec import key_id
    from jobsched_postgres._claim import CLAIM
    from jobsched_postgres._frontier import Frontier
    from jobsched_postgres._gate import Gate

    gate = Gate([key_id(SECRET.encode())], ["shop.jobs.send_email"])
    params = {
        "names": ["async", "process"], "rooms": [8, 8], "limit": 8, "owner": "m",
        "lease": 1.0, "now": 0.0, "starting": 8, **gate.params(),
        **Frontier().params(gate, ["async", "process"]),
    }  # fmt: skip
    with psycopg.connect(url) as conn:  # a transaction, rolled back: the plan only
        plan = "\n".join(
            r[0] for r in conn.execute("EXPLAIN (ANALYZE, COSTS OFF) " + CLAIM, params)
        )
        conn.rollback()
    assert "jobsched_jobs_ready" in plan, plan
    assert "Seq Scan on jobsched_jobs" not in plan, plan
    claims = await store.claim("m", 8, {"async": 8, "process": 8}, 1.0, 30)
    assert len(claims) == 8


# ── outcomes, fencing, leases ────────────────────────────────────────────


async def test_outcomes_are_fenced_on_owner_and_attempt(store: PostgresStore) -> None:
    await store.add([new(1)], NOW)
    (c,) = await store.claim("m1", 1, ALL, NOW, 30)
    assert (await store.record("m2", [done(1, c.attempt)])).refused == [1]
    assert (await store.record("m1", [done(1, c.attempt + 1)])).refused == [1]
    assert (await store.record("m1", [done(1, c.attempt, result=b"r")])).refused == []
    job = await store.fetch(1)
    assert job is not None and job.status is js.JobStatus.COMPLETED and job.result == b"r"
    assert job.finished_at == NOW + 1 and job.owner is None
    assert (await store.record("m1", [done(1, c.attempt)])).refused == [1]


async def test_an_expired_lease_is_taken_over_and_the_old_owner_is_fenced_out(
    store: PostgresStore, url: str
) -> None:
    await store.add([new(1)], NOW)
    (c,) = await store.claim("dead", 1, ALL, NOW, lease=10)
    age(url, 5)
    assert await store.claim("alive", 1, ALL, NOW + 5, 10) == []  # lease still held
    age(url, 6)
    (taken,) = await store.claim("alive", 1, ALL, NOW + 11, 10)
    assert taken.id == 1 and taken.lost and taken.attempt == c.attempt
    retry = Outcome(
        1, taken.attempt, js.JobStatus.RETRY_WAIT, NOW + 11, run_at=NOW + 12, error="worker lost"
    )
    assert (await store.record("alive", [retry])).refused == []
    assert (await store.record("dead", [done(1, c.attempt)])).refused == [1]
    (second,) = await store.claim("alive", 1, ALL, NOW + 12, 10)
    assert second.attempt == 2 and not second.lost
    job = await store.fetch(1)
    assert job is not None and job.last_error == "worker lost"
    history = await store.attempts(job_id=1)
    assert [(a.attempt, a.owner, a.status, a.error) for a in history] == [
        (1, "dead", js.JobStatus.RETRY_WAIT, "worker lost"),
        (2, "alive", js.JobStatus.RUNNING, None),
    ]


async def test_a_takeover_says_when_the_lost_attempt_was_last_renewed(
    store: PostgresStore, url: str
) -> None:
    """A lost attempt ran until its owner last renewed the lease (the old
    lease's end less the lease, on the server's clock), not until the takeover."""
    await store.add([new(1)], NOW)
    before = time.time()
    await store.claim("dead", 1, ALL, NOW, lease=10)
    after = time.time()
    age(url, 25)  # its last renewal (the claim) is 25 s ago on the server's clock
    (taken,) = await store.claim("alive", 1, ALL, NOW + 30, 10)
    assert taken.lost and taken.renewed_at is not None
    assert before - 25 - 0.01 <= taken.renewed_at <= after - 25 + 0.01


async def test_a_takeover_says_when_the_dead_owner_was_asked_to_cancel(
    store: PostgresStore, url: str
) -> None:
    await store.add([new(1), new(2)], NOW)
    await store.claim("dead", 2, ALL, NOW, lease=10)
    assert await store.cancel([1], NOW + 1) == []  # running: flagged for its owner
    age(url, 11)
    taken = sorted(await store.claim("alive", 2, ALL, NOW + 11, 10), key=lambda c: c.id)
    assert [(c.id, c.lost, c.cancelled) for c in taken] == [(1, True, True), (2, True, False)]


async def test_a_dead_process_on_this_machine_loses_its_claims_at_once(
    store: PostgresStore,
) -> None:
    """A restart after a crash need not wait out the dead process's leases."""
    import socket
    import sys

    child = await anyio.run_process([sys.executable, "-c", "import os; print(os.getpid())"])
    gone = f"{socket.gethostname()}:{int(child.stdout)}:beef"
    alive = f"{socket.gethostname()}:{os.getppid()}:cafe"  # pytest's parent lives on
    elsewhere = f"another-host:{int(child.stdout)}:beef"
    await store.add([new(1), new(2), new(3)], NOW)
    for owner in [gone, alive, elsewhere]:
        await store.claim(owner, 1, ALL, NOW, lease=1000)
    taken = await store.claim("restarted", 5, ALL, NOW + 1, 1000)
    assert [(c.id, c.lost) for c in taken] == [(1, True)]


async def test_a_member_never_takes_over_an_executor_it_lacks(
    store: PostgresStore, url: str
) -> None:
    await store.add([new(1, executor="process")], NOW)
    await store.claim("dead", 1, {"process": 1}, NOW, lease=10)
    age(url, 60)
    assert await store.claim("async-only", 5, ALL, NOW + 60, 10) == []
    assert [c.lost for c in await store.claim("p", 5, {"process": 1}, NOW + 60, 10)] == [True]


async def test_heartbeats_keep_a_lease(store: PostgresStore, url: str) -> None:
    """A heartbeat renews the lease for the store's lease (30 s) from the
    server's now, whatever ``until`` the member's clock says."""
    await store.add([new(1)], NOW)
    await store.claim("m", 1, ALL, NOW, lease=10)
    age(url, 5)
    assert await store.extend("m", [1], NOW - 1000) == []
    age(url, 25)
    assert await store.claim("other", 1, ALL, NOW + 20, 10) == []
    age(url, 6)
    assert [c.id for c in await store.claim("other", 1, ALL, NOW + 26, 10)] == [1]


async def test_a_member_whose_clock_runs_ahead_takes_no_running_job(
    store: PostgresStore, url: str
) -> None:
    """Leases are compared on the server's clock: a member an hour ahead
    (its ``now``) neither takes another's running job nor its schedule."""
    await store.add([new(1), new(2)], NOW)
    await store.put_schedules([("s", b"P", NOW)])
    assert [c.id for c in await store.claim("slow", 1, ALL, NOW, lease=10)] == [1]
    assert [d.id for d in await store.claim_schedules("slow", NOW, 10)] == ["s"]
    ahead = NOW + 3600
    assert [(c.id, c.lost) for c in await store.claim("ahead", 5, ALL, ahead, 10)] == [(2, False)]
    assert await store.claim_schedules("ahead", ahead, 10) == []
    # And a member an hour behind still takes a lease the server saw lapse.
    age(url, 11)
    taken = await store.claim("behind", 5, ALL, NOW - 3600, 10)
    assert sorted((c.id, c.lost) for c in taken) == [(1, True), (2, True)]
    assert [d.id for d in await store.claim_schedules("behind", NOW, 10)] == ["s"]


async def test_a_member_never_takes_over_its_own_running_job(
    store: PostgresStore, url: str
) -> None:
    """Regression (issue 20, ``retry_wait -> completed``): a member whose
    heartbeat missed a row (locked by an operator past the lease) took its own
    still-running attempt as lost, settled it RETRY_WAIT under the running
    worker, whose completion then was an illegal transition. Its own expired
    lease is left to its next heartbeat (or to another member)."""
    await store.add([new(1)], NOW)
    (c,) = await store.claim("m", 1, ALL, NOW, lease=10)
    age(url, 11)
    assert await store.claim("m", 5, ALL, NOW + 11, 10) == []
    assert await store.extend("m", [1], NOW + 41) == []  # the lease is back
    assert await store.claim("other", 5, ALL, NOW + 12, 10) == []
    assert (await store.record("m", [done(1, c.attempt)])).refused == []
    job = await store.fetch(1)
    assert job is not None and job.status is js.JobStatus.COMPLETED and job.attempts == 1


async def test_a_heartbeat_skips_a_row_another_session_holds_locked(
    store: PostgresStore, url: str
) -> None:
    """An operator's open ``SELECT ... FOR UPDATE`` on one row costs the
    heartbeat that row's renewal only, at once: the other leases are renewed."""
    await store.add([new(1), new(2), new(3)], NOW)
    await store.claim("m", 3, ALL, NOW, lease=10)
    age(url, 9)
    with psycopg.connect(url) as operator:  # a transaction left open
        operator.execute("SELECT * FROM jobsched_jobs WHERE id = 2 FOR UPDATE")
        with anyio.fail_after(30):  # no lock wait: the bound is for a loaded machine
            assert await store.extend("m", [1, 2, 3], NOW) == []
        left = dict(
            sql(url, "SELECT id, lease_until - extract(epoch from now()) FROM jobsched_jobs")
        )
        operator.rollback()
    assert left[2] < 2 and left[1] > 20 and left[3] > 20, left
    age(url, 2)
    assert [(c.id, c.lost) for c in await store.claim("other", 5, ALL, NOW + 11, 10)] == [(2, True)]


async def test_a_retry_waits_for_its_time_then_counts_the_next_attempt(
    store: PostgresStore,
) -> None:
    await store.add([new(1)], NOW)
    (c,) = await store.claim("m", 1, ALL, NOW, 30)
    out = Outcome(
        1, c.attempt, js.JobStatus.RETRY_WAIT, NOW + 1, run_at=NOW + 5, error="E: x", traceback="tb"
    )
    await store.record("m", [out])
    job = await store.fetch(1)
    assert job is not None and job.status is js.JobStatus.RETRY_WAIT and job.last_traceback == "tb"
    assert await store.next_due() == NOW + 5
    assert await store.claim("m", 1, ALL, NOW + 4, 30) == []
    (again,) = await store.claim("m", 1, ALL, NOW + 5, 30)
    assert again.attempt == 2


# ── dependencies ─────────────────────────────────────────────────────────


async def test_a_dependent_waits_for_its_upstreams(store: PostgresStore) -> None:
    await store.add([new(1), new(2), new(3, depends_on=(1, 2))], NOW)
    assert sorted(c.id for c in await store.claim("m", 5, ALL, NOW, 30)) == [1, 2]
    await store.record("m", [done(1)])
    assert await store.claim("m", 5, ALL, NOW, 30) == []
    await store.record("m", [done(2)])
    assert [c.id for c in await store.claim("m", 5, ALL, NOW, 30)] == [3]
    job = await store.fetch(3)
    assert job is not None and job.depends_on == ()  # edges go once met


async def test_a_dependent_in_the_same_batch_waits_too(store: PostgresStore) -> None:
    await store.add([new(1), new(2, depends_on=(1,))], NOW)
    job = await store.fetch(2)
    assert job is not None and job.depends_on == (1,)
    assert [c.id for c in await store.claim("m", 5, ALL, NOW, 30)] == [1]


async def test_a_failure_cancels_everything_downstream(store: PostgresStore) -> None:
    await store.add([new(1), new(2, depends_on=(1,)), new(3, depends_on=(2,)), new(4)], NOW)
    (c, _) = await store.claim("m", 5, ALL, NOW, 30)
    assert c.id == 1
    recorded = await store.record("m", [done(1, status=js.JobStatus.FAILED, error="E: boom")])
    assert [(ch.id, ch.status, ch.error) for ch in recorded.changes] == [
        (2, js.JobStatus.CANCELLED, "upstream job-1 failed"),
        (3, js.JobStatus.CANCELLED, "upstream job-2 cancelled"),
    ]
    assert await store.unfinished() == 1  # job 4, running


async def test_one_batch_of_outcomes_fences_releases_and_cascades_each(
    store: PostgresStore,
) -> None:
    """A group commit's outcomes go in one statement; each keeps its own fate."""
    await store.add(
        [new(1), new(2), new(3), new(4), new(5, depends_on=(1,)), new(6, depends_on=(2, 5))],
        NOW,
    )
    claims = {c.id: c for c in await store.claim("m", 4, ALL, NOW, 30)}
    assert sorted(claims) == [1, 2, 3, 4]
    recorded = await store.record(
        "m",
        [
            done(1),
            done(2, status=js.JobStatus.FAILED, error="E: two"),
            Outcome(3, 1, js.JobStatus.RETRY_WAIT, NOW + 1, run_at=NOW + 2, error="E: three"),
            done(4, attempt=7),  # a stale attempt: refused
            done(4, attempt=1),  # the same job twice in a batch: refused too
        ],
    )
    assert recorded.refused == [4, 4]
    # Job 6 hangs on 2 (failed) and 5: cancelled, naming 2; 5 is free now.
    assert [(c.id, c.error) for c in recorded.changes] == [(6, "upstream job-2 failed")]
    assert [c.id for c in await store.claim("m", 5, ALL, NOW + 2, 30)] == [3, 5]
    statuses = {i: (await store.fetch(i)).status for i in range(1, 7)}  # type: ignore[union-attr]
    assert statuses == {
        1: js.JobStatus.COMPLETED, 2: js.JobStatus.FAILED, 3: js.JobStatus.RUNNING,
        4: js.JobStatus.RUNNING, 5: js.JobStatus.RUNNING, 6: js.JobStatus.CANCELLED,
    }  # fmt: skip


async def test_a_cascade_through_a_diamond_cancels_each_job_once(store: PostgresStore) -> None:
    await store.add(
        [new(1), new(2, depends_on=(1,)), new(3, depends_on=(1,)), new(4, depends_on=(2, 3))],
        NOW,
    )
    await store.claim("m", 1, ALL, NOW, 30)
    recorded = await store.record("m", [done(1, status=js.JobStatus.TIMED_OUT)])
    assert [(c.id, c.error) for c in recorded.changes] == [
        (2, "upstream job-1 timed_out"),
        (3, "upstream job-1 timed_out"),
        (4, "upstream job-2 cancelled"),
    ]
    assert await store.unfinished() == 0


async def test_a_large_batch_goes_in_by_copy_and_reads_back_as_an_insert_does(
    store: PostgresStore,
) -> None:
    """Batches from COPY_FROM jobs up go in by COPY: every field reads back as
    from the INSERT of a small batch, awkward bytes and text included."""
    size = pg_sql.COPY_FROM
    odd = bytes(range(256)) + b"\\N\t\n\r\\"

    def job(i: int) -> NewJob:
        return new(
            i,
            key=(i * 0.1, -1.5e300, 1 / 3),
            name=f"j{i}\t\\N é",
            run_at=NOW + (i % 2) * 100,  # half of them delayed
            submitted_at=NOW + 1 / 7,
            payload=odd + bytes([i % 256]),
            tenant=None if i % 3 else "t\\1",
            rate_key=None if i % 2 else "k\n",
        )

    await store.add([job(i) for i in range(1, size + 1)], NOW)  # COPY
    await store.add([job(i) for i in range(size + 1, size + 3)], NOW)  # INSERT
    for i in (1, 2, 3, size, size + 1, size + 2):
        got = await store.fetch(i)
        want = job(i)
        assert got is not None
        assert (got.name, got.payload, got.tenant, got.run_at, got.submitted_at) == (
            want.name,
            want.payload,
            want.tenant,
            want.run_at,
            want.submitted_at,
        )
        assert got.status is js.JobStatus.PENDING
    keys = sql(store.url, "SELECT k0, k1, k2, rate_key FROM jobsched_jobs WHERE id = 2")
    assert keys == [(0.2, -1.5e300, 1 / 3, "k\n")]
    # Claimable in key order, the delayed ones not yet.
    claimed = await store.claim("m", 200, ALL, NOW + 1, 30)
    assert [c.id for c in claimed] == [i for i in range(1, size + 3) if i % 2 == 0]


async def test_a_large_batch_of_own_ids_goes_in_staged_and_skips_the_held_ones(
    store: PostgresStore,
) -> None:
    """From COPY_FROM jobs up, ids of one's own go in by COPY into a staging
    table: every field reads back as an insert's, ids the store holds are
    flagged existed and left as they were, plain jobs of the batch go in too."""
    size = pg_sql.COPY_FROM + 6
    odd = bytes(range(256)) + b"\\N\t\n\r\\"

    def own(i: int, payload: bytes = odd) -> NewJob:
        return new(
            -i,
            name=f"own {i}\t\\N é",
            payload=payload + bytes([i % 256]),
            tenant=None if i % 3 else "t\\1",
            own_id=True,
        )

    held = [own(i, b"first") for i in range(1, 11)]
    await store.add(held, NOW)
    batch = [own(i) for i in range(1, size + 1)] + [new(1), new(2)]
    changes = await store.add(batch, NOW)
    assert changes == []
    assert [job.existed for job in batch] == [True] * 10 + [False] * (size - 10) + [False] * 2
    assert (await store.fetch(-3)).payload == b"first" + bytes([3])  # type: ignore[union-attr]
    got = await store.fetch(-12)
    assert got is not None
    assert (got.name, got.payload, got.tenant) == ("own 12\t\\N é", odd + bytes([12]), "t\\1")
    assert sql(store.url, "SELECT count(*) FROM jobsched_jobs") == [(size + 2,)]
    # The staging table went with the transaction: the next batch makes its own.
    again = [own(i) for i in range(size + 1, 2 * size + 1)]
    await store.add(again, NOW)
    assert not any(job.existed for job in again)


async def test_overlapping_own_id_batches_from_two_members_make_one_job_per_id(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two stores add the same 200 ids at once, in opposite orders: every id is
    added by exactly one of them and neither add fails. A third transaction
    holds the middle id until both adds wait on it, so they overlap for sure:
    had they taken the ids' locks in their own orders, each would then wait
    for the other (a deadlock the server ends by failing one, which the
    store would retry: here it may not)."""
    monkeypatch.setattr(pg_pool, "RETRIES", 1)
    ids = range(1, 201)
    batches = (
        [new(-i, own_id=True) for i in ids],
        [new(-i, own_id=True) for i in reversed(ids)],
    )
    a, b = PostgresStore(url, secret=SECRET), PostgresStore(url, secret=SECRET)
    await a.open()
    await b.open()
    blocker = psycopg.connect(url)
    try:
        pg_sql.add(blocker, [new(-100, own_id=True)], NOW)  # uncommitted: holds -100

        def until_both_wait() -> None:
            for _ in range(6000):  # a minute
                row = blocker.execute(
                    "SELECT count(*) FROM pg_stat_activity "
                    "WHERE datname = current_database() AND wait_event_type = 'Lock'"
                ).fetchone()
                if row and row[0] >= 2:
                    return
                time.sleep(0.01)
            raise AssertionError("the two adds never both waited on the held id")

        async with anyio.create_task_group() as tg:
            tg.start_soon(a.add, batches[0], NOW)
            tg.start_soon(b.add, batches[1], NOW)
            await anyio.to_thread.run_sync(until_both_wait)
            await anyio.to_thread.run_sync(blocker.commit)
        added = sorted(job.id for batch in batches for job in batch if not job.existed)
        assert added == sorted(-i for i in ids if i != 100)
        assert sql(url, "SELECT count(*) FROM jobsched_jobs") == [(200,)]
    finally:
        blocker.close()
        await a.close()
        await b.close()


async def test_adding_after_an_upstream_failed_cancels_at_once(store: PostgresStore) -> None:
    await store.add([new(1)], NOW)
    await store.claim("m", 1, ALL, NOW, 30)
    await store.record("m", [done(1, status=js.JobStatus.TIMED_OUT)])
    changes = await store.add([new(2, depends_on=(1,)), new(3, depends_on=(99,))], NOW)
    assert [(c.id, c.error) for c in changes] == [
        (2, "upstream job-1 timed_out"),
        (3, "upstream job-99 is not in the store"),
    ]


async def test_released_claims_are_claimable_again_uncounted(store: PostgresStore) -> None:
    await store.add([new(1), new(2)], NOW)
    claims = await store.claim("stopping", 2, ALL, NOW, 30)
    out = Outcome(2, claims[1].attempt, js.JobStatus.RETRY_WAIT, NOW, run_at=NOW, error="E")
    await store.record("stopping", [out])
    (again,) = await store.claim("stopping", 1, ALL, NOW, 30)
    assert again.attempt == 2
    await store.release("stopping", [1, 2])
    await store.release("someone-else", [1])  # not theirs: no effect
    retaken = await store.claim("next", 5, ALL, NOW, 30)
    assert sorted((c.id, c.attempt) for c in retaken) == [(1, 1), (2, 2)]
    job = await store.fetch(2)
    assert job is not None and job.status is js.JobStatus.RUNNING and job.owner == "next"
    assert [(a.attempt, a.owner) for a in await store.attempts(job_id=2)] == [
        (1, "stopping"),
        (2, "next"),
    ]


# ── cancel, prune ────────────────────────────────────────────────────────


async def test_cancel_a_queued_job_with_its_dependents(store: PostgresStore) -> None:
    await store.add([new(1, run_at=NOW + 100), new(2, depends_on=(1,))], NOW)
    changes = await store.cancel([1, 12345], NOW)
    assert [(c.id, c.status) for c in changes] == [
        (1, js.JobStatus.CANCELLED),
        (2, js.JobStatus.CANCELLED),
    ]
    assert await store.next_due() is None and await store.unfinished() == 0


async def test_cancel_a_running_job_reaches_its_owner(store: PostgresStore) -> None:
    await store.add([new(1), new(2)], NOW)
    await store.claim("m", 2, ALL, NOW, 30)
    assert await store.cancel([2], NOW) == []
    assert await store.extend("m", [1, 2], NOW + 30) == [2]


async def test_prune_keeps_the_newest_finished_jobs_in_batches(
    store: PostgresStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    import jobsched_postgres._store as impl

    monkeypatch.setattr(impl, "PRUNE_BATCH", 3)
    await store.add([new(i) for i in range(1, 11)], NOW)
    claims = await store.claim("m", 10, ALL, NOW, 30)
    await store.record(
        "m", [Outcome(c.id, c.attempt, js.JobStatus.COMPLETED, NOW + c.id) for c in claims[:8]]
    )
    assert await store.prune(keep=3) == 5
    kept = [i for i in range(1, 11) if await store.fetch(i) is not None]
    assert kept == [6, 7, 8, 9, 10]
    assert sorted(a.job_id for a in await store.attempts()) == kept  # their attempts too


# ── rate limits and fair share, in the claim ─────────────────────────────
# Their semantics are held to the SQLite store's cases in the conformance suite
# (jobsched/store/testing/test_limits.py, run by test_store_conformance.py).


async def test_a_fair_share_claim_reads_the_tenant_index_at_100k_rows(
    store: PostgresStore, url: str
) -> None:
    """Each tenant's candidates come from an index seek, never a scan of the table."""
    sql(
        url,
        "INSERT INTO jobsched_jobs (id, name, executor, status, queue, k0, k1, k2, run_at, "
        "submitted_at, payload, tenant) SELECT i, 'j', 'async', 'pending', 0, random(), i, 0, "
        "0, 0, '\\x00', 't' || (i % 50) FROM generate_series(1, 100000) i",
    )
    sql(url, "INSERT INTO jobsched_tenants (tenant) SELECT 't' || i FROM generate_series(0, 49) i")
    sql(url, "ANALYZE jobsched_jobs")
    from jobsched.store._codec import key_id
    from jobsched_postgres._candidates import _CANDIDATES

    query = _CANDIDATES.format(
        tenants="CROSS JOIN unnest(%(tenants)s::text[]) AS tn(name)", tenant="AND tenant = tn.name"
    )
    params = {
        "names": ["async"], "rooms": [8], "limit": 8, "empty": [], "skip": [],
        "keys": [key_id(SECRET.encode())], "known": ["shop.jobs.send_email"],
        "tenants": [f"t{i}" for i in range(50)],
    }  # fmt: skip
    with psycopg.connect(url) as conn:
        plan = "\n".join(r[0] for r in conn.execute("EXPLAIN (COSTS OFF) " + query, params))
        conn.rollback()
    assert "jobsched_jobs_tenant_ready" in plan, plan
    assert "Seq Scan on jobsched_jobs" not in plan, plan
    claims = await store.claim("m", 8, {"async": 8}, 1.0, 30, tenants={})
    assert len({c.id % 50 for c in claims}) == 8  # eight tenants, one job each


# ── notifications ────────────────────────────────────────────────────────


async def test_a_commit_elsewhere_wakes_a_watching_member(url: str) -> None:
    watcher, other = PostgresStore(url, secret=SECRET), PostgresStore(url, secret=SECRET)
    await watcher.open()
    await other.open()
    woken = anyio.Event()

    def wake() -> None:
        woken.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(watcher.watch, wake)
        with anyio.fail_after(10):
            await woken.wait()  # the catch-up call once it listens
            woken = anyio.Event()
            await other.add([new(1)], NOW)
            await woken.wait()
            woken = anyio.Event()
            (c,) = await other.claim("m", 1, ALL, NOW, 30)
            await other.cancel([c.id], NOW)  # a cancel wakes too
            await woken.wait()
        tg.cancel_scope.cancel()
    await watcher.close()
    await other.close()


# ── operators' reads and retry ───────────────────────────────────────────


async def test_operators_read_jobs_counts_and_schedules(store: PostgresStore) -> None:
    await store.add([new(i, executor="thread" if i > 3 else "async") for i in range(1, 6)], NOW)
    await store.claim("m", 2, ALL, NOW, 30)
    await store.record("m", [done(1, status=js.JobStatus.FAILED, error="E: no")])
    assert await store.counts() == {
        (js.JobStatus.FAILED, "async"): 1,
        (js.JobStatus.RUNNING, "async"): 1,
        (js.JobStatus.PENDING, "async"): 1,
        (js.JobStatus.PENDING, "thread"): 2,
    }
    assert [j.id for j in await store.jobs(limit=2)] == [5, 4]
    assert [j.id for j in await store.jobs(before=4, limit=10)] == [3, 2, 1]
    failed = await store.jobs(statuses=[js.JobStatus.FAILED])
    assert [(j.id, j.last_error) for j in failed] == [(1, "E: no")]
    await store.put_schedules([("late", b"P", NOW + 9), ("soon", b"P", NOW + 1)])
    assert [(s.id, s.next_fire, s.owner) for s in await store.schedules()] == [
        ("soon", NOW + 1, None),
        ("late", NOW + 9, None),
    ]
    since = await store.attempts(since=NOW + 5)
    assert [(a.job_id, a.status) for a in since] == [(2, js.JobStatus.RUNNING)]


async def test_retry_requeues_ended_jobs_and_counts_on(store: PostgresStore) -> None:
    await store.add([new(1), new(2)], NOW)
    await store.claim("m", 2, ALL, NOW, 30)
    await store.record("m", [done(1, status=js.JobStatus.FAILED), done(2)])
    assert await store.retry([1, 2, 99], NOW + 5) == [1]  # a completed job is left alone
    (c,) = await store.claim("m", 5, ALL, NOW + 5, 30)
    assert (c.id, c.attempt) == (1, 2)
    assert (await store.record("m", [done(1, 1)])).refused == [1]  # the fence moved on


# ── stored schedules ─────────────────────────────────────────────────────


async def test_each_fire_time_makes_one_job_whoever_fires_it(
    store: PostgresStore, url: str
) -> None:
    await store.put_schedules([("s", b"P", NOW)])
    assert await store.next_due() == NOW
    (due,) = await store.claim_schedules("a", NOW, 30)
    assert (due.id, due.fire_time, due.last_status) == ("s", NOW, None)
    assert await store.claim_schedules("b", NOW, 30) == []
    first = new(1, schedule="s", fire_time=NOW)
    assert await store.fire("b", "s", NOW, NOW + 10, first) is False
    assert await store.fire("a", "s", NOW, NOW + 10, first) is True
    assert await store.fire("a", "s", NOW, NOW + 10, first) is False
    await store.put_schedules([("s", b"P-replaced", NOW)])
    (again,) = await store.claim_schedules("b", NOW, 30)
    assert again.last_status is js.JobStatus.PENDING
    assert await store.fire("b", "s", NOW, NOW + 10, new(2, schedule="s", fire_time=NOW)) is False
    assert await store.fetch(2) is None
    age(url, 31)
    (later,) = await store.claim_schedules("b", NOW + 60, 30)
    assert later.fire_time == NOW


async def test_removed_schedules_are_gone(store: PostgresStore) -> None:
    await store.put_schedules([("s", b"P", NOW), ("t", b"P", NOW + 5)])
    await store.remove_schedules(["s", "unknown"])
    assert await store.next_due() == NOW + 5
    assert [d.id for d in await store.claim_schedules("a", NOW + 5, 30)] == ["t"]


def test_the_server_is_there_in_ci() -> None:
    """CI starts PostgreSQL; a run there without it is a failure, never a skip."""
    require_server()


def test_without_a_server_tests_skip_except_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reason is given; CI (which starts the server) fails instead of skipping."""
    import pg

    monkeypatch.setattr(pg, "ADMIN_URL", "postgresql://postgres@127.0.0.1:1/postgres")
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no PostgreSQL server at .*:1/postgres"):
        pg.require_server()
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI must start the server"):
        pg.require_server()


def test_a_killed_runs_test_database_is_dropped_by_the_next_run() -> None:
    """Named with the creating process's id: one whose process is gone is dropped,
    one whose process lives (this one's) is kept."""
    import subprocess
    import sys

    import pg

    require_server()
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)  # fmt: skip
    dead = f"{pg.PREFIX}{child.stdout.strip()}_stale"
    live = f"{pg.PREFIX}{os.getpid()}_kept"
    with psycopg.connect(pg.ADMIN_URL, autocommit=True) as admin:
        for name in (dead, live):
            admin.execute(f'CREATE DATABASE "{name}"')
        try:
            dropped = pg.drop_stale_databases()
            left = {
                name
                for (name,) in admin.execute(
                    "SELECT datname FROM pg_database WHERE datname = ANY(%s)", ([dead, live],)
                )
            }
        finally:
            for name in (dead, live):
                admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
    assert dead in dropped and live not in dropped
    assert left == {live}


# ── locks, timeouts and broken connections ───────────────────────────────


def named(url: str, name: str) -> str:
    """``url`` whose connections carry ``application_name`` ``name`` (to find them)."""
    return f"{url}&application_name={name}"


def terminate(url: str, name: str) -> int:
    """``pg_terminate_backend`` every connection named ``name`` (from the
    maintenance database: ``url``'s may refuse connections); how many."""
    rows = sql(
        url_of("postgres"),
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        f"WHERE application_name = '{name}' AND pid <> pg_backend_pid()",
    )
    return len(rows)


async def until(what: str, condition: Callable[[], object]) -> None:
    """Poll ``condition`` (state in another thread or session) until truthy."""
    deadline = anyio.current_time() + 30  # generous: a loaded machine
    while not condition():  # no event reaches across sessions
        assert anyio.current_time() < deadline, f"not within 30 s: {what}"
        await anyio.sleep(0.01)


async def test_an_outcome_whose_row_is_locked_waits_and_the_others_are_written_at_once(
    store: PostgresStore, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch's outcomes are not held up by one locked row: the others
    commit at once, the locked one as soon as its lock goes."""
    monkeypatch.setattr(pg_connect, "LOCK_TIMEOUT", 30.0)  # record's wait, never reached
    await store.add([new(1), new(2), new(3)], NOW)
    await store.claim("m", 3, ALL, NOW, lease=120)
    with psycopg.connect(url) as operator:
        operator.execute("SELECT * FROM jobsched_jobs WHERE id = 2 FOR UPDATE")
        got: list[object] = []

        async def write() -> None:
            got.append(await store.record("m", [done(1), done(2), done(3)]))

        async with anyio.create_task_group() as tg:
            tg.start_soon(write)
            completed = "SELECT id FROM jobsched_jobs WHERE status = 'completed' ORDER BY id"
            await until("1 and 3 written", lambda: sql(url, completed) == [(1,), (3,)])
            assert not got  # still trying job 2
            operator.rollback()
    (recorded,) = got
    assert recorded.refused == []  # type: ignore[attr-defined]
    job = await store.fetch(2)
    assert job is not None and job.status is js.JobStatus.COMPLETED


async def test_a_cancel_committing_between_a_retrys_look_and_its_write_wins(
    store: PostgresStore, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The retry's look at the cancel flag locks the row until the retry is
    written: a cancel that commits between the look and the write would
    otherwise be overwritten by the retry (the next claim clears the flag,
    and the job runs again although cancel() said True)."""
    from jobsched_postgres import _outcomes as pg_outcomes

    await store.add([new(1)], NOW)
    (claim,) = await store.claim("m", 1, ALL, NOW, lease=120)
    look = pg_outcomes._look
    blocked: list[bool] = []

    def look_then_cancel(*args: object) -> object:
        seen = look(*args)  # type: ignore[arg-type]
        # Another session's cancel() of the running job, right after the look.
        with psycopg.connect(url, autocommit=True) as other:
            other.execute("SET lock_timeout = '200ms'")
            try:
                other.execute("UPDATE jobsched_jobs SET cancel_requested = true WHERE id = 1")
            except psycopg.errors.LockNotAvailable:
                blocked.append(True)  # it waits for the retry to commit
        return seen

    monkeypatch.setattr(pg_outcomes, "_look", look_then_cancel)
    retry = Outcome(1, claim.attempt, js.JobStatus.RETRY_WAIT, NOW + 1, run_at=NOW + 2, error="E")
    await store.record("m", [retry])
    assert blocked == [True]
    # The blocked cancel goes on once the retry committed: a waiting job ends.
    await store.cancel([1], NOW + 3)
    job = await store.fetch(1)
    assert job is not None and job.status is js.JobStatus.CANCELLED


async def test_a_retry_whose_row_was_locked_at_the_look_is_not_written_unlooked(
    store: PostgresStore, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A retry whose row another session held locked when record() looked at
    the cancel flag is tried again, never written without that look: the
    lock may be a cancel that commits its flag just after the look."""
    from jobsched_postgres import _outcomes as pg_outcomes

    await store.add([new(1)], NOW)
    (claim,) = await store.claim("m", 1, ALL, NOW, lease=120)
    look = pg_outcomes._look
    looks: list[int] = []

    def look_under_a_committing_cancel(*args: object) -> object:
        looks.append(1)
        if len(looks) > 1:
            return look(*args)  # type: ignore[arg-type]
        with psycopg.connect(url) as other:
            other.execute("SELECT id FROM jobsched_jobs WHERE id = 1 FOR UPDATE")
            seen = look(*args)  # type: ignore[arg-type]
            other.execute("UPDATE jobsched_jobs SET cancel_requested = true WHERE id = 1")
            other.commit()  # the cancel commits between the look and the write
        return seen

    monkeypatch.setattr(pg_outcomes, "_look", look_under_a_committing_cancel)
    retry = Outcome(1, claim.attempt, js.JobStatus.RETRY_WAIT, NOW + 1, run_at=NOW + 2, error="E")
    recorded = await store.record("m", [retry])
    assert recorded.refused == []
    job = await store.fetch(1)
    assert job is not None and job.status is js.JobStatus.CANCELLED


async def test_an_outcome_whose_row_stays_locked_is_given_up_on_and_logged(
    url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Past a quarter of the lease the locked row's outcome is dropped (the
    job runs again when its lease lapses), so later outcomes are not held up."""
    store = PostgresStore(url, secret=SECRET, lease=0.4)
    await store.open()
    try:
        await store.add([new(1), new(2)], NOW)
        await store.claim("m", 2, ALL, NOW, lease=0.4)
        with psycopg.connect(url) as operator:
            operator.execute("SELECT * FROM jobsched_jobs WHERE id = 2 FOR UPDATE")
            recorded = await store.record("m", [done(1), done(2)])
            operator.rollback()
        assert recorded.refused == [2]
        assert "job-2" in caplog.text and "locked by another session" in caplog.text
        one, two = await store.fetch(1), await store.fetch(2)
        assert one is not None and one.status is js.JobStatus.COMPLETED
        assert two is not None and two.status is js.JobStatus.RUNNING
    finally:
        await store.close()


async def test_a_statement_waiting_on_a_lock_fails_with_a_clear_error(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every connection has a lock_timeout: an operator's lock makes a cancel
    fail after it, saying why and what to do, and the next one works."""
    monkeypatch.setattr(pg_connect, "LOCK_TIMEOUT", 0.2)
    store = PostgresStore(url, secret=SECRET)
    await store.open()
    try:
        await store.add([new(1)], NOW)
        with psycopg.connect(url) as operator:
            operator.execute("SELECT * FROM jobsched_jobs WHERE id = 1 FOR UPDATE")
            with pytest.raises(StoreUnavailableError) as info:
                await store.cancel([1], NOW)
            operator.rollback()
        message = str(info.value)
        assert "a row of jobsched_jobs is locked by another session" in message
        assert "lock_timeout 0.2s" in message and "try again" in message
        assert [c.id for c in await store.cancel([1], NOW)] == [1]
        timeouts = sql(url, "SHOW statement_timeout")
        assert timeouts  # the test's own connection; the store's is checked below
        on_store = await store._run(
            lambda conn: (
                conn.execute("SHOW lock_timeout").fetchone()[0]  # type: ignore[index]
                + " "
                + conn.execute("SHOW statement_timeout").fetchone()[0]
            )  # type: ignore[index]
        )
        assert on_store == "200ms 1min"
    finally:
        await store.close()


async def test_one_statement_reads_run_outside_a_transaction_under_the_timeouts(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An operator's read of one statement sends no BEGIN or COMMIT (the
    statement is its own snapshot), and the session's lock_timeout still
    holds it: a table an operator locked fails the read after it."""
    monkeypatch.setattr(pg_connect, "LOCK_TIMEOUT", 0.2)
    states: list[psycopg.pq.TransactionStatus] = []
    real = PostgresStore._jobs

    def jobs(conn: psycopg.Connection[Any], where: str, params: tuple[Any, ...]) -> Any:
        states.append(conn.info.transaction_status)
        return real(conn, where, params)

    monkeypatch.setattr(PostgresStore, "_jobs", staticmethod(jobs))
    store = PostgresStore(url, secret=SECRET)
    await store.open()
    try:
        await store.add([new(1)], NOW)
        assert [j.id for j in await store.jobs()] == [1]
        assert await store.fetch(1) is not None
        assert states == [psycopg.pq.TransactionStatus.IDLE] * 2
        with psycopg.connect(url) as operator:
            operator.execute("LOCK TABLE jobsched_jobs IN ACCESS EXCLUSIVE MODE")
            with pytest.raises(StoreUnavailableError) as info:
                await store.jobs()
            operator.rollback()
        assert "lock_timeout 0.2s" in str(info.value)
        assert [j.id for j in await store.jobs()] == [1]
    finally:
        await store.close()


def test_the_cli_cancel_of_a_locked_job_fails_within_the_lock_timeout(url: str) -> None:
    """``jobsched cancel`` used to wait for ever on an operator's row lock."""
    import subprocess
    import sys

    async def seed() -> None:
        store = PostgresStore(url, secret=SECRET)
        await store.open()
        await store.add([new(1)], NOW)
        await store.close()

    anyio.run(seed)
    with psycopg.connect(url) as operator:
        operator.execute("SELECT * FROM jobsched_jobs WHERE id = 1 FOR UPDATE")
        done_ = subprocess.run(
            [str(Path(sys.executable).parent / "jobsched"), "cancel", "job-1", "--store", url],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "JOBSCHED_SECRET": SECRET},
            check=False,
        )
        operator.rollback()
    assert done_.returncode == 1, done_.stderr
    assert "jobsched: error: the PostgreSQL store" in done_.stderr
    assert "is locked by another session (lock_timeout 5s;" in done_.stderr
    assert "Traceback" not in done_.stderr


async def test_terminated_connections_are_replaced(url: str) -> None:
    """``pg_terminate_backend`` of every store connection: a read runs again
    on another connection (it may); a write is given a live one (a dead one
    is found before use and replaced) or, if its connection dies under it,
    raises StoreUnavailableError naming the cause; the pool replaces each
    dead one."""
    store = PostgresStore(named(url, "victim"), secret=SECRET)
    await store.open()

    async def use_every_connection() -> None:
        async with anyio.create_task_group() as tg:
            for _ in range(pg_store.POOL_SIZE):
                tg.start_soon(store.unfinished)

    try:
        await store.add([new(1)], NOW)
        await use_every_connection()
        assert terminate(url, "victim") >= 1
        for _ in range(pg_store.POOL_SIZE * 3):
            assert await store.unfinished() == 1
        await use_every_connection()
        assert terminate(url, "victim") >= 1
        failures: list[str] = []
        for _ in range(pg_store.POOL_SIZE * 3):
            try:
                assert await store.cancel([99], NOW) == []
            except StoreUnavailableError as exc:
                failures.append(str(exc))
        assert len(failures) <= pg_store.POOL_SIZE, failures  # none if checked: idle > 1 s
        for message in failures:
            assert "ended the connection" in message or "closed the connection" in message, message
        assert await store.cancel([99], NOW) == []
    finally:
        await store.close()


async def test_a_server_that_refuses_connections_is_unavailable_not_an_error(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pool whose server went away answers StoreUnavailableError (bounded
    wait), and works again once connections are possible."""
    monkeypatch.setattr(pg_connect, "CONNECT_TIMEOUT", 1)
    store = PostgresStore(named(url, "refused"), secret=SECRET)
    await store.open()
    try:
        sql(url, "SELECT 1")
        database = sql(url, "SELECT current_database()")[0][0]
        admin = url_of("postgres")
        sql(admin, f'ALTER DATABASE "{database}" WITH ALLOW_CONNECTIONS false')
        try:
            terminate(url, "refused")
            errors = []
            for _ in range(pg_store.POOL_SIZE + 1):
                try:
                    await store.unfinished()
                except StoreUnavailableError as exc:
                    errors.append(str(exc))
            assert len(errors) == pg_store.POOL_SIZE + 1, errors
            assert "is unreachable: no connection within 1s" in errors[-1], errors
        finally:
            sql(admin, f'ALTER DATABASE "{database}" WITH ALLOW_CONNECTIONS true')
        for _ in range(100):  # the pool reconnects in the background, with backoff
            try:
                assert await store.unfinished() == 0
                break
            except StoreUnavailableError:
                await anyio.sleep(0.1)
        assert await store.unfinished() == 0
    finally:
        await store.close()


async def test_watch_listens_again_after_its_connection_is_terminated(url: str) -> None:
    """LISTEN is made again on a new connection, and the claimer is woken
    once at once (whatever was committed while nobody listened)."""
    store = PostgresStore(named(url, "listener"), secret=SECRET)
    other = PostgresStore(url, secret=SECRET)
    await store.open()
    await other.open()
    wakes: list[float] = []
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(store.watch, lambda: wakes.append(1.0))
            await until("LISTEN in place (its catch-up wake)", lambda: wakes)
            await until("the LISTEN connection ended", lambda: terminate(url, "listener"))
            await until("listening again (a catch-up wake)", lambda: len(wakes) >= 2)
            await other.add([new(1)], NOW)  # notifies
            await until("the notification passed on", lambda: len(wakes) >= 3)
            tg.cancel_scope.cancel()
    finally:
        await store.close()
        await other.close()


async def test_history_limit_bounds_a_small_history_and_is_kept_at_stop(url: str) -> None:
    """As on SQLite (tests/test_store_sqlite.py): pruned every `limit` outcomes
    for a small limit, and down to the limit when the scheduler stops."""
    counts: list[int] = []

    def finished() -> int:
        (row,) = sql(url, "SELECT count(*) FROM jobsched_jobs WHERE finished_at IS NOT NULL")
        return int(row[0])  # type: ignore[call-overload]

    store = PostgresStore(url, secret=SECRET)
    async with js.JobScheduler(store=store, history_limit=5, num_workers=4) as s:
        for _ in range(4):
            for _ in range(20):
                s.submit(js.FunctionJob(len, ("abc",)))
            with anyio.fail_after(60):
                await s.join()
            await s.flush()
            counts.append(finished())
    assert max(counts) <= 2 * 5 + 20, counts
    assert finished() == 5


async def test_a_fair_share_claim_sees_tenants_added_while_it_reads(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An add that commits between the claim's read of the tenants and its read of
    their jobs is seen whole: its new tenant's better job wins the turn.

    Each statement has a snapshot of its own; the claim once saw the new jobs
    but not their tenant's row, and gave the turn to the tenant it knew (a
    test of three-to-one shares failed one run in three on a loaded machine).
    """
    from jobsched_postgres import _candidates

    a = PostgresStore(url, secret=SECRET)
    b = PostgresStore(url, secret=SECRET)
    await a.open()
    await b.open()
    try:
        await a.add([new(1, (5.0,))], NOW)  # the None tenant's
        real = _candidates.candidates
        calls = 0

        def candidates(*args: object, **kwargs: object) -> object:
            nonlocal calls
            calls += 1
            if calls == 1:  # after the tenants' read: another member's add commits
                anyio.from_thread.run(b.add, [new(2, (1.0,), tenant="gold")], NOW)
            return real(*args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(_candidates, "candidates", candidates)
        (got,) = await a.claim("m", 1, {"async": 9}, NOW, 30, tenants={"gold": 3})
        assert calls >= 2
        assert got.id == 2
    finally:
        await a.close()
        await b.close()


async def test_big_batches_plan_by_id_when_the_statistics_say_nothing_runs(
    store: PostgresStore, url: str
) -> None:
    """Statistics taken while nothing ran (an idle night's ANALYZE) say a
    member owns no rows. A batch of 2,000 outcomes and a heartbeat of 2,000
    leases must still find their rows by id: never compare each outcome with
    each row (the quadratic plan that took W10 to 1.2 s a batch), nor read
    every running row to test it against the ids."""
    from jobsched_postgres import _leases as pg_leases
    from jobsched_postgres import _outcomes as pg_outcomes

    total, held = 20_000, 2_000
    for start in range(1, total + 1, 5_000):
        await store.add([new(i) for i in range(start, start + 5_000)], NOW)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ANALYZE jobsched_jobs")
    claimed: list[Any] = []
    while len(claimed) < held:
        claimed += await store.claim("m", held - len(claimed), {"async": held}, NOW, lease=120)
    outcomes = [done(c.id, c.attempt) for c in claimed]
    params = pg_outcomes._arrays(outcomes, "m", NOW + 1)
    ids = sorted(c.id for c in claimed)

    def explained(conn: psycopg.Connection[Any], statement: str, args: Any) -> list[Any]:
        ((plan,),) = conn.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + statement, args)
        return plan_nodes(plan[0]["Plan"])

    with psycopg.connect(url) as conn:  # rolled back: nothing is written
        look = explained(conn, pg_outcomes._LOOK, (ids,))
        write = explained(conn, pg_outcomes._COMPLETE, params)
        conn.rollback()
        beat = explained(conn, pg_leases.EXTEND, (120.0, ids, "m"))
        conn.rollback()
    for name, nodes in (("the look", look), ("the write", write), ("the heartbeat", beat)):
        # A set scanned once per row of another: the quadratic shape.
        again = [n for n in nodes if n["Node Type"] in ("CTE Scan", "Function Scan")]
        assert all(n["Actual Loops"] == 1 for n in again), (name, again)
        assert sum(n.get("Rows Removed by Join Filter", 0) for n in nodes) == 0, name
        # Rows read only to be thrown away: a scan by anything but the ids.
        read = [n for n in nodes if n.get("Relation Name") == "jobsched_jobs"]
        assert sum(n.get("Rows Removed by Filter", 0) for n in read) == 0, (name, read)
