"""Claim latency of a small queue beside a big one (the figures for W18).

A store holds 100 ready jobs of a queue a worker serves, beside either
nothing or 1,000,000 ready jobs of another queue with better keys; the
worker claims them one at a time. Run for the named side (``queues={"small"}``
beside a big named queue) and the default side (``queues={"default"}``
beside a big named queue). Prints the median and p99 claim latency and the
plan (EXPLAIN ANALYZE, rolled back) of the claim at 1M.

    uv run python packages/store-postgres/scripts/queues_w18.py [--big 1000000]
"""

from __future__ import annotations

import argparse
import statistics
import time

import anyio
import psycopg

from jobsched.store import DEFAULT_QUEUE, NewJob
from jobsched_postgres import PostgresStore
from jobsched_postgres import _claim as pg_claim

ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
DB = "jobsched_w18"
NOW = 1_700_000_000.0
ALL = {"async": 99}


def job(job_id: int, key: float, queue: str) -> NewJob:
    return NewJob(
        job_id, name="n", executor="async", run_at=NOW, submitted_at=NOW,
        payload=b"P" + job_id.to_bytes(8, "big"), key=(key,), queue=queue,
    )  # fmt: skip


def fresh() -> str:
    with psycopg.connect(ADMIN, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {DB}")
        conn.execute(f"CREATE DATABASE {DB}")
    return ADMIN.rpartition("/")[0] + "/" + DB


async def scenario(big: int, small_queue: str, analyze: bool) -> tuple[list[float], str]:
    url = fresh()
    store = PostgresStore(url, secret="w18")
    await store.open()
    try:
        await store.add([job(1, 0.0, "warm")], NOW)  # the column and indexes, first
        next_id, batch = 10, 50_000
        for start in range(0, big, batch):
            n = min(batch, big - start)
            await store.add([job(next_id + i, float(i), "big") for i in range(n)], NOW)
            next_id += n
        await store.add([job(next_id + i, 10.0**7 + i, small_queue) for i in range(100)], NOW)
        if analyze:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute("ANALYZE jobsched_jobs")
        plan = explain(url, small_queue)
        latencies = []
        for _ in range(100):
            t0 = time.perf_counter()
            got = await store.claim("w18", 1, ALL, NOW, 30, queues={small_queue})
            latencies.append(time.perf_counter() - t0)
            assert len(got) == 1, got
        return latencies, plan
    finally:
        await store.close()


def explain(url: str, queue: str) -> str:
    stored = None if queue == DEFAULT_QUEUE else queue
    sql = pg_claim.QUEUES_CLAIM[stored is not None, stored is None]
    params = {
        "names": ["async"], "rooms": [99], "limit": 1, "owner": "x", "lease": 30.0,
        "now": NOW, "keys": [], "queues": [] if stored is None else [stored],
    }  # fmt: skip
    with psycopg.connect(url) as conn:
        conn.execute("SET max_parallel_workers_per_gather = 0")
        rows = conn.execute("EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) " + sql, params).fetchall()
        conn.rollback()
    return "\n".join(r[0] for r in rows)


def ms(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--big", type=int, default=1_000_000)
    parser.add_argument("--no-analyze", action="store_true")
    args = parser.parse_args()
    for queue in ("small", DEFAULT_QUEUE):
        for big in (0, args.big):
            lat, plan = await scenario(big, queue, not args.no_analyze)
            print(
                f"queues={{{queue!r}}} beside {big:>9,} ready 'big' jobs: claim median "
                f"{1000 * statistics.median(lat):.2f} ms, p99 {ms(lat, 0.99):.2f} ms"
            )
            if big:
                print(plan)


if __name__ == "__main__":
    anyio.run(main)
