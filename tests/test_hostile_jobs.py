"""Whatever a job does, the scheduler and the other jobs survive.

Jobs that clean up for longer than the cancel grace inside task groups of
their own, that swallow their cancellation, or that raise SystemExit,
KeyboardInterrupt or GeneratorExit (issue 9). Each test runs a bystander job
next to the hostile one and stops the scheduler at the end: both must work.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from sample_jobs import Gate, Ok

import jobsched as js
from jobsched._engine._resume import CANCEL_GRACE

NO_RETRY = js.RetryPolicy(max_retries=0)
WATCHDOG = 30


class NestedCleanup(js.AsyncJob):
    """Two child tasks in nested task groups, each with a shielded clean-up that
    waits for ``release`` (or sleeps ``seconds``) after the job is cancelled."""

    def __init__(self, seconds: float | None = None, **kw: Any) -> None:
        super().__init__("nested clean-up", **kw)
        self.seconds = seconds
        self.release = anyio.Event()
        self.cleaned = 0

    async def _child(self) -> None:
        try:
            await anyio.sleep(3600)
        finally:
            with anyio.CancelScope(shield=True):
                if self.seconds is None:
                    await self.release.wait()
                else:
                    await anyio.sleep(self.seconds)
                self.cleaned += 1

    async def run(self) -> None:
        async with anyio.create_task_group() as outer:
            outer.start_soon(self._child)
            async with anyio.create_task_group() as inner:
                inner.start_soon(self._child)
                await anyio.sleep(3600)


@pytest.mark.anyio
async def test_cleanup_past_the_grace_is_abandoned_not_waited_for(
    make_scheduler: Callable[..., js.JobScheduler], caplog: pytest.LogCaptureFixture
) -> None:
    """A timed-out job whose task groups clean up past the grace is recorded and
    abandoned: its worker serves the bystander while the clean-up still runs,
    and the clean-up is never cut short (it finishes before stop() returns)."""
    job = NestedCleanup(timeout=0.5, retry=NO_RETRY)
    bystander = Ok("bystander", seconds=0.01)
    async with make_scheduler(num_workers=1) as s:
        s.submit(job)
        s.submit(bystander)
        with anyio.fail_after(WATCHDOG):
            await s.join()  # the clean-up cannot end before release is set
        assert job.status is js.JobStatus.TIMED_OUT
        assert bystander.status is js.JobStatus.COMPLETED
        assert job.cleaned == 0
        job.release.set()
    assert job.cleaned == 2
    assert "abandoned" in caplog.text


@pytest.mark.anyio
async def test_cleanup_that_sleeps_past_the_grace_does_not_corrupt_the_loop(
    make_scheduler: Callable[..., js.JobScheduler], virtual_time: bool
) -> None:
    """The reported crash: on trio the clean-up ending after the grace used to meet
    a GeneratorExit inside its nursery ("Nursery stack corrupted")."""
    seconds = 3 * CANCEL_GRACE if virtual_time else 1.5 * CANCEL_GRACE
    job = NestedCleanup(seconds=seconds, timeout=0.2, retry=NO_RETRY)
    async with make_scheduler(num_workers=1) as s:
        s.submit(job)
        bystander = Ok("bystander", seconds=0.01)
        s.submit(bystander)
        with anyio.fail_after(WATCHDOG):
            await s.join()
        after = Ok("after", seconds=0.01)
        s.submit(after)
        with anyio.fail_after(WATCHDOG):
            await s.join()
    assert job.status is js.JobStatus.TIMED_OUT
    assert job.cleaned == 2
    assert bystander.status is after.status is js.JobStatus.COMPLETED


class SwallowsInTaskGroup(js.AsyncJob):
    """Swallows every cancellation inside a task group (nested in another one)."""

    def __init__(self, **kw: Any) -> None:
        super().__init__("swallows in a task group", **kw)
        self.closed = False

    async def run(self) -> None:
        async with anyio.create_task_group() as outer:
            outer.start_soon(anyio.sleep, 3600)  # cancelled with the job: a child that ends
            async with anyio.create_task_group():
                try:
                    while True:
                        try:
                            await anyio.sleep(3600)
                        except anyio.get_cancelled_exc_class():
                            pass
                except GeneratorExit:
                    self.closed = True
                    raise


class RaisesGeneratorExitInTaskGroup(js.AsyncJob):
    """Raises GeneratorExit itself inside a task group, after an await."""

    def __init__(self, **kw: Any) -> None:
        super().__init__("raises GeneratorExit in a task group", **kw)

    async def run(self) -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(anyio.lowlevel.checkpoint)
            await anyio.lowlevel.checkpoint()
            raise GeneratorExit


# Jobs that swallow their cancellation spin (every await is cancelled again),
# so virtual time would never advance: these run on the real clock.
@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_swallowed_cancellation_in_task_groups_is_closed_safely(
    backend: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A job swallowing its cancellation inside nested task groups is closed once
    its children are gone; the group's BaseExceptionGroup([GeneratorExit]) is its
    end, not the worker's, and the scheduler stops cleanly."""

    async def main() -> tuple[SwallowsInTaskGroup, Ok]:
        job = SwallowsInTaskGroup(timeout=0.05, retry=NO_RETRY)
        bystander = Ok("bystander", seconds=0.01)
        async with js.JobScheduler(num_workers=1) as s:
            s.submit(job)
            s.submit(bystander)
            with anyio.fail_after(WATCHDOG):
                await s.join()
        return job, bystander

    job, bystander = anyio.run(main, backend=backend)
    assert job.status is js.JobStatus.TIMED_OUT
    assert job.closed
    assert bystander.status is js.JobStatus.COMPLETED
    assert "abandoned" in caplog.text


