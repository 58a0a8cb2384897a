"""The ``thread`` executor: results, errors, cooperative cancellation, abandoned threads."""

from __future__ import annotations

import contextvars
import logging
import threading
from collections.abc import Callable
from typing import Any

import anyio
import anyio.to_thread
import pytest

import jobsched as js
from jobsched._engine import _resume
from jobsched_thread import ThreadExecutor

pytestmark = pytest.mark.anyio

# Threads live on the real clock: no MockClock here (it would jump past the
# timeouts while a thread is busy).
WATCHDOG = 10


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def wait_for(event: threading.Event) -> None:
    """Wait for an event set by a job's thread, without blocking the loop."""
    assert await anyio.to_thread.run_sync(event.wait, WATCHDOG), "the job never got there"


async def wait_until(predicate: Callable[[], bool]) -> None:
    """Poll state another thread changes; the watchdog fails a test that hangs."""
    with anyio.fail_after(WATCHDOG):
        while not predicate():  # noqa: ASYNC110 - no event crosses from the job's thread
            await anyio.sleep(0.005)


class Returns(js.BlockingJob):
    def __init__(self, value: Any, **kw: Any) -> None:
        super().__init__("returns", **kw)
        self.value = value

    def run_sync(self) -> Any:
        return self.value


class Raises(js.BlockingJob):
    def run_sync(self) -> Any:
        raise ValueError("boom")


class Poller(js.BlockingJob):
    """Polls cancel_requested() every few ms until asked to stop; returns anyway."""

    def __init__(self, outcome: str = "return", **kw: Any) -> None:
        super().__init__("poller", **kw)
        self.outcome = outcome
        self.started = threading.Event()
        self.saw_cancel = threading.Event()
        self.finished = threading.Event()

    def run_sync(self) -> Any:
        self.started.set()
        try:
            wake = threading.Event()  # never set: wait() is the poll interval
            while not js.cancel_requested():
                wake.wait(0.005)
            self.saw_cancel.set()
            if self.outcome == "raise":
                raise ValueError("raised after cancellation")
            return "stopped early"
        finally:
            self.finished.set()


class Stubborn(js.BlockingJob):
    """Ignores cancellation: blocks until the test releases it."""

    def __init__(self, release: threading.Event, **kw: Any) -> None:
        super().__init__("stubborn", **kw)
        self.release = release
        self.started = threading.Event()
        self.finished = threading.Event()

    def run_sync(self) -> Any:
        self.thread = threading.current_thread()
        self.started.set()
        try:
            assert self.release.wait(WATCHDOG), "the test never released the job"
            return "late"
        finally:
            self.finished.set()


# ── Results and errors ───────────────────────────────────────────────────


async def test_result_and_error_through_the_scheduler() -> None:
    """A job's return value becomes its result; its exception its last_error."""
    async with js.JobScheduler(executors={"thread": ThreadExecutor()}) as s:
        ok = s.submit(Returns(42))
        bad = s.submit(Raises("raises", retry=js.RetryPolicy(max_retries=0)))
        fn = s.submit(js.FunctionJob(lambda a, b: a + b, (2, 3)))
        with anyio.fail_after(WATCHDOG):
            await s.join()
    assert s.get(ok).status is js.JobStatus.COMPLETED
    assert s.get(ok).result == 42
    assert s.get(bad).status is js.JobStatus.FAILED
    assert s.get(bad).last_error == "ValueError: boom"
    assert s.get(fn).result == 5


async def test_run_directly_returns_and_raises() -> None:
    """Awaiting the executor itself gives the result or raises the job's exception."""
    executor = ThreadExecutor(max_threads=1)
    assert await executor.run(Returns("x")) == "x"
    with pytest.raises(ValueError, match="boom"):
        await executor.run(Raises("raises"))
    await executor.shutdown()


