"""W4cold: small CPU jobs on a cold process pool, the pool's start counted.

``size`` jobs counting primes below :data:`SMALL_PRIME_LIMIT` (about 10 ms
each on a quiet machine) run on 2 worker processes that do not exist yet
when the clock starts: the time runs from creating the pool (raw: a
``concurrent.futures.ProcessPoolExecutor`` with its default start method,
which forks its workers on Linux before Python 3.14; jobsched:
a scheduler with a fresh ``ProcessExecutor``, whose workers are fresh
interpreters) until the last result is in; shutting the pool down is not
counted. So the figure says how much of a short batch a pool's start costs,
which W4's long jobs hide.

Bytecode caches are written before the clock starts, as W0 does (see
``_imports``): a user's interpreters load ``.pyc`` files, but under
``PYTHONDONTWRITEBYTECODE`` every fresh worker would compile its modules from
source, a cost the raw pool, whose workers are forks, never pays. Only the
files are written: nothing is imported into the measuring process, so the
scheduler's own first start (importing anyio's backend) stays on the clock.

Declared in ``_workloads.WORKLOADS``; each system's module maps W4cold to a function here.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor

from benchmarks._work import count_primes

#: Small enough that a pool's start is a visible share of 64 jobs on 2 workers.
SMALL_PRIME_LIMIT = 20_000
WORKERS = 2

#: What each system's run imports, in this process and in its workers.
_IMPORTED = {
    "raw": ("benchmarks._work",),
    "jobsched": (
        "benchmarks._work",
        "jobsched",
        "jobsched_process._executor",
        "jobsched_process._worker",
        "anyio._backends._asyncio",
        "cloudpickle",
    ),
}


def write_bytecode(system: str) -> None:
    """Write the ``.pyc`` files of what ``system``'s run imports, in another process."""
    subprocess.run(
        [sys.executable, "-c", "import " + ", ".join(_IMPORTED[system])],
        check=True,
        env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    )


async def raw(size: int) -> dict[str, float]:
    write_bytecode("raw")
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

    write_bytecode("jobsched")
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