@pytest.mark.anyio
async def test_job_raising_generator_exit_in_a_task_group_fails_alone(
    make_scheduler: Callable[..., js.JobScheduler],
) -> None:
    """GeneratorExit raised by the job, which its task group wraps in a
    BaseExceptionGroup, fails that job, unretried; the scheduler goes on."""
    job = RaisesGeneratorExitInTaskGroup(retry=js.RetryPolicy(max_retries=2, base_delay=0))
    async with make_scheduler(num_workers=1) as s:
        s.submit(job)
        bystander = s.submit(Ok("bystander", seconds=0.01))
        with anyio.fail_after(WATCHDOG):
            await s.join()
    assert job.status is js.JobStatus.FAILED
    assert job.attempts == 1
    assert job.last_error is not None
    assert job.last_error.startswith("BaseExceptionGroup: ")
    assert s.get(bystander).status is js.JobStatus.COMPLETED


class Raises(js.AsyncJob):
    """Raises ``exc`` on its first step or after an await."""

    def __init__(self, exc: BaseException, suspend: bool, **kw: Any) -> None:
        super().__init__(f"raises {exc!r}", **kw)
        self.exc = exc
        self.suspend = suspend

    async def run(self) -> None:
        if self.suspend:
            await anyio.sleep(0.01)
        raise self.exc


@pytest.mark.anyio
@pytest.mark.parametrize("suspend", [False, True], ids=["first-step", "after-await"])
@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (SystemExit(3), "SystemExit: 3"),
        (KeyboardInterrupt("stop"), "KeyboardInterrupt: stop"),
        (GeneratorExit("bye"), "GeneratorExit: bye"),
    ],
    ids=["SystemExit", "KeyboardInterrupt", "GeneratorExit"],
)
async def test_job_base_exception_fails_that_attempt_only(
    make_scheduler: Callable[..., js.JobScheduler],
    exc: BaseException,
    expected: str,
    suspend: bool,
) -> None:
    """A job's own SystemExit, KeyboardInterrupt or GeneratorExit ends its attempt
    FAILED, unretried, with what it raised; the scheduler goes on."""
    job = Raises(exc, suspend, retry=js.RetryPolicy(max_retries=3, base_delay=0))
    async with make_scheduler(num_workers=1) as s:
        s.submit(job)
        with anyio.fail_after(WATCHDOG):
            await s.join()
        after = s.submit(Ok("after", seconds=0.01))
        with anyio.fail_after(WATCHDOG):
            await s.join()
    assert job.status is js.JobStatus.FAILED
    assert job.attempts == 1
    assert job.last_error == expected
    assert s.get(after).status is js.JobStatus.COMPLETED


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_thread_job_system_exit_fails_that_attempt_only(backend: str) -> None:
    """A BlockingJob raising SystemExit in its thread: the thread executor re-raises
    it as is, and the core records it FAILED like any job's own SystemExit."""

    def leave() -> None:
        raise SystemExit(3)

    async def main() -> tuple[js.Job, js.Job]:
        job = js.FunctionJob(leave, timeout=None, retry=js.RetryPolicy(max_retries=3))
        after = js.FunctionJob(int, ("7",), timeout=None)
        async with js.JobScheduler(num_workers=1) as s:
            s.submit(job)
            s.submit(after)
            with anyio.fail_after(WATCHDOG):
                await s.join()
        return job, after

    job, after = anyio.run(main, backend=backend)
    assert job.status is js.JobStatus.FAILED
    assert job.attempts == 1
    assert job.last_error == "SystemExit: 3"
    assert after.status is js.JobStatus.COMPLETED
    assert after.result == 7


