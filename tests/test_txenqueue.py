"""Enqueue in your own transaction (``connection=``), on SQLite and PostgreSQL:
the job exists if and only if the caller commits, a worker runs it promptly
after the commit, a duplicate own id never spoils the caller's transaction,
and every wrong use says what to do.

The caller's connection is a ``sqlite3.Connection`` to the store's file, or
a psycopg 3 one to the store's database (without the store's search_path:
the store's functions are named by their schema). The other PostgreSQL
drivers and ``jobsched_enqueue`` are tests/test_txenqueue_postgres.py's.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import flow_jobs as fj
import pytest
from txenq_jobs import RAN, make_app, record

import jobsched as js

pytestmark = pytest.mark.anyio

#: Generous: a worker polls SQLite twice a second; the machine may be loaded.
PROMPT = 20.0

NO_RETRY = js.RetryPolicy(max_retries=0)


@pytest.fixture
def anyio_backend() -> str:
    # The stores work in threads (trio's mock clock would jump over them);
    # asyncio alone: the drivers' async connections are asyncio's.
    return "asyncio"


class Store:
    """A store URL, and how the app's code connects to the same database."""

    def __init__(self, url: str, connect: Callable[..., Any], kind: str) -> None:
        self.url = url
        self.connect = connect
        self.kind = kind


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    opened: list[Any] = []
    if request.param == "sqlite":
        path = tmp_path / "jobs.db"

        def connect(mine: bool = False, **kwargs: Any) -> Any:
            conn = sqlite3.connect(path, **kwargs)
            if not mine:
                opened.append(conn)
            return conn

        yield Store(f"sqlite:///{path}", connect, "sqlite")
    else:
        import psycopg
        from pg import require_server, schema_url

        require_server()
        database = request.getfixturevalue("pg_session_database")

        def connect(mine: bool = False, **kwargs: Any) -> Any:
            conn = psycopg.connect(database, **kwargs)
            if not mine:
                opened.append(conn)
            return conn

        yield Store(schema_url(database), connect, "postgres")
    for conn in opened:
        conn.close()
    RAN.clear()


def app_table(conn: Any, name: str) -> None:
    """The app's own table, committed."""
    conn.execute(f"CREATE TABLE {name} (id integer PRIMARY KEY, what text)")
    conn.commit()


def rows(conn: Any, table: str) -> list[Any]:
    found = conn.execute(f"SELECT id, what FROM {table} ORDER BY id").fetchall()
    conn.commit()
    return [tuple(r) for r in found]


async def test_commit_makes_the_job_and_a_worker_runs_it(store: Store) -> None:
    """Written in the caller's transaction, the job is invisible to the store's
    other sessions until the commit, and a worker runs it promptly after."""
    app, record_job = make_app(store.url)
    conn = store.connect()
    table = "orders_commit"
    async with app.scheduler(num_workers=0) as producer, app.scheduler() as worker:
        app_table(conn, table)  # after the store's schema: SQLite refuses a file of others' first
        conn.execute(f"INSERT INTO {table} VALUES (1, 'book')")
        job_id = await record_job.options(connection=conn).enqueue("order-1")
        assert job_id.startswith("job-")
        with pytest.raises(js.UnknownJobError):
            await producer.fetch(job_id)  # not committed: no other session sees it
        assert RAN == []
        conn.commit()
        with anyio.fail_after(PROMPT):
            assert await worker.result(job_id) == "order-1:[]:None:[]"
    assert RAN == [("order-1", (), None, {})]
    assert rows(conn, table) == [(1, "book")]


