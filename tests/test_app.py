"""js.App and @app.job: registered jobs run from their name and JSON
arguments on every store (memory, SQLite, PostgreSQL), asyncio and trio."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from app_jobs import (
    add,
    app,
    bad_result,
    decoded_badly,
    fan_out,
    fan_out_sync,
    named,
    pickled,
    record,
    send_email,
)

import jobsched as js
from jobsched._jobs._registered import RegisteredJob

UTC = dt.timezone.utc


@pytest.fixture
def on_store(store_kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> dict[str, Any]:
    """The overrides that put an app's scheduler on the test's store."""
    if store_kind == "sqlite":
        return {"store": f"sqlite:///{tmp_path / 'jobs.db'}"}
    if store_kind == "postgres":
        from pg import SECRET, schema_url

        return {
            "store": schema_url(request.getfixturevalue("pg_session_database")),
            "secret": SECRET,
        }
    return {}


@pytest.mark.anyio
async def test_enqueue_runs_with_json_arguments_and_result(
    on_store: dict[str, Any], clock: Callable[[], float]
) -> None:
    """enqueue inside `async with app.scheduler()` runs the job there; tagged
    types (datetime, tuple) come back as such in the result."""
    when = dt.datetime(2026, 3, 4, 5, 6, tzinfo=UTC)
    async with app.scheduler(clock=clock, **on_store) as s:
        first = await add.enqueue(1, b=5)
        second = await send_email.enqueue("a@b.c", when, tags=("x", "y"))
        assert await s.result(first, timeout=30) == 6
        assert await s.result(second, timeout=30) == {
            "to": "a@b.c",
            "when": when,
            "tags": ("x", "y"),
        }
        job = await s.wait(second, timeout=30)
        assert job.name == "app_jobs.send_email"
        assert job.queue == "emails"


@pytest.fixture(
    params=[
        ("asyncio", "memory"),
        ("trio", "memory"),
        ("asyncio", "sqlite"),
        ("trio", "sqlite"),
        pytest.param(("asyncio", "postgres"), marks=pytest.mark.postgres),
        pytest.param(("trio", "postgres"), marks=pytest.mark.postgres),
    ],
    ids=lambda p: "-".join(p),
)
def real_clock_run(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, dict[str, Any]]:
    """For tests with thread jobs (which live on the real clock, not trio's
    mock one): a backend for anyio.run and the overrides for a store."""
    backend, store = request.param
    if store == "sqlite":
        return backend, {"store": f"sqlite:///{tmp_path / 'jobs.db'}"}
    if store == "postgres":
        from pg import SECRET, schema_url

        return backend, {
            "store": schema_url(request.getfixturevalue("pg_session_database")),
            "secret": SECRET,
        }
    return backend, {}


def test_sync_function_with_var_arguments(real_clock_run: tuple[str, dict[str, Any]]) -> None:
    """A plain function runs on the thread executor; *args and **kwargs bind
    as a list and an object and come back as tuple and dict."""
    backend, on_store = real_clock_run

    async def main() -> Any:
        async with app.scheduler(**on_store) as s:
            job_id = await record.enqueue(1, (2, 3), key={"$x": 1})
            return await s.result(job_id, timeout=30)

    assert anyio.run(main, backend=backend) == [(1, (2, 3)), {"key": {"$x": 1}}]


def test_enqueue_from_inside_jobs(real_clock_run: tuple[str, dict[str, Any]]) -> None:
    """A job that enqueues (async, or enqueue_sync from a thread job) uses
    the worker's own scheduler."""
    backend, on_store = real_clock_run

    async def main() -> list[Any]:
        async with app.scheduler(**on_store) as s:
            await s.result(await fan_out.enqueue(2), timeout=30)
            await s.result(await fan_out_sync.enqueue(2), timeout=30)
            await s.join()
            found = []
            for job in s.jobs():
                if job.name == "app_jobs.add":
                    found.append(await s.result(job.job_id, timeout=30))
            return sorted(found)

    assert anyio.run(main, backend=backend) == [0, 1, 100, 101]


def test_stored_arguments_are_bound_json() -> None:
    """The job's args JSON maps each parameter to its bound value (*args a list)."""
    job = record.job(1, (2, 3), key=dt.date(2026, 1, 2))
    assert isinstance(job, RegisteredJob)
    assert job.args_json == '{"items":[1,{"$tuple":[2,3]}],"extra":{"key":{"$date":"2026-01-02"}}}'
    assert add.job(1).args_json == '{"a":1}'  # defaults are not stored  # type: ignore[attr-defined]


