"""The stores' operator reads at scale: counts() (kept incrementally, SQLite by
the outcome and prune statements, PostgreSQL by triggers appending deltas)
against a full count of the rows after a real run (completions, retries,
failures, the cascade, cancels, prune, retry) and through the store calls a
fleet makes (claims, takeovers, releases), a PostgreSQL database of the
previous schema migrated with its counts, and lists by status that skip the
completed history."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
from dashboard_jobs import Hold, Work

import jobsched as js
from jobsched.store import NewJob, Outcome
from jobsched_sqlite import SQLiteStore, _sql
from jobsched_sqlite import _schema as sqlite_schema

pytestmark = pytest.mark.anyio

Counts = dict[tuple[js.JobStatus, str], int]
NOW = 1_700_000_000.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def full_count(path: Path) -> Counts:
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT status, executor, COUNT(*) FROM jobs GROUP BY 1, 2")
        return {(js.JobStatus(s), e): n for s, e, n in rows}
    finally:
        conn.close()


def pg_sql(url: str, statement: str) -> list[tuple[object, ...]]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute(statement)
        return cur.fetchall() if cur.description else []


def pg_full_count(url: str) -> Counts:
    rows = pg_sql(url, "SELECT status, executor, COUNT(*) FROM jobsched_jobs GROUP BY 1, 2")
    return {(js.JobStatus(str(s)), str(e)): int(n) for s, e, n in rows}  # type: ignore[call-overload]


@dataclass
class Store:
    """A store's URL, how to count its rows in full, and how to let leases run out."""

    url: str
    count: Callable[[], Counts]
    #: Lets ``seconds`` pass for the stored leases (PostgreSQL's are on its
    #: clock; SQLite's on the ``now`` a claim is given).
    age: Callable[[float], None]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    if request.param == "sqlite":
        path = tmp_path / "jobs.db"
        return Store(f"sqlite:///{path}", lambda: full_count(path), lambda _: None)
    from pg import age, schema_url

    url = schema_url(request.getfixturevalue("pg_session_database"))
    return Store(url, lambda: pg_full_count(url), lambda seconds: age(url, seconds))


@pytest.fixture
async def store(target: Store) -> AsyncIterator[js.JobStore]:
    from pg import SECRET

    s = js.open_store(target.url, secret=SECRET)
    await s.open()
    yield s
    await s.close()


async def test_counts_match_the_rows_through_a_run(target: Store) -> None:
    """Every status change a scheduler, cancel, retry and prune make is counted."""
    from pg import SECRET

    store = js.open_store(target.url, secret=SECRET)
    once = js.RetryPolicy(max_retries=1, base_delay=0)
    never = js.RetryPolicy(max_retries=0)
    async with js.JobScheduler(num_workers=2, store=store) as s:
        with anyio.fail_after(30):
            for i in range(5):
                s.submit(Work(f"ok {i}"))
            flaky = s.submit(Work("flaky", failures=1, retry=once))
            bad = s.submit(Work("bad", failures=-1, retry=never))
            s.submit(Work("after bad"), depends_on=[bad])
            await s.join()
            hold = s.submit(Hold("hold", timeout=None))
            later = s.submit(Work("later"), delay=600)
            s.cancel(later)
            await s.flush()
            # Running, where it stays until cancelled: nothing changes while
            # the two counts are read.
            while (await s.fetch(hold)).status is not js.JobStatus.RUNNING:  # noqa: ASYNC110
                await anyio.sleep(0.01)
            assert await store.counts() == target.count()
            assert (await s.fetch(flaky)).status is js.JobStatus.COMPLETED
            s.cancel(hold)
            await s.join()
    # With no scheduler to run it again at once (the counts would race it).
    await store.open()
    try:
        assert await store.retry([int(bad.removeprefix("job-"))], time.time())
        assert await store.counts() == target.count()
        assert await store.prune(keep=3) > 0
        counts = await store.counts()
        assert counts == target.count()
        assert sum(counts.values()) == 4  # three finished, the retried one pending
    finally:
        await store.close()