@pytest.mark.anyio
async def test_teardown_cancellation_stays_a_cancellation(
    make_scheduler: Callable[..., js.JobScheduler],
) -> None:
    """The worker's own cancellation (its host scope cancelled) is not a job's
    outcome: the running job ends CANCELLED "scheduler shut down" (on a
    durable store: handed back)."""
    job = Gate(timeout=None)
    with anyio.CancelScope() as host:
        async with make_scheduler(num_workers=1) as s:
            s.submit(job)
            await job.started.wait()
            host.cancel()
            await anyio.sleep(3600)
    assert host.cancelled_caught
    if s._link is not None:  # a durable store gets the job back: it runs again
        assert (job.status, job.attempts) == (js.JobStatus.PENDING, 0)
        return
    assert job.status is js.JobStatus.CANCELLED
    assert job.last_error == "scheduler shut down"


def test_logs_name_the_job(caplog: pytest.LogCaptureFixture) -> None:
    """The abandonment warning names the job, on the jobsched logger."""
    caplog.set_level(logging.WARNING, logger="jobsched")

    async def main() -> None:
        job = NestedCleanup(seconds=1.5 * CANCEL_GRACE, timeout=0.05, retry=NO_RETRY)
        async with js.JobScheduler(num_workers=1) as s:
            s.submit(job)
            with anyio.fail_after(WATCHDOG):
                await s.join()

    anyio.run(main, backend="asyncio")
    records = [r for r in caplog.records if "abandoned" in r.getMessage()]
    assert records and "'nested clean-up'" in records[0].getMessage()


class _Skewed:
    """The test's clock plus an offset a job moves forward, as if it blocked the loop."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self.offset = 0.0

    def __call__(self) -> float:
        return self.clock() + self.offset


class BlocksTheLoop(js.AsyncJob):
    """Holds the loop for 5 s (on the scheduler's clock) without awaiting, then returns."""

    def __init__(self, skew: _Skewed, suspend: bool, **kw: Any) -> None:
        super().__init__("blocker", **kw)
        self.skew = skew
        self.suspend = suspend

    async def run(self) -> str:
        if self.suspend:
            await anyio.lowlevel.checkpoint()
        self.skew.offset += 5.0  # what time.sleep(5) would do to the clock
        return "done"


@pytest.mark.anyio
@pytest.mark.parametrize("suspend", [False, True], ids=["first-step", "after-await"])
async def test_attempt_ending_past_its_deadline_timed_out(
    clock: Callable[[], float], suspend: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """A job that blocks the loop for 5 s with timeout=0.5 is TIMED_OUT whatever it
    returned, retried like any timeout, and a warning names it."""
    skew = _Skewed(clock)
    job = BlocksTheLoop(
        skew, suspend, timeout=0.5, retry=js.RetryPolicy(max_retries=1, base_delay=0)
    )
    async with js.JobScheduler(num_workers=1, clock=skew) as s:
        s.submit(job)
        bystander = s.submit(Ok("bystander", seconds=0.01))
        with anyio.fail_after(WATCHDOG):
            await s.join()
    assert job.status is js.JobStatus.TIMED_OUT
    assert job.attempts == 2
    assert job.last_error == "timed out after 0.5s"
    assert s.get(bystander).status is js.JobStatus.COMPLETED
    warnings = [
        r.getMessage() for r in caplog.records if "blocked the event loop" in r.getMessage()
    ]
    assert len(warnings) == 2 and "'blocker'" in warnings[0]
