"""W23's hand-written equivalents: the same fan-out/fan-in without jobsched.

Every store holds jobs (id, status, pickled payload, ``waiting``: the
countdown of unfinished upstreams, pickled result) and edges (upstream,
downstream). The enqueue is one transaction inserting every job and edge;
a claim takes up to :data:`~benchmarks._workflow.WORKERS` ready jobs
(``waiting = 0``; ``FOR UPDATE SKIP LOCKED`` on PostgreSQL, ``UPDATE ...
RETURNING`` in a ``BEGIN IMMEDIATE`` on SQLite), runs them and writes their
results and the countdown of their downstreams in one transaction; the
fan-in reads its 10,000 inputs in one query. Durability is each store's
(WAL and ``synchronous = FULL`` on SQLite, the server's default on
PostgreSQL). ``memory`` is the same in plain asyncio: dicts, a countdown
and a queue.
"""

from __future__ import annotations

import asyncio
import pickle
import sqlite3
import time
from typing import Any

from benchmarks._workflow import MARKS, WARM_UP, WORKERS, expected, figures, part, total

# ── memory ──────────────────────────────────────────────────────────────────


async def _memory_one(size: int) -> dict[str, float]:
    MARKS.clear()
    t0 = time.perf_counter()
    fanin = size
    jobs: dict[int, tuple[Any, tuple[Any, ...]]] = {i: (part, (i,)) for i in range(size)}
    jobs[fanin] = (total, ())
    downstream = dict.fromkeys(range(size), fanin)
    waiting = {fanin: size}
    results: dict[int, Any] = {}
    ready: asyncio.Queue[int] = asyncio.Queue()
    for i in range(size):
        ready.put_nowait(i)
    enqueued = time.perf_counter()

    async def worker() -> None:
        while True:
            job_id = await ready.get()
            func, args = jobs[job_id]
            if job_id == fanin:
                args = ([results[i] for i in range(size)],)
            results[job_id] = await func(*args)
            after = downstream.get(job_id)
            if after is not None:
                waiting[after] -= 1
                if not waiting[after]:
                    ready.put_nowait(after)
            ready.task_done()

    tasks = [asyncio.create_task(worker()) for _ in range(WORKERS)]
    await ready.join()
    elapsed = time.perf_counter() - t0
    for task in tasks:
        task.cancel()
    return _checked(results[fanin], size, enqueued - t0, elapsed)


async def memory(size: int) -> dict[str, float]:
    """W23 in plain asyncio, after a warm-up."""
    await _memory_one(WARM_UP)
    return await _memory_one(size)


def _checked(got: int, size: int, enqueue: float, elapsed: float) -> dict[str, float]:
    if got != expected(size):
        raise RuntimeError(f"the raw fan-in summed {got}, not {expected(size)}")
    return figures(size, enqueue, elapsed)


def _rows(base: int, size: int) -> tuple[list[tuple[int, bytes, int]], list[tuple[int, int]]]:
    """The jobs (id, payload, waiting) and edges of one workflow, ids from ``base``."""
    fanin = base + size
    jobs = [(base + i, pickle.dumps((part, (i,))), 0) for i in range(size)]
    jobs.append((fanin, pickle.dumps((total, ())), size))
    return jobs, [(base + i, fanin) for i in range(size)]


# ── SQLite ──────────────────────────────────────────────────────────────────

_SQLITE_DDL = (
    "CREATE TABLE jobs (id INTEGER PRIMARY KEY, status TEXT NOT NULL, payload BLOB NOT NULL, "
    "waiting INTEGER NOT NULL, result BLOB)",
    "CREATE INDEX jobs_ready ON jobs (id) WHERE status = 'pending' AND waiting = 0",
    "CREATE TABLE edges (upstream INTEGER NOT NULL, downstream INTEGER NOT NULL, "
    "PRIMARY KEY (upstream, downstream))",
    "CREATE INDEX edges_in ON edges (downstream)",
)
_SQLITE_CLAIM = (
    "UPDATE jobs SET status = 'running' WHERE id IN (SELECT id FROM jobs "
    "WHERE status = 'pending' AND waiting = 0 ORDER BY id LIMIT ?) RETURNING id, payload"
)
_INPUTS = (
    "SELECT j.result FROM edges e JOIN jobs j ON j.id = e.upstream "
    "WHERE e.downstream = {p} ORDER BY e.upstream"
)


async def _run_batch(rows: list[tuple[int, bytes]], inputs: Any) -> list[tuple[bytes, int]]:
    done = []
    for job_id, payload in rows:
        func, args = pickle.loads(payload)
        if func is total:
            args = ([pickle.loads(r) for (r,) in inputs(job_id)],)
        done.append((pickle.dumps(await func(*args)), job_id))
    return done