def new(job_id: int, executor: str = "async", **kw: object) -> NewJob:
    fields: dict[str, object] = {
        "name": f"j{job_id}",
        "executor": executor,
        "run_at": NOW,
        "submitted_at": NOW,
        "payload": b"P",
    }
    fields.update(kw)
    return NewJob(job_id, key=(0.0,), **fields)  # type: ignore[arg-type]


async def test_counts_follow_claims_takeovers_releases_and_cascades(
    store: js.JobStore, target: Store
) -> None:
    """The store calls of a fleet, one by one, each followed by a full count."""
    executors = {"async": 99, "thread": 99}

    async def same() -> None:
        assert await store.counts() == target.count()

    await store.add(
        [
            *(new(1), new(2), new(3, "thread"), new(4), new(5, depends_on=(4,)), new(6)),
            new(7, run_at=NOW + 600),
        ],
        NOW,
    )
    await same()
    claimed = {c.id: c for c in await store.claim("dead", 4, executors, NOW, 10)}
    assert sorted(claimed) == [1, 2, 3, 4]
    await same()
    await store.release("dead", [2])  # handed back unstarted: pending again
    await same()
    target.age(11)
    taken = {c.id: c for c in await store.claim("alive", 5, executors, NOW + 11, 10)}
    assert {i for i, c in taken.items() if c.lost} == {1, 3, 4}
    await same()
    outcomes = [
        Outcome(1, taken[1].attempt, js.JobStatus.COMPLETED, NOW + 12),
        Outcome(3, taken[3].attempt, js.JobStatus.RETRY_WAIT, NOW + 12, run_at=NOW + 12),
        Outcome(4, taken[4].attempt, js.JobStatus.FAILED, NOW + 12, error="boom"),
    ]
    assert (await store.record("alive", outcomes)).refused == []  # 5 is cancelled by 4
    await same()
    assert (await store.record("dead", [Outcome(2, 1, js.JobStatus.COMPLETED, NOW)])).refused
    await same()
    await store.cancel([6, 7], NOW + 13)  # 6 running (flagged), 7 delayed (cancelled)
    await same()
    assert await store.retry([4, 5, 7], NOW + 14) == [4, 5, 7]
    await same()
    assert await store.prune(keep=0) == 1  # job 1, the one finished job
    await same()
    assert sum((await store.counts()).values()) == 6
    # The ends other than completion, each counted (SQLite keeps them in a
    # table of its own, by the statements that make them).
    retry = Outcome(6, taken[6].attempt, js.JobStatus.RETRY_WAIT, NOW + 15, run_at=NOW + 15)
    assert (await store.record("alive", [retry])).refused == []  # the cancel wins
    await same()
    assert (await store.fetch(6)).status is js.JobStatus.CANCELLED  # type: ignore[union-attr]
    await store.cancel([3, 2], NOW + 15)  # 3 waiting to retry (cancelled), 2 running (flagged)
    await same()
    await store.release("alive", [2])  # handed back with a cancel request: cancelled
    await same()
    await store.add([new(8, depends_on=(3,)), new(9, "thread", depends_on=(8,))], NOW + 16)
    await same()  # both added cancelled: 3 was
    target.age(30)
    again = {c.id: c for c in await store.claim("alive", 5, executors, NOW + 16, 10)}
    assert sorted(again) == [4, 5, 7]
    ends = [
        Outcome(4, again[4].attempt, js.JobStatus.TIMED_OUT, NOW + 17, error="slow"),
        Outcome(5, again[5].attempt, js.JobStatus.FAILED, NOW + 17, error="boom"),
        Outcome(7, again[7].attempt, js.JobStatus.CANCELLED, NOW + 17),
    ]
    assert (await store.record("alive", ends)).refused == []
    await same()
    counts = await store.counts()
    assert counts[js.JobStatus.CANCELLED, "async"] == 4  # 2, 6, 7, 8
    assert counts[js.JobStatus.CANCELLED, "thread"] == 2  # 3, 9
    assert await store.retry([4, 6, 9, 2], NOW + 18) == [4, 6, 9, 2]
    await same()
    assert await store.retry([4, 1, 99], NOW + 18) == []  # pending, pruned, unknown
    await same()
    assert await store.prune(keep=2) == 2  # 3, 5, 7, 8 finished: the two oldest go
    await same()
    assert await store.prune(keep=0) > 0
    await same()
    assert not [key for key in await store.counts() if key[0].is_terminal]


