"""Starting and stopping by hand, and the backends' differences."""

from __future__ import annotations

import asyncio

import pytest
from sample_jobs import Gate, Ok

import jobsched as js


def test_start_stop_by_hand_on_asyncio() -> None:
    """await start() / await stop() run the scheduler without `async with` (asyncio)."""

    async def main() -> js.JobScheduler:
        s = js.JobScheduler()
        job_id = s.submit(Ok(7, seconds=0.01))
        await s.start()
        await asyncio.wait_for(s.join(), 10)
        gate = Gate()
        s.submit(gate)
        await asyncio.wait_for(gate.started.wait(), 10)
        await asyncio.wait_for(s.stop(cancel_running=True), 10)
        await s.stop()  # idempotent
        assert s.get(job_id).result == 7
        assert gate.status is js.JobStatus.CANCELLED
        return s

    asyncio.run(main())


def test_start_by_hand_under_trio_points_to_async_with() -> None:
    """start() by hand is asyncio-only; under trio it says to use `async with`."""
    import trio

    async def main() -> None:
        s = js.JobScheduler()
        with pytest.raises(js.SchedulerError, match="async with"):
            await s.start()
        async with s:  # and the scheduler is still usable the right way
            s.submit(Ok())
            await s.join()

    trio.run(main)


def test_stop_before_start() -> None:
    """stop() on a scheduler that never started just closes it."""

    async def main() -> None:
        s = js.JobScheduler()
        await s.stop()
        with pytest.raises(js.SchedulerStoppedError):
            s.submit(Ok())

    asyncio.run(main())
