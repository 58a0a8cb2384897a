"""``js.current_job().complete_in(conn, result)`` on PostgreSQL, in one process
(on asyncio, whose AsyncConnection psycopg has; synchronous connections on trio too):
the completion commits with the caller's work or not at all, whatever the
function does after; the scheduler then writes nothing over it, and this
member's view, its listeners, ``wait()`` and a producer's ``result()`` all
see the completion's result. A lost attempt raises ``js.LeaseLostError``
and writes nothing; every misuse says what was wrong.

The store lives in a schema of its own (its connections' ``search_path``);
the jobs write through plain connections to the database, which do not
reach that schema by name: the completion names the store's tables by
schema. The real-process fleet (``kill -9``, connections reset, a member
paused past its lease) is tests/test_complete_in_fleet.py.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Iterator
from typing import Any

import anyio
import anyio.to_thread
import psycopg
import pytest
import txn_jobs
from pg import ADMIN_URL, SECRET, database, schema_url

import jobsched as js

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]

#: Bound on any wait for a job: generous, for a loaded machine.
WAIT = 60


@pytest.fixture
def anyio_backend() -> str:
    # psycopg's AsyncConnection runs on asyncio only.
    return "asyncio"


@pytest.fixture
def app_url(pg_session_database: str) -> str:
    """The database the app's own connections reach (the store is in a schema of it)."""
    return pg_session_database


@pytest.fixture
def table(app_url: str) -> Iterator[str]:
    name = f"app_{secrets.token_hex(5)}"
    txn_jobs.create_table(app_url, name)
    yield name
    with psycopg.connect(app_url, autocommit=True) as conn:
        conn.execute(f"DROP TABLE {name}")


@pytest.fixture
def store_url(pg_session_database: str) -> str:
    return schema_url(pg_session_database)