@pytest.mark.parametrize(
    "error", [SystemExit("3"), KeyboardInterrupt("stop"), GeneratorExit("closed")], ids=repr
)
async def test_job_base_exception_reaches_the_caller_and_the_pool_goes_on(
    error: BaseException, anyio_backend: str
) -> None:
    """A job raising SystemExit, KeyboardInterrupt or GeneratorExit makes run() raise
    that type with its message, and the same executor runs the next job."""
    threads: list[threading.Thread] = []

    def raise_it() -> None:
        threads.append(threading.current_thread())
        raise error

    executor = ThreadExecutor(max_threads=1)
    with anyio.fail_after(WATCHDOG), pytest.raises(type(error)) as raised:
        await executor.run(js.FunctionJob(raise_it))
    assert raised.value.args == error.args
    with anyio.fail_after(WATCHDOG):
        after = await executor.run(js.FunctionJob(threading.current_thread))
    if anyio_backend == "asyncio":
        # Our own pool, with one thread so far: it survived the job and serves on.
        assert after is threads[0]
    await executor.shutdown()


async def test_run_sync_actually_runs_off_the_loop_thread() -> None:
    """The job runs in another thread, so it may block without stalling the loop."""
    loop_thread = threading.get_ident()
    job = js.FunctionJob(threading.get_ident)
    assert await ThreadExecutor().run(job) != loop_thread


async def test_job_without_run_sync_is_a_clear_type_error() -> None:
    """An async job sent to the thread executor names what the executor runs."""

    class Async(js.AsyncJob):
        async def run(self) -> None:
            pass

    with pytest.raises(TypeError, match=r"Async has no `def run_sync\(self\)`"):
        await ThreadExecutor().run(Async("async"))


async def test_stop_iteration_fails_the_attempt_instead_of_hanging() -> None:
    """A future cannot carry StopIteration; the job fails with a RuntimeError at once."""

    def stop() -> None:
        raise StopIteration("from the job")

    async with js.JobScheduler(executors={"thread": ThreadExecutor()}) as s:
        job_id = s.submit(js.FunctionJob(stop, timeout=None, retry=js.RetryPolicy(max_retries=0)))
        with anyio.fail_after(WATCHDOG):
            await s.join()
    assert s.get(job_id).status is js.JobStatus.FAILED
    assert s.get(job_id).last_error == "RuntimeError: run_sync() raised StopIteration"


async def test_job_thread_runs_no_event_loop() -> None:
    """Inside a thread job, sniffio finds no async library, as in to_thread's threads."""
    sniffio = pytest.importorskip("sniffio")

    def which() -> str:
        try:
            return str(sniffio.current_async_library())
        except sniffio.AsyncLibraryNotFoundError:
            return "none"

    assert await ThreadExecutor().run(js.FunctionJob(which)) == "none"


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", True])
def test_bad_max_threads(bad: Any) -> None:
    """max_threads must be a positive integer (or None); the message names the value."""
    with pytest.raises(ValueError, match=rf"max_threads must be .* got {bad!r}"):
        ThreadExecutor(max_threads=bad)


# ── Cooperative cancellation ─────────────────────────────────────────────


def test_cancel_requested_is_false_outside_a_job() -> None:
    """Called from ordinary code (no running thread job) it is False."""
    assert js.cancel_requested() is False


async def test_cancel_requested_is_false_in_a_job_that_was_not_cancelled() -> None:
    """A job that runs undisturbed sees False."""
    assert await ThreadExecutor().run(js.FunctionJob(js.cancel_requested)) is False


@pytest.mark.parametrize("outcome", ["return", "raise"])
async def test_cancel_reaches_a_polling_job(outcome: str) -> None:
    """cancel() sets the job's token; it stops, and stays CANCELLED whatever it does next."""
    executor = ThreadExecutor()
    async with js.JobScheduler(executors={"thread": executor}) as s:
        job = Poller(outcome, timeout=None, retry=js.RetryPolicy(max_retries=3))
        s.submit(job)
        await wait_for(job.started)
        assert s.cancel(job.job_id)
        await wait_for(job.saw_cancel)
        await wait_for(job.finished)
        with anyio.fail_after(WATCHDOG):
            await s.join()
        await wait_until(lambda: executor.abandoned_threads == 0)
    assert job.status is js.JobStatus.CANCELLED
    assert job.attempts == 1
    assert job.result is None