@pytest.mark.postgres
async def test_a_schema_2_database_is_migrated_with_its_counts(
    pg_session_database: str,
) -> None:
    """A database as schema 2 made it (no counts table, no triggers), holding
    jobs of every kind, gets them, counted from its rows, and they stay right."""
    from pg import SECRET, schema_url

    from jobsched_postgres import PostgresStore
    from jobsched_postgres import _schema as pg_schema

    url = schema_url(pg_session_database)
    later = pg_schema._COUNTS + pg_schema._ENTERED_XID + pg_schema._WORKFLOWS
    schema_2 = [s for s in pg_schema._DDL if s not in later]
    schema_2[-1] = schema_2[-1].replace(f"'schema', {pg_schema.VERSION}", "'schema', 2")
    assert pg_schema.VERSION == 6 and "'schema', 2" in schema_2[-1]
    for statement in schema_2:
        pg_sql(url, statement)
    pg_sql(
        url,
        "INSERT INTO jobsched_jobs (id, name, executor, status, queue, k0, k1, k2, run_at, "
        "submitted_at, finished_at, payload) SELECT i, 'j', "
        "(ARRAY['async', 'thread'])[1 + i % 2], "
        "(ARRAY['completed', 'failed', 'cancelled', 'pending'])[1 + i % 4], "
        "CASE WHEN i % 4 = 3 THEN 0 END, 0, i, 0, 0, 0, "
        "CASE WHEN i % 4 <> 3 THEN i END, '\\x50' FROM generate_series(1, 1000) i",
    )
    pg_sql(url, "UPDATE jobsched_meta SET value = 1001 WHERE key = 'next_id'")
    assert pg_sql(url, "SELECT to_regclass('jobsched_counts')") == [(None,)]
    expected = pg_full_count(url)
    assert len(expected) == 4 and sum(expected.values()) == 1000
    store = PostgresStore(url, secret=SECRET)
    await store.open()
    try:
        version = pg_sql(url, "SELECT value FROM jobsched_meta WHERE key = 'schema'")
        assert version == [(pg_schema.VERSION,)]
        assert await store.counts() == expected
        await store.add([new(2000)], NOW)
        claimed = await store.claim("m", 300, {"async": 300, "thread": 300}, NOW, 30)
        assert len(claimed) == 251
        await store.record(
            "m", [Outcome(c.id, c.attempt, js.JobStatus.COMPLETED, NOW + 1) for c in claimed]
        )
        assert await store.counts() == pg_full_count(url)
        assert (js.JobStatus.PENDING, "async") not in await store.counts()
    finally:
        await store.close()
    # A second opening finds schema 3 and migrates nothing again.
    store = PostgresStore(url, secret=SECRET)
    await store.open()
    try:
        assert await store.counts() == pg_full_count(url)
    finally:
        await store.close()


async def test_counts_read_few_rows_however_long_the_history(
    store: js.JobStore, target: Store
) -> None:
    """Thousands of status changes leave a handful of count rows to read."""
    for batch in range(20):
        first = batch * 50 + 1
        await store.add([new(i) for i in range(first, first + 50)], NOW)
        claimed = await store.claim("m", 50, {"async": 50}, NOW, 30)
        await store.record(
            "m", [Outcome(c.id, c.attempt, js.JobStatus.COMPLETED, NOW + 1) for c in claimed]
        )
        await store.counts()
    assert await store.counts() == target.count() == {(js.JobStatus.COMPLETED, "async"): 1000}
    if target.url.startswith("postgresql"):
        from jobsched_postgres import _sql as pg_sql_module

        (rows,) = pg_sql(target.url, "SELECT count(*) FROM jobsched_counts")[0]
        assert int(rows) <= pg_sql_module.FOLD_AT + 60  # type: ignore[call-overload]
        await store.prune(keep=10_000)  # prune folds them all
        assert pg_sql(target.url, "SELECT status, executor, n FROM jobsched_counts") == [
            ("completed", "async", 1000)
        ]


