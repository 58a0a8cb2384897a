"""The workloads on jobsched, through its public API only, on the asyncio backend."""

from __future__ import annotations

import asyncio
import random
import time
import tracemalloc
from typing import Any

import jobsched as js
from benchmarks import _cold, _stall
from benchmarks._work import count_primes, percentile, sleep_1ms
from benchmarks._workloads import (
    CHAIN_LENGTH,
    DISTINCT_PRIORITIES,
    PRIME_LIMIT,
    SEED,
    W5_SPREAD_S,
    vs_4_priorities,
    warm_then_measure,
)


class Noop(js.AsyncJob):
    """The no-op job, written the way the API documents a job."""

    async def run(self) -> None:
        return None


async def _drain(scheduler: js.JobScheduler) -> float:
    """Start ``scheduler`` on jobs queued before, wait for all; seconds taken."""
    t0 = time.perf_counter()
    await scheduler.start()
    await scheduler.join()
    elapsed = time.perf_counter() - t0
    await scheduler.stop()
    return elapsed


async def w1(size: int) -> dict[str, float]:
    scheduler = js.JobScheduler(num_workers=4)
    for _ in range(size):
        scheduler.submit(Noop("noop"))
    return {"jobs_per_s": size / await _drain(scheduler)}


def _priorities(size: int, levels: int = 4) -> list[int]:
    rng = random.Random(SEED)
    if levels == 4:
        named = list(js.JobPriority)
        return [named[rng.randrange(4)] for _ in range(size)]
    return [rng.randrange(levels) for _ in range(size)]


async def w2(size: int, levels: int = 4) -> dict[str, float]:
    priorities = _priorities(size, levels)
    scheduler = js.JobScheduler(num_workers=1)
    submit = scheduler.submit
    t0 = time.perf_counter()
    for priority in priorities:
        submit(Noop("noop", priority=priority))
    enqueue = time.perf_counter() - t0
    dispatch = await _drain(scheduler)
    return {"enqueue_us": enqueue / size * 1e6, "dispatch_us": dispatch / size * 1e6}


async def w2p(size: int) -> dict[str, float]:
    return vs_4_priorities(await w2(size), await w2(size, DISTINCT_PRIORITIES))


async def w2mem(size: int) -> dict[str, float]:
    priorities = _priorities(size)
    # Every queued job stays known to get(): keep them all in the history too.
    scheduler = js.JobScheduler(num_workers=1)
    scheduler.submit(Noop("warm-up"))  # loads the executor plugin outside the count
    submit = scheduler.submit
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for priority in priorities:
        submit(Noop("noop", priority=priority))
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return {"bytes_per_job": (after - before) / size}


async def _run_blocking(size: int, workers: int, executor: str, func: Any, *args: Any) -> float:
    scheduler = js.JobScheduler(num_workers=workers)
    for _ in range(size):
        scheduler.submit(js.FunctionJob(func, args, executor=executor))
    return await _drain(scheduler)


async def w3(size: int) -> dict[str, float]:
    return {"jobs_per_s": size / await _run_blocking(size, 8, "thread", sleep_1ms)}


async def w4(size: int) -> dict[str, float]:
    elapsed = await _run_blocking(size, 2, "process", count_primes, PRIME_LIMIT)
    return {"jobs_per_s": size / elapsed}


async def w5(size: int) -> dict[str, float]:
    rng = random.Random(SEED)
    lateness: list[float] = []

    async def record(target: float) -> None:
        lateness.append(time.monotonic() - target)

    scheduler = js.JobScheduler(num_workers=8)
    await scheduler.start()
    for _ in range(size):
        delay = rng.uniform(0, W5_SPREAD_S)
        job = js.FunctionJob(record, (time.monotonic() + delay,))
        scheduler.submit(job, delay=delay)
    await scheduler.join()
    await scheduler.stop()
    ms = [x * 1e3 for x in lateness]
    return {"p50_ms": percentile(ms, 50), "p99_ms": percentile(ms, 99)}


async def w6(size: int) -> dict[str, float]:
    scheduler = js.JobScheduler(num_workers=4)
    for _ in range(size):
        previous = scheduler.submit(Noop("chain"))
        for _ in range(1, CHAIN_LENGTH):
            previous = scheduler.submit(Noop("chain"), depends_on=(previous,))
    return {"jobs_per_s": size * CHAIN_LENGTH / await _drain(scheduler)}


WORKLOADS = {"W1": w1, "W2": w2, "W2p": w2p, "W2mem": w2mem, "W3": w3, "W4": w4, "W5": w5, "W6": w6}
WORKLOADS["W4stall"] = _stall.jobsched
WORKLOADS["W4cold"] = _cold.jobsched


def run(workload: str, size: int) -> dict[str, float]:
    """One measurement: a warm-up, then ``workload`` at ``size``."""
    return asyncio.run(warm_then_measure(WORKLOADS, workload, size))