@pytest.mark.anyio
async def test_result_that_does_not_encode_fails_without_retry(
    on_store: dict[str, Any], clock: Callable[[], float]
) -> None:
    """A result JSON cannot keep ends the job FAILED after one attempt, naming its type."""
    async with app.scheduler(clock=clock, **on_store) as s:
        job_id = await bad_result.enqueue()
        job = await s.wait(job_id, timeout=30)
    assert job.status is js.JobStatus.FAILED
    assert job.attempts == 1
    assert job.last_error is not None
    assert "the result of app_jobs.bad_result cannot be stored as JSON" in job.last_error
    assert "builtins.object" in job.last_error


@pytest.mark.anyio
async def test_text_no_store_keeps_is_refused_at_enqueue_on_every_store(
    on_store: dict[str, Any], clock: Callable[[], float]
) -> None:
    """NUL or a lone surrogate in an argument: ValueError at enqueue naming the
    argument, on every store alike (PostgreSQL's jsonb has no NUL); nothing is
    accepted, and the scheduler goes on."""
    async with app.scheduler(clock=clock, **on_store) as s:
        for bad in ("a\x00b", "caf\udce9"):
            with pytest.raises(ValueError, match=r"app_jobs.add: the argument 'b' cannot be"):
                await add.enqueue(1, bad)  # type: ignore[arg-type]
            with pytest.raises(ValueError, match=r"the argument 'items' cannot be stored"):
                record.job(["ok", {"k": bad}])
        assert s.jobs() == []
        assert await s.result(await add.enqueue(1, 2), timeout=30) == 3


@pytest.mark.anyio
async def test_a_result_no_store_keeps_fails_the_job_without_retry(
    on_store: dict[str, Any], clock: Callable[[], float]
) -> None:
    """A result holding a lone surrogate (bytes decoded with surrogateescape)
    ends the job FAILED after one attempt, saying why; it never hangs."""
    async with app.scheduler(clock=clock, **on_store) as s:
        job = await s.wait(await decoded_badly.enqueue(), timeout=30)
    assert job.status is js.JobStatus.FAILED
    assert job.attempts == 1
    assert job.last_error is not None
    assert "the result of app_jobs.decoded_badly cannot be stored" in job.last_error
    assert "lone surrogate" in job.last_error


@pytest.mark.anyio
async def test_pickle_serializer_keeps_a_function_job(
    on_store: dict[str, Any], clock: Callable[[], float]
) -> None:
    """serializer="pickle" makes a FunctionJob of the registered function,
    which keeps values JSON cannot (a complex number)."""
    job = pickled.job(1j)
    assert isinstance(job, js.FunctionJob)
    assert job.name == "app_jobs.pickled"
    async with app.scheduler(clock=clock, **on_store) as s:
        job_id = await pickled.enqueue(2j)
        assert await s.result(job_id, timeout=30) == 2j


@pytest.mark.anyio
async def test_options_sender(on_store: dict[str, Any], clock: Callable[[], float]) -> None:
    """options(): an own job_id is idempotent; queue and priority override
    the registered ones; depends_on takes ids and jobs."""
    async with app.scheduler(clock=clock, **on_store) as s:
        sender = add.options(job_id="order-1", queue="other", priority=7)
        first = await sender.enqueue(1)
        again = await sender.enqueue(100)
        assert first == again == "order-1"
        after = await add.options(depends_on=[first]).enqueue(2)
        assert await s.result(after, timeout=30) == 4
        assert await s.result(first, timeout=30) == 3  # the first call's job stands
        job = await s.fetch(first)
        assert job.queue == "other"


@pytest.mark.anyio
async def test_delay_and_at(clock: Callable[[], float]) -> None:
    """delay= and at= reach the submit: the job waits."""
    async with app.scheduler(clock=clock) as s:
        job_id = await add.options(delay=60).enqueue(1)
        assert s.get(job_id).run_at >= clock() + 59
        later = dt.datetime.now(UTC) + dt.timedelta(minutes=5)
        job_id = await add.options(at=later).enqueue(1)
        assert s.get(job_id).run_at >= clock() + 290
        await s.stop(cancel_running=True)


