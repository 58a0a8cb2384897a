"""The workloads (names and default sizes fixed by issue 4) and their metrics."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

SYSTEMS = ("raw", "jobsched", "apscheduler4")


@dataclass(frozen=True)
class Metric:
    """One reported figure of a workload run."""

    key: str
    label: str
    unit: str
    #: True if bigger is better (throughput), False for costs and latencies.
    higher_is_better: bool


@dataclass(frozen=True)
class Workload:
    """One row group of the report: what runs, at which sizes, measured how."""

    wid: str
    what: str
    sizes: tuple[int, ...]
    quick_sizes: tuple[int, ...]
    metrics: tuple[Metric, ...]


_JOBS_PER_S = (Metric("jobs_per_s", "throughput", "jobs/s", True),)

WORKLOADS: dict[str, Workload] = {
    w.wid: w
    for w in (
        Workload(
            "W1",
            "no-op async jobs, 4 workers, queued before start",
            (100_000,),
            (10_000,),
            _JOBS_PER_S,
        ),
        Workload(
            "W2",
            "no-op async jobs, random priorities, queued, drained by 1 worker",
            (10_000, 100_000, 1_000_000),
            (1_000, 10_000, 100_000),
            (
                Metric("enqueue_us", "enqueue", "µs/job", False),
                Metric("dispatch_us", "dispatch", "µs/job", False),
            ),
        ),
        # Bytes per queued job: a separate run, because tracemalloc slows
        # everything it watches and would spoil the W2 timings.
        Workload(
            "W2mem",
            "bytes per queued job (tracemalloc around creating and queueing)",
            (100_000,),
            (10_000,),
            (Metric("bytes_per_job", "memory", "bytes/job", False),),
        ),
        # Distinct priorities: a structure that is fast for four levels can
        # degrade with one level per job. Both runs in one process, so the
        # ratio is free of run-to-run noise.
        Workload(
            "W2p",
            "W2 with 10,000 distinct priorities, over W2 with 4, both in one process",
            (100_000,),
            (10_000,),
            (
                Metric("enqueue_vs_4", "enqueue / W2's", "x", False),
                Metric("dispatch_vs_4", "dispatch / W2's", "x", False),
            ),
        ),
        Workload(
            "W3",
            "thread jobs of time.sleep(0.001), 8 workers",
            (2_000,),
            (400,),
            _JOBS_PER_S,
        ),
        Workload(
            "W4",
            "process jobs counting primes below 200,000, 2 workers",
            (64,),
            (8,),
            _JOBS_PER_S,
        ),
        Workload(
            "W5",
            "jobs delayed uniformly over 0..1 s, 8 workers",
            (2_000,),
            (500,),
            (
                Metric("p50_ms", "lateness p50", "ms", False),
                Metric("p99_ms", "lateness p99", "ms", False),
            ),
        ),
        Workload(
            "W6",
            "chains of 100 dependent no-op async jobs (size = chains), 4 workers",
            (200,),
            (20,),
            _JOBS_PER_S,
        ),
        # benchmarks/_cold.py
        Workload(
            "W4cold",
            "small process jobs (primes below 20,000) on a cold pool of 2 workers, "
            "the pool's start counted",
            (64,),
            (16,),
            _JOBS_PER_S,
        ),
        # benchmarks/_stall.py
        Workload(
            "W4stall",
            "loop stall while one process job takes a big argument, then returns a big "
            "result (size = MB), warm worker, 1 ms heartbeat",
            (1, 100, 500),
            (1, 100),
            (
                Metric("arg_stall_ms", "loop stall, argument", "ms", False),
                Metric("result_stall_ms", "loop stall, result", "ms", False),
            ),
        ),
        # Not run through the systems' own modules: see benchmarks/_imports.py.
        Workload(
            "W0",
            "`import` of the package in a fresh interpreter, best of n interpreters "
            "(raw: `import anyio`)",
            (20,),
            (5,),
            (Metric("import_ms", "import time", "ms", False),),
        ),
    )
}

#: W2 at this size is skipped for APScheduler 4 unless --aps-full: it would
#: take several minutes per repetition.
APS_W2_MAX = 100_000

CHAIN_LENGTH = 100
DISTINCT_PRIORITIES = 10_000
PRIME_LIMIT = 200_000
W5_SPREAD_S = 1.0
SEED = 20_240_404


#: Warm-up sizes: one tiny run first, in the same event loop, so one-time
#: costs (lazy imports such as anyio's backend, first-use caches) are not
#: counted as per-job cost. W4 and W5 are not warmed: their pools and timers
#: start inside the measured part for every system alike.
WARM_UP = {"W1": 64, "W2": 64, "W2p": 64, "W3": 8, "W6": 2}


async def warm_then_measure(
    workloads: Mapping[str, Callable[[int], Awaitable[dict[str, float]]]], workload: str, size: int
) -> dict[str, float]:
    """A warm-up run (anyio's backend, imports) not counted, then ``workload`` at ``size``."""
    if workload in WARM_UP:
        await workloads[workload](WARM_UP[workload])
    return await workloads[workload](size)


def vs_4_priorities(four: dict[str, float], distinct: dict[str, float]) -> dict[str, float]:
    """W2p's figures from a W2 run with 4 priorities and one with distinct priorities."""
    return {
        "enqueue_vs_4": distinct["enqueue_us"] / four["enqueue_us"],
        "dispatch_vs_4": distinct["dispatch_us"] / four["dispatch_us"],
    }
