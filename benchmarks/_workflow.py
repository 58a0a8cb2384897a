"""W23: a workflow fan-out/fan-in (issue 37): ``size`` no-op jobs each
returning a small int and one fan-in taking ``js.results_of`` all of them
and summing, enqueued as one ``enqueue_workflow``, on the memory store,
SQLite and PostgreSQL.

Run as ``python -m benchmarks._workflow SYSTEM W23 SIZE`` (the suite's child
protocol, see :mod:`benchmarks._child`). Each store fresh (a file on SQLite,
a database of its own on PostgreSQL), a warm-up workflow of
:data:`WARM_UP` jobs first in the same store, then the measured one, with
:data:`WORKERS` workers. Per store:

- ``enqueue_us``: building the workflow and committing it, per job (the
  fan-in counted);
- ``jobs_per_s``: every job over the time from the first ``wf.add`` until
  the fan-in's result is back;
- ``fanin_ms``: from the last upstream's body returning to the fan-in's
  body starting with all the results in hand (the last completion
  committed, the fan-in released, claimed, its inputs read and decoded).

``raw`` is :mod:`benchmarks._raw_workflow`: the same jobs by hand in
asyncio, sqlite3 and psycopg.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from benchmarks._workloads import Metric, Workload

#: Workers of the scheduler, as for W7 and W10; raw claims batches this big.
WORKERS = 64
#: Upstreams of the warm-up workflow (imports, prepared statements, caches).
WARM_UP = 8
STORES = ("mem", "sqlite", "pg")
_NAMES = {"mem": "memory", "sqlite": "SQLite", "pg": "PostgreSQL"}

W23 = Workload(
    "W23",
    f"a workflow: n no-op jobs returning a small int and one fan-in summing "
    f"results_of all of them, one enqueue_workflow, {WORKERS} workers, on memory, SQLite and "
    "PostgreSQL; raw: asyncio / sqlite3 / psycopg by hand (one transaction of rows and "
    "edges, batched claims (SKIP LOCKED on PostgreSQL) with a countdown on the fan-in, "
    "its inputs read in one query)",
    (10_000,),
    (1_000,),
    tuple(
        metric
        for store in STORES
        for metric in (
            Metric(f"{store}_enqueue_us", f"{_NAMES[store]} enqueue", "µs/job", False),
            Metric(f"{store}_jobs_per_s", f"{_NAMES[store]} end to end", "jobs/s", True),
            Metric(f"{store}_fanin_ms", f"{_NAMES[store]} fan-in receive", "ms", False),
        )
    ),
)

#: When the last upstream body returned and the fan-in's body started
#: (``time.perf_counter``; the jobs run in the measuring process).
MARKS: dict[str, float] = {}


async def part(i: int) -> int:
    """An upstream: no work, a small int."""
    MARKS["last"] = time.perf_counter()
    return i % 10


async def total(parts: list[int]) -> int:
    """The fan-in: the sum of its upstreams' results."""
    MARKS["fanin"] = time.perf_counter()
    return sum(parts)


def expected(size: int) -> int:
    """What :func:`total` returns over ``size`` upstreams."""
    return sum(i % 10 for i in range(size))


def figures(size: int, enqueue: float, elapsed: float) -> dict[str, float]:
    """The three metrics from the timings of one run of ``size`` upstreams."""
    return {
        "enqueue_us": enqueue / (size + 1) * 1e6,
        "jobs_per_s": (size + 1) / elapsed,
        "fanin_ms": (MARKS["fanin"] - MARKS["last"]) * 1e3,
    }


async def _one(scheduler: Any, size: int) -> dict[str, float]:
    import jobsched as js

    MARKS.clear()
    t0 = time.perf_counter()
    wf = js.Workflow("w23")
    parts = [wf.add(js.FunctionJob(part, args=(i,))) for i in range(size)]
    fanin = wf.add(js.FunctionJob(total, args=(js.results_of(parts),)))
    await scheduler.enqueue_workflow(wf)
    enqueued = time.perf_counter()
    got = await scheduler.result(fanin.job_id)
    elapsed = time.perf_counter() - t0
    if got != expected(size):
        raise RuntimeError(f"the fan-in summed {got}, not {expected(size)}")
    return figures(size, enqueued - t0, elapsed)


async def _jobsched(store: Any, size: int) -> dict[str, float]:
    import jobsched as js

    kwargs = {} if store is None else {"store": store}
    async with js.JobScheduler(num_workers=WORKERS, **kwargs) as scheduler:
        await _one(scheduler, WARM_UP)
        return await _one(scheduler, size)


async def _measure(system: str, size: int) -> dict[str, float]:
    from benchmarks import _raw_workflow, _stores
    from benchmarks._postgres import database

    out: dict[str, float] = {}

    def keep(store: str, got: dict[str, float]) -> None:
        out.update({f"{store}_{key}": value for key, value in got.items()})

    if system == "raw":
        keep("mem", await _raw_workflow.memory(size))
        with _stores._scratch() as path:
            keep("sqlite", await _raw_workflow.sqlite(str(path), size))
        with database() as url:
            keep("pg", await _raw_workflow.postgres(url, size))
        return out
    keep("mem", await _jobsched(None, size))
    with _stores._scratch() as path:
        keep("sqlite", await _jobsched(f"sqlite:///{path}", size))
    with database() as url:
        keep("pg", await _jobsched(url, size))
    return out


def run(system: str, workload: str, size: int) -> dict[str, float]:
    """One measurement of W23 on ``system`` (``raw`` or ``jobsched``), every store."""
    if workload != W23.wid or system not in ("raw", "jobsched"):
        raise ValueError(
            f"benchmarks._workflow runs W23 on raw and jobsched, not {system} {workload}"
        )
    # As benchmarks._postgres: the store refuses to start without a secret.
    os.environ.setdefault("JOBSCHED_SECRET", "benchmark-secret")
    import asyncio

    return asyncio.run(_measure(system, size))


if __name__ == "__main__":
    # Through the module's own name: the jobs' functions are pickled as
    # ``benchmarks._workflow.part``, not ``__main__.part``, and MARKS is one dict.
    from benchmarks import _workflow

    system, workload, size = sys.argv[1:4]
    print(json.dumps(_workflow.run(system, workload, int(size))))
