"""W18: a worker on a small named queue beside a big one (issue 24).

Run as ``python -m benchmarks._queues SYSTEM W18 SIZE`` (the suite's child
protocol, see :mod:`benchmarks._child`). Each run opens a SQLite file and a
PostgreSQL database of its own (the server of :mod:`benchmarks._postgres`,
dropped after) through the stores' own API, and adds ``size`` ready jobs on
the queue ``big`` (with better keys than the small queue's, so an index
that does not start with the queue would read past all of them) and
:data:`SMALL` on ``small``. ``raw`` is the same worker with ``big`` empty:
the ratio is what the big queue costs the small one's worker (issue 24's
bar: at most 1.5x at 1,000,000).

It times :data:`CLAIMS` claims of :data:`BATCH` jobs by a member serving
only ``small``, after :data:`WARMUP` untimed ones; after each, the claimed
jobs complete (one ``record``, untimed) and as many new ``small`` jobs are
added (untimed), so the small queue always holds :data:`SMALL`. The figures
are the claims' p50 and p99. The store objects are the ones a scheduler
would use, so the figures include the stores' transactions and their
Python, but no scheduler.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from benchmarks._work import percentile
from benchmarks._workloads import Metric, Workload

W18 = Workload(
    "W18",
    "claim latency (p50, p99) of a worker serving a 100-job queue while another queue "
    "holds n ready jobs with better keys, on SQLite and PostgreSQL; raw: the same worker "
    "with the big queue empty, so the ratio is what the big queue costs",
    (1_000_000,),
    (100_000,),
    (
        Metric("sqlite_p50_ms", "SQLite claim p50", "ms", False),
        Metric("sqlite_p99_ms", "SQLite claim p99", "ms", False),
        Metric("pg_p50_ms", "PostgreSQL claim p50", "ms", False),
        Metric("pg_p99_ms", "PostgreSQL claim p99", "ms", False),
    ),
)
SMALL = 100
BATCH = 10
CLAIMS = 300
WARMUP = 20
_ADD_CHUNK = 10_000
_SECRET = "benchmark-secret"
_NOW = 1_700_000_000.0


def _new(job_id: int, key: float, queue: str) -> Any:
    from jobsched.store import NewJob

    return NewJob(
        job_id,
        f"j{job_id}",
        "async",
        (key,),
        run_at=_NOW,
        submitted_at=_NOW,
        payload=b"P",
        queue=queue,
    )


async def _measure(url: str, big: int) -> tuple[float, float]:
    import jobsched as js
    from jobsched.store import Outcome

    store = js.open_store(url, secret=_SECRET)
    await store.open()
    try:
        first = store.reserve_ids(big + SMALL + (WARMUP + CLAIMS) * BATCH)
        next_id = first
        for start in range(0, big, _ADD_CHUNK):
            rows = [
                _new(next_id + i, float(start + i), "big")
                for i in range(min(_ADD_CHUNK, big - start))
            ]
            next_id += len(rows)
            await store.add(rows, _NOW)
        small_key = float(big + 1)
        rows = [_new(next_id + i, small_key + i, "small") for i in range(SMALL)]
        next_id += SMALL
        small_key += SMALL
        await store.add(rows, _NOW)
        samples: list[float] = []
        for n in range(WARMUP + CLAIMS):
            started = time.perf_counter()
            claims = await store.claim(
                "bench", BATCH, {"async": BATCH}, _NOW, 3600.0, queues={"small"}
            )
            took = time.perf_counter() - started
            assert len(claims) == BATCH, f"claimed {len(claims)} of the small queue"
            if n >= WARMUP:
                samples.append(took)
            await store.record(
                "bench",
                [Outcome(c.id, c.attempt, js.JobStatus.COMPLETED, _NOW + 1) for c in claims],
            )
            rows = [_new(next_id + i, small_key + i, "small") for i in range(BATCH)]
            next_id += BATCH
            small_key += BATCH
            await store.add(rows, _NOW)
    finally:
        await store.close()
    return percentile(samples, 50) * 1e3, percentile(samples, 99) * 1e3


def run(system: str, size: int) -> dict[str, float]:
    """One measurement of W18 (``raw``: the big queue empty)."""
    from benchmarks._postgres import database

    big = 0 if system == "raw" else size
    result: dict[str, float] = {}
    folder = Path(tempfile.mkdtemp(prefix="jobsched-w18-"))
    try:
        p50, p99 = anyio.run(_measure, f"sqlite:///{folder / 'store.db'}", big)
        result.update(sqlite_p50_ms=p50, sqlite_p99_ms=p99)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    os.environ.setdefault("JOBSCHED_SECRET", _SECRET)
    with database() as url:
        p50, p99 = anyio.run(_measure, url, big)
        result.update(pg_p50_ms=p50, pg_p99_ms=p99)
    return result


if __name__ == "__main__":
    system, _, size = sys.argv[1:4]
    print(json.dumps(run(system, int(size))))
