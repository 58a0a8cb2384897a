"""Named queues in the SQLite file: how the store keeps them (the semantics,
shared with every store, are the conformance suite's
jobsched/store/testing/test_queues.py).

The column ``queue_name`` and the index ``jobs_ready_queues`` come with the
first named-queue job, without a schema version (see jobsched_sqlite/_queues.py):
a file without one pays nothing, a schema-3 file of the code before keeps
working, and a member that opened the file before sees them at once.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

import jobsched as js
from jobsched.store import DEFAULT_QUEUE, Claimed, NewJob, Outcome
from jobsched_sqlite import SQLiteStore, _schema

pytestmark = pytest.mark.anyio

NOW = 1_700_000_000.0
ALL = {"async": 99}
S = js.JobStatus


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the store's threads do not run on trio's mock clock


def url_for(path: Path) -> str:
    return f"sqlite:///{path}"


@pytest.fixture
async def store(tmp_path: Path):  # type: ignore[no-untyped-def]
    s = SQLiteStore(url_for(tmp_path / "jobs.db"))
    await s.open()
    yield s
    await s.close()


def new(job_id: int, key: float, queue: str = DEFAULT_QUEUE, **kw: object) -> NewJob:
    fields: dict[str, object] = {
        "name": f"j{job_id}",
        "executor": "async",
        "run_at": NOW,
        "submitted_at": NOW,
        "payload": b"P" + job_id.to_bytes(4, "big"),
    }
    fields.update(kw)
    return NewJob(job_id, key=(key,), queue=queue, **fields)  # type: ignore[arg-type]


def ids(claims: list[Claimed]) -> list[int]:
    return [c.id for c in claims]


def layout(path: Path) -> tuple[bool, bool]:
    """Whether the file has the column, and the index."""
    conn = sqlite3.connect(path)
    try:
        columns = {r[1] for r in conn.execute("PRAGMA table_info(jobs)")}
        index = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE name = 'jobs_ready_queues'"
        ).fetchone()
        return "queue_name" in columns, index is not None
    finally:
        conn.close()


async def test_a_file_without_named_queues_has_neither_column_nor_index(
    store: SQLiteStore,
) -> None:
    """Default jobs, claims naming queues, every read: nothing is made."""
    await store.add([new(i, float(i)) for i in range(1, 6)], NOW)
    assert ids(await store.claim("m", 1, ALL, NOW, 30, queues={DEFAULT_QUEUE})) == [1]
    assert await store.claim("m", 5, ALL, NOW, 30, queues={"emails"}) == []
    # The default queue's room bounds the claim; other queues' rooms hold nothing here.
    got = await store.claim("m", 5, ALL, NOW, 30, queue_room={DEFAULT_QUEUE: 2, "emails": 0})
    assert ids(got) == [2, 3]
    assert await store.claim("m", 5, ALL, NOW, 30, queue_room={DEFAULT_QUEUE: 0}) == []
    assert await store.claim("m", 5, ALL, NOW, 30, queues=(), queue_room={}) == []
    assert await store.queue_counts() == {
        (DEFAULT_QUEUE, S.RUNNING): 3,
        (DEFAULT_QUEUE, S.PENDING): 2,
    }
    job = await store.fetch(4)
    assert job is not None and job.queue == DEFAULT_QUEUE
    assert [j.queue for j in (await store.job_page(queue=DEFAULT_QUEUE)).jobs] == [
        DEFAULT_QUEUE
    ] * 5
    assert layout(store.path) == (False, False)


async def test_the_first_named_job_adds_the_column_and_the_rows_before_stay_default(
    store: SQLiteStore,
) -> None:
    await store.add([new(1, 1.0), new(2, 2.0)], NOW)
    await store.add([new(3, 0.5, "emails"), new(4, 3.0)], NOW)
    assert layout(store.path) == (True, True)
    conn = sqlite3.connect(store.path)
    try:
        # The default queue is NULL: the rows before were not rewritten, nor are new ones.
        rows = conn.execute("SELECT id, queue_name FROM jobs ORDER BY id").fetchall()
        assert rows == [(1, None), (2, None), (3, "emails"), (4, None)]
    finally:
        conn.close()
    assert ids(await store.claim("m", 9, ALL, NOW, 30, queues={DEFAULT_QUEUE})) == [1, 2, 4]
    assert ids(await store.claim("m", 9, ALL, NOW, 30, queues={"emails"})) == [3]


async def test_a_member_that_opened_the_file_before_honours_the_queues(tmp_path: Path) -> None:
    """B opened the file, claimed, read and added (its statements cached) before A
    added the first named-queue job: B's next claims and reads see the queue."""
    path = tmp_path / "shared.db"
    a, b = SQLiteStore(url_for(path)), SQLiteStore(url_for(path))
    await a.open()
    await b.open()
    try:
        await b.add([new(1, 5.0), new(2, 6.0)], NOW)
        assert ids(await b.claim("b", 1, ALL, NOW, 30, queues={DEFAULT_QUEUE})) == [1]
        got = await b.claim("b", 1, ALL, NOW, 30, queue_room={DEFAULT_QUEUE: 1})
        assert ids(got) == [2]
        assert [j.queue for j in await b.jobs()] == [DEFAULT_QUEUE] * 2
        await a.add([new(3, 1.0, "video"), new(4, 2.0, "video"), new(5, 7.0)], NOW)
        # Better keys on "video": B serving only the default queue never takes them.
        assert ids(await b.claim("b", 9, ALL, NOW, 30, queues={DEFAULT_QUEUE})) == [5]
        await b.add([new(6, 0.1)], NOW)  # B's cached plain insert: a default job
        assert ids(await b.claim("b", 9, ALL, NOW, 30, queue_room={"video": 0})) == [6]
        job = await b.fetch(3)
        assert job is not None and job.queue == "video"
        assert [j.id for j in (await b.job_page(queue="video")).jobs] == [4, 3]
        assert await b.queue_counts() == {("video", S.PENDING): 2, (DEFAULT_QUEUE, S.RUNNING): 4}
        await b.add([new(7, 0.2, "video")], NOW)  # B's first named job: the column is there
        assert ids(await b.claim("b", 9, ALL, NOW, 30, queues={"video"})) == [7, 3, 4]
    finally:
        await a.close()
        await b.close()


