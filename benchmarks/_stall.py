"""W4stall: how long the event loop stalls while a process job moves a big payload.

One process job takes an argument of ``size`` MB (and returns its length),
then one returns a result of ``size`` MB, each on a warm worker. A heartbeat
task sleeping 1 ms at a time records the longest gap between its ticks while
the job is awaited: that is how long every other task (timers, other jobs,
a web server's requests) waited. Raw is ``loop.run_in_executor`` on a
``ProcessPoolExecutor``, whose pickling and pipe writes happen in its own
threads.

Declared in ``_workloads.WORKLOADS``; each system's module maps W4stall to a function here.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

MB = 1024 * 1024


def make_bytes(size: int) -> bytes:
    """The job that returns ``size`` bytes; importable by name in workers."""
    return b"r" * size


async def _longest_gap_ms(awaitable: Awaitable[Any]) -> float:
    """The longest gap between a 1 ms heartbeat's ticks while ``awaitable`` runs."""
    longest = 0.0
    done = False

    async def heartbeat() -> None:
        nonlocal longest
        last = time.perf_counter()
        while not done:
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            longest = max(longest, now - last)
            last = now

    beat = asyncio.create_task(heartbeat())
    await asyncio.sleep(0.01)  # the heartbeat is ticking
    try:
        await awaitable
    finally:
        done = True
        await beat
    return longest * 1e3


async def _measure(call: Callable[[Any, Any], Awaitable[Any]], size: int) -> dict[str, float]:
    data = b"a" * (size * MB)
    arg = await _longest_gap_ms(call(len, data))
    del data
    result = await _longest_gap_ms(call(make_bytes, size * MB))
    return {"arg_stall_ms": arg, "result_stall_ms": result}


async def raw(size: int) -> dict[str, float]:
    from concurrent.futures import ProcessPoolExecutor

    loop = asyncio.get_running_loop()
    with ProcessPoolExecutor(1) as pool:

        async def call(func: Any, arg: Any) -> Any:
            return await loop.run_in_executor(pool, func, arg)

        await call(len, b"warm-up")
        return await _measure(call, size)


async def jobsched(size: int) -> dict[str, float]:
    import jobsched as js
    from jobsched_process import ProcessExecutor

    async with js.JobScheduler(executors={"process": ProcessExecutor(max_processes=1)}) as s:

        async def call(func: Any, arg: Any) -> Any:
            job = js.FunctionJob(func, (arg,), executor="process", timeout=None)
            s.submit(job)
            await s.join()
            assert job.status is js.JobStatus.COMPLETED, job.last_error
            return job.result

        await call(len, b"warm-up")
        return await _measure(call, size)
