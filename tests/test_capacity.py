"""An executor's capacity bounds its attempts in the scheduler, so a job's
timeout counts its own run, never a wait for a free thread or process."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import anyio
import pytest

import jobsched as js
from jobsched._jobs import _plugins
from jobsched_process import ProcessExecutor
from jobsched_thread import ThreadExecutor

WATCHDOG = 60
# A timed-out attempt would be retried and complete: the tests must see the first.
NO_RETRY = js.RetryPolicy(max_retries=0)


class Counting(js.Executor):
    """An async executor that records how many attempts run on it at once."""

    name = "counting"

    def __init__(self, capacity: Any = None) -> None:
        self.capacity = capacity
        self.running = 0
        self.peak = 0

    async def run(self, job: js.Job) -> Any:
        self.running += 1
        self.peak = max(self.peak, self.running)
        try:
            await anyio.sleep(1.0)
        finally:
            self.running -= 1
        return job.name


def _jobs(n: int, timeout: float | None = 1.5) -> list[js.Job]:
    return [
        js.FunctionJob(int, name=f"job {i}", executor="counting", timeout=timeout) for i in range(n)
    ]


@pytest.mark.anyio
@pytest.mark.parametrize(("capacity", "limit", "peak"), [(2, None, 2), (1, 3, 1), (3, 1, 1)])
async def test_capacity_holds_jobs_off_the_workers(
    make_scheduler: Callable[..., js.JobScheduler],
    capacity: int,
    limit: int | None,
    peak: int,
) -> None:
    """Jobs beyond the capacity wait without starting an attempt: every one-second
    job with a 1.5 s timeout completes; the smaller of capacity and
    executor_limits wins."""
    executor = Counting(capacity)
    limits = {"counting": limit} if limit is not None else None
    s = make_scheduler(num_workers=4, executors={"counting": executor}, executor_limits=limits)
    jobs = _jobs(4)
    async with s:
        for job in jobs:
            s.submit(job)
        with anyio.fail_after(WATCHDOG):
            await s.join()
    assert [j.status for j in jobs] == [js.JobStatus.COMPLETED] * 4
    assert executor.peak == peak


@pytest.mark.anyio
async def test_capacity_of_an_executor_loaded_at_first_submit(
    make_scheduler: Callable[..., js.JobScheduler], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plugin loaded on first use, while the workers already run, is held to its
    capacity from its first job on."""
    executor = Counting(1)
    monkeypatch.setattr(_plugins, "create", lambda name: executor)
    jobs = _jobs(3)
    async with make_scheduler(num_workers=4) as s:
        await anyio.sleep(0.01)  # the workers are idle, waiting for work
        for job in jobs:
            s.submit(job)
        with anyio.fail_after(WATCHDOG):
            await s.join()
    assert [j.status for j in jobs] == [js.JobStatus.COMPLETED] * 3
    assert executor.peak == 1


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", True])
def test_bad_capacity_given_to_the_scheduler(bad: Any) -> None:
    """An executor with a capacity that is not an integer >= 1 is refused by name."""
    with pytest.raises(ValueError, match=r"executor 'counting' \(Counting\) has capacity="):
        js.JobScheduler(executors={"counting": Counting(bad)})


def test_bad_capacity_of_a_plugin_fails_its_first_submit(monkeypatch: pytest.MonkeyPatch) -> None:
    """A plugin with a bad capacity fails the submit that loads it; nothing is queued."""
    monkeypatch.setattr(_plugins, "create", lambda name: Counting(0))
    s = js.JobScheduler()
    job = _jobs(1)[0]
    with pytest.raises(ValueError, match="capacity must be an integer >= 1"):
        s.submit(job)
    assert s.jobs() == []
    assert job.status is js.JobStatus.PENDING


def test_first_party_executors_publish_their_capacity() -> None:
    """The thread executor's capacity is max_threads; the process executor's, max_processes."""
    assert ThreadExecutor().capacity is None
    assert ThreadExecutor(max_threads=3).capacity == 3
    assert ProcessExecutor(max_processes=2).capacity == 2
    assert js.Executor.capacity is None


# Threads and processes live on the real clock.
@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_thread_timeout_counts_the_run_not_the_wait_for_a_thread(backend: str) -> None:
    """4 workers, max_threads=1: three 0.5 s jobs with a 1 s timeout all complete
    (each waited for the thread outside its attempt), one thread at a time."""
    lock = threading.Lock()
    running = [0, 0]  # now, peak

    def work() -> str:
        with lock:
            running[0] += 1
            running[1] = max(running)
        time.sleep(0.5)
        with lock:
            running[0] -= 1
        return "done"

    async def main() -> list[js.Job]:
        jobs = [js.FunctionJob(work, timeout=1.0, retry=NO_RETRY) for _ in range(3)]
        executors = {"thread": ThreadExecutor(max_threads=1)}
        async with js.JobScheduler(num_workers=4, executors=executors) as s:
            for job in jobs:
                s.submit(job)
            with anyio.fail_after(WATCHDOG):
                await s.join()
        return jobs

    jobs = anyio.run(main, backend=backend)
    assert [j.status for j in jobs] == [js.JobStatus.COMPLETED] * 3
    assert running[1] == 1


def test_process_timeout_counts_the_run_not_the_wait_for_a_process() -> None:
    """The issue's case: 4 workers, 2 processes, four 1 s jobs with timeout=1.5 all
    complete (2 of 4 timed out while waiting for a process before)."""

    async def main() -> list[js.Job]:
        executor = ProcessExecutor(max_processes=2)
        async with js.JobScheduler(num_workers=4, executors={"process": executor}) as s:
            # Start both worker processes first: their start-up is not the point.
            for _ in range(2):
                s.submit(js.FunctionJob(time.sleep, (0.2,), executor="process", timeout=None))
            with anyio.fail_after(WATCHDOG):
                await s.join()
            jobs = [
                js.FunctionJob(time.sleep, (1.0,), executor="process", timeout=1.5, retry=NO_RETRY)
                for _ in range(4)
            ]
            for job in jobs:
                s.submit(job)
            with anyio.fail_after(WATCHDOG):
                await s.join()
        return jobs

    jobs = anyio.run(main, backend="asyncio")
    assert [j.status for j in jobs] == [js.JobStatus.COMPLETED] * 4
