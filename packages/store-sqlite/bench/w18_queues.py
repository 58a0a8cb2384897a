"""W18 on the SQLite store: a claim of a small queue beside a big one.

Run from the checkout: ``uv run python packages/store-sqlite/bench/w18_queues.py [BIG]``.

Four files, each a SMALL-job queue a worker serves with ``queues={served}``,
one job a claim, completed after each claim (a worker's steady state):

- ``small`` beside BIG ready jobs of ``big`` with better keys, and beside none;
- ``default`` beside BIG ready jobs of ``big`` with better keys, beside none
  in a file that has the queue column (one named job, run and completed), and
  beside none in a file without it (the code before's claim, one index).

Prints the claim latency (median and p99 over ROUNDS x SMALL claims) per file,
the ratio beside BIG over beside none, and each claim statement's query plan
on the file with the big queue. The big queue is added through the store's
``add`` in batches, as submits would write it (so its index entries are real).
"""

from __future__ import annotations

import asyncio
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

from jobsched import JobStatus
from jobsched.store import DEFAULT_QUEUE, NewJob, Outcome
from jobsched_sqlite import SQLiteStore

NOW = 1_700_000_000.0
SMALL = 100
ROUNDS = 5
BATCH = 20_000
ALL = {"async": 64}


def job(job_id: int, key: float, queue: str) -> NewJob:
    return NewJob(job_id, "j", "async", (key,), NOW, NOW, b"P", queue=queue)


async def build(path: Path, big: int, column: bool) -> tuple[SQLiteStore, int]:
    store = SQLiteStore(f"sqlite:///{path}")
    await store.open()
    next_id = 1
    if column and not big:  # the column and its index, no job left in them
        await store.add([job(next_id, 0.0, "big")], NOW)
        (claim,) = await store.claim("m", 1, ALL, NOW, 30)
        await store.record("m", [Outcome(claim.id, claim.attempt, JobStatus.COMPLETED, NOW)])
        next_id += 1
    for start in range(0, big, BATCH):
        count = min(BATCH, big - start)
        await store.add([job(next_id + i, float(next_id + i), "big") for i in range(count)], NOW)
        next_id += count
    return store, next_id


async def run(
    big: int, served: str, folder: Path, column: bool = True
) -> tuple[list[float], list[str]]:
    path = folder / f"{served}-{big}-{column}.db"
    store, next_id = await build(path, big, column)
    conn = store._conn
    assert conn is not None
    conn.execute("ANALYZE")  # as a long-lived file would have it
    times: list[float] = []
    statements: list[str] = []
    for rnd in range(ROUNDS):
        jobs = [job(next_id + i, 10.0 * big + next_id + i, served) for i in range(SMALL)]
        next_id += SMALL
        await store.add(jobs, NOW)
        for n in range(SMALL):
            if rnd == 0 and n == 0:
                conn.set_trace_callback(statements.append)
            started = time.perf_counter()
            (claim,) = await store.claim("m", 1, ALL, NOW, 30, queues={served})
            times.append(time.perf_counter() - started)
            conn.set_trace_callback(None)
            await store.record("m", [Outcome(claim.id, claim.attempt, JobStatus.COMPLETED, NOW)])
    plans = []
    for sql in statements:
        if sql.lstrip().upper().startswith(("SELECT", "UPDATE")) and "sqlite_master" not in sql:
            rows = conn.execute(f"EXPLAIN QUERY PLAN {sql}").fetchall()
            plans.append(f"{sql}\n    " + "\n    ".join(r[3] for r in rows))
    await store.close()
    return times, plans


def summary(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered) * 1e6, ordered[int(len(ordered) * 0.99) - 1] * 1e6


async def main() -> None:
    big = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for served in ("small", DEFAULT_QUEUE):
            beside, plans = await run(big, served, folder)
            (med_b, p99_b) = summary(beside)
            print(
                f"queues={{{served!r}}} beside {big:,} big-queue jobs: "
                f"median {med_b:.0f} us, p99 {p99_b:.0f} us"
            )
            for column in (True, False) if served == DEFAULT_QUEUE else (True,):
                (med_a, p99_a) = summary((await run(0, served, folder, column))[0])
                print(
                    f"    beside none (queue column: {column}): median {med_a:.0f} us, "
                    f"p99 {p99_a:.0f} us; beside {big:,} over it {med_b / med_a:.2f}x"
                )
            for plan in plans:
                print("  ", plan)
    print(f"sqlite {sqlite3.sqlite_version}")


if __name__ == "__main__":
    asyncio.run(main())
