"""W10-W12 on jobsched's PostgreSQL store, through its public API.

A member process (``python -m benchmarks._postgres_jobsched URL [--report]``)
is a ``JobScheduler(num_workers=WORKERS, store=URL)``: it prints ``ready``
once started, with ``--report`` prints ``started ID MONOTONIC`` from a
listener as each job turns RUNNING, and stops when its standard input closes.
The secret comes from ``JOBSCHED_SECRET``, which :mod:`benchmarks._postgres`
sets in every run's process (member processes inherit it).
"""

from __future__ import annotations

import random
import sys
import time

import anyio
import anyio.to_thread

import jobsched as js
from benchmarks._postgres import (
    WORKERS,
    Member,
    _latencies,
    _pause,
    database,
)
from benchmarks._stores import Noop, _Blocker, _on


async def _throughput(url: str, size: int, *, members: int, workers: int = WORKERS) -> float:
    extra = [Member(__name__, url, report=False) for _ in range(members - 1)]
    try:
        async with js.JobScheduler(num_workers=workers, store=url) as scheduler:
            t0 = time.perf_counter()
            for _ in range(size):
                scheduler.submit(Noop("noop"))
            await scheduler.join()  # every job in the store, whichever member ran it
            elapsed = time.perf_counter() - t0
    finally:
        for member in extra:
            member.close()
    return size / elapsed


async def _w10(size: int, workers: int = WORKERS) -> dict[str, float]:
    with database() as url:
        return {"jobs_per_s": await _throughput(url, size, members=1, workers=workers)}


async def _w11(size: int) -> dict[str, float]:
    rng = random.Random(0)
    samples = []
    with database() as url:
        # The submitting scheduler must not run the jobs itself: its only
        # worker holds a blocker, started before the member exists.
        submitter = js.JobScheduler(num_workers=1, store=url)
        listener, blocking = _on(js.JobStatus.RUNNING, 1)
        submitter.add_listener(listener)
        await submitter.start()
        try:
            submitter.submit(_Blocker("blocker", timeout=None))
            await blocking.wait()
            member = await anyio.to_thread.run_sync(lambda: Member(__name__, url, report=True))
            try:
                for _ in range(size):
                    await anyio.sleep(_pause(rng))
                    t0 = time.monotonic()
                    job_id = await submitter.enqueue(Noop("w11"))
                    started, at = await anyio.to_thread.run_sync(member.started)
                    if started != job_id:
                        raise RuntimeError(f"the member started {started}, not {job_id}")
                    samples.append(at - t0)
            finally:
                await anyio.to_thread.run_sync(member.close)
        finally:
            await submitter.stop(cancel_running=True)
    return _latencies(samples)


async def _w12(size: int) -> dict[str, float]:
    with database() as url:
        one = await _throughput(url, size, members=1)
    with database() as url:
        two = await _throughput(url, size, members=2)
    return {"jobs_per_s": two, "speedup": two / one}


def run(workload: str, size: int) -> dict[str, float]:
    measure = {"W10": _w10, "W11": _w11, "W12": _w12}[workload]
    return anyio.run(measure, size)


async def member(url: str, *, report: bool) -> None:
    """A fleet member until standard input closes."""
    scheduler = js.JobScheduler(num_workers=WORKERS, store=url)
    if report:

        def started(job: js.Job, old: js.JobStatus, new: js.JobStatus) -> None:
            if new is js.JobStatus.RUNNING:
                sys.stdout.write(f"started {job.job_id} {time.monotonic()}\n")
                sys.stdout.flush()

        scheduler.add_listener(started)
    async with scheduler:
        print("ready", flush=True)
        await anyio.to_thread.run_sync(sys.stdin.read)


if __name__ == "__main__":
    anyio.run(lambda: member(sys.argv[1], report="--report" in sys.argv[2:]))