@pytest.fixture
def quiet(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """The test's schedulers log nothing at WARNING or above."""
    caplog.set_level(logging.INFO, logger="jobsched")
    yield
    loud = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert loud == []


def scheduler(store_url: str, **kwargs: Any) -> js.JobScheduler:
    return js.JobScheduler(store=js.open_store(store_url, secret=SECRET), **kwargs)


def result_of(tag: str, job: js.Job) -> dict[str, Any]:
    """What a txn_jobs job completes with (its pid is this process's)."""
    import os

    return {"tag": tag, "attempt": job.attempts, "pid": os.getpid()}


@pytest.mark.parametrize("then", ["return", "raise", "sleep"])
async def test_the_completion_commits_with_the_callers_work(
    then: str, store_url: str, app_url: str, table: str, quiet: None
) -> None:
    """The job inserts a row and completes in one transaction, then returns
    something else, raises, or sleeps past its timeout: it is COMPLETED once,
    with the completion's result, in the store and in this member's view,
    and its listeners saw RUNNING then COMPLETED with that result. Nothing
    is logged (the scheduler's own outcome is never written, so never
    refused)."""
    seen: list[tuple[str, str, Any]] = []
    async with scheduler(store_url) as s:
        s.add_listener(lambda job, old, new: seen.append((old.value, new.value, job.result)))
        job_id = s.submit(
            js.FunctionJob(txn_jobs.complete, (app_url, table, "t", then), timeout=1.0)
        )
        stored = await s.wait(job_id, timeout=WAIT)
    # After the stop, which waits for the member to settle the attempt.
    local = s.get(job_id)
    expected = result_of("t", stored)
    assert (stored.status, stored.attempts, stored.result) == (js.JobStatus.COMPLETED, 1, expected)
    assert (local.status, local.result) == (js.JobStatus.COMPLETED, expected)
    assert local.last_error is None
    assert seen == [("pending", "running", None), ("running", "completed", expected)]
    assert txn_jobs.rows(app_url, table) == [("t", job_id, 1, expected["pid"])]


async def test_a_rolled_back_completion_leaves_the_attempt_as_it_ended(
    store_url: str, app_url: str, table: str
) -> None:
    """complete_in in a transaction that then rolls back recorded nothing:
    a function that raises inside it fails as ever (no retries: FAILED), and
    one that rolls back and returns completes with what it returned."""
    no_retry = js.RetryPolicy(max_retries=0)
    async with scheduler(store_url) as s:
        raised = s.submit(
            js.FunctionJob(txn_jobs.complete, (app_url, table, "r", "raise inside"), retry=no_retry)
        )
        rolled = s.submit(js.FunctionJob(txn_jobs.complete, (app_url, table, "b", "rollback")))
        failed = await s.wait(raised, timeout=WAIT)
        returned = await s.wait(rolled, timeout=WAIT)
    assert failed.status is js.JobStatus.FAILED
    assert failed.last_error == "RuntimeError: after complete_in, inside the transaction"
    assert (returned.status, returned.result) == (js.JobStatus.COMPLETED, "returned")
    assert txn_jobs.rows(app_url, table) == []


@pytest.mark.parametrize(
    ("function", "executor"),
    [
        (txn_jobs.complete_sync, "thread"),
        (txn_jobs.complete_sync, "process"),
        (txn_jobs.complete_blocking, "async"),
    ],
    ids=["thread", "process", "async-never-suspends"],
)
async def test_a_synchronous_connection_writes_before_complete_in_returns(
    function: Any, executor: str, store_url: str, app_url: str, table: str, quiet: None
) -> None:
    """With a psycopg Connection, complete_in writes as it is called (a
    thread or process job calls it without await): in a thread, in a worker
    process (the handle travels with the job, the completion comes back with
    its reply), and in an async job that never suspends."""
    async with scheduler(store_url) as s:
        job_id = s.submit(
            js.FunctionJob(function, (app_url, table, "s"), executor=executor, timeout=None)
        )
        stored = await s.wait(job_id, timeout=WAIT)
    # After the stop, which waits for the member to settle the attempt.
    local = s.get(job_id)
    ((tag, row_job, attempt, pid),) = txn_jobs.rows(app_url, table)
    expected = {"tag": "s", "attempt": 1, "pid": pid}
    assert (tag, row_job, attempt) == ("s", job_id, 1)
    assert (stored.status, stored.result) == (js.JobStatus.COMPLETED, expected)
    assert (local.status, local.result) == (js.JobStatus.COMPLETED, expected)


@pytest.mark.parametrize("job", [txn_jobs.registered, txn_jobs.registered_process])
async def test_a_registered_jobs_completion_is_stored_as_json(
    job: Any, store_url: str, app_url: str, table: str, quiet: None
) -> None:
    """A registered job's completion is its result as JSON, which the row
    holds as SQL can read it, on the event loop and in a worker process."""
    store = js.open_store(store_url, secret=SECRET)
    async with txn_jobs.app.scheduler(store=store) as s:
        job_id = await job.enqueue(app_url, table, "j")
        stored = await s.wait(job_id, timeout=WAIT)
    ((_, _, _, pid),) = txn_jobs.rows(app_url, table)
    expected = {"tag": "j", "attempt": 1, "pid": pid}
    assert (stored.status, stored.result) == (js.JobStatus.COMPLETED, expected)
    with psycopg.connect(store_url) as conn:
        (raw,) = conn.execute(
            "SELECT convert_from(substring(result from 2), 'UTF8')::jsonb FROM jobsched_jobs "
            "WHERE id = %s",
            (int(job_id.removeprefix("job-")),),
        ).fetchone()  # type: ignore[misc]
    assert raw == expected


async def test_dependents_run_and_a_producer_reads_the_result(
    store_url: str, app_url: str, table: str
) -> None:
    """The completion releases the job's dependents (they run once it
    commits) and wakes a producer's result() on the same store."""
    async with (
        scheduler(store_url, num_workers=0) as producer,
        scheduler(store_url) as worker,
    ):
        first = await producer.enqueue(js.FunctionJob(txn_jobs.complete, (app_url, table, "a")))
        then = await producer.enqueue(
            js.FunctionJob(txn_jobs.complete, (app_url, table, "b")), depends_on=[first]
        )
        assert (await producer.result(first, timeout=WAIT))["tag"] == "a"
        assert (await producer.result(then, timeout=WAIT))["tag"] == "b"
        await worker.join()
    assert [row[0] for row in txn_jobs.rows(app_url, table)] == ["a", "b"]


async def test_a_lost_attempt_raises_lease_lost_and_writes_nothing(
    store_url: str, app_url: str, table: str
) -> None:
    """Another member took the attempt over (the row's owner and attempt
    moved on) while the job held its transaction open: complete_in raises
    LeaseLostError naming the job, the caller's insert rolls back, and the
    newer attempt's outcome stands (this member's own is fenced out)."""
    gate = f"gate-{secrets.token_hex(4)}"
    txn_jobs.GATES[gate] = threading.Event()
    started, ended = anyio.Event(), anyio.Event()
    tag = f"lost-{gate}"

    def follow(job: js.Job, old: js.JobStatus, new: js.JobStatus) -> None:
        (ended if new.is_terminal else started).set()

    async with scheduler(store_url) as s:
        s.add_listener(follow)
        job_id = s.submit(
            js.FunctionJob(
                txn_jobs.complete,
                (app_url, table, tag, "return", gate),
                retry=js.RetryPolicy(max_retries=0),
            )
        )
        with anyio.fail_after(WAIT):
            await started.wait()
        # Another member's takeover and its attempt's completion, as the store has them.
        with psycopg.connect(store_url, autocommit=True) as conn:
            conn.execute(
                "UPDATE jobsched_jobs SET status = 'completed', owner = NULL, "
                "lease_until = NULL, queue = NULL, attempts = attempts + 1, "
                "finished_at = extract(epoch from now()), result = %s WHERE id = %s",
                (b'J"attempt 2"', int(job_id.removeprefix("job-"))),
            )
        txn_jobs.GATES[gate].set()
        with anyio.fail_after(WAIT):
            await ended.wait()
        local = s.get(job_id)
        stored = await s.fetch(job_id)
    (lost,) = txn_jobs.SEEN[tag]
    assert isinstance(lost, js.LeaseLostError)
    assert str(lost).startswith(f"{job_id} ('{txn_jobs.complete.__qualname__}'): attempt 1 ")
    assert "roll your transaction back" in str(lost)
    assert local.status is js.JobStatus.FAILED
    assert (stored.status, stored.attempts, stored.result) == (
        js.JobStatus.COMPLETED,
        2,
        "attempt 2",
    )
    assert txn_jobs.rows(app_url, table) == []


async def test_an_attempt_that_timed_out_here_cannot_complete(
    store_url: str, app_url: str, table: str
) -> None:
    """A thread job's attempt timed out (its thread abandoned); when the
    thread then tries to complete, complete_in raises LeaseLostError at once
    (the attempt is over here): nothing is written, the job stays TIMED_OUT."""
    gate = f"gate-{secrets.token_hex(4)}"
    txn_jobs.GATES[gate] = threading.Event()
    tag = f"late-{gate}"
    txn_jobs.NOTED[tag] = threading.Event()
    async with scheduler(store_url) as s:
        job_id = s.submit(
            js.FunctionJob(
                txn_jobs.late_sync,
                (app_url, table, tag, gate),
                timeout=0.2,
                retry=js.RetryPolicy(max_retries=0),
            )
        )
        ended = await s.wait(job_id, timeout=WAIT)
        txn_jobs.GATES[gate].set()
        # The abandoned thread's own end: the scheduler no longer waits for it.
        assert await anyio.to_thread.run_sync(txn_jobs.NOTED[tag].wait, WAIT)
        stored = await s.fetch(job_id)
    (lost,) = txn_jobs.SEEN[tag]
    assert isinstance(lost, js.LeaseLostError)
    assert "attempt 1 is no longer this member's (it ended here already" in str(lost)
    assert ended.status is stored.status is js.JobStatus.TIMED_OUT
    assert txn_jobs.rows(app_url, table) == []


@pytest.mark.parametrize(
    ("kind", "said"),
    [
        ("not a connection", "TypeError: complete_in() takes a psycopg 3 Connection or "
         "AsyncConnection to the store's database, in a transaction; got builtins.object"),
        ("autocommit", "ValueError: complete_in() got a connection in autocommit mode outside "
         "a transaction: the completion would commit on its own"),
        ("another database", "ValueError: complete_in() got a connection whose database holds "
         "no jobsched store in the schema"),
        ("repeatable read", "ValueError: complete_in() needs a READ COMMITTED transaction "
         "(PostgreSQL's default); this one is REPEATABLE READ"),
        ("unstorable result", "TypeError: the result of job-"),
    ],
)  # fmt: skip
async def test_misuse_is_refused_and_says_why(
    kind: str, said: str, store_url: str, pg_session_database: str
) -> None:
    """A connection complete_in does not take, one that would commit the
    completion on its own, one to a database without the store, a
    transaction whose snapshot could miss a new dependent, and a result the
    store cannot keep: each an error naming the problem."""
    url = ADMIN_URL if kind == "another database" else pg_session_database
    async with scheduler(store_url) as s:
        job_id = s.submit(js.FunctionJob(txn_jobs.misuse, (url, kind), timeout=None))
        answer = (await s.wait(job_id, timeout=WAIT)).result
    assert answer.startswith(said), answer
    if kind == "unstorable result":
        assert "cannot be stored: it does not pickle by reference" in answer


async def test_a_connection_to_another_stores_database_is_named(store_url: str) -> None:
    """A database with a store in a schema of the same name, but not this
    store's: complete_in names both databases."""
    schema = store_url.rpartition("%3D")[2]
    with database() as other:
        with psycopg.connect(other, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
        async with scheduler(f"{other}?options=-csearch_path%3D{schema}"):
            pass  # the other store's tables
        async with scheduler(store_url) as s:
            job_id = s.submit(js.FunctionJob(txn_jobs.misuse, (other, "another database")))
            answer = (await s.wait(job_id, timeout=WAIT)).result
    mine = store_url.rpartition("/")[2].partition("?")[0]
    theirs = other.rpartition("/")[2]
    assert answer.startswith(
        f"ValueError: complete_in() got a connection to the database {theirs!r}; "
        f"the store's is {mine!r}"
    ), answer


async def test_a_dependent_added_while_the_completion_waits_is_released(
    store_url: str, app_url: str, table: str
) -> None:
    """A producer adds a dependent of the running job (its add holds the
    upstream's row FOR SHARE until it commits) just as the job completes in
    its own transaction: the completion waits for the add, then sees the new
    edge and releases the dependent, which runs. (Read in the snapshot of a
    statement that waited for the lock, the edge was missed and the
    dependent blocked for ever.)"""
    from jobsched.store import KEY_WIDTH, NewJob
    from jobsched_postgres import _sql

    gate = f"gate-{secrets.token_hex(4)}"
    txn_jobs.GATES[gate] = threading.Event()
    started = anyio.Event()
    producer = js.open_store(store_url, secret=SECRET)
    await producer.open()
    store = js.open_store(store_url, secret=SECRET)
    try:
        async with txn_jobs.app.scheduler(store=store) as s:
            s.add_listener(lambda job, old, new: new is js.JobStatus.RUNNING and started.set())
            upstream = s.submit(
                js.FunctionJob(txn_jobs.complete, (app_url, table, "up", "return", gate))
            )
            with anyio.fail_after(WAIT):
                await started.wait()
            number = producer.reserve_ids(1)
            now = time.time()
            dependent = NewJob(
                number, "txn.after", "async", (0.0,) * KEY_WIDTH, now, now, b"J",
                depends_on=(int(upstream.removeprefix("job-")),), args="{}",
            )  # fmt: skip
            with psycopg.connect(store_url) as adding:
                with adding.transaction():
                    assert _sql.add(adding, [dependent], now) == []
                    txn_jobs.GATES[gate].set()  # the completion now waits for this add
                    await wait_for_a_lock_wait(app_url)
                done = await s.wait(upstream, timeout=WAIT)
                after = await s.wait(f"job-{number}", timeout=WAIT)
    finally:
        await producer.close()
    assert done.status is js.JobStatus.COMPLETED
    assert (after.status, after.result) == (js.JobStatus.COMPLETED, "after")


async def wait_for_a_lock_wait(url: str) -> None:
    """Until a session of the database waits for a lock (the completion's)."""
    with anyio.fail_after(WAIT), psycopg.connect(url, autocommit=True) as conn:
        while True:
            (waiting,) = conn.execute(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE datname = current_database() AND wait_event_type = 'Lock'"
            ).fetchone()  # type: ignore[misc]
            if waiting:
                return
            await anyio.sleep(0.01)


@pytest.mark.parametrize("anyio_backend", ["trio"])
@pytest.mark.parametrize("executor", ["thread", "process"])
async def test_on_trio_a_synchronous_connection_completes(
    executor: str, store_url: str, app_url: str, table: str, quiet: None
) -> None:
    """On trio (psycopg's AsyncConnection is asyncio's), thread and process
    jobs complete through a synchronous connection, and the member settles
    them as on asyncio."""
    async with scheduler(store_url) as s:
        job_id = s.submit(
            js.FunctionJob(
                txn_jobs.complete_sync, (app_url, table, "t"), executor=executor, timeout=None
            )
        )
        stored = await s.wait(job_id, timeout=WAIT)
    # After the stop, which waits for the member to settle the attempt.
    local = s.get(job_id)
    ((_, _, _, pid),) = txn_jobs.rows(app_url, table)
    expected = {"tag": "t", "attempt": 1, "pid": pid}
    assert (stored.status, stored.result) == (local.status, local.result)
    assert (local.status, local.result) == (js.JobStatus.COMPLETED, expected)
