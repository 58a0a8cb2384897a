"""W14: the dashboard's pages on a SQLite store holding ``size`` finished jobs.

Run as ``python -m benchmarks._dashboard SYSTEM W14 SIZE`` (the suite's child
protocol, see :mod:`benchmarks._child`). Both systems serve the same live
work (:data:`RUNNING` running jobs on two members, :data:`PENDING` queued
ones, a few delayed and blocked, two schedules); ``jobsched`` has ``size``
finished jobs behind it as well (one attempt each, finished over the last
day, 2% failed, timed out or cancelled), ``raw`` has none. So the ratio is
what a long history costs each page; the issue's bar is the absolute figure:
under 300 ms per page at 1M.

The store is filled with direct inserts into the SQLite store's tables (the
schema of ``jobsched_sqlite._schema``, created by opening the store; its
triggers keep the counts), a minute or two where a million jobs through a
scheduler would take far longer. The last five minutes of the history are
inserted last, timed from the clock at that point, so the page's window holds
the attempts a store finishing 11.6 jobs/s would have, however long the fill.
Each page is then requested through Starlette's
TestClient (the app and the store in-process, no socket): two warm-ups, then
the median of :data:`REQUESTS` requests.
"""

from __future__ import annotations

import asyncio
import json
import pickle
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchmarks._workloads import Metric, Workload

W14 = Workload(
    "W14",
    "dashboard pages (overview, its live part, a failed job's page) on a SQLite store holding "
    "n finished jobs; raw is the same live work without the history",
    (1_000_000,),
    (100_000,),
    (
        Metric("index_ms", "overview", "ms", False),
        Metric("live_ms", "live part", "ms", False),
        Metric("job_ms", "job page", "ms", False),
        # CPU time of the process per overview request (app, store thread and
        # client): what the page costs a machine, whatever else runs on it.
        Metric("index_cpu_ms", "overview CPU", "ms", False),
    ),
)
RUNNING = 16
PENDING = 300
REQUESTS = 15
#: Seconds of history the finished jobs are spread over (a day), and the part
#: of it the page shows (its default five minutes).
HISTORY = 86_400.0
RECENT = 300.0
_CHUNK = 50_000
_JOBS_SQL = (
    "INSERT INTO jobs (id, name, executor, status, queue, k0, k1, k2, run_at, submitted_at, "
    "started_at, finished_at, attempts, owner, lease_until, tenant, payload, last_error) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_ATTEMPTS_SQL = (
    "INSERT INTO attempts (job_id, attempt, owner, started_at, finished_at, status, error) "
    "VALUES (?, ?, ?, ?, ?, ?, ?)"
)
_OUTCOMES = [("completed", None)] * 98 + [
    ("failed", "ConnectionError: upstream refused (attempt 3)"),
    ("timed_out", "timed out after 30 s"),
]


