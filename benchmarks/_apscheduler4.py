"""The workloads on APScheduler 4, configured fairly.

Its defaults would throttle it: a task runs one job at a time unless told
otherwise. So each task is configured once with ``max_running_jobs=None``,
jobs are added by task id, and ``max_concurrent_jobs`` (and the pool size of
the thread or process executor) matches the workers the other systems get.
It has no priorities (W2 queues the same jobs without them) and no job
dependencies (W6 is not run).
"""

from __future__ import annotations

import random
import time
import tracemalloc
from datetime import datetime, timedelta, timezone
from typing import Any

import anyio
from apscheduler import AsyncScheduler, JobReleased
from apscheduler.executors.async_ import AsyncJobExecutor
from apscheduler.executors.subprocess import ProcessPoolJobExecutor
from apscheduler.executors.thread import ThreadPoolJobExecutor
from apscheduler.triggers.date import DateTrigger

from benchmarks._work import count_primes, noop, percentile, sleep_1ms
from benchmarks._workloads import PRIME_LIMIT, SEED, W5_SPREAD_S, warm_then_measure


def _scheduler(workers: int) -> AsyncScheduler:
    return AsyncScheduler(
        max_concurrent_jobs=workers,
        job_executors={
            "async": AsyncJobExecutor(),
            "threadpool": ThreadPoolJobExecutor(max_workers=workers),
            "processpool": ProcessPoolJobExecutor(max_workers=workers),
        },
    )


class _Counter:
    """Counts released jobs and sets an event after the last one."""

    def __init__(self, total: int) -> None:
        self.left = total
        self.done = anyio.Event()

    def __call__(self, event: Any) -> None:
        self.left -= 1
        if self.left == 0:
            self.done.set()


async def _queued_then_drained(
    size: int, workers: int, func: Any, executor: str, args: tuple[Any, ...] = ()
) -> tuple[float, float]:
    """Add ``size`` jobs, then start; (seconds adding, seconds draining)."""
    async with _scheduler(workers) as scheduler:
        await scheduler.configure_task(
            "bench", func=func, job_executor=executor, max_running_jobs=None
        )
        counter = _Counter(size)
        scheduler.subscribe(counter, {JobReleased})
        t0 = time.perf_counter()
        for _ in range(size):
            await scheduler.add_job("bench", args=args)
        t1 = time.perf_counter()
        await scheduler.start_in_background()
        await counter.done.wait()
        t2 = time.perf_counter()
        await scheduler.stop()
    return t1 - t0, t2 - t1


async def w1(size: int) -> dict[str, float]:
    _, drain = await _queued_then_drained(size, 4, noop, "async")
    return {"jobs_per_s": size / drain}


async def w2(size: int) -> dict[str, float]:
    enqueue, drain = await _queued_then_drained(size, 1, noop, "async")
    return {"enqueue_us": enqueue / size * 1e6, "dispatch_us": drain / size * 1e6}


async def w2mem(size: int) -> dict[str, float]:
    async with _scheduler(1) as scheduler:
        await scheduler.configure_task("bench", func=noop, max_running_jobs=None)
        await scheduler.add_job("bench")  # warm-up outside the count
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(size):
            await scheduler.add_job("bench")
        after = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
    return {"bytes_per_job": (after - before) / size}


async def w3(size: int) -> dict[str, float]:
    _, drain = await _queued_then_drained(size, 8, sleep_1ms, "threadpool")
    return {"jobs_per_s": size / drain}


async def w4(size: int) -> dict[str, float]:
    _, drain = await _queued_then_drained(size, 2, count_primes, "processpool", (PRIME_LIMIT,))
    return {"jobs_per_s": size / drain}


async def w5(size: int) -> dict[str, float]:
    rng = random.Random(SEED)
    lateness: list[float] = []

    async def record(target: float) -> None:
        lateness.append(time.monotonic() - target)

    async with _scheduler(8) as scheduler:
        await scheduler.configure_task("bench", func=record, max_running_jobs=None)
        counter = _Counter(size)
        scheduler.subscribe(counter, {JobReleased})
        await scheduler.start_in_background()
        for _ in range(size):
            delay = rng.uniform(0, W5_SPREAD_S)
            # Its triggers take wall-clock datetimes; lateness is measured on
            # the monotonic clock like every other system's.
            now, wall = time.monotonic(), datetime.now(timezone.utc)
            await scheduler.add_schedule(
                "bench", DateTrigger(wall + timedelta(seconds=delay)), args=(now + delay,)
            )
        with anyio.fail_after(120):
            await counter.done.wait()
        await scheduler.stop()
    ms = [x * 1e3 for x in lateness]
    return {"p50_ms": percentile(ms, 50), "p99_ms": percentile(ms, 99)}


WORKLOADS = {"W1": w1, "W2": w2, "W2mem": w2mem, "W3": w3, "W4": w4, "W5": w5}


def run(workload: str, size: int) -> dict[str, float]:
    """One measurement: a warm-up, then ``workload`` at ``size``."""
    return anyio.run(warm_then_measure, WORKLOADS, workload, size)
