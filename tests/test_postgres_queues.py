"""Named queues on the PostgreSQL store beyond the conformance suite: the
column and index made by the first named job (schema 3 kept), members that
had the store open before them, a store written before queues existed, and
every way making them can fail (jobsched_postgres._queues).
"""

from __future__ import annotations

from typing import Any

import pg_store
import psycopg
import pytest
from pg import SECRET

import jobsched as js
from jobsched._exceptions import StoreUnavailableError
from jobsched.store import DEFAULT_QUEUE, NewJob
from jobsched_postgres import PostgresStore
from jobsched_postgres import _connect as pg_connect
from jobsched_postgres import _queues as pg_queues
from jobsched_postgres import _schema as pg_schema

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]

NOW = 1_700_000_000.0
ALL = {"async": 99}
DEFAULT = {DEFAULT_QUEUE}


# The schema and the open store every test here uses (tests/pg_store.py).
anyio_backend, url, store = pg_store.anyio_backend, pg_store.url, pg_store.store


def new(job_id: int, key: float, queue: str = DEFAULT_QUEUE, **kw: Any) -> NewJob:
    fields: dict[str, Any] = {
        "name": f"j{job_id}",
        "executor": "async",
        "run_at": NOW,
        "submitted_at": NOW,
        "payload": b"P" + job_id.to_bytes(4, "big"),
    }
    fields.update(kw)
    return NewJob(job_id, key=(key,), queue=queue, **fields)


