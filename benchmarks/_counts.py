"""W15: the operator's reads on both stores holding ``size`` finished jobs.

Run as ``python -m benchmarks._counts SYSTEM W15 SIZE`` (the suite's child
protocol, see :mod:`benchmarks._child`). Each run fills a SQLite file and a
PostgreSQL database (its own, dropped after; the server of
:mod:`benchmarks._postgres`) with the same work: ``size`` finished jobs (one
attempt each, over the last day, 2% failed or timed out), then the live ones
(:data:`RUNNING` running, :data:`PENDING` queued, a few delayed, one blocked,
two schedules). ``raw`` is the same at :data:`BASELINE` finished jobs, so
the ratio is what a history 100 times longer costs: the bar is a growth
under 1.5x and a p99 under 100 ms at 1M.

It times ``counts()`` (what ``jobsched stats`` and the dashboard's every
refresh read) :data:`COUNTS` times, and the dashboard's overview ``GET /``,
its live part ``GET /live`` and its Prometheus scrape ``GET /metrics`` (the
store's figures, which a worker's ``--metrics-port`` reads too; issue 38's
bar: p99 under 50 ms at 1M) :data:`REQUESTS` times each, through
Starlette's TestClient (the app and store in-process, no socket), after two
warm-ups; the figures are p99s (and p50s of counts() and the overview,
steadier on a busy machine).

The stores are filled by bulk statements, seconds where a million jobs
through a scheduler would take far longer: on PostgreSQL one ``INSERT ...
SELECT generate_series`` per kind of row (its schema's triggers count them
as the store's statements would be), on SQLite ``executemany`` in one
transaction, with ``completed_counts`` and ``ended_counts`` written as the
outcomes would have.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks._work import percentile
from benchmarks._workloads import Metric, Workload

W15 = Workload(
    "W15",
    "counts(), the dashboard's overview and live part and its Prometheus scrape /metrics "
    "(p99) on SQLite and PostgreSQL stores holding n finished jobs; raw: the same at 10,000 "
    "finished jobs, so the ratio is the growth",
    (1_000_000,),
    (100_000,),
    (
        Metric("sqlite_counts_p99_ms", "SQLite counts() p99", "ms", False),
        Metric("sqlite_counts_p50_ms", "SQLite counts() p50", "ms", False),
        Metric("sqlite_index_p99_ms", "SQLite GET / p99", "ms", False),
        Metric("sqlite_index_p50_ms", "SQLite GET / p50", "ms", False),
        Metric("sqlite_live_p99_ms", "SQLite GET /live p99", "ms", False),
        Metric("sqlite_metrics_p99_ms", "SQLite GET /metrics p99", "ms", False),
        Metric("pg_counts_p99_ms", "PostgreSQL counts() p99", "ms", False),
        Metric("pg_counts_p50_ms", "PostgreSQL counts() p50", "ms", False),
        Metric("pg_index_p99_ms", "PostgreSQL GET / p99", "ms", False),
        Metric("pg_index_p50_ms", "PostgreSQL GET / p50", "ms", False),
        Metric("pg_live_p99_ms", "PostgreSQL GET /live p99", "ms", False),
        Metric("pg_metrics_p99_ms", "PostgreSQL GET /metrics p99", "ms", False),
    ),
)
BASELINE = 10_000
RUNNING = 16
PENDING = 300
COUNTS = 300
REQUESTS = 100
#: Seconds of history the finished jobs are spread over (a day), and the
#: part of it the overview shows (its default five minutes), where jobs
#: finished at RECENT_RATE a second (a million a day).
HISTORY = 86_400.0
RECENT = 300.0
RECENT_RATE = 11.6
_CHUNK = 50_000
_SECRET = "benchmark-secret"


# ── PostgreSQL ──────────────────────────────────────────────────────────────

# Finished job i (1..n) ended in id order over the last HISTORY seconds,
# the last RECENT of them at RECENT_RATE (whatever n: the page's window
# holds the same attempts at every size). Every 50th failed, every 50th (offset 25)
# timed out; their attempts have rows (a completed one is its job's row).
_PG_FINISHED = """
INSERT INTO jobsched_jobs (id, name, executor, status, queue, k0, k1, k2, run_at,
    submitted_at, started_at, finished_at, attempts, owner, ran_by, tenant, payload, last_error)