@pytest.mark.anyio
async def test_a_function_job_of_a_registered_function_runs_as_that_function() -> None:
    """js.FunctionJob(f) of an @app.job function picks f's executor: an
    async one runs on the loop (awaited), not in a thread as a callable."""
    async_job, sync_job = js.FunctionJob(add, (2, 3)), js.FunctionJob(record, (1,))
    assert (async_job.executor, sync_job.executor) == ("async", "thread")
    async with js.JobScheduler() as s:  # real time: a thread's job takes real time
        ids = s.submit(async_job), s.submit(sync_job)
        await s.join()
    assert [s.get(i).result for i in ids] == [5, [(1,), {}]]


def test_direct_call_runs_the_function() -> None:
    """Calling a JobFunction calls the function, nothing is enqueued."""
    assert anyio.run(add, 2, 3) == 5
    assert record(1) == [(1,), {}]
    assert named.name == "custom.name"
    assert app.jobs["custom.name"] is named


def test_argument_that_does_not_encode_is_named() -> None:
    """A TypeError at job() (so at enqueue) names the argument and its type."""
    with pytest.raises(
        TypeError,
        match=r"app_jobs.send_email: the argument 'when' cannot be stored as JSON: it is a "
        r"builtins.object",
    ):
        send_email.job("a", object())


def test_arguments_that_do_not_bind() -> None:
    """Arguments are checked against the signature at once."""
    with pytest.raises(
        TypeError, match=r"app_jobs.add: the arguments don't match add\(a: .*too many positional"
    ):
        add.job(1, 2, 3)  # type: ignore[call-arg]


def test_a_connection_under_testing_is_recorded_as_any_enqueue() -> None:
    """Inside ``app.testing()`` an enqueue in the caller's transaction
    (``connection=``) is recorded like any other: nothing is written, so the
    connection is not used. (Enqueueing in your own transaction itself:
    tests/test_txenqueue*.py.)"""
    with app.testing() as t:
        add.options(connection=object()).enqueue_sync(1, 2)
    t.assert_enqueued(add, 1, 2)


def test_registering_errors() -> None:
    """A name registered twice, a lambda or nested function without a name,
    and bad options are refused when the function is declared."""
    other = js.App()

    async def nested() -> None: ...

    with pytest.raises(ValueError, match="defined inside another"):
        other.job(nested)
    with pytest.raises(ValueError, match="lambda"):
        other.job(lambda: None)
    fn = other.job(name="nested")(nested)
    assert fn.name == "nested"
    with pytest.raises(ValueError, match="a job named 'nested' is registered already"):
        other.job(name="nested")(nested)
    with pytest.raises(ValueError, match="registered already: apply @app.job once"):
        other.job(name="again")(fn)
    with pytest.raises(ValueError, match="coroutine function and cannot run on the 'thread'"):
        other.job(name="t", executor="thread")(nested)
    with pytest.raises(ValueError, match="serializer"):
        other.job(name="s", serializer="yaml")
    with pytest.raises(ValueError, match="timeout"):
        other.job(name="x", timeout=-1)(nested)
    with pytest.raises(TypeError, match="retry"):
        other.job(name="y", retry=3)(nested)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="name must be a non-empty str"):
        other.job(name="")


@pytest.mark.anyio
async def test_enqueue_on_memory_store_outside_a_scheduler() -> None:
    """On the memory store there is no producer: enqueue outside a running
    scheduler says what to do."""
    with pytest.raises(
        js.SchedulerError, match=r"needs a durable store.*async with app.scheduler\(\)"
    ):
        await add.enqueue(1)
    with pytest.raises(js.SchedulerError, match="needs a durable store"):
        add.enqueue_sync(1)


