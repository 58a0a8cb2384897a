"""The baseline: each workload written directly on asyncio and concurrent.futures.

This is the limit a scheduler is measured against: no job objects, no
statuses, no timeouts, just the queue and the workers a hand-written program
would use.
"""

from __future__ import annotations

import asyncio
import random
import time
import tracemalloc
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from heapq import heappop, heappush
from typing import Any

from benchmarks import _cold, _stall
from benchmarks._work import count_primes, noop, percentile, sleep_1ms
from benchmarks._workloads import (
    CHAIN_LENGTH,
    DISTINCT_PRIORITIES,
    PRIME_LIMIT,
    SEED,
    W5_SPREAD_S,
    vs_4_priorities,
    warm_then_measure,
)


async def _drain_queue(queue: asyncio.Queue[Any], workers: int) -> None:
    """Run ``await item()`` for everything on ``queue`` with ``workers`` coroutines."""

    async def worker() -> None:
        while True:
            func = await queue.get()
            await func()
            queue.task_done()

    tasks = [asyncio.create_task(worker()) for _ in range(workers)]
    await queue.join()
    for task in tasks:
        task.cancel()


async def w1(size: int) -> dict[str, float]:
    queue: asyncio.Queue[Any] = asyncio.Queue()
    for _ in range(size):
        queue.put_nowait(noop)
    t0 = time.perf_counter()
    await _drain_queue(queue, 4)
    return {"jobs_per_s": size / (time.perf_counter() - t0)}


def _priorities(size: int, levels: int = 4) -> list[int]:
    rng = random.Random(SEED)
    return [rng.randrange(levels) for _ in range(size)]


class _PriorityQueue:
    """``heapq`` plus an ``Event`` that wakes the worker when work arrives."""

    def __init__(self) -> None:
        self.heap: list[tuple[int, int, Any]] = []
        self.seq = 0
        self.event = asyncio.Event()

    def push(self, priority: int, func: Any) -> None:
        self.seq += 1
        heappush(self.heap, (-priority, self.seq, func))
        self.event.set()


async def _drain_heap(queue: _PriorityQueue, total: int) -> None:
    done = 0
    heap = queue.heap
    while done < total:
        while heap:
            await heappop(heap)[2]()
            done += 1
        if done < total:
            queue.event.clear()
            await queue.event.wait()


async def w2(size: int, levels: int = 4) -> dict[str, float]:
    priorities = _priorities(size, levels)
    queue = _PriorityQueue()
    t0 = time.perf_counter()
    for priority in priorities:
        queue.push(priority, noop)
    t1 = time.perf_counter()
    await asyncio.create_task(_drain_heap(queue, size))
    t2 = time.perf_counter()
    return {"enqueue_us": (t1 - t0) / size * 1e6, "dispatch_us": (t2 - t1) / size * 1e6}


async def w2p(size: int) -> dict[str, float]:
    return vs_4_priorities(await w2(size), await w2(size, DISTINCT_PRIORITIES))


async def w2mem(size: int) -> dict[str, float]:
    priorities = _priorities(size)
    queue = _PriorityQueue()
    queue.push(0, noop)
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for priority in priorities:
        queue.push(priority, noop)
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return {"bytes_per_job": (after - before) / size}


async def _run_in_pool(pool: Any, size: int, workers: int, func: Any, *args: Any) -> float:
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Any] = asyncio.Queue()
    for _ in range(size):
        queue.put_nowait(None)

    async def worker() -> None:
        while True:
            await queue.get()
            await loop.run_in_executor(pool, func, *args)
            queue.task_done()

    t0 = time.perf_counter()
    tasks = [asyncio.create_task(worker()) for _ in range(workers)]
    await queue.join()
    elapsed = time.perf_counter() - t0
    for task in tasks:
        task.cancel()
    return elapsed


async def w3(size: int) -> dict[str, float]:
    with ThreadPoolExecutor(8) as pool:
        elapsed = await _run_in_pool(pool, size, 8, sleep_1ms)
    return {"jobs_per_s": size / elapsed}


async def w4(size: int) -> dict[str, float]:
    with ProcessPoolExecutor(2) as pool:
        elapsed = await _run_in_pool(pool, size, 2, count_primes, PRIME_LIMIT)
    return {"jobs_per_s": size / elapsed}


async def w5(size: int) -> dict[str, float]:
    loop = asyncio.get_running_loop()
    rng = random.Random(SEED)
    queue: asyncio.Queue[Any] = asyncio.Queue()
    lateness: list[float] = []
    all_started = asyncio.Event()

    async def worker() -> None:
        while True:
            target = await queue.get()
            lateness.append(time.monotonic() - target)
            if len(lateness) == size:
                all_started.set()

    tasks = [asyncio.create_task(worker()) for _ in range(8)]
    for _ in range(size):
        delay = rng.uniform(0, W5_SPREAD_S)
        # Due ``delay`` after this very call, as every system measures it.
        loop.call_later(delay, queue.put_nowait, time.monotonic() + delay)
    await all_started.wait()
    for task in tasks:
        task.cancel()
    ms = [x * 1e3 for x in lateness]
    return {"p50_ms": percentile(ms, 50), "p99_ms": percentile(ms, 99)}


async def w6(size: int) -> dict[str, float]:
    # Dependencies by hand: a chain's next job is queued when its previous one ends.
    queue: asyncio.Queue[int] = asyncio.Queue()
    for _ in range(size):
        queue.put_nowait(CHAIN_LENGTH)

    async def worker() -> None:
        while True:
            left = await queue.get()
            await noop()
            if left > 1:
                queue.put_nowait(left - 1)
            queue.task_done()

    t0 = time.perf_counter()
    tasks = [asyncio.create_task(worker()) for _ in range(4)]
    await queue.join()
    elapsed = time.perf_counter() - t0
    for task in tasks:
        task.cancel()
    return {"jobs_per_s": size * CHAIN_LENGTH / elapsed}


WORKLOADS = {"W1": w1, "W2": w2, "W2p": w2p, "W2mem": w2mem, "W3": w3, "W4": w4, "W5": w5, "W6": w6}
WORKLOADS["W4stall"] = _stall.raw
WORKLOADS["W4cold"] = _cold.raw


def run(workload: str, size: int) -> dict[str, float]:
    """One measurement: a warm-up, then ``workload`` at ``size``."""
    return asyncio.run(warm_then_measure(WORKLOADS, workload, size))
