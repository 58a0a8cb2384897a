"""Starting and stopping by hand, and the backends' differences."""

from __future__ import annotations

import asyncio

import anyio
import pytest
from sample_jobs import Gate, Ok

import jobsched as js


def test_start_stop_by_hand_on_asyncio(store_url: str) -> None:
    """await start() / await stop() run the scheduler without `async with` (asyncio)."""

    async def main() -> js.JobScheduler:
        s = js.JobScheduler(store=store_url)
        job_id = s.submit(Ok(7, seconds=0.01))
        await s.start()
        await asyncio.wait_for(s.join(), 10)
        gate = Gate()
        s.submit(gate)
        await asyncio.wait_for(gate.started.wait(), 10)
        await asyncio.wait_for(s.stop(cancel_running=True), 10)
        await s.stop()  # idempotent
        assert s.get(job_id).result == 7
        # Cut short: cancelled in memory, handed back to a durable store.
        cut = js.JobStatus.CANCELLED if store_url == "memory" else js.JobStatus.PENDING
        assert gate.status is cut
        return s

    asyncio.run(main())


def test_start_by_hand_under_trio_points_to_async_with(store_url: str) -> None:
    """start() by hand is asyncio-only; under trio it says to use `async with`."""
    import trio

    async def main() -> None:
        s = js.JobScheduler(store=store_url)
        with pytest.raises(js.SchedulerError, match="async with"):
            await s.start()
        async with s:  # and the scheduler is still usable the right way
            s.submit(Ok())
            await s.join()

    trio.run(main)


def test_stop_before_start(store_url: str) -> None:
    """stop() on a scheduler that never started just closes it."""

    async def main() -> None:
        s = js.JobScheduler(store=store_url)
        await s.stop()
        with pytest.raises(js.SchedulerStoppedError):
            s.submit(Ok())

    asyncio.run(main())


class _Swallower(js.AsyncJob):
    """Catches every cancellation and keeps awaiting: the worst async citizen."""

    def __init__(self, **kw: object) -> None:
        super().__init__("swallower", **kw)  # type: ignore[arg-type]
        self.started: anyio.Event | None = None

    async def run(self) -> None:
        assert self.started is not None
        self.started.set()
        while True:
            try:
                await anyio.sleep(3600)
            except anyio.get_cancelled_exc_class():
                pass


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.parametrize("how", ["cancel", "timeout"])
def test_job_that_swallows_cancellation_is_abandoned(
    backend: str, how: str, store_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A job that ignores its cancellation forever is closed after the grace period.

    It is recorded CANCELLED (or TIMED_OUT), its worker serves the next job,
    and a warning says it was abandoned. Real clock: the bound is in seconds.
    """

    async def main() -> tuple[js.Job, js.Job]:
        job = _Swallower(
            timeout=0.05 if how == "timeout" else None, retry=js.RetryPolicy(max_retries=0)
        )
        job.started = anyio.Event()
        async with js.JobScheduler(num_workers=1, store=store_url) as s:
            s.submit(job, depends_on=())
            with anyio.fail_after(20):
                await job.started.wait()
                if how == "cancel":
                    s.cancel(job.job_id)
                after = Ok("after")
                s.submit(after)
                await s.join()
        return job, after

    job, after = anyio.run(main, backend=backend)
    expected = js.JobStatus.CANCELLED if how == "cancel" else js.JobStatus.TIMED_OUT
    assert job.status is expected
    assert after.status is js.JobStatus.COMPLETED
    assert "abandoned" in caplog.text


class _SwallowsEverything(js.AsyncJob):
    """Catches BaseException, GeneratorExit included, and returns only a while after it."""

    def __init__(self, **kw: object) -> None:
        super().__init__("swallows everything", **kw)  # type: ignore[arg-type]
        self.saw_generator_exit = False

    async def run(self) -> str:
        awaits_after_exit = 0
        with anyio.CancelScope():  # a scope of its own, open when it is abandoned
            while awaits_after_exit < 3:
                try:
                    await anyio.sleep(0.05)
                except BaseException as exc:
                    self.saw_generator_exit |= isinstance(exc, GeneratorExit)
                if self.saw_generator_exit:
                    awaits_after_exit += 1
        return "finally returned"


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_job_that_swallows_generator_exit_keeps_its_worker_safely(
    backend: str, store_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A job that even ignores GeneratorExit is not dropped mid-scope: it runs on
    until it returns, is recorded TIMED_OUT, and the scheduler carries on."""

    async def main() -> tuple[js.Job, js.Job]:
        job = _SwallowsEverything(timeout=0.1, retry=js.RetryPolicy(max_retries=0))
        async with js.JobScheduler(num_workers=1, store=store_url) as s:
            s.submit(job)
            after = Ok("after")
            s.submit(after)
            with anyio.fail_after(20):
                await s.join()
        return job, after

    job, after = anyio.run(main, backend=backend)
    assert job.saw_generator_exit  # type: ignore[attr-defined]
    assert job.status is js.JobStatus.TIMED_OUT
    assert after.status is js.JobStatus.COMPLETED
    assert "abandoned" in caplog.text