async def test_lists_by_status_do_not_scan_the_finished_history(tmp_path: Path) -> None:
    """jobs(statuses=...) for statuses no job has, and counts(), read an index and a
    table, not 20,000 completed rows (counted in SQLite VM steps, not time)."""
    store = SQLiteStore(f"sqlite:///{tmp_path / 'jobs.db'}")
    await store.open()
    try:
        conn = store._conn
        assert conn is not None
        conn.execute("BEGIN")
        conn.executemany(
            "INSERT INTO jobs (id, name, executor, status, k0, k1, k2, run_at, submitted_at, "
            "finished_at, payload) VALUES (?, 'n', 'async', 'completed', 0, 0, 0, 0, 0, 1, x'')",
            [(i,) for i in range(1, 20_001)],
        )
        _sql.count_completed(conn, {"async": 20_000})  # as the outcomes would have
        conn.execute("COMMIT")
        steps = 0

        def step() -> int:
            nonlocal steps
            steps += 1
            return 0

        conn.set_progress_handler(step, 100)
        for statuses in [(js.JobStatus.FAILED,), (js.JobStatus.PENDING, js.JobStatus.RETRY_WAIT)]:
            steps = 0
            assert await store.jobs(statuses=statuses, limit=25) == []
            assert steps < 50, (statuses, steps * 100)
        steps = 0
        assert len(await store.jobs(statuses=(js.JobStatus.COMPLETED,), limit=25)) == 25
        steps = 0
        assert await store.counts() == {(js.JobStatus.COMPLETED, "async"): 20_000}
        assert steps < 50, ("counts", steps * 100)
        conn.set_progress_handler(None, 0)
    finally:
        await store.close()


async def test_lists_by_status_are_the_newest_of_those_statuses(
    store: js.JobStore, target: Store
) -> None:
    """jobs(statuses=..., limit=..., before=...) read status by status (and on
    SQLite executor by executor): the same page a filter of every row gives."""
    executors = {"async": 999, "thread": 999, "process": 999}
    names = list(executors)
    await store.add([new(i, names[i % 3]) for i in range(1, 601)], NOW)
    claimed = await store.claim("m", 600, executors, NOW, 30)
    statuses = [
        js.JobStatus.FAILED if c.id % 5 == 0
        else js.JobStatus.TIMED_OUT if c.id % 7 == 0
        else js.JobStatus.COMPLETED
        for c in claimed
    ]  # fmt: skip
    await store.record(
        "m", [Outcome(c.id, c.attempt, s, NOW + 1) for c, s in zip(claimed, statuses, strict=True)]
    )
    await store.add([new(i, names[i % 2]) for i in range(601, 651)], NOW)  # pending
    everything = await store.jobs(limit=10_000)
    assert len(everything) == 650
    cases = [
        ((js.JobStatus.FAILED,), 25, None),
        ((js.JobStatus.FAILED, js.JobStatus.TIMED_OUT), 40, 500),
        ((js.JobStatus.PENDING, js.JobStatus.RETRY_WAIT), 200, None),
        ((js.JobStatus.COMPLETED,), 30, 300),
        ((js.JobStatus.COMPLETED, js.JobStatus.FAILED, js.JobStatus.PENDING), 100, 640),
        ((js.JobStatus.CANCELLED,), 10, None),
        ((js.JobStatus.FAILED, js.JobStatus.FAILED), 1000, None),
        ((), 20, 100),
    ]
    for wanted, limit, before in cases:
        expected = [
            j.id
            for j in everything
            if (not wanted or j.status in wanted) and (before is None or j.id < before)
        ][:limit]
        got = await store.jobs(statuses=wanted, limit=limit, before=before)
        assert [j.id for j in got] == expected, (wanted, limit, before)
    assert await store.counts() == target.count()