@pytest.mark.parametrize("outcome", ["return", "raise"])
async def test_timeout_reaches_a_polling_job(outcome: str) -> None:
    """A timeout sets the token too; the job ends TIMED_OUT whatever it returns or raises."""
    executor = ThreadExecutor()
    async with js.JobScheduler(executors={"thread": executor}) as s:
        job = Poller(outcome, timeout=0.05, retry=js.RetryPolicy(max_retries=0))
        s.submit(job)
        await wait_for(job.saw_cancel)
        await wait_for(job.finished)
        with anyio.fail_after(WATCHDOG):
            await s.join()
        await wait_until(lambda: executor.abandoned_threads == 0)
    assert job.status is js.JobStatus.TIMED_OUT
    assert job.last_error == "timed out after 0.05s"
    assert job.result is None


async def test_cancellation_is_per_job() -> None:
    """Cancelling one job leaves cancel_requested() False in a job running beside it."""
    release = threading.Event()

    def sibling() -> bool:
        assert release.wait(WATCHDOG)
        return js.cancel_requested()

    async with js.JobScheduler(executors={"thread": ThreadExecutor(max_threads=2)}) as s:
        poller = Poller(timeout=None)
        s.submit(poller)
        other = s.submit(js.FunctionJob(sibling, timeout=None))
        await wait_for(poller.started)
        s.cancel(poller.job_id)
        await wait_for(poller.saw_cancel)
        release.set()
        with anyio.fail_after(WATCHDOG):
            await s.join()
    assert s.get(other).status is js.JobStatus.COMPLETED
    assert s.get(other).result is False
    assert js.cancel_requested() is False


async def test_context_variables_do_not_leak_between_jobs() -> None:
    """A context variable a job sets is gone for the next job on the same thread."""
    var: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="unset")

    def set_it() -> str:
        var.set("set by job 1")
        return var.get()

    executor = ThreadExecutor(max_threads=1)
    assert await executor.run(js.FunctionJob(set_it)) == "set by job 1"
    assert await executor.run(js.FunctionJob(var.get)) == "unset"
    assert var.get() == "unset"


# ── Abandoned threads ────────────────────────────────────────────────────


async def test_abandoned_threads_do_not_starve_new_jobs(caplog: pytest.LogCaptureFixture) -> None:
    """Two stuck jobs that ignore cancellation leave both slots free for four new jobs."""
    caplog.set_level(logging.WARNING, logger="jobsched.thread")
    release = threading.Event()
    executor = ThreadExecutor(max_threads=2)
    async with js.JobScheduler(num_workers=4, executors={"thread": executor}) as s:
        try:
            no_retry = js.RetryPolicy(max_retries=0)
            stuck = [
                Stubborn(release, timeout=None),
                Stubborn(release, timeout=0.05, retry=no_retry),
            ]
            for job in stuck:
                s.submit(job)
            for job in stuck:
                await wait_for(job.started)
            s.cancel(stuck[0].job_id)  # the other one times out
            await wait_until(lambda: all(job.status.is_terminal for job in stuck))
            assert executor.abandoned_threads == 2

            fresh = [s.submit(Returns(i)) for i in range(4)]
            with anyio.fail_after(WATCHDOG):
                await s.join()
            assert [s.get(i).result for i in fresh] == [0, 1, 2, 3]
            assert not any(job.finished.is_set() for job in stuck), "should still be running"
            # Each is warned about once the grace after its cancellation is over.
            await wait_until(lambda: len(thread_warnings(caplog)) == 2)
        finally:
            release.set()
        await wait_until(lambda: executor.abandoned_threads == 0)
    assert stuck[0].status is js.JobStatus.CANCELLED
    assert stuck[1].status is js.JobStatus.TIMED_OUT
    assert stuck[1].result is None  # it returned "late", after its timeout
    warnings = [r for r in caplog.records if r.name == "jobsched.thread"]
    assert len(warnings) == 2
    assert all(r.levelno == logging.WARNING for r in warnings)
    # Both were abandoned before the first grace ended, unless the machine
    # stalled for a second between the two.
    assert "abandoned thread(s) still running)" in warnings[0].getMessage()
    assert "(2 abandoned thread(s) still running)" in warnings[1].getMessage()
    assert stuck[0].job_id in warnings[0].getMessage() + warnings[1].getMessage()


