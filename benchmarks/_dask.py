"""W13: small CPU tasks on a Dask LocalCluster, through jobsched and through Dask alone.

Run as ``python -m benchmarks._dask SYSTEM W13 SIZE`` (the suite's child
protocol, see :mod:`benchmarks._child`): ``raw`` is what a Dask user writes
(``client.submit`` for every task, then one ``client.gather``), ``jobsched``
submits the same tasks as jobs on the ``dask`` executor. Each child starts its
own cluster and warms it up outside the measured part, so only the tasks are
timed.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

import jobsched as js
from benchmarks._work import count_primes
from benchmarks._workloads import Metric, Workload

W13 = Workload(
    "W13",
    "Dask tasks counting primes below 1,000 on a LocalCluster of 2 single-thread worker "
    "processes; raw is client.submit + gather",
    (2_000,),
    (200,),
    (Metric("jobs_per_s", "throughput", "jobs/s", True),),
)
PRIME_LIMIT = 1_000
EXPECTED = count_primes(PRIME_LIMIT)
CLUSTER = {"n_workers": 2, "threads_per_worker": 1, "processes": True, "dashboard_address": ":0"}
#: Attempts in flight at once through jobsched: enough to keep Dask's
#: pipeline as full as one submit-everything call keeps it.
IN_FLIGHT = 256
WARM_UP = 20


# Dask is imported in the child only: the suite's parent reads W13 above.


async def _jobsched(size: int) -> float:
    from jobsched_dask import DaskExecutor

    # Stopping the scheduler shuts the executor, and so its cluster, down.
    async with js.JobScheduler(
        num_workers=IN_FLIGHT, executors={"dask": DaskExecutor(**CLUSTER)}
    ) as scheduler:
        for batch in (WARM_UP, size):
            t0 = time.perf_counter()
            ids = [
                scheduler.submit(js.FunctionJob(count_primes, (PRIME_LIMIT,), executor="dask"))
                for _ in range(batch)
            ]
            await scheduler.join()
            elapsed = time.perf_counter() - t0
            assert all(scheduler.get(i).result == EXPECTED for i in ids)
    return elapsed


def _raw(size: int) -> float:
    import distributed

    with distributed.Client(**CLUSTER) as client:
        for batch in (WARM_UP, size):
            t0 = time.perf_counter()
            futures = [client.submit(count_primes, PRIME_LIMIT, pure=False) for _ in range(batch)]
            results = client.gather(futures)
            elapsed = time.perf_counter() - t0
            assert results == [EXPECTED] * batch
        return elapsed


def run(system: str, size: int) -> dict[str, float]:
    """One measurement of W13 on ``system`` (``raw`` or ``jobsched``)."""
    elapsed = _raw(size) if system == "raw" else asyncio.run(_jobsched(size))
    return {"jobs_per_s": size / elapsed}


if __name__ == "__main__":
    system, _, size = sys.argv[1:4]
    print(json.dumps(run(system, int(size))))