async def _sqlite_one(conn: sqlite3.Connection, base: int, size: int) -> dict[str, float]:
    MARKS.clear()
    t0 = time.perf_counter()
    jobs, edges = _rows(base, size)
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany("INSERT INTO jobs VALUES (?, 'pending', ?, ?, NULL)", jobs)
    conn.executemany("INSERT INTO edges VALUES (?, ?)", edges)
    conn.execute("COMMIT")
    enqueued = time.perf_counter()
    fanin = base + size

    def inputs(job_id: int) -> list[tuple[bytes]]:
        return conn.execute(_INPUTS.format(p="?"), (job_id,)).fetchall()

    while True:
        conn.execute("BEGIN IMMEDIATE")
        rows = conn.execute(_SQLITE_CLAIM, (WORKERS,)).fetchall()
        conn.execute("COMMIT")
        if not rows:
            break
        done = await _run_batch(rows, inputs)
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany("UPDATE jobs SET status = 'completed', result = ? WHERE id = ?", done)
        conn.executemany(
            "UPDATE jobs SET waiting = waiting - 1 WHERE id IN "
            "(SELECT downstream FROM edges WHERE upstream = ?)",
            [(job_id,) for _, job_id in done],
        )
        conn.execute("COMMIT")
    elapsed = time.perf_counter() - t0
    (result,) = conn.execute("SELECT result FROM jobs WHERE id = ?", (fanin,)).fetchone()
    return _checked(pickle.loads(result), size, enqueued - t0, elapsed)


async def sqlite(path: str, size: int) -> dict[str, float]:
    """W23 in hand-written sqlite3 on a fresh file at ``path``, after a warm-up."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = FULL")
        for statement in _SQLITE_DDL:
            conn.execute(statement)
        await _sqlite_one(conn, 1, WARM_UP)
        return await _sqlite_one(conn, WARM_UP + 2, size)
    finally:
        conn.close()


# ── PostgreSQL ──────────────────────────────────────────────────────────────

_PG_DDL = (
    "CREATE TABLE jobs (id BIGINT PRIMARY KEY, status TEXT NOT NULL, payload BYTEA NOT NULL, "
    "waiting INTEGER NOT NULL, result BYTEA)",
    "CREATE INDEX jobs_ready ON jobs (id) WHERE status = 'pending' AND waiting = 0",
    "CREATE TABLE edges (upstream BIGINT NOT NULL, downstream BIGINT NOT NULL, "
    "PRIMARY KEY (upstream, downstream))",
    "CREATE INDEX edges_in ON edges (downstream)",
)
_PG_CLAIM = (
    "WITH ready AS (SELECT id FROM jobs WHERE status = 'pending' AND waiting = 0 ORDER BY id "
    "LIMIT %s FOR UPDATE SKIP LOCKED) "
    "UPDATE jobs SET status = 'running' FROM ready WHERE jobs.id = ready.id "
    "RETURNING jobs.id, jobs.payload"
)
# One statement a batch: the results, then each downstream's countdown by
# the number of its upstreams in the batch.
_PG_DONE = (
    "WITH done AS (UPDATE jobs SET status = 'completed', result = d.result "
    "FROM unnest(%s::bigint[], %s::bytea[]) AS d(id, result) WHERE jobs.id = d.id "
    "RETURNING jobs.id), "
    "down AS (SELECT e.downstream, count(*) AS n FROM edges e JOIN done ON e.upstream = done.id "
    "GROUP BY e.downstream) "
    "UPDATE jobs SET waiting = jobs.waiting - down.n FROM down WHERE jobs.id = down.downstream"
)


async def _postgres_one(conn: Any, base: int, size: int) -> dict[str, float]:
    MARKS.clear()
    t0 = time.perf_counter()
    jobs, edges = _rows(base, size)
    with conn.transaction(), conn.cursor() as cursor:
        cursor.executemany("INSERT INTO jobs VALUES (%s, 'pending', %s, %s, NULL)", jobs)
        cursor.executemany("INSERT INTO edges VALUES (%s, %s)", edges)
    enqueued = time.perf_counter()
    fanin = base + size

    def inputs(job_id: int) -> list[tuple[bytes]]:
        return conn.execute(_INPUTS.format(p="%s"), (job_id,)).fetchall()  # type: ignore[no-any-return]

    while rows := conn.execute(_PG_CLAIM, (WORKERS,)).fetchall():
        done = await _run_batch(rows, inputs)
        conn.execute(_PG_DONE, ([job_id for _, job_id in done], [r for r, _ in done]))
    elapsed = time.perf_counter() - t0
    (result,) = conn.execute("SELECT result FROM jobs WHERE id = %s", (fanin,)).fetchone()
    return _checked(pickle.loads(result), size, enqueued - t0, elapsed)


async def postgres(url: str, size: int) -> dict[str, float]:
    """W23 in hand-written psycopg on the fresh database at ``url``, after a warm-up."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        for statement in _PG_DDL:
            conn.execute(statement)
        await _postgres_one(conn, 1, WARM_UP)
        return await _postgres_one(conn, WARM_UP + 2, size)