async def test_a_file_without_named_queues_keeps_working(tmp_path: Path) -> None:
    """A file made with the schema's SQL (no named queues' column) and rows
    written as the code before wrote them: its default jobs run on, named
    ones join it."""
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    for statement in _schema._DDL.split(";"):
        if statement.strip():
            conn.execute(statement)
    conn.executemany(
        "INSERT INTO jobs (id, name, executor, status, queue, k0, k1, k2, run_at, "
        "submitted_at, payload) VALUES (?, 'old', 'async', 'pending', ?, ?, 0, 0, ?, ?, X'50')",
        [(1, 0, 2.0, NOW, NOW), (2, 0, 3.0, NOW, NOW), (3, 1, 1.0, NOW + 60, NOW)],
    )
    conn.execute("UPDATE jobsched_meta SET value = 4 WHERE key = 'next_id'")
    conn.close()
    store = SQLiteStore(url_for(path))
    await store.open()
    try:
        assert ids(await store.claim("m", 1, ALL, NOW, 30, queues={DEFAULT_QUEUE})) == [1]
        await store.add([new(4, 0.5, "emails"), new(5, 0.6)], NOW)
        assert ids(await store.claim("m", 9, ALL, NOW, 30, queues={DEFAULT_QUEUE})) == [5, 2]
        assert ids(await store.claim("m", 9, ALL, NOW + 60, 30, queues={"emails"})) == [4]
        assert ids(await store.claim("m", 9, ALL, NOW + 60, 30, queues={DEFAULT_QUEUE})) == [3]
        assert await store.queue_counts() == {
            (DEFAULT_QUEUE, S.RUNNING): 4,
            ("emails", S.RUNNING): 1,
        }
        await store.record("m", [Outcome(2, 1, S.COMPLETED, NOW + 1)])
        job = await store.fetch(2)
        assert job is not None and (job.status, job.queue) == (S.COMPLETED, DEFAULT_QUEUE)
    finally:
        await store.close()
    check = sqlite3.connect(path)
    try:
        (version,) = check.execute(
            "SELECT value FROM jobsched_meta WHERE key = 'schema'"
        ).fetchone()
        assert version == _schema.VERSION  # named queues need no version of their own
    finally:
        check.close()


async def test_a_failed_first_named_add_leaves_the_file_as_it_was(store: SQLiteStore) -> None:
    """The column and the index come in the job's transaction: all or nothing."""
    await store.add([new(1, 1.0)], NOW)
    conn = sqlite3.connect(store.path)
    conn.execute("CREATE TABLE jobs_ready_queues (x)")  # takes the index's name
    conn.commit()
    conn.close()
    with pytest.raises(sqlite3.OperationalError, match="jobs_ready_queues"):
        await store.add([new(2, 2.0, "emails")], NOW)
    assert layout(store.path) == (False, True)  # the table of that name, no column
    assert [j.id for j in await store.jobs()] == [1]
    assert ids(await store.claim("m", 9, ALL, NOW, 30, queues={DEFAULT_QUEUE})) == [1]


async def test_a_column_without_its_index_gets_the_index(store: SQLiteStore) -> None:
    """A file with the column but not the index (made by hand, say) reads as without
    named queues until a named job makes the index; the column is not added twice."""
    await store.add([new(1, 1.0)], NOW)
    conn = sqlite3.connect(store.path)
    conn.execute("ALTER TABLE jobs ADD COLUMN queue_name TEXT")
    conn.commit()
    conn.close()
    assert ids(await store.claim("m", 9, ALL, NOW, 30, queues={DEFAULT_QUEUE})) == [1]
    await store.add([new(2, 2.0, "emails"), new(3, 3.0)], NOW)
    assert layout(store.path) == (True, True)
    assert ids(await store.claim("m", 9, ALL, NOW, 30, queues={"emails"})) == [2]


