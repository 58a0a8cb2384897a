"""W10 on procrastinate 3 and APScheduler 4 (its SQLAlchemy data store), on PostgreSQL.

The same no-op jobs, one worker each, on a fresh database of the same local
server, each configured the way its docs suggest for throughput:

- procrastinate: a ``PsycopgConnector``, its schema applied, every job
  deferred with ``batch_defer_async`` (one statement, its most efficient way
  in), then one worker (``run_worker_async(wait=False)``, which returns once
  the queue is empty) with ``concurrency`` equal to jobsched's workers.
  Each job is fetched and finished in transactions of its own.
- APScheduler 4: ``SQLAlchemyDataStore`` on ``postgresql+asyncpg``, one task
  with ``max_running_jobs=None``, ``max_concurrent_jobs`` equal to jobsched's
  workers, the scheduler started, then every job added (``add_job``, one
  transaction each); timed until the last ``JobReleased``.

Their cost per job does not depend on how many jobs a run has, so they run
at most :data:`MAX_JOBS` jobs; the figure is jobs per second like everyone's.
"""

from __future__ import annotations

import time
from typing import Any

from benchmarks._work import noop

MAX_JOBS = {"apscheduler4": 500, "procrastinate": 2_000}


async def _procrastinate_w10(
    url: str, size: int, concurrency: int | None = None
) -> dict[str, float]:
    """W10 on procrastinate, its worker's ``concurrency`` jobsched's workers unless given."""
    import procrastinate

    from benchmarks._postgres import WORKERS

    app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=url))
    task = app.task(name="noop", queue="bench")(_procrastinate_noop)
    async with app.open_async():
        await app.schema_manager.apply_schema_async()
        t0 = time.perf_counter()
        await task.batch_defer_async(*({} for _ in range(size)))
        await app.run_worker_async(
            queues=["bench"],
            concurrency=WORKERS if concurrency is None else concurrency,
            wait=False,
            install_signal_handlers=False,
        )
        elapsed = time.perf_counter() - t0
        async with app.connector.pool.connection() as conn:  # type: ignore[attr-defined]
            cursor = await conn.execute(
                "SELECT count(*) FROM procrastinate_jobs WHERE status = 'succeeded'"
            )
            (succeeded,) = await cursor.fetchone()
    if succeeded != size:
        raise RuntimeError(f"procrastinate ran {succeeded} of {size} jobs")
    return {"jobs_per_s": size / elapsed}


async def _procrastinate_noop() -> None:
    """procrastinate's tasks are plain (async) functions."""


async def _aps_w10(url: str, size: int) -> dict[str, float]:
    import anyio
    from apscheduler import AsyncScheduler, JobReleased
    from apscheduler.datastores.sqlalchemy import SQLAlchemyDataStore
    from sqlalchemy.ext.asyncio import create_async_engine

    from benchmarks._postgres import WORKERS

    engine = create_async_engine(url.replace("postgresql://", "postgresql+asyncpg://", 1))
    left = size
    done = anyio.Event()

    def released(event: Any) -> None:
        nonlocal left
        left -= 1
        if left == 0:
            done.set()

    try:
        store = SQLAlchemyDataStore(engine)
        async with AsyncScheduler(store, max_concurrent_jobs=WORKERS) as scheduler:
            await scheduler.configure_task("bench", func=noop, max_running_jobs=None)
            scheduler.subscribe(released, {JobReleased})
            await scheduler.start_in_background()
            t0 = time.perf_counter()
            for _ in range(size):
                await scheduler.add_job("bench")
            with anyio.fail_after(600):
                await done.wait()
            elapsed = time.perf_counter() - t0
            await scheduler.stop()
    finally:
        await engine.dispose()
    return {"jobs_per_s": size / elapsed}


def run(system: str, workload: str, url: str, size: int) -> dict[str, float]:
    """W10 on ``system`` with at most :data:`MAX_JOBS` jobs, on the database ``url``."""
    if workload != "W10":
        raise ValueError(f"{system} runs W10 only, not {workload}")
    size = min(size, MAX_JOBS[system])
    import anyio

    if system == "procrastinate":
        return anyio.run(_procrastinate_w10, url, size)
    if system == "apscheduler4":
        return anyio.run(_aps_w10, url, size)
    raise ValueError(f"unknown system {system!r}")