SELECT i, 'task ' || (i %% 97), 'async',
    CASE WHEN i %% 50 = 0 THEN 'failed' WHEN i %% 50 = 25 THEN 'timed_out' ELSE 'completed' END,
    NULL, -1, i, 0, t - 1, t - 1.5, t - 1, t, 1, NULL,
    CASE WHEN i %% 2 = 0 THEN 'web-1:4120:a1b2c3d4' ELSE 'web-2:3877:e5f6a7b8' END,
    'tenant-' || (i %% 5), %(payload)s,
    CASE WHEN i %% 50 = 0 THEN 'ConnectionError: upstream refused' WHEN i %% 50 = 25
        THEN 'timed out after 30 s' END
FROM (SELECT i, CASE WHEN i > %(n)s - %(r)s
        THEN %(now)s::float8 - %(recent)s::float8 * (%(n)s - i) / %(r)s
        ELSE %(now)s::float8 - %(recent)s - (%(history)s::float8 - %(recent)s)
            * (%(n)s - %(r)s - i) / (%(n)s - %(r)s) END AS t
      FROM generate_series(1, %(n)s::bigint) i) s
"""
_PG_ATTEMPTS = """
INSERT INTO jobsched_attempts (job_id, attempt, owner, started_at, finished_at, status, error)
SELECT id, 1, ran_by, started_at, finished_at, status, last_error FROM jobsched_jobs
WHERE status IN ('failed', 'timed_out')
"""


def _pg_live(n: int, now: float) -> list[tuple[str, dict[str, Any]]]:
    first = n + 1
    pending = first + RUNNING
    blocked = pending + PENDING
    return [
        (
            "INSERT INTO jobsched_jobs (id, name, executor, status, queue, k0, k1, k2, run_at, "
            "submitted_at, started_at, attempts, owner, ran_by, lease_until, payload) "
            "SELECT i, 'render ' || i, 'thread', 'running', NULL, -1, i, 0, %(now)s, %(now)s, "
            "%(now)s - (i %% 20), 1, 'web-1:4120:a1b2c3d4', 'web-1:4120:a1b2c3d4', "
            "extract(epoch from now()) + 3600, %(payload)s "
            "FROM generate_series(%(a)s::bigint, %(b)s::bigint) i",
            {"a": first, "b": pending - 1},
        ),
        (
            "INSERT INTO jobsched_jobs (id, name, executor, status, queue, k0, k1, k2, run_at, "
            "submitted_at, attempts, tenant, payload) SELECT i, 'email ' || i, 'async', "
            "'pending', CASE WHEN i %% 50 = 0 THEN 1 ELSE 0 END, -1, i, 0, "
            "CASE WHEN i %% 50 = 0 THEN %(now)s + 600 ELSE %(now)s END, %(now)s, 0, "
            "'tenant-' || (i %% 5), %(payload)s "
            "FROM generate_series(%(a)s::bigint, %(b)s::bigint) i",
            {"a": pending, "b": blocked - 1},
        ),
        (
            "INSERT INTO jobsched_jobs (id, name, executor, status, queue, k0, k1, k2, run_at, "
            "submitted_at, attempts, unmet, payload) VALUES (%(a)s, 'publish', 'async', "
            "'pending', 2, -1, %(a)s, 0, %(now)s, %(now)s, 0, 1, %(payload)s)",
            {"a": blocked},
        ),
        (
            "INSERT INTO jobsched_deps (upstream, downstream) VALUES (%(a)s, %(b)s)",
            {"a": first, "b": blocked},
        ),
        (
            "UPDATE jobsched_meta SET value = %(a)s WHERE key = 'next_id'",
            {"a": blocked + 1},
        ),
        (
            "INSERT INTO jobsched_schedules (id, payload, next_fire) VALUES "
            "('nightly-report', %(payload)s, %(now)s + 3600), "
            "('cleanup', %(payload)s, %(now)s + 60)",
            {},
        ),
    ]


def fill_postgres(url: str, finished: int) -> None:
    """Create the schema at ``url`` and insert ``finished`` finished jobs, then the live ones."""
    import psycopg

    from jobsched_postgres import PostgresStore

    store = PostgresStore(url, secret=_SECRET)
    asyncio.run(store.open())  # creates the schema
    asyncio.run(store.close())
    payload = _payload()
    now = time.time()
    with psycopg.connect(url) as conn:
        params = {"payload": payload, "now": now, "history": HISTORY, "n": finished,
                  "recent": RECENT, "r": _recent(finished)}  # fmt: skip
        conn.execute(_PG_FINISHED, params)
        conn.execute(_PG_ATTEMPTS)
        for statement, extra in _pg_live(finished, now):
            conn.execute(statement, {**params, **extra})
        conn.commit()
    # As autovacuum would have by then: statistics and the visibility map;
    # and the fill's WAL checkpointed, not written back during the timing.
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
        conn.execute("CHECKPOINT")


# ── SQLite ──────────────────────────────────────────────────────────────────

_SQLITE_JOBS = (
    "INSERT INTO jobs (id, name, executor, status, queue, k0, k1, k2, run_at, submitted_at, "
    "started_at, finished_at, attempts, owner, ran_by, lease_until, unmet, tenant, payload, "
    "last_error) VALUES (?, ?, ?, ?, ?, -1, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_SQLITE_ATTEMPTS = (
    "INSERT INTO attempts (job_id, attempt, owner, started_at, finished_at, status, error) "
    "VALUES (?, 1, ?, ?, ?, ?, ?)"
)
_MEMBERS = ("web-1:4120:a1b2c3d4", "web-2:3877:e5f6a7b8")


def _recent(finished: int) -> int:
    """How many of ``finished`` jobs ended in the last :data:`RECENT` seconds."""
    return min(finished - 1, round(RECENT * RECENT_RATE))


def _finished_row(i: int, n: int, now: float, payload: bytes) -> tuple[Any, ...]:
    r = _recent(n)
    if i > n - r:
        t = now - RECENT * (n - i) / r
    else:
        t = now - RECENT - (HISTORY - RECENT) * (n - r - i) / (n - r)
    status, error = "completed", None
    if i % 50 == 0:
        status, error = "failed", "ConnectionError: upstream refused"
    elif i % 50 == 25:
        status, error = "timed_out", "timed out after 30 s"
    return (i, f"task {i % 97}", "async", status, None, i, t - 1, t - 1.5, t - 1, t, 1,
            None, _MEMBERS[i % 2], None, 0, f"tenant-{i % 5}", payload, error)  # fmt: skip


def fill_sqlite(path: Path, finished: int) -> None:
    """Create the store at ``path`` and insert ``finished`` finished jobs, then the live ones."""
    from jobsched_sqlite import SQLiteStore, _sql

    store = SQLiteStore(f"sqlite:///{path}")
    asyncio.run(store.open())  # creates the schema
    asyncio.run(store.close())
    payload = _payload()
    now = time.time()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("BEGIN")
    completed = 0
    ended: dict[tuple[str, str], int] = {}
    for start in range(1, finished + 1, _CHUNK):
        rows = [
            _finished_row(i, finished, now, payload)
            for i in range(start, min(finished, start + _CHUNK - 1) + 1)
        ]
        conn.executemany(_SQLITE_JOBS, rows)
        conn.executemany(
            _SQLITE_ATTEMPTS,
            [(r[0], r[12], r[8], r[9], r[3], r[17]) for r in rows if r[3] != "completed"],
        )
        completed += sum(r[3] == "completed" for r in rows)
        for r in rows:
            if r[3] != "completed":
                ended[r[3], r[2]] = ended.get((r[3], r[2]), 0) + 1
    # As the outcomes would have.
    _sql.count_completed(conn, {"async": completed})
    _sql.count_ended(conn, ended)
    first = finished + 1
    pending = first + RUNNING
    blocked = pending + PENDING
    conn.executemany(
        _SQLITE_JOBS,
        [(i, f"render {i}", "thread", "running", None, i, now, now, now - i % 20, None, 1,
          _MEMBERS[0], _MEMBERS[0], now + 3600, 0, None, payload, None)
         for i in range(first, pending)]
        + [(i, f"email {i}", "async", "pending", 1 if i % 50 == 0 else 0, i,
            now + 600 if i % 50 == 0 else now, now, None, None, 0, None, None, None, 0,
            f"tenant-{i % 5}", payload, None) for i in range(pending, blocked)]
        + [(blocked, "publish", "async", "pending", 2, blocked, now, now, None, None, 0, None,
            None, None, 1, None, payload, None)],
    )  # fmt: skip
    conn.execute("INSERT INTO deps (upstream, downstream) VALUES (?, ?)", (first, blocked))
    conn.execute("UPDATE jobsched_meta SET value = ? WHERE key = 'next_id'", (blocked + 1,))
    conn.executemany(
        "INSERT INTO schedules (id, payload, next_fire) VALUES (?, ?, ?)",
        [("nightly-report", payload, now + 3600), ("cleanup", payload, now + 60)],
    )
    conn.execute("COMMIT")
    conn.execute("ANALYZE")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


# ── measuring ───────────────────────────────────────────────────────────────


def _payload() -> bytes:
    import pickle

    return pickle.dumps(("benchmark", ()))


def _timed(fn: Callable[[], object], times: int) -> list[float]:
    """Seconds of ``times`` calls of ``fn``, after two not counted."""
    samples = []
    for i in range(times + 2):
        t0 = time.perf_counter()
        fn()
        if i >= 2:
            samples.append(time.perf_counter() - t0)
    return samples


def measure(url: str, finished: int) -> dict[str, float]:
    """p99s of counts(), ``GET /`` and ``GET /live`` (and p50s of the first two) in ms,
    the counts checked once."""
    from starlette.testclient import TestClient

    import jobsched as js
    from jobsched_dashboard import create_app

    async def counts_timed() -> list[float]:
        store = js.open_store(url, secret=_SECRET)
        await store.open()
        try:
            got = await store.counts()
            expected = finished + RUNNING + PENDING + 1
            if sum(got.values()) != expected:
                raise RuntimeError(f"counts() says {sum(got.values())} jobs, not {expected}")
            samples = []
            for i in range(COUNTS + 2):
                t0 = time.perf_counter()
                await store.counts()
                if i >= 2:
                    samples.append(time.perf_counter() - t0)
            return samples
        finally:
            await store.close()

    samples = asyncio.run(counts_timed())
    out = {"counts_p99": percentile(samples, 99) * 1e3, "counts_p50": percentile(samples, 50) * 1e3}
    with TestClient(create_app(url, token="bench")) as client:
        _check_scrape(client.get("/metrics").text, finished)
        for key, page in (("index", "/"), ("live", "/live"), ("metrics", "/metrics")):

            def get(page: str = page) -> None:
                response = client.get(page)
                if response.status_code != 200:
                    raise RuntimeError(
                        f"{page}: HTTP {response.status_code}: {response.text[:300]}"
                    )

            samples = _timed(get, REQUESTS)
            out[f"{key}_p99"] = percentile(samples, 99) * 1e3
            if key == "index":
                out["index_p50"] = percentile(samples, 50) * 1e3
    return out


def _check_scrape(text: str, finished: int) -> None:
    """The scrape's numbers, parsed, against what the fill wrote."""
    from prometheus_client.parser import text_string_to_metric_families

    values: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            values[sample.name] = values.get(sample.name, 0.0) + sample.value
    expected = {
        "jobsched_jobs_stored": finished + RUNNING + PENDING + 1,
        "jobsched_jobs": RUNNING + PENDING + 1,
    }
    got = {name: values.get(name) for name in expected}
    if got != expected:
        raise RuntimeError(f"/metrics says {got}, not {expected}")


def run(system: str, size: int) -> dict[str, float]:
    """One measurement of W15 (``raw``: at :data:`BASELINE` finished jobs)."""
    from benchmarks._postgres import database

    finished = BASELINE if system == "raw" else size
    os.environ.setdefault("JOBSCHED_SECRET", _SECRET)
    result: dict[str, float] = {}
    folder = Path(tempfile.mkdtemp(prefix="jobsched-w15-"))
    try:
        path = folder / "store.db"
        fill_sqlite(path, finished)
        for key, value in measure(f"sqlite:///{path}", finished).items():
            result[f"sqlite_{key}_ms"] = value
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    with database() as url:
        fill_postgres(url, finished)
        for key, value in measure(url, finished).items():
            result[f"pg_{key}_ms"] = value
    return result


if __name__ == "__main__":
    system, _, size = sys.argv[1:4]
    print(json.dumps(run(system, int(size))))