async def test_a_lost_attempt_is_taken_over_whatever_its_queue(store: SQLiteStore) -> None:
    """Taking over only records a loss: a member serving other queues takes it."""
    await store.add([new(1, 1.0, "video"), new(2, 2.0)], NOW)
    assert ids(await store.claim("gone", 1, ALL, NOW, 30, queues={"video"})) == [1]
    got = await store.claim("m", 5, ALL, NOW + 60, 30, queues={DEFAULT_QUEUE})
    assert [(c.id, c.lost) for c in got] == [(1, True), (2, False)]


async def test_claims_on_queues_read_one_index_range_per_queue(store: SQLiteStore) -> None:
    """Every shape of a queue claim (one queue, several, the default one, bounded
    by rooms, rate limits, fair share) reads jobs_ready_queues by queue, never
    the ready rows of a queue it does not serve."""
    await store.add([new(i, float(i), "big", tenant="t") for i in range(1, 3001)], NOW)
    await store.add([new(i, 5000.0 + i, "small") for i in range(3001, 3041)], NOW)
    await store.add([new(i, 5000.0 + i) for i in range(3041, 3081)], NOW)
    conn = store._conn
    assert conn is not None
    conn.execute("ANALYZE")  # as a long-lived file would have it
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    rates = {"r": js.RateLimit(100, 1.0)}
    try:
        assert ids(await store.claim("m", 2, ALL, NOW, 30, queues={"small"})) == [3001, 3002]
        got = await store.claim("m", 2, ALL, NOW, 30, queues={DEFAULT_QUEUE})
        assert ids(got) == [3041, 3042]
        got = await store.claim("m", 4, ALL, NOW, 30, queues={"small", DEFAULT_QUEUE})
        assert ids(got) == [3003, 3004, 3005, 3006]
        got = await store.claim("m", 4, ALL, NOW, 30, queues={"small"}, queue_room={"small": 1})
        assert ids(got) == [3007]
        got = await store.claim("m", 2, ALL, NOW, 30, queues={"small"}, rates=rates)
        assert ids(got) == [3008, 3009]
        got = await store.claim("m", 2, ALL, NOW, 30, queues={"small"}, tenants={})
        assert ids(got) == [3010, 3011]
    finally:
        conn.set_trace_callback(None)
    picks = [s for s in statements if "queue_name" in s and "sqlite_master" not in s]
    assert len(picks) >= 6
    for sql in picks:
        plan = " | ".join(r[3] for r in conn.execute(f"EXPLAIN QUERY PLAN {sql}"))
        assert "USING INDEX jobs_ready_queues (queue_name=?)" in plan, (sql, plan)
        # "SCAN jobs USING INDEX" reads an index in order; "SCAN jobs" alone, every row.
        assert not re.search(r"SCAN jobs\b(?! USING)", plan), (sql, plan)
        assert "jobs_ready " not in plan and not plan.endswith("jobs_ready"), (sql, plan)


async def test_bounded_claims_of_every_queue_and_the_counts_read_indexes(
    store: SQLiteStore,
) -> None:
    """A claim of any queue with a bounded one finds the ready queues by one
    seek each; queue_counts() reads jobs_status, not the completed history."""
    await store.add([new(i, float(i), "big") for i in range(1, 2001)], NOW)
    await store.add([new(i, float(i)) for i in range(2001, 2101)], NOW)
    got = await store.claim("m", 1900, {"async": 1900}, NOW, 30, queues={"big"})
    await store.record("m", [Outcome(c.id, c.attempt, S.COMPLETED, NOW) for c in got])
    conn = store._conn
    assert conn is not None
    conn.execute("ANALYZE")
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    try:
        assert ids(await store.claim("m", 3, ALL, NOW, 30, queue_room={"big": 1})) == [
            1901,
            2001,
            2002,
        ]
        assert await store.queue_counts() == {
            ("big", S.PENDING): 99,
            ("big", S.RUNNING): 1,
            (DEFAULT_QUEUE, S.PENDING): 98,
            (DEFAULT_QUEUE, S.RUNNING): 2,
        }
    finally:
        conn.set_trace_callback(None)
    reads = [s for s in statements if "queue_name" in s and "sqlite_master" not in s]
    assert len(reads) >= 4
    for sql in reads:
        plan = " | ".join(r[3] for r in conn.execute(f"EXPLAIN QUERY PLAN {sql}"))
        index = "jobs_status" if "COUNT" in sql else "jobs_ready_queues"
        assert f"USING INDEX {index}" in plan, (sql, plan)
        assert not re.search(r"SCAN jobs\b(?! USING)", plan), (sql, plan)