@pytest.mark.timeout(180)
async def test_a_worker_process_starts_the_job_after_the_commit(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real ``jobsched worker`` process (woken by the commit's NOTIFY on
    PostgreSQL, at its next poll on SQLite) runs a job committed in the
    caller's transaction, and not before: until then no session but the
    caller's sees it."""
    from pg import SECRET
    from test_cli import env_for
    from test_cli_worker import Worker

    monkeypatch.setenv("JOBSCHED_SECRET", SECRET)  # the worker inherits it
    worker = Worker(
        "--app", "txenq_jobs:worker_app", "--workers", "2", env=env_for(TXENQ_STORE=store.url)
    )
    try:
        await anyio.to_thread.run_sync(worker.expect, "started on ")
        app, record_job = make_app(store.url)
        conn = store.connect()
        async with app.scheduler(num_workers=0) as producer:
            job_id = await record_job.options(connection=conn).enqueue("in a process")
            with pytest.raises(js.UnknownJobError):
                await producer.fetch(job_id)
            conn.commit()
            with anyio.fail_after(PROMPT):
                assert await producer.result(job_id) == "in a process:[]:None:[]"
        await anyio.to_thread.run_sync(worker.stop)
    finally:
        worker.kill()
    assert RAN == []  # it ran there, not here


async def test_rollback_leaves_no_job(store: Store) -> None:
    """A rolled-back transaction takes the job with it: the store never held it."""
    app, record_job = make_app(store.url)
    conn = store.connect()
    async with app.scheduler() as s:
        app_table(conn, "orders_rollback")
        conn.execute("INSERT INTO orders_rollback VALUES (1, 'book')")
        job_id = await record_job.options(connection=conn).enqueue("never")
        conn.rollback()
        with pytest.raises(js.UnknownJobError):
            await s.fetch(job_id)
        assert await s._link.store.unfinished() == 0  # type: ignore[union-attr]
    assert RAN == []
    assert rows(conn, "orders_rollback") == []


async def test_a_duplicate_own_id_keeps_the_callers_writes(store: Store) -> None:
    """An own id the store holds already adds nothing and returns that id; the
    caller's transaction goes on and commits its own rows."""
    app, record_job = make_app(store.url)
    conn = store.connect()
    async with app.scheduler(num_workers=0) as s:
        app_table(conn, "orders_dup")
        first = await record_job.options(connection=conn, job_id="order-7").enqueue("first")
        conn.commit()
        conn.execute("INSERT INTO orders_dup VALUES (7, 'lamp')")
        again = await record_job.options(connection=conn, job_id="order-7").enqueue("second")
        # And twice in one transaction: the second finds the first.
        same = await record_job.options(connection=conn, job_id="order-8").enqueue("a")
        twice = await record_job.options(connection=conn, job_id="order-8").enqueue("b")
        conn.execute("INSERT INTO orders_dup VALUES (8, 'desk')")
        conn.commit()
        assert first == again == "order-7" and same == twice == "order-8"
        assert (await s.fetch("order-7")).arguments == {"tag": "first"}  # type: ignore[attr-defined]
        assert (await s.fetch("order-8")).arguments == {"tag": "a"}  # type: ignore[attr-defined]
        assert await s._link.store.unfinished() == 2  # type: ignore[union-attr]
    assert rows(conn, "orders_dup") == [(7, "lamp"), (8, "desk")]


async def test_dependencies_commit_with_the_caller(store: Store) -> None:
    """A job may depend on one enqueued earlier in the same transaction; an
    unknown upstream raises UnknownJobError and writes nothing, leaving the
    caller's transaction usable."""
    app, record_job = make_app(store.url)
    conn = store.connect()
    async with app.scheduler() as s:
        app_table(conn, "orders_deps")
        first = await record_job.options(connection=conn).enqueue("up")
        second = await record_job.options(connection=conn, depends_on=[first]).enqueue("down")
        with pytest.raises(js.UnknownJobError, match="does not hold"):
            await record_job.options(connection=conn, depends_on=["job-999999"]).enqueue("x")
        conn.execute("INSERT INTO orders_deps VALUES (1, 'after the refusal')")
        conn.commit()
        with anyio.fail_after(PROMPT):
            assert await s.result(second) == "down:[]:None:[]"
    assert [r[0] for r in RAN] == ["up", "down"]
    assert rows(conn, "orders_deps") == [(1, "after the refusal")]


async def test_result_markers_and_run_edges_commit_with_the_caller(store: Store) -> None:
    """Markers and ``on_failure="run"`` edges go in the caller's transaction as
    on a plain durable submit: a pickled job and a registered one receive
    their upstreams' results (upstreams enqueued in the same transaction), a
    "run" edge lets its dependent run after the upstream failed, with the
    failure in its slot, where a marker's own "cancel" edge cancels."""
    app, record_job = make_app(store.url)
    conn = store.connect()
    async with app.scheduler() as s:
        up = js.FunctionJob(fj.add, args=(2, 3))
        s.submit(up, connection=conn)
        broken = js.FunctionJob(fj.fail, retry=NO_RETRY)
        broken_id = s.submit(broken, connection=conn)
        fan_in = js.FunctionJob(fj.describe, args=(js.results_of([up, broken]),))
        lenient = s.submit(fan_in, depends_on=[js.After(broken, on_failure="run")], connection=conn)
        strict = s.submit(js.FunctionJob(fj.same, args=(js.result_of(broken),)), connection=conn)
        registered = await record_job.options(connection=conn).enqueue(js.result_of(up))
        with pytest.raises(js.UnknownJobError):
            await s.fetch(lenient)  # not committed
        conn.commit()
        with anyio.fail_after(PROMPT):
            assert await s.result(lenient) == ["5", f"failed {broken_id} failed"]
            assert await s.result(registered) == "5:[]:None:[]"
            assert (await s.wait(strict)).status is js.JobStatus.CANCELLED
    assert RAN == [(5, (), None, {})]


async def test_edges_to_upstreams_that_ended_before_the_transaction(store: Store) -> None:
    """An upstream that failed before the caller's transaction: a "run" edge
    to it is settled at once (the job runs, the failure in its marker's
    slot), a "cancel" edge cancels its job at once; one that completed
    hands over its result."""
    app, _ = make_app(store.url)
    conn = store.connect()
    async with app.scheduler() as s:
        broken = await s.enqueue(js.FunctionJob(fj.fail, retry=NO_RETRY))
        done = await s.enqueue(js.FunctionJob(fj.add, args=(40, 2)))
        with anyio.fail_after(PROMPT):
            assert (await s.wait(broken)).status is js.JobStatus.FAILED
            assert await s.result(done) == 42
        lenient = s.submit(
            js.FunctionJob(fj.describe, args=(js.results_of([done, broken]),)),
            depends_on=js.After(broken, on_failure="run"),
            connection=conn,
        )
        strict = s.submit(js.FunctionJob(fj.add, args=(1,)), depends_on=broken, connection=conn)
        conn.commit()
        with anyio.fail_after(PROMPT):
            assert await s.result(lenient) == ["42", f"failed {broken} failed"]
            cancelled = await s.wait(strict)
        assert cancelled.status is js.JobStatus.CANCELLED
        assert cancelled.last_error is not None and broken in cancelled.last_error


async def test_a_marker_of_a_job_never_enqueued_writes_nothing(store: Store) -> None:
    """A marker naming a Job that was never enqueued raises UnknownJobError
    before anything is written; the caller's transaction goes on."""
    app, _ = make_app(store.url)
    conn = store.connect()
    async with app.scheduler(num_workers=0) as s:
        never = js.FunctionJob(fj.add, args=(1,))
        dependent = js.FunctionJob(fj.same, args=(js.result_of(never),))
        with pytest.raises(js.UnknownJobError, match="never enqueued: enqueue it first"):
            s.submit(dependent, connection=conn)
        with pytest.raises(js.UnknownJobError, match="never enqueued"):
            s.submit(
                js.FunctionJob(fj.add, args=(1,)),
                depends_on=js.After(never, on_failure="run"),
                connection=conn,
            )
        assert await s._link.store.unfinished() == 0  # type: ignore[union-attr]
        # Nothing of the dependent was taken: once its upstream is in, so is it.
        s.submit(never, connection=conn)
        s.submit(dependent, connection=conn)
        conn.commit()
        assert await s._link.store.unfinished() == 2  # type: ignore[union-attr]


async def test_submit_and_pickled_jobs_take_a_connection(store: Store) -> None:
    """``s.submit(job, connection=conn)`` writes a pickled FunctionJob too, with
    a delay; the job runs once the caller commits."""
    app, _ = make_app(store.url)
    conn = store.connect()
    async with app.scheduler() as s:
        job = js.FunctionJob(record, ("pickled",), kwargs={"extra": 1})
        job_id = s.submit(job, connection=conn, delay=0.01)
        assert job.job_id == job_id
        conn.commit()
        with anyio.fail_after(PROMPT):
            assert await s.result(job_id) == "pickled:[]:1:[]"
        with pytest.raises(js.SchedulerError, match="already submitted"):
            s.submit(job, connection=conn)


async def test_a_connection_outside_a_transaction_is_refused(store: Store) -> None:
    """A connection in autocommit mode, with no transaction open, would commit
    the job alone: ValueError saying how to open one, and nothing written."""
    app, record_job = make_app(store.url)
    if store.kind == "sqlite":
        conn = store.connect(isolation_level=None)
    else:
        conn = store.connect(autocommit=True)
    async with app.scheduler(num_workers=0) as s:
        with pytest.raises(ValueError, match="no transaction open"):
            await record_job.options(connection=conn).enqueue("alone")
        assert await s._link.store.unfinished() == 0  # type: ignore[union-attr]
        # In a transaction block of its own, the same connection works.
        if store.kind == "sqlite":
            conn.execute("BEGIN")
            await record_job.options(connection=conn).enqueue("in a block")
            conn.execute("COMMIT")
        else:
            with conn.transaction():
                await record_job.options(connection=conn).enqueue("in a block")
        assert await s._link.store.unfinished() == 1  # type: ignore[union-attr]


async def test_wrong_objects_are_refused_with_what_is_accepted(store: Store) -> None:
    """Anything but a connection the store takes raises TypeError naming the
    kinds it takes; the memory store has no transaction to join."""
    app, record_job = make_app(store.url)
    async with app.scheduler(num_workers=0):
        accepted = "sqlite3.Connection" if store.kind == "sqlite" else "psycopg 3 Connection"
        for wrong in [object(), "postgresql://elsewhere", 42]:
            with pytest.raises(TypeError, match=accepted):
                await record_job.options(connection=wrong).enqueue("x")
        other = sqlite3.connect(":memory:") if store.kind == "postgres" else None
        if other is not None:
            with pytest.raises(TypeError, match="psycopg 3 Connection"):
                await record_job.options(connection=other).enqueue("x")
            other.close()
    memory, memory_job = make_app("memory")
    async with memory.scheduler():
        with pytest.raises(ValueError, match="memory store .* no database transaction"):
            await memory_job.options(connection=store.connect()).enqueue("x")


async def test_a_database_without_the_schema_is_refused_in_one_line(
    store: Store, tmp_path: Path
) -> None:
    """A connection to a database that has no jobsched schema of the store
    (another file, another database) raises ValueError saying so and how."""
    app, record_job = make_app(store.url)
    async with app.scheduler(num_workers=0):
        if store.kind == "sqlite":
            other = sqlite3.connect(tmp_path / "other.db")
            with pytest.raises(ValueError, match="not to the store's file"):
                await record_job.options(connection=other).enqueue("x")
            other.close()
        else:
            import psycopg
            from pg import ADMIN_URL

            with psycopg.connect(ADMIN_URL) as other:
                with pytest.raises(ValueError, match="no jobsched schema .*start a scheduler"):
                    await record_job.options(connection=other).enqueue("x")
                other.execute("SELECT 1")  # its transaction was not aborted
    if store.kind == "sqlite":
        # The store's own file, before anything created the schema there (a
        # scheduler not started yet: opening the store would create it).
        fresh = tmp_path / "fresh.db"
        s = js.JobScheduler(store=f"sqlite:///{fresh}")
        conn = sqlite3.connect(fresh)
        with pytest.raises(ValueError, match="no jobsched schema yet: start a scheduler"):
            s.submit(js.FunctionJob(record, ("x",)), connection=conn)
        conn.close()
        await s.stop()


async def test_enqueue_sync_from_a_thread_uses_the_callers_connection(store: Store) -> None:
    """``enqueue_sync`` (a Flask or Django view's thread) writes through the
    caller's connection on the caller's thread, the app's scheduler running
    on another."""
    app, record_job = make_app(store.url)

    def view() -> str:
        conn = store.connect(mine=True)  # the view's own (sqlite3's stays on its thread)
        try:
            job_id = record_job.options(connection=conn).enqueue_sync("from a view")
            conn.commit()
        finally:
            conn.close()
        return job_id

    with app.background() as bg:
        job_id = await anyio.to_thread.run_sync(view)
        with anyio.fail_after(PROMPT):
            assert await anyio.to_thread.run_sync(lambda: bg.result(job_id, timeout=PROMPT))
    assert RAN == [("from a view", (), None, {})]


def test_sql_key_recipes_give_each_strategy_s_key() -> None:
    """The registered functions' sort-key recipe (for jobsched_enqueue) gives
    every built-in strategy's key from a job's seq and submit time; a
    strategy whose key is not linear in them gets none (SQL then refuses)."""
    from jobsched._engine._functions import registered

    class Squares(js.FIFOStrategy):
        def key(self, job: js.Job) -> tuple[float, ...]:
            return (float(job.seq) ** 2,)

    app, record_job = make_app("memory")
    seq, submitted_at = 1_765_432_109_876_543, 1_765_432_109.876
    for strategy in [
        js.FIFOStrategy(),
        js.PriorityStrategy(),
        js.AgingPriorityStrategy(0.25),
        js.EarliestDeadlineFirstStrategy(),
        js.FairShareStrategy(js.PriorityStrategy(), {"a": 2}),
    ]:
        (row,) = registered(app.jobs, strategy)
        assert row.key_base and row.key_seq and row.key_submitted
        job = record_job.job("x")
        job.seq, job.submitted_at = seq, submitted_at
        want = tuple(map(float, strategy.key(job)))
        want += (0.0,) * (3 - len(want))
        got = tuple(
            b + s * seq + t * submitted_at
            for b, s, t in zip(row.key_base, row.key_seq, row.key_submitted)
        )
        assert got == pytest.approx(want, rel=1e-12), strategy
        assert (row.name, row.executor, row.queue) == ("tx.record", "async", "default")
    (row,) = registered(app.jobs, Squares())
    assert row.key_base is row.key_seq is row.key_submitted is None
