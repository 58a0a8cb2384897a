"""The SQLite store on its own: the JobStore operations against a real file.

These pin the store's half of the seam (claims in key order, leases and
fencing, the dependency cascade, recovery, bad files) before the scheduler
runs on it; the scheduler's behaviour on a store is tested with the
scheduler.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
import threading
from contextlib import closing
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest

import jobsched as js
from jobsched._exceptions import StoreUnavailableError
from jobsched.store import NewJob, Outcome
from jobsched_sqlite import SQLiteStore, _schema

pytestmark = pytest.mark.anyio

NOW = 1_700_000_000.0
LONG = 3600.0


@pytest.fixture
def anyio_backend() -> str:
    # The store's own logic does not depend on the backend; its threads do
    # not run on trio's mock clock. The scheduler's tests cover both.
    return "asyncio"


def url_for(path: Path) -> str:
    return f"sqlite:///{path}"


@pytest.fixture
async def store(tmp_path: Path):  # type: ignore[no-untyped-def]
    s = SQLiteStore(url_for(tmp_path / "jobs.db"))
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


# ── opening ──────────────────────────────────────────────────────────────


def test_malformed_urls_raise_value_error() -> None:
    for url in ["sqlite://jobs.db", "sqlite:///", "postgresql://x/y", "sqlite:///a.db?mode=ro"]:
        with pytest.raises(ValueError, match="SQLite store URL"):
            SQLiteStore(url)


async def test_a_new_file_gets_the_schema_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "jobs.db"
    store = SQLiteStore(url_for(path))
    await store.open()
    await store.close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("SELECT value FROM jobsched_meta WHERE key='schema'").fetchone() == (
        _schema.VERSION,
    )
    conn.close()
    again = SQLiteStore(url_for(path))  # reopening an existing store works
    await again.open()
    assert await again.unfinished() == 0
    await again.close()


async def test_a_missing_folder_is_refused(tmp_path: Path) -> None:
    store = SQLiteStore(url_for(tmp_path / "nope" / "jobs.db"))
    with pytest.raises(StoreUnavailableError, match="does not exist"):
        await store.open()


async def test_an_unwritable_path_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("not a folder")
    store = SQLiteStore(url_for(tmp_path / "a-file" / "jobs.db"))
    with pytest.raises(StoreUnavailableError, match="a-file"):
        await store.open()


async def test_a_corrupt_file_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "jobs.db"
    junk = b"this is not a database at all" * 100
    path.write_bytes(junk)
    with pytest.raises(StoreUnavailableError, match="SQLite database"):
        await SQLiteStore(url_for(path)).open()
    assert path.read_bytes() == junk


async def test_another_applications_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT)")
    conn.commit()
    conn.close()
    with pytest.raises(StoreUnavailableError, match="another application.*users"):
        await SQLiteStore(url_for(path)).open()
    conn = sqlite3.connect(path)
    assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master")] == ["users"]
    conn.close()


async def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "jobs.db"
    store = SQLiteStore(url_for(path))
    await store.open()
    await store.close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE jobsched_meta SET value = 99 WHERE key = 'schema'")
    conn.commit()
    conn.close()
    with pytest.raises(StoreUnavailableError, match="schema version 99.*newer"):
        await SQLiteStore(url_for(path)).open()


def back_to_schema_1(path: Path) -> None:
    """Make the file at ``path`` look as schema 1 left it: indexes of the
    running and the unfinished rows, no ran_by, running attempts' rows, and
    the triggers that kept completed_counts (schemas 1 and 2), no ended_counts,
    no args (schema 4), no workflows' table, columns and indexes (schema 5)."""
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        DROP INDEX jobs_workflow;
        DROP INDEX deps_downstream;
        DROP INDEX deps_waiting;
        DROP TABLE workflows;
        ALTER TABLE jobs DROP COLUMN workflow;
        ALTER TABLE jobs DROP COLUMN progress;
        ALTER TABLE jobs DROP COLUMN progress_message;
        ALTER TABLE deps DROP COLUMN on_failure;
        ALTER TABLE deps DROP COLUMN settled;
        ALTER TABLE jobs DROP COLUMN args;
        INSERT INTO attempts (job_id, attempt, owner, started_at, status)
            SELECT id, attempts, ran_by, started_at, 'running' FROM jobs WHERE status = 'running';
        ALTER TABLE jobs DROP COLUMN ran_by;
        CREATE INDEX jobs_leases ON jobs (lease_until) WHERE status = 'running';
        CREATE INDEX jobs_unfinished ON jobs (id) WHERE finished_at IS NULL;
        CREATE TRIGGER jobs_completed_update AFTER UPDATE OF status ON jobs
        WHEN new.status = 'completed' AND old.status IS NOT 'completed' BEGIN
            INSERT INTO completed_counts (executor, n) VALUES (new.executor, 1)
            ON CONFLICT (executor) DO UPDATE SET n = n + 1;
        END;
        CREATE TRIGGER jobs_completed_delete AFTER DELETE ON jobs
        WHEN old.status = 'completed' BEGIN
            UPDATE completed_counts SET n = n - 1 WHERE executor = old.executor;
        END;
        DROP TABLE ended_counts;
        UPDATE jobsched_meta SET value = 1 WHERE key = 'schema';
        """
    )
    conn.close()


async def test_a_schema_1_file_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "jobs.db"
    store = SQLiteStore(url_for(path))
    await store.open()
    await store.add([new(1), new(2), new(3)], NOW)
    await store.claim("old-member", 2, {"async": 99}, NOW, 30)
    await store.record("old-member", [Outcome(1, 1, FAILED, NOW + 1, error="E: no")])
    await store.close()
    back_to_schema_1(path)
    store = SQLiteStore(url_for(path))
    await store.open()
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT value FROM jobsched_meta WHERE key = 'schema'").fetchone() == (
        _schema.VERSION,
    )
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert not names & {"jobs_leases", "jobs_unfinished"}
    assert {"jobs_workflow", "deps_downstream", "deps_waiting"} <= names
    # The statements keep completed_counts now: a trigger left behind would count twice.
    assert not conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall()
    # The running attempt is its job's row now, its member kept.
    assert conn.execute("SELECT job_id FROM attempts").fetchall() == [(1,)]
    conn.close()
    (running,) = await store.attempts(job_id=2)
    assert (running.owner, running.status, running.started_at) == ("old-member", RUNNING, NOW)
    assert [a.status for a in await store.attempts(job_id=1)] == [FAILED]
    assert await store.unfinished() == 2
    # The migration counts the ended jobs it finds (schema 1 had no ended_counts).
    assert (await store.counts())[js.JobStatus.FAILED, "async"] == 1
    await store.record("old-member", [done(2)])  # the migrated attempt still ends
    assert [(a.owner, a.status) for a in await store.attempts(job_id=2)] == [
        ("old-member", js.JobStatus.COMPLETED)
    ]
    assert (await store.counts())[js.JobStatus.COMPLETED, "async"] == 1
    assert await store.prune(keep=0) == 2
    assert (js.JobStatus.COMPLETED, "async") not in await store.counts()
    await store.close()


async def test_a_failed_migration_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "jobs.db"
    store = SQLiteStore(url_for(path))
    await store.open()
    await store.add([new(1)], NOW)
    await store.close()
    back_to_schema_1(path)
    conn = sqlite3.connect(path)
    conn.execute("ALTER TABLE jobs ADD COLUMN ran_by TEXT")  # as a damaged file might
    conn.commit()
    conn.close()
    with pytest.raises(
        StoreUnavailableError, match=f"cannot migrate.*schema version {_schema.VERSION}.*ran_by"
    ):
        await SQLiteStore(url_for(path)).open()
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT value FROM jobsched_meta WHERE key = 'schema'").fetchone() == (1,)
    assert conn.execute("SELECT id, status FROM jobs").fetchall() == [(1, "pending")]
    assert conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'jobs_leases'").fetchone()
    conn.close()


async def test_a_closed_store_says_to_open_it(tmp_path: Path) -> None:
    store = SQLiteStore(url_for(tmp_path / "jobs.db"))
    with pytest.raises(StoreUnavailableError, match="not open"):
        await store.unfinished()


# ── ids ──────────────────────────────────────────────────────────────────


async def test_id_blocks_are_disjoint_across_openers(tmp_path: Path) -> None:
    a, b = SQLiteStore(url_for(tmp_path / "j.db")), SQLiteStore(url_for(tmp_path / "j.db"))
    await a.open()
    await b.open()
    blocks = [a.reserve_ids(100), b.reserve_ids(100), a.reserve_ids(5)]
    assert blocks == [1, 101, 201]
    await a.close()
    await b.close()
    c = SQLiteStore(url_for(tmp_path / "j.db"))  # and across restarts
    await c.open()
    assert c.reserve_ids(1) == 206
    await c.close()


# ── claims ───────────────────────────────────────────────────────────────


async def test_claims_follow_the_key_and_count_attempts(store: SQLiteStore) -> None:
    await store.add([new(1, (2.0, 1)), new(2, (1.0, 2)), new(3, (1.0, 3)), new(4, (0.5, 4))], NOW)
    first = await store.claim("m1", 2, {"async": 99}, NOW, lease=30)
    assert [(c.id, c.attempt) for c in first] == [(4, 1), (2, 1)]
    rest = await store.claim("m1", 10, {"async": 99}, NOW, lease=30)
    assert [c.id for c in rest] == [3, 1]
    assert await store.claim("m1", 10, {"async": 99}, NOW, lease=30) == []
    job = await store.fetch(4)
    assert job is not None and job.status is js.JobStatus.RUNNING and job.owner == "m1"


async def test_a_member_claims_only_its_executors(store: SQLiteStore) -> None:
    await store.add([new(1, executor="process"), new(2, executor="async")], NOW)
    assert [c.id for c in await store.claim("m", 5, {"async": 99, "thread": 99}, NOW, 30)] == [2]
    assert [c.id for c in await store.claim("m", 5, {"process": 99}, NOW, 30)] == [1]


async def test_delayed_jobs_wait_for_their_time(store: SQLiteStore) -> None:
    await store.add([new(1, run_at=NOW + 60), new(2)], NOW)
    assert await store.next_due() == NOW + 60
    # A long lease: job 2 stays claimed, so only job 1's delay is in play.
    assert [c.id for c in await store.claim("m", 5, {"async": 99}, NOW, 1000)] == [2]
    assert await store.claim("m", 5, {"async": 99}, NOW + 59, 1000) == []
    assert [c.id for c in await store.claim("m", 5, {"async": 99}, NOW + 60, 1000)] == [1]
    assert await store.next_due() is None


async def test_two_members_never_claim_one_job(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    setup = SQLiteStore(url_for(path))
    await setup.open()
    await setup.add([new(i, (float(i),)) for i in range(1, 401)], NOW)
    await setup.close()
    claimed: dict[str, list[int]] = {}

    async def member(name: str) -> None:
        store = SQLiteStore(url_for(path))
        await store.open()
        mine = claimed.setdefault(name, [])
        while batch := await store.claim(name, 7, {"async": 99}, NOW, 30):
            mine.extend(c.id for c in batch)
        await store.close()

    async with anyio.create_task_group() as tg:
        for name in ["a", "b", "c"]:
            tg.start_soon(member, name)
    every = [i for ids in claimed.values() for i in ids]
    assert sorted(every) == list(range(1, 401))  # each exactly once


# ── executor rooms, rate buckets, fair share ─────────────────────────────
# Their semantics, shared with every store, are in the conformance suite
# (jobsched/store/testing/test_limits.py);
# here is how SQLite keeps them fast.


async def test_an_empty_buckets_backlog_is_parked_off_the_ready_index(
    store: SQLiteStore,
) -> None:
    """Jobs of an empty key leave the ready queue (claims don't read them) and come back
    best first as tokens come; a member that does not limit the key runs them at once."""
    rates = {"k": js.RateLimit(1, per=10.0, burst=1)}
    await store.add([new(i, (float(-i),), rate_key="k") for i in range(1, 21)], NOW)

    def queues() -> dict[int | None, int]:
        conn = sqlite3.connect(store.path)
        try:
            return dict(conn.execute("SELECT queue, COUNT(*) FROM jobs GROUP BY queue").fetchall())
        finally:
            conn.close()

    (first,) = await store.claim("m", 5, {"async": 9}, NOW, LONG, rates=rates)
    assert first.id == 20  # the best key
    assert queues() == {None: 1, 3: 19}
    assert await store.claim("m", 5, {"async": 9}, NOW + 5, LONG, rates=rates) == []
    (second,) = await store.claim("m", 5, {"async": 9}, NOW + 10, LONG, rates=rates)
    assert second.id == 19  # the next best, brought back for the one token
    assert queues() == {None: 2, 3: 18}
    # Another member without that limit: the key is not limited for it.
    got = await store.claim("other", 5, {"async": 9}, NOW + 10, LONG)
    assert [c.id for c in got] == [18, 17, 16, 15, 14]
    got = await store.claim("other", 50, {"async": 99}, NOW + 10, LONG, rates={})
    assert [c.id for c in got] == list(range(13, 0, -1))


async def test_the_first_fair_share_claim_indexes_tenants(store: SQLiteStore) -> None:
    """A file gets the per-tenant index when a fair share first claims, and its queries use it."""

    def indexes() -> set[str]:
        conn = sqlite3.connect(store.path)
        try:
            return {
                r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")
            }
        finally:
            conn.close()

    await store.add([new(1, tenant="a"), new(2)], NOW)
    await store.claim("m", 1, {"async": 9}, NOW, LONG)
    assert "jobs_ready_tenants" not in indexes()  # key order does not pay for it
    await store.claim("m", 1, {"async": 9}, NOW, LONG, tenants={})
    assert "jobs_ready_tenants" in indexes()
    conn = sqlite3.connect(store.path)
    try:
        for sql, args in [
            (
                "SELECT id FROM jobs WHERE queue = 0 AND tenant IS ? AND executor IN (?) "
                "ORDER BY k0, k1, k2 LIMIT 5",
                ("a", "async"),
            ),
            (
                "SELECT tenant, k0, k1, k2 FROM jobs WHERE queue = 0 AND tenant > ? "
                "ORDER BY tenant, k0, k1, k2 LIMIT 1",
                ("",),
            ),
        ]:
            plan = " ".join(r[3] for r in conn.execute(f"EXPLAIN QUERY PLAN {sql}", args))
            assert "USING INDEX jobs_ready_tenants" in plan and "TEMP B-TREE" not in plan, plan
    finally:
        conn.close()


async def test_the_hot_path_reads_no_table_in_full(store: SQLiteStore) -> None:
    """Claims, outcomes, heartbeats, the unfinished count and the recent
    attempts each read an index, never every row: planned on a file with a
    long history of completed jobs."""
    await store.add([new(i) for i in range(1, 2001)], NOW)
    await store.claim("m", 2000, {"async": 2000}, NOW, 30)
    await store.record("m", [done(i) for i in range(1, 1999)])  # 1999 and 2000 still run
    await store.add([new(i) for i in range(2001, 2011)], NOW)
    conn = store._conn
    assert conn is not None
    conn.execute("ANALYZE")  # as a long-lived file would have it
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    try:
        await store.claim("m", 2, {"async": 9}, NOW + 40, 30)  # 1999, 2000 lost: taken over
        await store.claim("m", 2, {"async": 9}, NOW + 40, 30)
        await store.record("m", [done(2001, status=FAILED)])
        await store.extend("m", [1999, 2000, 2002], NOW + 80)
        await store.unfinished()
        await store.attempts(since=NOW)
        await store.attempts(job_id=5)
    finally:
        conn.set_trace_callback(None)
    reader = sqlite3.connect(store.path)
    try:
        planned = 0
        for sql in statements:
            if (
                not sql.lstrip()
                .upper()
                .startswith(("SELECT", "UPDATE", "DELETE", "WITH", "INSERT"))
            ):
                continue
            plan = " | ".join(r[3] for r in reader.execute(f"EXPLAIN QUERY PLAN {sql}"))
            planned += 1
            # "SCAN jobs USING INDEX ..." reads an index in order; "SCAN jobs" alone, every row.
            assert not re.search(r"SCAN (jobs|j|attempts|a)\b(?! USING)", plan), (sql, plan)
        assert planned >= 8
    finally:
        reader.close()


# ── outcomes, fencing, leases ────────────────────────────────────────────


async def test_outcomes_are_fenced_on_owner_and_attempt(store: SQLiteStore) -> None:
    await store.add([new(1)], NOW)
    (c,) = await store.claim("m1", 1, {"async": 99}, NOW, 30)
    refused = await store.record("m2", [done(1, c.attempt)])
    assert refused.refused == [1]
    stale = await store.record("m1", [done(1, c.attempt + 1)])
    assert stale.refused == [1]
    ok = await store.record("m1", [done(1, c.attempt, result=b"r")])
    assert ok.refused == []
    job = await store.fetch(1)
    assert job is not None and job.status is js.JobStatus.COMPLETED and job.result == b"r"
    assert job.finished_at == NOW + 1 and job.owner is None
    again = await store.record("m1", [done(1, c.attempt)])  # finished: no second outcome
    assert again.refused == [1]


async def test_an_expired_lease_is_taken_over_and_the_old_owner_is_fenced_out(
    store: SQLiteStore,
) -> None:
    await store.add([new(1)], NOW)
    (c,) = await store.claim("dead", 1, {"async": 99}, NOW, lease=10)
    assert await store.claim("alive", 1, {"async": 99}, NOW + 5, 10) == []  # lease still held
    (taken,) = await store.claim("alive", 1, {"async": 99}, NOW + 11, 10)
    assert taken.id == 1 and taken.lost and taken.attempt == c.attempt
    # The new owner records the lost attempt's failure and a retry...
    retry = Outcome(
        1, taken.attempt, js.JobStatus.RETRY_WAIT, NOW + 11, run_at=NOW + 12, error="worker lost"
    )
    assert (await store.record("alive", [retry])).refused == []
    # ...and the dead member, back from a pause, cannot overwrite it.
    assert (await store.record("dead", [done(1, c.attempt)])).refused == [1]
    (second,) = await store.claim("alive", 1, {"async": 99}, NOW + 12, 10)
    assert second.attempt == 2 and not second.lost
    job = await store.fetch(1)
    assert job is not None and job.last_error == "worker lost"


async def test_a_member_never_takes_over_its_own_running_job(store: SQLiteStore) -> None:
    """Regression (issue 20, ``retry_wait -> completed``): a member whose
    heartbeat could not renew a lease in time (a commit that stalled, an
    outage) took its own still-running attempt as lost and settled it
    RETRY_WAIT under the running worker, whose completion then was an illegal
    transition. Its own expired lease is left to its next heartbeat (or to
    another member, if it is gone)."""
    await store.add([new(1)], NOW)
    (c,) = await store.claim("m", 1, {"async": 99}, NOW, lease=10)
    assert await store.claim("m", 5, {"async": 99}, NOW + 11, 10) == []
    assert await store.extend("m", [1], NOW + 41) == []  # the lease is back
    assert await store.claim("other", 5, {"async": 99}, NOW + 12, 10) == []
    assert (await store.record("m", [done(1, c.attempt)])).refused == []
    job = await store.fetch(1)
    assert job is not None and job.status is js.JobStatus.COMPLETED and job.attempts == 1


async def test_another_member_still_takes_over_an_expired_lease_beside_its_own(
    store: SQLiteStore,
) -> None:
    """Skipping its own rows leaves a member's takeover of others' intact."""
    await store.add([new(1), new(2)], NOW)
    await store.claim("m", 1, {"async": 99}, NOW, lease=10)
    await store.claim("gone", 1, {"async": 99}, NOW, lease=10)
    taken = await store.claim("m", 5, {"async": 99}, NOW + 11, 10)
    assert [(t.id, t.lost) for t in taken] == [(2, True)]


async def test_a_member_looks_for_lost_attempts_at_most_once_a_second(
    store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The look reads every running row, so a member's claims make it at most
    every TAKEOVER_EVERY (and a quarter of the lease); a lost attempt waits for
    the next look, never longer."""
    from jobsched_sqlite import _claim

    looks: list[float] = []
    real = _claim._take_over_lost

    def counted(conn, owner, limit, now, until, *keyed):  # type: ignore[no-untyped-def]
        looks.append(now)
        return real(conn, owner, limit, now, until, *keyed)

    monkeypatch.setattr(_claim, "_take_over_lost", counted)
    await store.add([new(1), new(2)], NOW)
    await store.claim("dead", 1, {"async": 99}, NOW, lease=10)
    (second,) = await store.claim("alive", 1, {"async": 99}, NOW + 9.8, 10)  # a look
    assert (second.id, second.lost) == (2, False)
    await store.add([new(3)], NOW + 9.9)
    # Job 1's lease ran out at NOW + 10, but the last look was 0.5 s ago.
    (fresh,) = await store.claim("alive", 1, {"async": 99}, NOW + 10.3, 10)
    assert (fresh.id, fresh.lost) == (3, False)
    (taken,) = await store.claim("alive", 1, {"async": 99}, NOW + 10.9, 10)
    assert (taken.id, taken.lost) == (1, True)
    assert looks == [NOW, NOW + 9.8, NOW + 10.9]


async def test_a_takeover_says_when_the_dead_owner_was_asked_to_cancel(
    store: SQLiteStore,
) -> None:
    await store.add([new(1), new(2)], NOW)
    await store.claim("dead", 2, {"async": 99}, NOW, lease=10)
    assert await store.cancel([1], NOW + 1) == []  # running: flagged for its owner
    taken = sorted(await store.claim("alive", 2, {"async": 99}, NOW + 11, 10), key=lambda c: c.id)
    assert [(c.id, c.lost, c.cancelled) for c in taken] == [(1, True, True), (2, True, False)]


async def test_heartbeats_keep_a_lease(store: SQLiteStore) -> None:
    await store.add([new(1)], NOW)
    await store.claim("m", 1, {"async": 99}, NOW, lease=10)
    assert await store.extend("m", [1], NOW + 25) == []
    assert await store.claim("other", 1, {"async": 99}, NOW + 20, 10) == []
    assert [c.id for c in await store.claim("other", 1, {"async": 99}, NOW + 26, 10)] == [1]


async def test_a_retry_waits_for_its_time_then_counts_the_next_attempt(store: SQLiteStore) -> None:
    await store.add([new(1)], NOW)
    (c,) = await store.claim("m", 1, {"async": 99}, NOW, 30)
    out = Outcome(
        1, c.attempt, js.JobStatus.RETRY_WAIT, NOW + 1, run_at=NOW + 5, error="E: x", traceback="tb"
    )
    await store.record("m", [out])
    job = await store.fetch(1)
    assert job is not None and job.status is js.JobStatus.RETRY_WAIT and job.last_traceback == "tb"
    assert await store.next_due() == NOW + 5
    assert await store.claim("m", 1, {"async": 99}, NOW + 4, 30) == []
    (again,) = await store.claim("m", 1, {"async": 99}, NOW + 5, 30)
    assert again.attempt == 2


# ── dependencies ─────────────────────────────────────────────────────────


async def test_a_dependent_waits_for_its_upstreams(store: SQLiteStore) -> None:
    await store.add([new(1), new(2), new(3, depends_on=(1, 2))], NOW)
    claims = await store.claim("m", 5, {"async": 99}, NOW, 30)
    assert sorted(c.id for c in claims) == [1, 2]
    await store.record("m", [done(1)])
    assert await store.claim("m", 5, {"async": 99}, NOW, 30) == []
    await store.record("m", [done(2)])
    assert [c.id for c in await store.claim("m", 5, {"async": 99}, NOW, 30)] == [3]


async def test_a_failure_cancels_everything_downstream(store: SQLiteStore) -> None:
    await store.add([new(1), new(2, depends_on=(1,)), new(3, depends_on=(2,)), new(4)], NOW)
    (c, _) = await store.claim("m", 5, {"async": 99}, NOW, 30)
    assert c.id == 1
    recorded = await store.record("m", [done(1, status=js.JobStatus.FAILED, error="E: boom")])
    assert [(ch.id, ch.status, ch.error) for ch in recorded.changes] == [
        (2, js.JobStatus.CANCELLED, "upstream job-1 failed"),
        (3, js.JobStatus.CANCELLED, "upstream job-2 cancelled"),
    ]
    assert await store.unfinished() == 1  # job 4, running


async def test_adding_after_an_upstream_failed_cancels_at_once(store: SQLiteStore) -> None:
    await store.add([new(1)], NOW)
    await store.claim("m", 1, {"async": 99}, NOW, 30)
    await store.record("m", [done(1, status=js.JobStatus.TIMED_OUT)])
    changes = await store.add([new(2, depends_on=(1,)), new(3, depends_on=(99,))], NOW)
    assert [(c.id, c.error) for c in changes] == [
        (2, "upstream job-1 timed_out"),
        (3, "upstream job-99 is not in the store"),
    ]


async def test_released_claims_are_claimable_again_uncounted(store: SQLiteStore) -> None:
    await store.add([new(1), new(2)], NOW)
    claims = await store.claim("stopping", 2, {"async": 99}, NOW, 30)
    out = Outcome(2, claims[1].attempt, js.JobStatus.RETRY_WAIT, NOW, run_at=NOW, error="E")
    await store.record("stopping", [out])
    (again,) = await store.claim("stopping", 1, {"async": 99}, NOW, 30)
    assert again.attempt == 2
    await store.release("stopping", [1, 2])
    await store.release("someone-else", [1])  # not theirs: no effect
    retaken = await store.claim("next", 5, {"async": 99}, NOW, 30)
    assert sorted((c.id, c.attempt) for c in retaken) == [(1, 1), (2, 2)]
    job = await store.fetch(2)
    assert job is not None and job.status is js.JobStatus.RUNNING and job.owner == "next"


# ── cancel, join, prune ──────────────────────────────────────────────────


async def test_cancel_a_queued_job_with_its_dependents(store: SQLiteStore) -> None:
    await store.add([new(1, run_at=NOW + 100), new(2, depends_on=(1,))], NOW)
    changes = await store.cancel([1, 12345], NOW)
    assert [(c.id, c.status) for c in changes] == [
        (1, js.JobStatus.CANCELLED),
        (2, js.JobStatus.CANCELLED),
    ]
    assert await store.next_due() is None and await store.unfinished() == 0


async def test_cancel_a_running_job_reaches_its_owner(store: SQLiteStore) -> None:
    await store.add([new(1), new(2)], NOW)
    await store.claim("m", 2, {"async": 99}, NOW, 30)
    assert await store.cancel([2], NOW) == []  # running: flagged, not finished here
    assert await store.extend("m", [1, 2], NOW + 30) == [2]


async def test_prune_keeps_the_newest_finished_jobs(
    store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    import jobsched_sqlite._store as impl

    monkeypatch.setattr(impl, "PRUNE_BATCH", 3)  # several short transactions
    await store.add([new(i) for i in range(1, 11)], NOW)
    claims = await store.claim("m", 10, {"async": 99}, NOW, 30)
    await store.record(
        "m", [Outcome(c.id, c.attempt, js.JobStatus.COMPLETED, NOW + c.id) for c in claims[:8]]
    )
    assert await store.prune(keep=3) == 5
    kept = [i for i in range(1, 11) if await store.fetch(i) is not None]
    assert kept == [6, 7, 8, 9, 10]  # the 3 newest finished, and the 2 still running


async def test_prune_goes_past_a_batch_the_guard_holds_part_of_and_takes_the_edges(
    store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Batches of 3: the two oldest, upstreams of the waiting 11, are in
    every batch's window by count, which goes on while a batch freed some;
    the edges of the pruned jobs go (5 -> 13), the waiting job's stay."""
    import jobsched_sqlite._store as impl

    monkeypatch.setattr(impl, "PRUNE_BATCH", 3)
    await store.add([new(i) for i in range(1, 11)], NOW)
    claims = await store.claim("m", 10, {"async": 99}, NOW, 30)
    await store.record(
        "m", [Outcome(c.id, c.attempt, js.JobStatus.COMPLETED, NOW + c.id) for c in claims]
    )
    await store.add([new(12), new(11, depends_on=(1, 2, 12)), new(13, depends_on=(5,))], NOW)
    claims = await store.claim("m", 10, {"async": 99}, NOW, 30)
    (c13,) = [c for c in claims if c.id == 13]
    await store.release("m", [c.id for c in claims if c.id != 13])
    await store.record("m", [Outcome(13, c13.attempt, js.JobStatus.COMPLETED, NOW + 10.5)])

    def edges() -> list[tuple[int, int]]:
        with closing(sqlite3.connect(store.path)) as conn:
            return conn.execute("SELECT upstream, downstream FROM deps ORDER BY 1, 2").fetchall()

    assert edges() == [(1, 11), (2, 11), (5, 13), (12, 11)]
    assert await store.prune(keep=0) == 9  # 3..10 and 13; never 1 or 2
    assert [i for i in range(1, 14) if await store.fetch(i) is not None] == [1, 2, 11, 12]
    assert edges() == [(1, 11), (2, 11), (12, 11)]


async def test_prune_reads_its_indexes_from_the_oldest_end(store: SQLiteStore) -> None:
    """By age, one status's aged rows from jobs_ended; by count, the oldest
    from jobs_finished: no table scan, no sort, no OFFSET over the kept rows.
    A store made before the index gets it when it is opened."""
    from jobsched_sqlite import _sql

    conn = sqlite3.connect(store.path)
    try:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        assert "jobs_ended" in names
        for sql, args, index in [
            (_sql.AGED, ("failed", NOW, 1000), "jobs_ended"),
            (_sql.OLDEST, (1000,), "jobs_finished"),
        ]:
            plan = " ".join(r[3] for r in conn.execute(f"EXPLAIN QUERY PLAN {sql}", args))
            assert f"INDEX {index}" in plan and "TEMP B-TREE" not in plan, plan
            # The retention guard: per candidate, the deps key by upstream,
            # then the dependent by id; never a scan.
            assert "SEARCH d USING PRIMARY KEY (upstream=?)" in plan, plan
            assert "SEARCH w USING INTEGER PRIMARY KEY" in plan and "SCAN" not in plan, plan
        # A pruned job's edges, both ways, by index.
        for sql, index in [("upstream", "PRIMARY KEY"), ("downstream", "INDEX deps_downstream")]:
            query = f"EXPLAIN QUERY PLAN DELETE FROM deps WHERE {sql} IN (?, ?)"
            plan = " ".join(r[3] for r in conn.execute(query, (1, 2)))
            assert f"SEARCH deps USING {index}" in plan or f"COVERING {index}" in plan, plan
        conn.execute("DROP INDEX jobs_ended")  # as a store made by an older jobsched
        conn.commit()
    finally:
        conn.close()
    again = SQLiteStore(store.url)
    await again.open()
    await again.close()
    conn = sqlite3.connect(store.path)
    try:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        assert "jobs_ended" in names
    finally:
        conn.close()


async def test_the_store_is_usable_from_many_threads(tmp_path: Path) -> None:
    """reserve_ids is synchronous; it must not collide with the store's own thread."""
    store = SQLiteStore(url_for(tmp_path / "j.db"))
    await store.open()
    seen: list[int] = []

    def reserve() -> None:
        for _ in range(50):
            seen.append(store.reserve_ids(10))

    threads = [threading.Thread(target=reserve) for _ in range(4)]
    for t in threads:
        t.start()
    await store.add([new(i) for i in range(1, 200)], NOW)
    for t in threads:
        t.join()
    assert len(set(seen)) == 200
    await store.close()


# ── stored schedules ─────────────────────────────────────────────────────


async def test_each_fire_time_makes_one_job_whoever_fires_it(store: SQLiteStore) -> None:
    await store.put_schedules([("s", b"P", NOW)])
    assert await store.next_due() == NOW
    (due,) = await store.claim_schedules("a", NOW, 30)
    assert (due.id, due.fire_time, due.last_status) == ("s", NOW, None)
    assert await store.claim_schedules("b", NOW, 30) == []  # a holds it
    first = new(1, schedule="s", fire_time=NOW)
    assert await store.fire("b", "s", NOW, NOW + 10, first) is False  # not b's claim
    assert await store.fire("a", "s", NOW, NOW + 10, first) is True
    assert await store.fire("a", "s", NOW, NOW + 10, first) is False  # made already
    # A member whose claim lapsed and that fires a time already made: refused
    # by the unique index, and nothing else changes.
    await store.put_schedules([("s", b"P-replaced", NOW)])
    (again,) = await store.claim_schedules("b", NOW, 30)
    assert again.last_status is js.JobStatus.PENDING  # a replaced schedule keeps its last job
    assert await store.fire("b", "s", NOW, NOW + 10, new(2, schedule="s", fire_time=NOW)) is False
    assert await store.fetch(2) is None
    (later,) = await store.claim_schedules("b", NOW + 60, 30)
    assert later.fire_time == NOW  # the refused fire left the schedule as it was


async def test_removed_schedules_are_gone(store: SQLiteStore) -> None:
    await store.put_schedules([("s", b"P", NOW), ("t", b"P", NOW + 5)])
    await store.remove_schedules(["s", "unknown"])
    assert await store.next_due() == NOW + 5
    assert [d.id for d in await store.claim_schedules("a", NOW + 5, 30)] == ["t"]


# ── reads and actions for operators ──────────────────────────────────────

RUNNING, FAILED = js.JobStatus.RUNNING, js.JobStatus.FAILED


async def test_jobs_lists_newest_first_in_pages(store: SQLiteStore) -> None:
    await store.add([new(i) for i in range(1, 8)] + [new(8, depends_on=(6, 7))], NOW)
    first = await store.jobs(limit=3)
    assert [j.id for j in first] == [8, 7, 6]
    assert first[0].depends_on == (6, 7) and first[0].payload == b"P\x08"
    second = await store.jobs(limit=3, before=first[-1].id)
    assert [j.id for j in second] == [5, 4, 3]
    last = await store.jobs(limit=3, before=second[-1].id)
    assert [j.id for j in last] == [2, 1]
    assert await store.jobs(limit=3, before=1) == []
    assert [j.id for j in await store.jobs()] == list(range(8, 0, -1))  # default: 50


async def test_jobs_filters_by_status(store: SQLiteStore) -> None:
    await store.add([new(i) for i in range(1, 6)], NOW)
    claims = await store.claim("m", 3, {"async": 99}, NOW, 30)
    assert [c.id for c in claims] == [1, 2, 3]
    await store.record("m", [done(1, status=FAILED, error="E: x"), done(2)])
    failed = await store.jobs(statuses=[FAILED])
    assert [(j.id, j.status, j.last_error) for j in failed] == [(1, FAILED, "E: x")]
    both = await store.jobs(statuses={RUNNING, js.JobStatus.PENDING})
    assert [(j.id, j.status) for j in both] == [
        (5, js.JobStatus.PENDING),
        (4, js.JobStatus.PENDING),
        (3, RUNNING),
    ]
    assert [j.id for j in await store.jobs(statuses=[RUNNING, FAILED], limit=1, before=3)] == [1]


async def test_counts_are_by_status_and_executor(store: SQLiteStore) -> None:
    assert await store.counts() == {}
    await store.add([new(1), new(2), new(3, executor="process"), new(4, executor="process")], NOW)
    await store.claim("m", 1, {"process": 99}, NOW, 30)
    await store.record("m", [done(3, status=FAILED)])
    await store.claim("m", 1, {"async": 99}, NOW, 30)
    assert await store.counts() == {
        (RUNNING, "async"): 1,
        (js.JobStatus.PENDING, "async"): 1,
        (FAILED, "process"): 1,
        (js.JobStatus.PENDING, "process"): 1,
    }


async def test_attempts_record_a_retry_and_its_next_attempt(store: SQLiteStore) -> None:
    await store.add([new(1)], NOW)
    await store.claim("m1", 1, {"async": 99}, NOW, 30)
    (running,) = await store.attempts(job_id=1)
    assert (running.attempt, running.owner, running.started_at) == (1, "m1", NOW)
    assert (running.status, running.finished_at, running.name) == (RUNNING, None, "j1")
    out = Outcome(1, 1, js.JobStatus.RETRY_WAIT, NOW + 1, run_at=NOW + 2, error="E: flaky")
    await store.record("m1", [out])
    await store.claim("m2", 1, {"async": 99}, NOW + 2, 30)
    await store.record("m2", [Outcome(1, 2, js.JobStatus.COMPLETED, NOW + 3)])
    history = await store.attempts(job_id=1)
    assert [
        (a.attempt, a.owner, a.started_at, a.finished_at, a.status, a.error) for a in history
    ] == [
        (1, "m1", NOW, NOW + 1, js.JobStatus.RETRY_WAIT, "E: flaky"),
        (2, "m2", NOW + 2, NOW + 3, js.JobStatus.COMPLETED, None),
    ]


async def test_a_refused_outcome_leaves_the_attempt_alone(store: SQLiteStore) -> None:
    await store.add([new(1)], NOW)
    await store.claim("m1", 1, {"async": 99}, NOW, 30)
    assert (await store.record("m2", [done(1, status=FAILED)])).refused == [1]
    (a,) = await store.attempts(job_id=1)
    assert (a.owner, a.status, a.finished_at) == ("m1", RUNNING, None)


async def test_a_worker_lost_takeover_closes_the_lost_attempt(store: SQLiteStore) -> None:
    await store.add([new(1)], NOW)
    await store.claim("dead", 1, {"async": 99}, NOW, lease=10)
    (taken,) = await store.claim("alive", 1, {"async": 99}, NOW + 11, 10)
    assert taken.lost
    # Taken over, not yet settled: the attempt still runs, as the dead member's.
    (lost,) = await store.attempts(job_id=1)
    assert (lost.owner, lost.status) == ("dead", RUNNING)
    out = Outcome(1, 1, js.JobStatus.RETRY_WAIT, NOW + 11, run_at=NOW + 12, error="worker lost")
    await store.record("alive", [out])
    await store.claim("alive", 1, {"async": 99}, NOW + 12, 10)
    history = await store.attempts(job_id=1)
    assert [(a.attempt, a.owner, a.status, a.finished_at, a.error) for a in history] == [
        (1, "dead", js.JobStatus.RETRY_WAIT, NOW + 11, "worker lost"),
        (2, "alive", RUNNING, None, None),
    ]


async def test_a_takeover_says_when_the_lost_attempt_was_last_renewed(
    store: SQLiteStore,
) -> None:
    """A lost attempt ran until its owner last renewed the lease (the old
    lease's end less the lease), not until the takeover; never before it started."""
    await store.add([new(1), new(2)], NOW)
    await store.claim("dead", 2, {"async": 99}, NOW, lease=10)
    await store.extend("dead", [1], NOW + 4 + 10)  # renewed at NOW + 4
    taken = await store.claim("alive", 2, {"async": 99}, NOW + 30, 10)
    assert {c.id: c.renewed_at for c in taken} == {1: NOW + 4, 2: NOW}
    # A shorter lease than the owner's would put the renewal before the start.
    await store.add([new(3)], NOW + 30)
    await store.claim("dead", 1, {"async": 99}, NOW + 30, lease=10)
    (c,) = await store.claim("alive", 1, {"async": 99}, NOW + 100, lease=60)
    assert c.id == 3 and c.renewed_at == NOW + 30


async def test_only_attempts_that_did_not_complete_have_rows(store: SQLiteStore) -> None:
    await store.add([new(1), new(2)], NOW)
    await store.claim("m", 2, {"async": 99}, NOW, 30)
    await store.record("m", [done(1, status=FAILED, error="E: x"), done(2)])
    conn = sqlite3.connect(store.path)
    # The claim wrote none; the completed attempt is its job's row.
    assert conn.execute("SELECT job_id, owner, started_at FROM attempts").fetchall() == [
        (1, "m", NOW)
    ]
    conn.close()
    (failed,) = await store.attempts(job_id=1)
    assert (failed.owner, failed.status, failed.error, failed.started_at) == (
        "m", FAILED, "E: x", NOW,
    )  # fmt: skip
    (completed,) = await store.attempts(job_id=2)
    assert (completed.owner, completed.status, completed.finished_at) == (
        "m",
        js.JobStatus.COMPLETED,
        NOW + 1,
    )


async def test_a_released_claim_leaves_no_attempt(store: SQLiteStore) -> None:
    await store.add([new(1)], NOW)
    await store.claim("stopping", 1, {"async": 99}, NOW, 30)
    await store.release("stopping", [1])
    assert await store.attempts(job_id=1) == []
    (again,) = await store.claim("next", 1, {"async": 99}, NOW + 1, 30)
    (a,) = await store.attempts(job_id=1)
    assert (again.attempt, a.attempt, a.owner, a.started_at) == (1, 1, "next", NOW + 1)


async def test_attempts_since_keep_the_running_and_the_recent(store: SQLiteStore) -> None:
    await store.add([new(i) for i in range(1, 5)], NOW)
    await store.claim("m", 4, {"async": 99}, NOW, 30)
    await store.record(
        "m", [Outcome(i, 1, js.JobStatus.COMPLETED, NOW + 10 * i) for i in (1, 2, 3)]
    )
    recent = await store.attempts(since=NOW + 20)
    assert sorted(a.job_id for a in recent) == [2, 3, 4]  # 4 still runs
    assert [a.job_id for a in await store.attempts(since=NOW + 20, job_id=3)] == [3]
    assert len(await store.attempts()) == 4


async def test_attempts_keep_the_newest_when_over_the_limit(store: SQLiteStore) -> None:
    await store.add([new(i, (float(i),)) for i in range(1, 6)], NOW)
    for i in range(1, 6):  # one claim each, a second apart
        await store.claim("m", 1, {"async": 99}, NOW + i, 30)
    newest = await store.attempts(limit=2)
    assert [(a.job_id, a.started_at) for a in newest] == [(4, NOW + 4), (5, NOW + 5)]


async def test_schedules_soonest_first_with_their_firing_member(store: SQLiteStore) -> None:
    import time

    now = time.time()
    assert await store.schedules() == []
    await store.put_schedules([("late", b"P", now + 60), ("soon", b"P", now - 1)])
    await store.claim_schedules("a", now, lease=300)  # "soon" is due: a fires it
    listed = await store.schedules()
    assert [(s.id, s.next_fire, s.owner) for s in listed] == [
        ("soon", now - 1, "a"),
        ("late", now + 60, None),
    ]
    await store.put_schedules([("lapsed", b"P", now - 5)])
    (lapsed,) = await store.claim_schedules("b", now - 5, lease=1)  # its lease ran out
    assert lapsed.id == "lapsed"
    assert [(s.id, s.owner) for s in await store.schedules()] == [
        ("lapsed", None),
        ("soon", "a"),
        ("late", None),
    ]


@pytest.mark.parametrize("status", [FAILED, js.JobStatus.TIMED_OUT, js.JobStatus.CANCELLED])
async def test_retry_requeues_a_finished_job_and_counts_on(
    store: SQLiteStore, status: js.JobStatus
) -> None:
    await store.add([new(1)], NOW)
    await store.claim("m", 1, {"async": 99}, NOW, 30)
    await store.record("m", [done(1, status=status, error="E: no")])
    assert await store.retry([1], NOW + 50) == [1]
    job = await store.fetch(1)
    assert job is not None and job.status is js.JobStatus.PENDING
    assert (job.run_at, job.finished_at, job.attempts) == (NOW + 50, None, 1)
    assert await store.unfinished() == 1
    (again,) = await store.claim("m", 1, {"async": 99}, NOW + 50, 30)
    assert (again.id, again.attempt, again.lost) == (1, 2, False)
    # The old attempt stays fenced out; the new one is attempt 2.
    assert (await store.record("m", [done(1, attempt=1)])).refused == [1]
    assert (await store.record("m", [done(1, attempt=2)])).refused == []
    assert [(a.attempt, a.status) for a in await store.attempts(job_id=1)] == [
        (1, status),
        (2, js.JobStatus.COMPLETED),
    ]


async def test_retry_leaves_other_jobs_alone(store: SQLiteStore) -> None:
    await store.add([new(1), new(2), new(3), new(4, run_at=NOW + 99)], NOW)
    await store.claim("m", 3, {"async": 99}, NOW, 30)
    out = Outcome(2, 1, js.JobStatus.RETRY_WAIT, NOW + 1, run_at=NOW + 5, error="E")
    await store.record("m", [done(1), out])  # 1 completed, 2 retry-waiting, 3 running
    before = {i: await store.fetch(i) for i in range(1, 5)}
    assert await store.retry([1, 2, 3, 4, 404], NOW + 2) == []
    assert {i: await store.fetch(i) for i in range(1, 5)} == before
    assert await store.retry([], NOW) == []


async def test_prune_takes_the_attempts_with_their_jobs(store: SQLiteStore) -> None:
    await store.add([new(1), new(2)], NOW)
    await store.claim("m", 2, {"async": 99}, NOW, 30)
    await store.record("m", [Outcome(1, 1, FAILED, NOW + 1)])
    await store.record("m", [Outcome(2, 1, FAILED, NOW + 2)])
    assert await store.prune(keep=1) == 1
    assert [a.job_id for a in await store.attempts()] == [2]
    conn = sqlite3.connect(store.path)
    assert conn.execute("SELECT job_id FROM attempts").fetchall() == [(2,)]  # not just hidden
    conn.close()


# ── group commit ─────────────────────────────────────────────────────────


async def test_writes_asked_together_share_one_commit(store: SQLiteStore) -> None:
    await store.add([new(1), new(2)], NOW)
    (first,) = await store.claim("m", 1, {"async": 99}, NOW, 30)
    groups = store._group.groups
    got: dict[str, object] = {}

    async def outcome() -> None:
        got["recorded"] = await store.record("m", [done(first.id)])

    async def next_claim() -> None:
        got["claimed"] = await store.claim("m", 1, {"async": 99}, NOW, 30)

    async with anyio.create_task_group() as tg:  # the committer and the claimer, at once
        tg.start_soon(outcome)
        tg.start_soon(next_claim)
    assert store._group.groups == groups + 1  # one transaction, one fsync
    assert got["recorded"].refused == []  # type: ignore[attr-defined]
    assert [c.id for c in got["claimed"]] == [2]  # type: ignore[attr-defined]


async def test_a_write_that_fails_in_a_group_is_rolled_back_alone(store: SQLiteStore) -> None:
    await store.put_schedules([("s", b"P", NOW)])
    await store.claim_schedules("a", NOW, 30)
    assert await store.fire("a", "s", NOW, NOW + 10, new(1, schedule="s", fire_time=NOW))
    await store.put_schedules([("s", b"P-replaced", NOW)])  # as if a's fire had not moved it
    await store.claim_schedules("a", NOW, 30)
    results: dict[str, object] = {}

    async def refired() -> None:  # made already: its transaction part is undone
        job = new(2, schedule="s", fire_time=NOW)
        results["fire"] = await store.fire("a", "s", NOW, NOW + 10, job)

    async def added() -> None:
        results["add"] = await store.add([new(3)], NOW)

    groups = store._group.groups
    async with anyio.create_task_group() as tg:
        tg.start_soon(refired)
        tg.start_soon(added)
    assert store._group.groups == groups + 1
    assert results == {"fire": False, "add": []}
    assert await store.fetch(2) is None and await store.fetch(3) is not None
    (still,) = await store.claim_schedules("b", NOW + 60, 30)
    assert still.fire_time == NOW  # the refused fire did not move the schedule


async def test_a_write_whose_caller_is_cancelled_while_queued_never_runs(
    store: SQLiteStore,
) -> None:
    holding, release = threading.Event(), threading.Event()
    ran: list[str] = []

    def slow(conn: sqlite3.Connection) -> None:
        holding.set()
        release.wait(10)
        ran.append("slow")

    async def queue_write(name: str, scope: anyio.CancelScope) -> None:
        def fn(conn: sqlite3.Connection) -> None:
            ran.append(name)

        with scope:
            # The write is queued before this task first waits, so once the
            # test task runs again it is in the queue.
            await store._write_async(fn)

    async with anyio.create_task_group() as tg:
        tg.start_soon(store._write_async, slow)
        await anyio.to_thread.run_sync(holding.wait, 10)  # a group is running
        dropped = anyio.CancelScope()
        await tg.start(_started, queue_write, "dropped", dropped)
        await tg.start(_started, queue_write, "kept", anyio.CancelScope())
        assert len(store._group._queue) == 2  # both wait for the running group
        dropped.cancel()
        release.set()
    assert ran == ["slow", "kept"]  # the next group ran, led by the next caller


async def _started(
    fn: Any, name: str, scope: anyio.CancelScope, *, task_status: anyio.abc.TaskStatus[None]
) -> None:
    task_status.started()  # returns to the starter once fn has run up to its first wait
    await fn(name, scope)


async def test_writes_fail_together_when_the_file_stays_locked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jobsched_sqlite import _schema

    monkeypatch.setattr(_schema, "BUSY_TIMEOUT_MS", 50)
    store = SQLiteStore(url_for(tmp_path / "jobs.db"))
    await store.open()
    other = sqlite3.connect(tmp_path / "jobs.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    errors: list[BaseException] = []

    async def write(job_id: int) -> None:
        try:
            await store.add([new(job_id)], NOW)
        except StoreUnavailableError as exc:  # transient: the scheduler retries it
            errors.append(exc)

    async with anyio.create_task_group() as tg:
        tg.start_soon(write, 1)
        tg.start_soon(write, 2)
    assert len(errors) == 2
    for error in errors:
        assert "locked" in str(error) and str(tmp_path / "jobs.db") in str(error)
        assert isinstance(error.__cause__, sqlite3.OperationalError)
    other.execute("ROLLBACK")
    other.close()
    await store.add([new(3)], NOW)  # the store works again once the lock is gone
    assert await store.fetch(3) is not None and await store.fetch(1) is None
    await store.close()


async def test_a_closed_store_refuses_writes_too(tmp_path: Path) -> None:
    store = SQLiteStore(url_for(tmp_path / "jobs.db"))
    with pytest.raises(StoreUnavailableError, match="not open"):
        await store.add([new(1)], NOW)


# ── what the operator's tools rely on ────────────────────────────────────


async def test_exists_asks_without_creating_the_schema(tmp_path: Path) -> None:
    """exists() reads a file without writing it: the CLI's read commands refuse
    a file without jobsched's tables instead of creating them."""
    path = tmp_path / "jobs.db"
    store = SQLiteStore(url_for(path))
    assert await store.exists() is False and not path.exists()
    path.touch()  # an empty file: open() would create the schema in it
    assert await store.exists() is False and path.stat().st_size == 0
    await store.open()
    await store.close()
    assert await store.exists() is True
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"not a database" * 100)
    assert await SQLiteStore(url_for(garbage)).exists() is None  # open() says why


def test_the_prune_cadence_follows_a_small_history_limit() -> None:
    from jobsched._engine._link._timing import PRUNE_EVERY, prune_every

    assert [prune_every(n) for n in (0, 1, 5, 999)] == [1, 1, 5, 999]
    assert prune_every(10_000) == PRUNE_EVERY == 1000


@pytest.mark.parametrize("limit", [0, 5])
async def test_history_limit_bounds_a_small_history_and_is_kept_at_stop(
    tmp_path: Path, limit: int
) -> None:
    """At most min(2 x limit, limit + 1000) finished jobs at each prune while
    it runs, and the limit itself once the scheduler stopped.

    A count read between a commit and its prune may hold one more batch (up
    to a wave of 20 here); before, nothing was pruned until 1,000 outcomes.
    """
    url = url_for(tmp_path / "jobs.db")
    counts: list[int] = []

    def finished() -> int:
        # closing(): sqlite3's own context manager commits but leaves it open.
        with contextlib.closing(sqlite3.connect(tmp_path / "jobs.db")) as conn:
            return conn.execute(
                "SELECT count(*) FROM jobs WHERE finished_at IS NOT NULL"
            ).fetchone()[0]

    async with js.JobScheduler(store=url, history_limit=limit, num_workers=4) as s:
        for _ in range(6):
            for _ in range(20):
                s.submit(js.FunctionJob(len, ("abc",)))
            with anyio.fail_after(60):
                await s.join()
            await s.flush()
            counts.append(finished())
    assert max(counts) <= 2 * limit + 20, counts
    assert finished() == limit


class _PruneFails(SQLiteStore):
    """Its prune fails as a store that went away does."""

    async def prune(self, keep: int) -> int:
        raise StoreUnavailableError("planned outage (prune)")


async def test_a_prune_at_stop_that_fails_leaves_stop_quiet(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The store away at stop: the prune is left to the next scheduler, and
    stop() neither raises nor waits for it."""
    store = _PruneFails(url_for(tmp_path / "jobs.db"))
    async with js.JobScheduler(store=store, history_limit=5) as s:
        for _ in range(3):  # below the cadence: only the stop prunes
            s.submit(js.FunctionJob(len, ("abc",)))
        with anyio.fail_after(60):
            await s.join()
    assert "planned outage (prune)" in caplog.text  # the outage was logged, not raised
    with contextlib.closing(sqlite3.connect(tmp_path / "jobs.db")) as conn:
        assert conn.execute("SELECT count(*) FROM jobs").fetchone() == (3,)


async def test_ids_of_ones_own_go_in_by_the_batch_each_unless_held(store: SQLiteStore) -> None:
    """A batch of jobs with ids of their own (more than one look-up's worth of
    ids): the ones the store holds, or that come twice in the batch, are
    flagged existed and the first job stands; plain jobs, a tenant's job and
    one with an upstream in the same batch go in as well."""
    held = [new(-i, payload=b"first", own_id=True) for i in range(1, 4)]
    await store.add(held, NOW)
    plain = store.reserve_ids(1)  # a plain job's number, as the scheduler takes it
    batch = [
        *(new(-i, own_id=True) for i in range(1, 701)),
        new(-5, payload=b"again", own_id=True),  # a second -5 in this batch
        new(-900, own_id=True, tenant="acme"),
        new(plain),
        new(-901, own_id=True, depends_on=(-900,)),
        new(-2, own_id=True, depends_on=(plain,)),  # held: nothing is added for it
    ]
    changes = await store.add(batch, NOW)
    assert changes == []
    existed = {job.id for job in batch if job.existed}
    assert existed == {-1, -2, -3, -5}
    assert [job.existed for job in batch if job.id == -5] == [False, True]
    assert (await store.fetch(-2)).payload == b"first"  # type: ignore[union-attr]
    assert (await store.fetch(-5)).payload == b"P" + bytes([-5 % 256])  # type: ignore[union-attr]
    assert (await store.fetch(-900)).tenant == "acme"  # type: ignore[union-attr]
    dependent = await store.fetch(-901)
    assert dependent is not None and dependent.status is js.JobStatus.PENDING
    assert await store.unfinished() == 700 + 3


def _rows(path: Path, sql: str) -> list[tuple[Any, ...]]:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return conn.execute(sql).fetchall()


async def test_own_id_rows_are_numbered_in_order_and_known_by_their_ids(
    tmp_path: Path, store: SQLiteStore
) -> None:
    """Jobs with ids of their own take rows in rowid order (the jobs table's
    B-tree stays append-only), own_ids maps each id's key to its row, and
    every operation takes and gives the ids the scheduler knows (the keys)."""
    up, down, other = -(2**62), -7, -(2**40)
    plain = store.reserve_ids(1)
    await store.add(
        [
            new(up, own_id=True),
            new(down, own_id=True, depends_on=(up,)),
            new(other, own_id=True, run_at=NOW + LONG),
        ],
        NOW,
    )
    await store.add([new(plain, depends_on=(down,))], NOW)
    rows = [row for (row,) in _rows(tmp_path / "jobs.db", "SELECT id FROM jobs ORDER BY id")]
    assert rows == sorted(rows) and min(rows) > 0 and len(rows) == 4
    assert _rows(tmp_path / "jobs.db", "SELECT own_key FROM own_ids ORDER BY job") == [
        (up,),
        (down,),
        (other,),
    ]
    assert [j.id for j in await store.jobs()] == [other, down, up, plain]  # newest first
    assert (await store.jobs(before=other))[0].id == down  # a page's cursor, an id
    assert (await store.fetch(plain)).depends_on == (down,)  # type: ignore[union-attr]
    assert (await store.fetch(down)).depends_on == (up,)  # type: ignore[union-attr]
    (claimed,) = await store.claim("m", 5, {"async": 99}, NOW, 30)
    assert claimed.id == up  # the only job ready
    assert await store.extend("m", [up], NOW + 60) == []
    await store.cancel([up], NOW)  # running: flagged for its owner
    assert await store.extend("m", [up], NOW + 60) == [up]
    recorded = await store.record("m", [done(up, status=js.JobStatus.FAILED, error="E: no")])
    assert recorded.refused == []
    assert [(c.id, c.error) for c in recorded.changes] == [
        (down, f"upstream job-{up} failed"),
        (plain, f"upstream job-{down} cancelled"),
    ]
    assert [(a.job_id, a.status) for a in await store.attempts(job_id=up)] == [
        (up, js.JobStatus.FAILED)
    ]
    assert await store.retry([up, down], NOW) == [up, down]
    assert (await store.fetch(down)).status is js.JobStatus.PENDING  # type: ignore[union-attr]
    assert (await store.record("m", [done(other)])).refused == [other]  # never claimed
    changes = await store.cancel([other, down, up], NOW)
    assert {c.id for c in changes} == {other, down, up}  # plain: cancelled already
    assert await store.prune(keep=0) == 4
    assert _rows(tmp_path / "jobs.db", "SELECT * FROM own_ids") == []
    again = new(up, own_id=True)
    await store.add([again], NOW)  # pruned: the id may be used again
    assert not again.existed and (await store.fetch(up)) is not None


async def test_a_file_of_the_previous_code_keeps_its_own_id_jobs(tmp_path: Path) -> None:
    """A file written before own_ids, its own-id rows keyed by the id's hash:
    the new code finds them by their ids (fetch, wait, result, a dependency,
    cancel, the CLI's look-up), never adds one again, and numbers new ones
    in rowid order."""
    from sample_jobs import Ok

    from jobsched._jobs._ids import own_number

    path = tmp_path / "jobs.db"
    url = url_for(path)
    async with js.JobScheduler(store=url, num_workers=0) as s:
        s.submit(Ok("old a"), job_id="old-a")
        s.submit(Ok("old b"), job_id="old-b", delay=3600)
        await s.flush()
    # The previous code's layout: the rows keyed by the hash, no own_ids table.
    with contextlib.closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("UPDATE jobs SET id = (SELECT own_key FROM own_ids WHERE job = jobs.id)")
        conn.execute("DROP TABLE own_ids")
    assert sorted(_rows(path, "SELECT id FROM jobs")) == sorted(
        [(own_number("old-a"),), (own_number("old-b"),)]
    )
    async with js.JobScheduler(store=url, num_workers=2) as s:
        assert s.submit(Ok("again"), job_id="old-a") == "old-a"
        assert await s.enqueue(Ok("again"), job_id="old-b") == "old-b"
        down = s.submit(Ok("down"), depends_on=["old-a"], job_id="new-c")
        with anyio.fail_after(60):
            assert await s.result("old-a") == "old a"  # the first job stands
            assert await s.result(down) == "down"
        assert s.cancel("old-b")
        with anyio.fail_after(60):
            held = await s.wait("old-b")
        assert held.job_id == "old-b" and held.status is js.JobStatus.CANCELLED
    store = SQLiteStore(url)
    await store.open()
    try:
        found = await store.fetch(own_number("old-a"))  # the CLI's look-up of an own id
        assert found is not None and found.status is js.JobStatus.COMPLETED
        added = await store.fetch(own_number("new-c"))
        assert added is not None and added.status is js.JobStatus.COMPLETED
    finally:
        await store.close()
    assert len(_rows(path, "SELECT id FROM jobs")) == 3
    assert [k for (k,) in _rows(path, "SELECT own_key FROM own_ids")] == [own_number("new-c")]
    assert _rows(path, "SELECT count(*) FROM jobs WHERE id > 0") == [(1,)]
