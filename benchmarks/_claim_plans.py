"""Where a backlog's time goes on PostgreSQL (issue 34): the store's statements, timed.

``python -m benchmarks._claim_plans READY [CHURN]`` makes a fresh database
(:func:`benchmarks._postgres.database`), puts READY ready jobs in it through
the store's own ``add``, then runs CHURN jobs through the store as a member
whose queue is READY behind (default 50,000): each round adds
:data:`BATCH` jobs at the back, claims the :data:`BATCH` best (the front),
writes their completions, and prunes every ~1,000 outcomes as a member does
(keeping 10,000 finished). The server's autovacuum is whatever it is (off on
this project's test server: the dead tuples between two autovacuum naps).

It prints the mean milliseconds of each store call over the churn's last
half, the tables' dead tuples, and ``EXPLAIN (ANALYZE, BUFFERS)`` of the
claim statement (``jobsched_postgres._claim.CLAIM``, rolled back) as a
member's claim runs it. ``JOBSCHED_BENCH_SETUP`` (statements separated by
``;``) runs after the store made its schema: the A/B of a schema change.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

import anyio

from benchmarks._postgres import database

BATCH = 64
_SECRET = "benchmark-secret"


def _new(job_id: int, key: float) -> Any:
    from jobsched.store import NewJob

    return NewJob(job_id, f"j{job_id}", "async", (0.0, key, 0.0), run_at=0.0,
                  submitted_at=0.0, payload=b"P")  # fmt: skip


async def churn(url: str, ready: int, jobs: int) -> dict[str, float]:
    """The store's calls, mean ms each over the churn's last half."""
    import jobsched as js
    from jobsched.store import Outcome

    store = js.open_store(url, secret=_SECRET)
    await store.open()
    setup = os.environ.get("JOBSCHED_BENCH_SETUP")
    if setup:  # an experiment on the schema (an index dropped, a storage parameter)
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            for statement in setup.split(";"):
                if statement.strip():
                    conn.execute(statement)
    times: dict[str, list[float]] = {"add": [], "claim": [], "record": [], "prune": []}
    try:
        next_id = store.reserve_ids(ready + jobs + BATCH)
        key = 0.0
        for start in range(0, ready, 10_000):
            rows = [_new(next_id + i, key + i) for i in range(min(10_000, ready - start))]
            next_id, key = next_id + len(rows), key + len(rows)
            await store.add(rows, time.time())
        outcomes = 0
        half = jobs // BATCH // 2

        async def call(name: str, coro: Any) -> Any:
            t0 = time.perf_counter()
            out = await coro
            if n >= half:
                times[name].append(time.perf_counter() - t0)
            return out

        for n in range(jobs // BATCH):  # noqa: B007 (call reads it)
            rows = [_new(next_id + i, key + i) for i in range(BATCH)]
            next_id, key = next_id + BATCH, key + BATCH
            await call("add", store.add(rows, time.time()))
            claims = await call("claim", store.claim("m", BATCH, {"async": BATCH},
                                                     time.time(), 60.0))  # fmt: skip
            done = [Outcome(c.id, c.attempt, js.JobStatus.COMPLETED, time.time())
                    for c in claims]  # fmt: skip
            await call("record", store.record("m", done))
            outcomes += len(done)
            if outcomes >= 1_000:
                outcomes = 0
                await call("prune", store.prune(10_000))
    finally:
        await store.close()
    return {k: 1e3 * sum(v) / len(v) for k, v in times.items() if v}


def explain(url: str, statement: str, params: dict[str, Any]) -> str:
    import psycopg

    with psycopg.connect(url) as conn:  # transactions rolled back: the plan only
        # Once unexplained first: a session's first run compiles the counts'
        # trigger function, which a member's pooled connection did long ago.
        conn.execute(statement, params)
        conn.rollback()
        rows = conn.execute("EXPLAIN (ANALYZE, BUFFERS) " + statement, params).fetchall()
        conn.rollback()
    return "\n".join(r[0] for r in rows)


def claim_params() -> dict[str, Any]:
    from jobsched.store._codec import key_id

    return {
        "names": ["async"], "rooms": [BATCH], "limit": BATCH, "owner": "m2", "lease": 60.0,
        "now": time.time(), "keys": [key_id(_SECRET.encode())], "starting": BATCH,
    }  # fmt: skip


def main(ready: int, jobs: int, held: bool = False) -> None:
    import contextlib

    from benchmarks._pgserver import held_xid

    os.environ.setdefault("JOBSCHED_SECRET", _SECRET)
    with database() as url, held_xid(url) if held else contextlib.nullcontext():
        means = anyio.run(churn, url, ready, jobs)
        _report(url, ready, jobs, means, held)


def _report(url: str, ready: int, jobs: int, means: dict[str, float], held: bool) -> None:
    import psycopg

    from jobsched_postgres._claim import CLAIM

    how = ", an xid held throughout" if held else ""
    print(f"ready {ready:,}, churned {jobs:,}{how}: mean ms per call, last half:")
    for name, ms in means.items():
        print(f"  {name}: {ms:.2f}")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_force_next_flush()")
        for row in conn.execute(
            "SELECT relname, n_live_tup, n_dead_tup, n_tup_upd, n_tup_hot_upd, n_tup_del, "
            "pg_relation_size(relid) / 8192 FROM pg_stat_user_tables ORDER BY relname"
        ):
            print("  table {} live {} dead {} upd {} hot {} del {} pages {}".format(*row))
        for row in conn.execute(
            "SELECT indexrelname, pg_relation_size(indexrelid) / 8192 "
            "FROM pg_stat_user_indexes WHERE relname = 'jobsched_jobs' ORDER BY 1"
        ):
            print("  index {} pages {}".format(*row))
    print(explain(url, CLAIM, claim_params()))


if __name__ == "__main__":
    main(
        int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 50_000, "held" in sys.argv[3:]
    )