def fill(path: Path, finished: int, seed: int = 14) -> dict[str, int]:
    """Create the store at ``path`` and insert ``finished`` finished jobs, then the live ones.

    The history older than the page's window goes in first; the last
    :data:`RECENT` seconds of it (at the same rate) and the live jobs are
    timed from the clock read after it, so a slow fill leaves no gap.

    :returns: ids of sample jobs for the job-page request (``failed``, ``running``).
    """
    from jobsched_sqlite import SQLiteStore

    store = SQLiteStore(f"sqlite:///{path}")
    asyncio.run(store.open())  # creates the schema, whatever its version
    asyncio.run(store.close())
    rng = random.Random(seed)
    payload = pickle.dumps(("benchmark", ()))
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("BEGIN")
    members = ("web-1:4120:a1b2c3d4", "web-2:3877:e5f6a7b8")
    ids: dict[str, int] = {}

    def add_finished(first: int, count: int, t_from: float, t_to: float) -> None:
        for start in range(first, first + count, _CHUNK):
            n = min(_CHUNK, first + count - start)
            jobs, attempts = [], []
            for i in range(start, start + n):
                end = t_from + (t_to - t_from) * (i - first) / max(1, count)
                began = end - rng.uniform(0.01, 2.0)
                status, error = rng.choice(_OUTCOMES)
                owner = members[i % 2]
                jobs.append((i, f"task {i % 97}", "async", status, None, -1, i, began,
                             began - 0.5, began, end, 1, owner, None, f"tenant-{i % 5}",
                             payload, error))  # fmt: skip
                attempts.append((i, 1, owner, began, end, status, error))
                if status == "failed":
                    ids.setdefault("failed", i)
            conn.executemany(_JOBS_SQL, jobs)
            conn.executemany(_ATTEMPTS_SQL, attempts)

    recent = min(finished, round(finished * RECENT / HISTORY))
    started = time.time()
    add_finished(1, finished - recent, started - HISTORY, started - RECENT)
    now = time.time()
    add_finished(finished - recent + 1, recent, now - RECENT, now)
    live = finished + 1
    for n in range(RUNNING):
        job_id = live + n
        began = now - rng.uniform(0, 20)
        conn.execute(_JOBS_SQL, (job_id, f"render {n}", "thread", "running", None, -1, job_id,
                                 began, began, began, None, 1, members[n % 2], now + 30, None,
                                 payload, None))  # fmt: skip
        conn.execute(_ATTEMPTS_SQL, (job_id, 1, members[n % 2], began, None, "running", None))
    ids["running"] = live
    if "failed" not in ids:  # a store with no history: one failure to show
        ids["failed"] = live
        conn.execute(
            "UPDATE jobs SET status = 'failed', finished_at = ?, last_error = 'x' WHERE id = ?",
            (now, live),
        )
        conn.execute(
            "UPDATE attempts SET status = 'failed', finished_at = ? WHERE job_id = ?", (now, live)
        )
    live += RUNNING
    for n in range(PENDING):
        job_id = live + n
        delayed = n % 50 == 0
        conn.execute(_JOBS_SQL, (job_id, f"email {n}", "async", "pending", 1 if delayed else 0,
                                 -1, job_id, now + 600 if delayed else now, now, None, None, 0,
                                 None, None, f"tenant-{n % 5}", payload, None))  # fmt: skip
    blocked = live + PENDING
    conn.execute(_JOBS_SQL, (blocked, "publish", "async", "pending", 2, -1, blocked, now, now,
                             None, None, 0, None, None, None, payload, None))  # fmt: skip
    conn.execute("UPDATE jobs SET unmet = 1 WHERE id = ?", (blocked,))
    conn.execute("INSERT INTO deps (upstream, downstream) VALUES (?, ?)", (ids["running"], blocked))
    conn.execute("UPDATE jobsched_meta SET value = ? WHERE key = 'next_id'", (blocked + 1,))
    conn.executemany(
        "INSERT INTO schedules (id, payload, next_fire) VALUES (?, ?, ?)",
        [("nightly-report", payload, now + 3600), ("cleanup", payload, now + 60)],
    )
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return ids


def measure(path: Path, ids: dict[str, int]) -> dict[str, float]:
    """The median time of each page, in ms."""
    from starlette.testclient import TestClient

    from jobsched_dashboard import create_app

    pages = {"index_ms": "/", "live_ms": "/live", "job_ms": f"/jobs/{ids['failed']}"}
    out = {}
    with TestClient(create_app(f"sqlite:///{path}", token="bench")) as client:
        for metric, url in pages.items():
            times, cpu = [], []
            for i in range(REQUESTS + 2):
                t0, c0 = time.perf_counter(), time.process_time()
                response = client.get(url)
                elapsed, used = time.perf_counter() - t0, time.process_time() - c0
                if response.status_code != 200:
                    raise RuntimeError(f"{url}: HTTP {response.status_code}: {response.text[:300]}")
                if i >= 2:
                    times.append(elapsed)
                    cpu.append(used)
            out[metric] = statistics.median(times) * 1e3
            if metric == "index_ms":
                out["index_cpu_ms"] = statistics.median(cpu) * 1e3
    return out


def run(system: str, size: int) -> dict[str, float]:
    """One measurement of W14 on ``system`` (``raw``: no finished history)."""
    folder = Path(tempfile.mkdtemp(prefix="jobsched-w14-"))
    try:
        path = folder / "store.db"
        ids = fill(path, size if system == "jobsched" else 0)
        return measure(path, ids)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    system, _, size = sys.argv[1:4]
    print(json.dumps(run(system, int(size))))