@pytest.mark.anyio
async def test_enqueue_sync_on_the_loop_thread_is_refused(clock: Callable[[], float]) -> None:
    """enqueue_sync on the scheduler's own loop would block it: refused."""
    async with app.scheduler(clock=clock):
        with pytest.raises(js.SchedulerError, match=r"use `await f.enqueue\(...\)` there"):
            add.enqueue_sync(1)


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_producer_outside_a_scheduler(tmp_path: Path, backend: str) -> None:
    """On a durable store, enqueue_sync and enqueue outside a scheduler go
    through the app's producer (no workers), committed when they return; a
    worker then runs them."""
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    durable = js.App(url)
    job = durable.job(name="producer.add")(_plus)
    try:
        first = job.enqueue_sync(1, 2)
        second = anyio.run(job.enqueue, 3, 4, backend=backend)
        assert durable._producer is not None and durable._producer.running
        assert durable._producer.scheduler._num_workers == 0
    finally:
        durable.shutdown_producer()

    async def work() -> list[Any]:
        async with durable.scheduler() as s:
            return [await s.result(first, timeout=30), await s.result(second, timeout=30)]

    assert anyio.run(work, backend=backend) == [3, 7]


async def _plus(a: int, b: int) -> int:
    return a + b


def test_app_settings_and_scheduler_overrides(tmp_path: Path) -> None:
    """settings() holds what was given; scheduler() and background() build
    from it, overrides winning; an unknown override is a TypeError."""
    limits = {"smtp": js.RateLimit(1, per=1.0)}
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    configured = js.App(url, queues=["emails"], rate_limits=limits, lease=12.0, secret="k")
    assert configured.settings() == {
        "store": url, "queues": ["emails"], "rate_limits": limits, "lease": 12.0, "secret": "k",
    }  # fmt: skip
    s = configured.scheduler(num_workers=2)
    assert s._link is not None and s._link.store.lease == 12.0
    assert s._link.queues == frozenset({"emails"})
    assert s._link.store.secret == b"k"
    s2 = configured.scheduler(queues=["other"])
    assert s2._link is not None and s2._link.queues == frozenset({"other"})
    with pytest.raises(TypeError, match="nonsense"):
        configured.scheduler(nonsense=1)
    bg = configured.background(num_workers=1)
    assert bg.scheduler._link is not None
    for made in (s, s2, bg.scheduler):
        anyio.run(made.stop)
    assert js.App().settings() == {}


def test_app_validates_at_construction() -> None:
    """App checks its settings as JobScheduler would, at once."""
    with pytest.raises(ValueError, match="queue_limits names 'x'"):
        js.App(queues=["a"], queue_limits={"x": 1})
    with pytest.raises(TypeError, match="strategy"):
        js.App(strategy="fifo")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="retention must be a jobsched.Retention"):
        js.App(retention=object())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="secret= apply to a store given by URL"):
        js.App(secret="s")
    with pytest.raises(ValueError, match="lease must be a positive"):
        js.App("sqlite:///x.db", lease=-1)
    with pytest.raises(ValueError, match="load_grace must be a finite number"):
        js.App(load_grace=-1)
    with pytest.raises(TypeError, match="load_grace must be a number"):
        js.App(load_grace="1")  # type: ignore[arg-type]
    with pytest.raises(js.StoreNotFoundError):
        js.App("nosuch://x")


def test_scheduler_runs_only_registered_names() -> None:
    """A scheduler the app builds has the app's registry, and its claims name
    the registered functions."""
    s = app.scheduler(store="sqlite:///:memory:")
    assert s._registry is not None and "app_jobs.add" in s._registry
    assert s._link is not None and "app_jobs.add" in s._link.names
    anyio.run(s.stop)


@pytest.mark.anyio
async def test_depends_on_takes_jobs(clock: Callable[[], float]) -> None:
    """options(depends_on=) takes Job objects that were submitted; one never
    submitted is refused with what to do."""
    async with app.scheduler(clock=clock) as s:
        upstream = add.options(queue="other", priority=9).job(1)
        assert (upstream.queue, upstream.priority) == ("other", 9)
        s.submit(upstream)
        after = await add.options(depends_on=upstream).enqueue(2)
        assert await s.result(after, timeout=30) == 4
        with pytest.raises(ValueError, match="never enqueued"):
            await add.options(depends_on=[add.job(3)]).enqueue(4)


def test_job_function_pickles_by_reference() -> None:
    """A JobFunction pickles as the module attribute it replaced, as the
    function would (serializer="pickle" jobs and the process executor rely on it)."""
    import pickle

    assert pickle.loads(pickle.dumps(add)) is add
    job = pickle.loads(pickle.dumps(add.job(1, b=2)))
    assert isinstance(job, RegisteredJob)
    assert (job.function, job.arguments) == (add, {"a": 1, "b": 2})