@pytest.mark.postgres
async def test_postgres_lists_by_status_read_an_index_at_100k_rows(
    pg_session_database: str,
) -> None:
    """The plan at scale: each status from the status index (the completed
    history left out of it), never a scan or a sort of the table."""
    from pg import SECRET, schema_url

    from jobsched_postgres import PostgresStore
    from jobsched_postgres._reads import jobs_query

    url = schema_url(pg_session_database)
    store = PostgresStore(url, secret=SECRET)
    await store.open()
    try:
        pg_sql(
            url,
            "INSERT INTO jobsched_jobs (id, name, executor, status, k0, k1, k2, run_at, "
            "submitted_at, finished_at, payload) SELECT i, 'j', 'async', CASE WHEN i % 50 = 0 "
            "THEN 'failed' ELSE 'completed' END, 0, 0, 0, 0, 0, i, '\\x00' "
            "FROM generate_series(1, 100000) i",
        )
        pg_sql(url, "ANALYZE")
        queued = (js.JobStatus.PENDING, js.JobStatus.RETRY_WAIT)
        failures = (js.JobStatus.FAILED, js.JobStatus.TIMED_OUT, js.JobStatus.CANCELLED)
        for statuses in (queued, failures):
            where, params = jobs_query(statuses, 25, None)
            plan = "\n".join(
                str(r[0])
                for r in pg_sql_params(
                    url, f"EXPLAIN (COSTS OFF) SELECT id FROM jobsched_jobs {where}", params
                )
            )
            assert "jobsched_jobs_status" in plan, plan
            assert "Seq Scan" not in plan, plan
        assert [j.id for j in await store.jobs(statuses=failures, limit=3)] == [
            100_000,
            99_950,
            99_900,
        ]
        assert await store.jobs(statuses=queued, limit=25) == []
        # Nor parallel workers, whose start cost more than the reads at 1M.
        setting = await store._run(
            lambda conn: conn.execute("SHOW max_parallel_workers_per_gather").fetchone()
        )
        assert setting == ("0",)
    finally:
        await store.close()


def pg_sql_params(url: str, statement: str, params: list[object]) -> list[tuple[object, ...]]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute(statement, params).fetchall()


@pytest.mark.postgres
async def test_postgres_counts_writes_from_any_search_path_and_a_truncate(
    pg_session_database: str,
) -> None:
    """An operator's session that names the table by its schema (another
    search_path) is counted into the store's table; a TRUNCATE empties the counts."""
    from pg import SECRET, schema_url

    from jobsched_postgres import PostgresStore

    url = schema_url(pg_session_database)
    store = PostgresStore(url, secret=SECRET)
    await store.open()
    try:
        await store.add([new(1), new(2), new(3, "thread")], NOW)
        ((schema,),) = pg_sql(url, "SELECT current_schema()")
        pg_sql(
            pg_session_database,  # search_path: the database's default
            f"UPDATE {schema}.jobsched_jobs SET status = 'cancelled', queue = NULL, "
            "finished_at = 1 WHERE id = 2",
        )
        assert (
            await store.counts()
            == pg_full_count(url)
            == {
                (js.JobStatus.PENDING, "async"): 1,
                (js.JobStatus.CANCELLED, "async"): 1,
                (js.JobStatus.PENDING, "thread"): 1,
            }
        )
        pg_sql(url, "TRUNCATE jobsched_jobs")
        assert await store.counts() == {}
        await store.add([new(4)], NOW)
        assert await store.counts() == {(js.JobStatus.PENDING, "async"): 1}
    finally:
        await store.close()


async def test_sqlite_counts_read_no_ended_row(tmp_path: Path) -> None:
    """A history of failed, timed-out and cancelled jobs is counted from
    ended_counts, not row by row (counts() read them all: 14x at 1M jobs)."""
    store = SQLiteStore(f"sqlite:///{tmp_path / 'jobs.db'}")
    await store.open()
    try:
        conn = store._conn
        assert conn is not None
        ends = ("failed", "timed_out", "cancelled")
        conn.execute("BEGIN")
        conn.executemany(
            "INSERT INTO jobs (id, name, executor, status, k0, k1, k2, run_at, submitted_at, "
            "finished_at, payload) VALUES (?, 'n', 'async', ?, 0, 0, 0, 0, 0, 1, x'')",
            [(i, ends[i % 3]) for i in range(1, 6_001)],
        )
        _sql.count_ended(conn, {(status, "async"): 2_000 for status in ends})  # as outcomes would
        conn.execute("COMMIT")
        await store.add([new(10_000)], NOW)
        steps = 0

        def step() -> int:
            nonlocal steps
            steps += 1
            return 0

        conn.set_progress_handler(step, 100)
        counts = await store.counts()
        conn.set_progress_handler(None, 0)
        assert counts == full_count(tmp_path / "jobs.db")
        assert steps < 50, steps * 100
    finally:
        await store.close()


