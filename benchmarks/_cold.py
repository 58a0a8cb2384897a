"""W4cold: small CPU jobs on a cold process pool, the pool's start counted.

``size`` jobs counting primes below :data:`SMALL_PRIME_LIMIT` (about 10 ms
each on a quiet machine) run on 2 worker processes that do not exist yet
when the clock starts: the time runs from creating the pool (raw: a
``concurrent.futures.ProcessPoolExecutor``, which forks its workers; jobsched:
a scheduler with a fresh ``ProcessExecutor``, whose workers are fresh
interpreters) until the last result is in; shutting the pool down is not
counted. So the figure says how much of a short batch a pool's start costs,
which W4's long jobs hide.

Declared in ``_workloads.WORKLOADS``; each system's module maps W4cold to a function here.
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ProcessPoolExecutor

from benchmarks._work import count_primes

#: Small enough that a pool's start is a visible share of 64 jobs on 2 workers.
SMALL_PRIME_LIMIT = 20_000
WORKERS = 2


async def raw(size: int) -> dict[str, float]:
    loop = asyncio.get_running_loop()
    t0 = time.perf_counter()
    with ProcessPoolExecutor(WORKERS) as pool:
        await asyncio.gather(
            *(loop.run_in_executor(pool, count_primes, SMALL_PRIME_LIMIT) for _ in range(size))
        )
        elapsed = time.perf_counter() - t0
    return {"jobs_per_s": size / elapsed}


async def jobsched(size: int) -> dict[str, float]:
    import jobsched as js
    from jobsched_process import ProcessExecutor

    t0 = time.perf_counter()
    scheduler = js.JobScheduler(
        num_workers=WORKERS, executors={"process": ProcessExecutor(max_processes=WORKERS)}
    )
    jobs = [
        js.FunctionJob(count_primes, (SMALL_PRIME_LIMIT,), executor="process") for _ in range(size)
    ]
    for job in jobs:
        scheduler.submit(job)
    await scheduler.start()
    await scheduler.join()
    elapsed = time.perf_counter() - t0
    await scheduler.stop()
    assert all(job.status is js.JobStatus.COMPLETED for job in jobs)
    return {"jobs_per_s": size / elapsed}