def sql(url: str, statement: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute(statement)
        return cur.fetchall() if cur.description else []


def has_column(url: str) -> bool:
    return bool(sql(url, f"SELECT {pg_queues.HAS_COLUMN}")[0][0])


def index_valid(url: str) -> bool | None:
    """Whether both indexes are valid; None: neither is there."""
    rows = sql(
        url,
        "SELECT indisvalid FROM pg_index WHERE indexrelid = ANY(ARRAY("
        f"SELECT to_regclass(n) FROM unnest(ARRAY{list(pg_queues.INDEXES)}) n))",
    )
    return all(r[0] for r in rows) and len(rows) == 2 if rows else None


async def ids(store: PostgresStore, **kw: Any) -> list[int]:
    return [c.id for c in await store.claim("m", 10, ALL, NOW, 30, **kw)]


async def test_a_store_that_never_sees_a_named_queue_gets_no_column_or_index(
    store: PostgresStore, url: str
) -> None:
    await store.add([new(1, 1.0), new(2, 2.0)], NOW)
    assert await ids(store, queues=DEFAULT, queue_room={DEFAULT_QUEUE: 1}) == [1]
    assert await ids(store, queues={"emails"}) == []
    assert await ids(store, queues=DEFAULT, rates={}, tenants={None: 1}) == [2]
    assert [j.queue for j in await store.jobs()] == [DEFAULT_QUEUE] * 2
    assert await store.queue_counts() == {(DEFAULT_QUEUE, js.JobStatus.RUNNING): 2}
    assert not has_column(url)
    assert index_valid(url) is None


async def test_a_member_open_before_the_first_named_job_honours_queues(url: str) -> None:
    """B has the store open, its claims and reads prepared by the server
    (psycopg prepares a statement on its fifth run), when A adds the first
    job of a named queue: B's next claims of the default queue leave it,
    and B's reads give its queue."""
    a, b = PostgresStore(url, secret=SECRET), PostgresStore(url, secret=SECRET)
    await a.open()
    await b.open()
    try:
        await a.add([new(i, float(100 + i)) for i in range(1, 9)], NOW)
        for _ in range(6):  # prepared on the server by now
            assert len(await b.claim("b", 1, ALL, NOW, 30, queues=DEFAULT)) == 1
            await b.fetch(1)
            await b.jobs(limit=5)
            await b.queue_counts()
        assert not has_column(url)
        # Better keys than any default job's.
        await a.add([new(20, 1.0, "emails"), new(21, 2.0, "emails")], NOW)
        assert has_column(url) and index_valid(url)
        assert await ids(b, queues=DEFAULT) == [7, 8]
        assert await ids(b, queues=DEFAULT) == []
        job = await b.fetch(20)
        assert job is not None and job.queue == "emails"
        assert {j.id: j.queue for j in await b.jobs(limit=2)} == {21: "emails", 20: "emails"}
        page = await b.job_page(queue="emails")
        assert [j.id for j in page.jobs] == [21, 20]
        counts = await b.queue_counts()
        assert counts[("emails", js.JobStatus.PENDING)] == 2
        assert await ids(b, queues={"emails"}, queue_room={"emails": 1}) == [20]
        assert await ids(b) == [21]
    finally:
        await a.close()
        await b.close()


@pytest.mark.parametrize(
    "claim",
    [
        {"queues": DEFAULT},
        {"queues": {"emails"}},
        {"queue_room": {"emails": 0}},
        {"queues": DEFAULT, "rates": {}, "tenants": {None: 1}},
        {"queue_room": {DEFAULT_QUEUE: 5}},
    ],
    ids=["default", "named", "room", "fair-share", "default-room"],
)
async def test_every_kind_of_claim_of_a_member_that_missed_the_column_sees_it(
    url: str, claim: dict[str, Any]
) -> None:
    a, b = PostgresStore(url, secret=SECRET), PostgresStore(url, secret=SECRET)
    await a.open()
    await b.open()
    try:
        await a.add([new(1, 5.0)], NOW)
        assert await ids(b, queues={"nothing-yet"}) == []  # B has looked: no column
        await a.add([new(2, 1.0, "emails")], NOW)
        got = await ids(b, **claim)
        served = claim.get("queues")
        room = claim.get("queue_room", {})
        want = [
            i
            for i, q in ((2, "emails"), (1, DEFAULT_QUEUE))
            if (served is None or q in served) and room.get(q, 1) > 0
        ]
        assert got == want
    finally:
        await a.close()
        await b.close()


async def test_a_store_written_before_queues_keeps_working_and_takes_named_ones(
    url: str,
) -> None:
    """A schema-3 store as the code before queues made it (its DDL, its
    INSERT): its default jobs stay claimable, the column is added without
    rewriting the table (same file), its rows read NULL, the default queue."""
    with psycopg.connect(url, autocommit=True) as conn:
        pg_schema.prepare(conn, url)
        conn.execute(
            "INSERT INTO jobsched_jobs (id, name, executor, status, queue, k0, k1, k2, run_at, "
            "submitted_at, payload) SELECT i, 'old', 'async', 'pending', 0, i, 0, 0, %s, %s, "
            "'\\x50'::bytea FROM generate_series(1, 3) AS i",
            (NOW, NOW),
        )
        conn.execute("UPDATE jobsched_meta SET value = 100 WHERE key = 'next_id'")
    (file_before,) = sql(
        url, "SELECT relfilenode FROM pg_class WHERE oid = 'jobsched_jobs'::regclass"
    )
    store = PostgresStore(url, secret=SECRET)
    await store.open()
    try:
        assert await ids(store, queues=DEFAULT, queue_room={DEFAULT_QUEUE: 1}) == [1]
        await store.add([new(200, 0.5, "video")], NOW)
        (file_after,) = sql(
            url, "SELECT relfilenode FROM pg_class WHERE oid = 'jobsched_jobs'::regclass"
        )
        assert file_after == file_before  # metadata only: no rewrite
        assert sql(url, "SELECT id FROM jobsched_jobs WHERE queue_name IS NULL ORDER BY id") == [
            (1,),
            (2,),
            (3,),
        ]
        version = sql(url, "SELECT value FROM jobsched_meta WHERE key = 'schema'")
        assert version == [(pg_schema.VERSION,)]
        assert await ids(store, queues=DEFAULT) == [2, 3]
        assert await ids(store, queues={"video"}) == [200]
    finally:
        await store.close()


async def test_claims_of_a_queue_read_the_queues_index(store: PostgresStore, url: str) -> None:
    await store.add([new(1, 1.0, "small")], NOW)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET enable_seqscan = off")
        for cond, index in zip(("queue_name = 'small'", "queue_name IS NULL"), pg_queues.INDEXES):
            plan = "\n".join(
                r[0]
                for r in conn.execute(
                    "EXPLAIN SELECT id FROM jobsched_jobs WHERE queue = 0 AND "
                    f"{cond} AND executor = 'async' ORDER BY k0, k1, k2, id LIMIT 10"
                )
            )
            assert index in plan, plan


async def test_the_column_waits_for_a_locked_table_then_the_add_fails_unavailable(
    store: PostgresStore, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pg_queues, "ALTER_LOCK_TIMEOUT_MS", 50)
    monkeypatch.setattr(pg_queues, "ALTER_PAUSE", 0.0)
    await store.add([new(1, 1.0)], NOW)
    with psycopg.connect(url) as holder:  # a transaction reading the table
        holder.execute("SELECT 1 FROM jobsched_jobs LIMIT 1")
        with pytest.raises(StoreUnavailableError, match="locked by another session"):
            await store.add([new(2, 1.0, "emails")], NOW)
        holder.rollback()
    assert not has_column(url)
    await store.add([new(2, 1.0, "emails")], NOW)
    assert await ids(store, queues={"emails"}) == [2]


async def test_a_member_building_the_index_lets_the_others_add_without_waiting(
    store: PostgresStore, url: str
) -> None:
    with psycopg.connect(url, autocommit=True) as other:
        other.execute("SELECT pg_advisory_lock(%s)", (pg_queues._INDEX_LOCK,))
        await store.add([new(1, 1.0, "emails")], NOW)
        assert has_column(url) and index_valid(url) is None
        assert await ids(store, queues={"emails"}) == [1]  # correct without it
        other.execute("SELECT pg_advisory_unlock(%s)", (pg_queues._INDEX_LOCK,))
    await store.add([new(2, 2.0, "emails")], NOW)  # builds it now
    assert index_valid(url)
    assert await ids(store, queues={"emails"}) == [2]


async def test_a_build_cancelled_leaves_an_invalid_index_the_next_one_rebuilds(
    url: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """CREATE INDEX CONCURRENTLY waits for the transactions older than it (here
    a REPEATABLE READ one); past the lock timeout it fails, its index left invalid."""
    monkeypatch.setattr(pg_connect, "LOCK_TIMEOUT", 0.3)
    store = PostgresStore(url, secret=SECRET)
    await store.open()
    try:
        await store.add([new(1, 1.0)], NOW)
        with psycopg.connect(url) as old:
            old.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            old.execute("SELECT 1 FROM jobsched_meta")
            await store.add([new(2, 1.0, "emails")], NOW)
            old.rollback()
        assert index_valid(url) is False
        assert "are not built yet" in caplog.text
        assert await ids(store, queues={"emails"}) == [2]
        await store.add([new(3, 2.0, "emails")], NOW)
        assert index_valid(url) is True
        assert await ids(store, queues={"emails"}) == [3]
    finally:
        await store.close()


async def test_a_named_job_from_a_schedule_makes_the_column(store: PostgresStore, url: str) -> None:
    await store.put_schedules([("s", b"x", NOW + 3600)])
    assert await store.trigger_schedule("s", new(1, 1.0, "reports"))
    assert has_column(url)
    assert await ids(store, queues={"reports"}) == [1]