def thread_warnings(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [
        r for r in caplog.records if r.name == "jobsched.thread" and r.levelno >= logging.WARNING
    ]


async def test_a_job_that_stops_within_the_grace_is_not_reported_abandoned(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A job that polls cancel_requested() and stops soon after its cancel is
    not warned about, then or later (issue 22: it was, at once, as "abandoned")."""
    caplog.set_level(logging.DEBUG, logger="jobsched.thread")
    # Far longer than a poll takes even on a loaded machine: the job surely
    # stops within it, and the timer then finds it stopped.
    monkeypatch.setattr(_resume, "CANCEL_GRACE", 60.0)
    executor = ThreadExecutor()
    async with js.JobScheduler(executors={"thread": executor}) as s:
        job = Poller(timeout=None)
        s.submit(job)
        await wait_for(job.started)
        s.cancel(job.job_id)
        await wait_for(job.finished)
        await wait_until(lambda: executor.abandoned_threads == 0)
    assert job.saw_cancel.is_set()
    assert job.status is js.JobStatus.CANCELLED
    assert [r.getMessage() for r in caplog.records if r.name == "jobsched.thread"] == []


async def test_a_job_still_running_after_the_grace_is_warned_about(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A job that ignores its cancel is warned about once the grace is over,
    with the grace and the count; its late return is logged at INFO."""
    caplog.set_level(logging.INFO, logger="jobsched.thread")
    monkeypatch.setattr(_resume, "CANCEL_GRACE", 0.05)
    release = threading.Event()
    executor = ThreadExecutor()
    try:
        async with js.JobScheduler(executors={"thread": executor}) as s:
            job = Stubborn(release, timeout=None)
            s.submit(job)
            await wait_for(job.started)
            s.cancel(job.job_id)
            await wait_until(lambda: len(thread_warnings(caplog)) == 1)
            assert not job.finished.is_set()
            release.set()
            await wait_until(lambda: executor.abandoned_threads == 0)
    finally:
        release.set()
    [warning] = thread_warnings(caplog)
    message = warning.getMessage()
    assert job.job_id in message
    assert "still running 0.05s later" in message
    assert "(1 abandoned thread(s) still running)" in message
    await wait_until(lambda: "an abandoned thread job returned" in caplog.text)


async def test_cancelling_the_awaiting_task_returns_at_once() -> None:
    """Cancelling a direct run() abandons the thread instead of waiting for it."""
    release = threading.Event()
    job = Stubborn(release)
    executor = ThreadExecutor()
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(executor.run, job)
            await wait_for(job.started)
            tg.cancel_scope.cancel()
        assert not job.finished.is_set()
        assert executor.abandoned_threads == 1
    finally:
        release.set()
    await wait_for(job.finished)
    await wait_until(lambda: executor.abandoned_threads == 0)


async def test_max_threads_limits_concurrent_attempts() -> None:
    """With max_threads=1, three jobs on three scheduler workers run one at a time;
    the scheduler holds the others off its workers (max_threads is the capacity)."""
    lock = threading.Lock()
    active = [0]
    peak = [0]
    first_in = threading.Event()

    def job() -> None:
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        # Give a second job the chance to start if the limit did not hold.
        first_in.wait(0.05)
        first_in.set()
        with lock:
            active[0] -= 1

    async with js.JobScheduler(
        num_workers=3, executors={"thread": ThreadExecutor(max_threads=1)}
    ) as s:
        for _ in range(3):
            s.submit(js.FunctionJob(job))
        with anyio.fail_after(WATCHDOG):
            await s.join()
        assert s.peak_running == 1
    assert peak[0] == 1


async def test_cancel_while_waiting_for_a_slot_keeps_the_count_right() -> None:
    """A job waiting for max_threads' only slot is held PENDING (no attempt, so no
    timeout running); cancelled, it never runs, and the slot serves the next job."""
    release = threading.Event()
    ran: list[str] = []
    executor = ThreadExecutor(max_threads=1)
    async with js.JobScheduler(num_workers=3, executors={"thread": executor}) as s:
        first = Stubborn(release, timeout=None)
        s.submit(first)
        await wait_for(first.started)
        waiting = s.submit(js.FunctionJob(ran.append, ("waiting",), timeout=None))
        await anyio.wait_all_tasks_blocked()
        assert s.get(waiting).status is js.JobStatus.PENDING
        assert s.cancel(waiting)
        release.set()
        after = s.submit(js.FunctionJob(ran.append, ("after",), timeout=None))
        with anyio.fail_after(WATCHDOG):
            await s.join()
    assert s.get(waiting).status is js.JobStatus.CANCELLED
    assert s.get(after).status is js.JobStatus.COMPLETED
    assert ran == ["after"]
    assert executor.abandoned_threads == 0


# ── Shutdown ─────────────────────────────────────────────────────────────


async def test_shutdown_cancel_running_sets_the_tokens() -> None:
    """shutdown(cancel_running=True) asks running jobs to stop; a polling job returns."""
    executor = ThreadExecutor()
    job = Poller()
    results: list[Any] = []

    async def run() -> None:
        results.append(await executor.run(job))

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        await wait_for(job.started)
        await executor.shutdown(cancel_running=True)
    assert results == ["stopped early"]


async def test_shutdown_does_not_wait_for_stragglers(caplog: pytest.LogCaptureFixture) -> None:
    """Shutdown returns while an abandoned thread still runs, and says so in the log."""
    caplog.set_level(logging.WARNING, logger="jobsched.thread")
    release = threading.Event()
    job = Stubborn(release, timeout=0.05, retry=js.RetryPolicy(max_retries=0))
    executor = ThreadExecutor()
    try:
        async with js.JobScheduler(executors={"thread": executor}) as s:
            s.submit(job)
            with anyio.fail_after(WATCHDOG):
                await s.join()
        # Leaving the block stopped the scheduler and shut the executor down.
        assert not job.finished.is_set()
        assert job.status is js.JobStatus.TIMED_OUT
        assert "shut down with 1 abandoned thread(s) still running" in caplog.text
    finally:
        release.set()
    await wait_until(lambda: executor.abandoned_threads == 0)


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_shutdown_lets_idle_pool_threads_exit() -> None:
    """On asyncio the executor's own pool threads end once it is shut down."""
    executor = ThreadExecutor()
    thread = await executor.run(js.FunctionJob(threading.current_thread))
    assert thread.is_alive()  # idle in the pool, kept for the next call
    await executor.shutdown()
    await anyio.to_thread.run_sync(thread.join, WATCHDOG)
    assert not thread.is_alive()


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_thread_busy_at_shutdown_exits_when_its_job_returns() -> None:
    """An abandoned thread of a shut-down pool ends once its job returns, and is
    a daemon thread meanwhile."""
    release = threading.Event()
    job = Stubborn(release)
    executor = ThreadExecutor()
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(executor.run, job)
            await wait_for(job.started)
            tg.cancel_scope.cancel()
        assert executor.abandoned_threads == 1
        await executor.shutdown()
        assert job.thread.daemon
        assert job.thread.is_alive()
    finally:
        release.set()
    await anyio.to_thread.run_sync(job.thread.join, WATCHDOG)
    assert not job.thread.is_alive()


async def test_executor_is_reusable_after_shutdown() -> None:
    """A shut-down executor serves a later scheduler (its limiter is made afresh)."""
    executor = ThreadExecutor(max_threads=1)
    for value in ("first", "second"):
        async with js.JobScheduler(executors={"thread": executor}) as s:
            job_id = s.submit(Returns(value))
            with anyio.fail_after(WATCHDOG):
                await s.join()
        assert s.get(job_id).result == value


async def test_installed_plugin_runs_blocking_jobs_in_threads() -> None:
    """Without an executors= override, the entry point finds this executor."""
    async with js.JobScheduler() as s:
        job_id = s.submit(js.FunctionJob(threading.get_ident))
        with anyio.fail_after(WATCHDOG):
            await s.join()
    assert s.get(job_id).status is js.JobStatus.COMPLETED
    assert s.get(job_id).result != threading.get_ident()
