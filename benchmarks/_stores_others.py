"""W7 on APScheduler 4 (its SQLAlchemy data store, aiosqlite) and huey (its SqliteStorage).

Both on one SQLite file in WAL mode with ``synchronous=FULL``, the durability
jobsched's store and the raw loop use. Each commits every job's insert and
its completion in a transaction of its own (APScheduler also acquires jobs in
batches of up to ``max_concurrent_jobs``), so their cost per job does not
depend on how many jobs a run has: they run at most :data:`MAX_JOBS` jobs
(APScheduler 4 manages about 90 a second), and their figure is jobs per
second like everyone's.

- APScheduler 4: one task configured with ``max_running_jobs=None``,
  ``max_concurrent_jobs`` equal to jobsched's workers, the scheduler started,
  then every job added; timed until the last ``JobReleased``. Its docs call
  aiosqlite "not recommended right now"; it works for this workload.
- huey: ``SqliteHuey(fsync=True)``; every task enqueued, then one worker
  loop as huey's consumer runs it (``dequeue``, ``execute``), in this thread.
  More worker threads would not help: SQLite serialises the commits.
  W7c8 runs huey's own consumer with 8 worker threads instead
  (:func:`huey_consumer_w7`), since that row is about concurrency 8.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from benchmarks._work import noop

MAX_JOBS = {"apscheduler4": 1_000, "huey": 5_000}


async def _aps_w7(path: Path, size: int) -> dict[str, float]:
    import anyio
    from apscheduler import AsyncScheduler, JobReleased
    from apscheduler.datastores.sqlalchemy import SQLAlchemyDataStore
    from sqlalchemy import event
    from sqlalchemy.ext.asyncio import create_async_engine

    from benchmarks._stores import WORKERS

    engine = create_async_engine(f"sqlite+aiosqlite:///{path}")

    @event.listens_for(engine.sync_engine, "connect")
    def durable(dbapi_connection: Any, record: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA synchronous = FULL")
        cursor.close()

    left = size
    done = anyio.Event()

    def released(event: Any) -> None:
        nonlocal left
        left -= 1
        if left == 0:
            done.set()

    store = SQLAlchemyDataStore(engine)
    try:
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


def _huey_w7(path: Path, size: int) -> dict[str, float]:
    from huey import SqliteHuey

    huey = SqliteHuey("bench", filename=str(path), fsync=True)
    task = huey.task()(_huey_noop)
    t0 = time.perf_counter()
    for _ in range(size):
        task()
    executed = 0
    while (message := huey.dequeue()) is not None:
        huey.execute(message)
        executed += 1
    elapsed = time.perf_counter() - t0
    assert executed == size, (executed, size)
    huey.storage.close()
    return {"jobs_per_s": size / elapsed}


def huey_consumer_w7(path: Path, size: int, workers: int) -> dict[str, float]:
    """W7 on huey's own consumer with ``workers`` worker threads (W7c8).

    Every task enqueued, then ``Consumer(huey, workers=workers,
    worker_type="thread")`` started (what ``huey_consumer -k thread -w N``
    runs, its other options at their defaults), timed until huey's
    ``SIGNAL_COMPLETE`` for the last task; the consumer is stopped
    gracefully after the timing.
    """
    import threading

    from huey import SqliteHuey, signals
    from huey.consumer import Consumer

    huey = SqliteHuey("bench", filename=str(path), fsync=True)
    task = huey.task()(_huey_noop)
    lock = threading.Lock()
    done = threading.Event()
    completed = 0

    @huey.signal(signals.SIGNAL_COMPLETE)
    def complete(signal: str, task: Any, *args: Any) -> None:
        nonlocal completed
        with lock:
            completed += 1
            if completed == size:
                done.set()

    consumer = Consumer(huey, workers=workers, worker_type="thread")
    t0 = time.perf_counter()
    for _ in range(size):
        task()
    consumer.start()
    try:
        if not done.wait(timeout=600):
            raise RuntimeError(f"huey completed {completed} of {size} tasks in 600 s")
        elapsed = time.perf_counter() - t0
    finally:
        consumer.stop(graceful=True)
    huey.storage.close()
    return {"jobs_per_s": size / elapsed}


def _huey_noop() -> None:
    """huey's tasks are plain functions."""


def run(system: str, workload: str, path: Path, size: int) -> dict[str, float]:
    """W7 on ``system`` with at most :data:`MAX_JOBS` jobs, on the file ``path``."""
    if workload != "W7":
        raise ValueError(f"{system} runs W7 only, not {workload}")
    size = min(size, MAX_JOBS.get(system, size))
    if system == "apscheduler4":
        import anyio

        return anyio.run(_aps_w7, path, size)  # type: ignore[no-any-return]
    if system == "huey":
        return _huey_w7(path, size)
    raise ValueError(f"unknown system {system!r}")