async def test_a_schema_3_file_without_ended_counts_is_counted_once_at_open(
    tmp_path: Path,
) -> None:
    """A file of schema 3 as the code before ended_counts made it gets the
    table at its first opening, counted from its rows; later openings keep it."""
    path = tmp_path / "jobs.db"
    store = SQLiteStore(f"sqlite:///{path}")
    await store.open()
    try:
        await store.add([new(i, "thread" if i % 2 else "async") for i in range(1, 9)], NOW)
        claimed = await store.claim("m", 6, {"async": 9, "thread": 9}, NOW, 30)
        ends = [js.JobStatus.FAILED, js.JobStatus.TIMED_OUT, js.JobStatus.CANCELLED]
        ends += [js.JobStatus.COMPLETED, js.JobStatus.FAILED, js.JobStatus.RETRY_WAIT]
        outcomes = [
            Outcome(c.id, c.attempt, status, NOW + 1, run_at=NOW + 9)
            for c, status in zip(claimed, ends, strict=True)
        ]
        assert (await store.record("m", outcomes)).refused == []
        await store.cancel([7], NOW + 2)
    finally:
        await store.close()
    expected = full_count(path)
    assert len({s for s, _ in expected if s.is_terminal}) == 4
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("DROP TABLE ended_counts")  # as the code before made schema 3
    conn.execute("ALTER TABLE jobs DROP COLUMN args")
    conn.execute("UPDATE jobsched_meta SET value = 3 WHERE key = 'schema'")
    conn.close()
    for _ in range(2):  # the second opening finds the table and counts nothing again
        store = SQLiteStore(f"sqlite:///{path}")
        await store.open()
        try:
            assert await store.counts() == expected
        finally:
            await store.close()
    conn = sqlite3.connect(path)
    try:
        version = conn.execute("SELECT value FROM jobsched_meta WHERE key = 'schema'").fetchone()
        assert version == (sqlite_schema.VERSION,)  # migrated to 4 on the way
        rows = conn.execute("SELECT status, executor, n FROM ended_counts ORDER BY 1, 2")
        assert sum(n for _, _, n in rows) == 5
    finally:
        conn.close()
    store = SQLiteStore(f"sqlite:///{path}")
    await store.open()
    try:
        assert await store.retry([1, 7], NOW + 3) == [1, 7]
        assert await store.prune(keep=1) == 3
        assert await store.counts() == full_count(path)
    finally:
        await store.close()


async def test_counting_the_ended_jobs_at_open_fails_whole_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process holding the write lock past the busy timeout: the
    opening fails naming the file, leaves it as it was, and the next one counts."""
    from jobsched_sqlite import _schema

    path = tmp_path / "jobs.db"
    store = SQLiteStore(f"sqlite:///{path}")
    await store.open()
    try:
        await store.add([new(1), new(2, depends_on=(1,))], NOW)
        await store.cancel([1], NOW)  # 1 cancelled, 2 with it
    finally:
        await store.close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("DROP TABLE ended_counts")  # as the code before made schema 3
    holder.execute("BEGIN IMMEDIATE")
    monkeypatch.setattr(_schema, "BUSY_TIMEOUT_MS", 50)
    try:
        with pytest.raises(js.StoreUnavailableError, match="cannot count the ended jobs of") as e:
            await SQLiteStore(f"sqlite:///{path}").open()
        assert str(path) in str(e.value) and "locked" in str(e.value)
    finally:
        holder.execute("ROLLBACK")
    assert (
        holder.execute("SELECT 1 FROM sqlite_master WHERE name = 'ended_counts'").fetchone() is None
    )
    holder.close()
    store = SQLiteStore(f"sqlite:///{path}")
    await store.open()
    try:
        assert await store.counts() == {(js.JobStatus.CANCELLED, "async"): 2}
    finally:
        await store.close()
