"""W7c8 and W10c8: the stores at concurrency 8, against the loop and the peer (issue 25).

Run as ``python -m benchmarks._c8 SYSTEM WORKLOAD SIZE`` (the suite's child
protocol, see :mod:`benchmarks._child`).

W7 and W10 run jobsched with 64 workers; these are the same workloads (no-op
jobs submitted, run and completed; timed from the first submit until every
completion is committed) with 8 workers for jobsched and the peer, each
configured as the peer recommends for that much concurrency:

- ``jobsched``: ``JobScheduler(num_workers=8, store=...)``, otherwise W7's
  (:func:`benchmarks._stores.jobsched_w7`, a fresh SQLite file) and W10's
  (:mod:`benchmarks._postgres_jobsched`, one member, a fresh database).
- ``huey`` (W7c8): huey's consumer with 8 worker threads,
  ``Consumer(huey, workers=8, worker_type="thread")`` on
  ``SqliteHuey(fsync=True)`` (:func:`benchmarks._stores_others.huey_consumer_w7`):
  every task enqueued, the consumer started, timed until the last task's
  ``SIGNAL_COMPLETE``. At most :data:`MAX_JOBS` tasks.
- ``procrastinate`` (W10c8): W10's run with ``concurrency=8`` on its worker
  (:func:`benchmarks._postgres_others._procrastinate_w10`). At most
  :data:`MAX_JOBS` jobs.
- ``jobsched-app`` and ``jobsched-fn`` (issue 33): jobsched with 8 workers
  running registered jobs (``@app.job``, JSON arguments) or the same calls
  as ``FunctionJob`` objects (:mod:`benchmarks._registered`), on a fresh
  file or database like ``jobsched``.
- ``raw``: exactly W7's and W10's hand-written loop (``sqlite3``: one
  connection, WAL, ``synchronous=FULL``; psycopg: ``SKIP LOCKED`` claims),
  with their batch of 64: every job inserted in one transaction, then claims
  of 64 jobs, each batch run and its completions written in one transaction.
  Not a batch of 8: the loop runs its jobs one after another whatever the
  batch, so its batch is not a concurrency but the number of jobs per
  transaction, and jobsched with 8 workers does not claim 8 at a time
  either (it claims for its idle workers plus a prefetch of up to 256 short
  jobs, and writes a round's outcomes and next claim in one transaction).
  A batch of 8 would make the loop pay eight times the transactions per job
  of W7's and W10's loop, a weaker limit than the work allows and an easier
  "0.25x the loop" than W7's and W10's; at 64 the rows' loop is the same
  limit as W7's and W10's, so the rows at the two concurrencies compare
  directly.

The peers' cost per job does not depend on how many jobs a run has (each
commits every job's fetch and finish on its own), so they run at most
:data:`MAX_JOBS`; the figure is jobs per second like everyone's. For the
issue's peer targets, divide jobsched's figure by the peer's (or its ratio
to raw by the peer's: the same loop in the same repetition).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

from benchmarks import _registered
from benchmarks._workloads import Metric, Workload

#: Workers of jobsched and concurrency of each peer in these rows.
CONCURRENCY = 8

WORKLOADS = {
    w.wid: w
    for w in (
        Workload(
            "W7c8",
            f"W7 at concurrency {CONCURRENCY}: no-op async jobs through a SQLite file, "
            f"jobsched with {CONCURRENCY} workers, huey's consumer with {CONCURRENCY} "
            "worker threads; raw: W7's sqlite3 loop, batches of 64",
            (50_000,),
            (5_000,),
            (Metric("jobs_per_s", "throughput", "jobs/s", True),),
        ),
        Workload(
            "W10c8",
            f"W10 at concurrency {CONCURRENCY}: no-op async jobs through one member on the "
            f"local PostgreSQL, jobsched with {CONCURRENCY} workers, procrastinate with "
            f"concurrency={CONCURRENCY}; raw: W10's psycopg loop, batches of 64",
            (20_000,),
            (5_000,),
            (Metric("jobs_per_s", "throughput", "jobs/s", True),),
        ),
    )
}
#: The peer each row runs besides raw and jobsched.
PEERS = {"W7c8": "huey", "W10c8": "procrastinate"}
#: At most this many jobs for a peer (a few seconds each at concurrency 8).
MAX_JOBS = {"huey": 5_000, "procrastinate": 2_000}


def _w7c8(system: str, size: int) -> dict[str, float]:
    from benchmarks import _stores

    if system in ("raw", "raw-indexed"):
        return _stores.run(system, "W7", size)
    with _stores._scratch() as path:
        if system == "huey":
            from benchmarks._stores_others import huey_consumer_w7

            return huey_consumer_w7(path, min(size, MAX_JOBS["huey"]), CONCURRENCY)
        if system != "jobsched":
            raise ValueError(f"W7c8 runs raw, jobsched and huey, not {system!r}")

        async def measure() -> dict[str, float]:
            await _stores._warm_up()
            return await _stores.jobsched_w7(path, size, workers=CONCURRENCY)

        return asyncio.run(measure())


def _w10c8(system: str, size: int) -> dict[str, float]:
    from benchmarks import _postgres

    if system == "raw":
        return _postgres.run("raw", "W10", size)
    # As _postgres.run: the store refuses to start without a secret.
    os.environ.setdefault("JOBSCHED_SECRET", "benchmark-secret")
    import anyio

    if system == "jobsched":
        from benchmarks import _postgres_jobsched

        return anyio.run(_postgres_jobsched._w10, size, CONCURRENCY)
    if system != "procrastinate":
        raise ValueError(f"W10c8 runs raw, jobsched and procrastinate, not {system!r}")
    from benchmarks._postgres_others import _procrastinate_w10

    with _postgres.database() as url:
        return anyio.run(_procrastinate_w10, url, min(size, MAX_JOBS["procrastinate"]), CONCURRENCY)


def run(system: str, workload: str, size: int) -> dict[str, float]:
    """One measurement of W7c8 or W10c8 on a fresh file or database."""
    if system in _registered.SYSTEMS:
        return _registered.c8(system, workload, size)
    measure = {"W7c8": _w7c8, "W10c8": _w10c8}[workload]
    return measure(system, size)


if __name__ == "__main__":
    # Through the module's own name, as benchmarks._stores does: whatever is
    # stored by reference names a module any process can import.
    from benchmarks import _c8

    system, workload, size = sys.argv[1:4]
    print(json.dumps(_c8.run(system, workload, int(size))))
