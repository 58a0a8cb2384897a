"""``js.setting_up(job)``: what an executor waits for before a job's work is not the job's time."""

from __future__ import annotations

import time
from typing import Any

import anyio
import anyio.lowlevel
import pytest

import jobsched as js

pytestmark = pytest.mark.anyio

WATCHDOG = 20
TIMEOUT = 0.2
NO_RETRY = js.RetryPolicy(max_retries=0)
BOTH = pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
# Entered in the attempt's first step (before the scheduler watches its
# timeout), or after it suspended once (the timeout is already watched).
WHEN = pytest.mark.parametrize("suspend_first", [False, True], ids=["at-once", "after-await"])


class SettingUp(js.Executor):
    """Waits in setting_up() until released, then runs ``work`` (an async callable)."""

    name = "setting-up"

    def __init__(self, suspend_first: bool, work: Any = None) -> None:
        self.suspend_first = suspend_first
        self.work = work
        self.entered = anyio.Event()
        self.release = anyio.Event()

    async def run(self, job: js.Job) -> Any:
        if self.suspend_first:
            await anyio.lowlevel.checkpoint()
        with js.setting_up(job):
            self.entered.set()
            await self.release.wait()
        if self.work is not None:
            await self.work()
        return "done"


def a_job(**kw: Any) -> js.FunctionJob:
    return js.FunctionJob(time.monotonic, executor="setting-up", retry=NO_RETRY, **kw)


@BOTH
@WHEN
async def test_a_set_up_longer_than_the_timeout_does_not_time_the_job_out(
    suspend_first: bool,
) -> None:
    executor = SettingUp(suspend_first)
    job = a_job(timeout=TIMEOUT)
    async with js.JobScheduler(executors={"setting-up": executor}) as s:
        s.submit(job)
        with anyio.fail_after(WATCHDOG):
            await executor.entered.wait()
        await anyio.sleep(TIMEOUT * 3)
        assert job.status is js.JobStatus.RUNNING
        released = time.monotonic()
        executor.release.set()
        with anyio.fail_after(WATCHDOG):
            await s.join()
    assert job.status is js.JobStatus.COMPLETED, job.last_error
    assert job.started_at is not None and job.started_at >= released


@BOTH
@WHEN
async def test_the_timeout_counts_from_the_end_of_the_set_up(suspend_first: bool) -> None:
    executor = SettingUp(suspend_first, work=anyio.sleep_forever)
    executor.release.set()
    job = a_job(timeout=TIMEOUT)
    async with js.JobScheduler(executors={"setting-up": executor}) as s:
        s.submit(job)
        with anyio.fail_after(WATCHDOG):
            await s.join()
    assert job.status is js.JobStatus.TIMED_OUT
    assert job.last_error == f"timed out after {TIMEOUT}s"


@WHEN
async def test_cancel_reaches_an_attempt_in_its_set_up(suspend_first: bool) -> None:
    executor = SettingUp(suspend_first)
    job = a_job(timeout=None)
    async with js.JobScheduler(executors={"setting-up": executor}) as s:
        s.submit(job)
        with anyio.fail_after(WATCHDOG):
            await executor.entered.wait()
        assert s.cancel(job.job_id)
        with anyio.fail_after(WATCHDOG):
            await s.join()
    assert job.status is js.JobStatus.CANCELLED


async def test_without_a_timeout_only_started_at_moves() -> None:
    executor = SettingUp(False)
    job = a_job()
    async with js.JobScheduler(executors={"setting-up": executor}) as s:
        s.submit(job)
        with anyio.fail_after(WATCHDOG):
            await executor.entered.wait()
        released = time.monotonic()
        executor.release.set()
        with anyio.fail_after(WATCHDOG):
            await s.join()
    assert job.status is js.JobStatus.COMPLETED
    assert job.started_at is not None and job.started_at >= released


async def test_outside_a_scheduler_it_does_nothing() -> None:
    executor = SettingUp(False)
    executor.release.set()
    job = a_job()
    assert await executor.run(job) == "done"
    assert job.started_at is None


async def test_a_set_up_that_ends_while_the_scheduler_stops_still_times_out() -> None:
    """With the ticker gone (stop() under way), the timeout goes on the attempt's own scope."""
    executor = SettingUp(False, work=anyio.sleep_forever)
    job = a_job(timeout=TIMEOUT)
    s = js.JobScheduler(executors={"setting-up": executor})
    async with s:
        s.submit(job)
        with anyio.fail_after(WATCHDOG):
            await executor.entered.wait()
        with anyio.fail_after(WATCHDOG):
            async with anyio.create_task_group() as tg:
                tg.start_soon(s.stop)
                while s._watching:  # noqa: ASYNC110 - the ticker's exit sets no event
                    await anyio.sleep(0.005)
                executor.release.set()
    assert job.status is js.JobStatus.TIMED_OUT


# The SQLite store works in threads, which trio's mock clock would jump over.
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_on_a_durable_store_too(tmp_path: Any) -> None:
    executor = SettingUp(False)
    job = a_job(timeout=TIMEOUT)
    async with js.JobScheduler(
        store=f"sqlite:///{tmp_path / 'jobs.db'}", executors={"setting-up": executor}
    ) as s:
        s.submit(job)
        with anyio.fail_after(WATCHDOG):
            await executor.entered.wait()
        await anyio.sleep(TIMEOUT * 3)
        released = time.monotonic()
        executor.release.set()
        with anyio.fail_after(WATCHDOG):
            await s.join()
        done = s.get(job.job_id)
    assert done.status is js.JobStatus.COMPLETED, done.last_error
    assert done.started_at is not None and done.started_at >= released
