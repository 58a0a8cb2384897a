"""W7-W9, the SQLite store: jobsched on ``sqlite:///`` against a hand-written ``sqlite3`` loop.

Run as ``python -m benchmarks._stores SYSTEM WORKLOAD SIZE`` (the suite's
child protocol, see :mod:`benchmarks._child`).

``raw`` here is the physical limit of the same work: one connection, WAL,
``synchronous=FULL``, every write a ``BEGIN IMMEDIATE`` transaction (the
durability the store chose), a minimal table (id, status, priority, pickled
payload) with a partial index on the ready rows, and the same batches the
scheduler can use: every job inserted in one transaction, then claims of as
many jobs as there are workers (``UPDATE ... RETURNING``), each batch run and
its completions written in one transaction.

- W7: ``size`` no-op jobs submitted, run and completed; timed from the first
  insert (submit) until every completion is committed (``join``).
- W8: a store already holding ``size`` queued jobs; the cost per job of
  dispatching (claim, run, record) the first :data:`DISPATCHED` of them.
- W9: a store already holding ``size`` queued jobs; the time from opening it
  (``JobScheduler(store=url)``, ``start``) until the first job starts.

The queued stores of W8 and W9 are built once per size and system (jobsched's
through its public API: submits with a ``flush`` every 10,000 jobs, while a
blocker job keeps the only worker busy so nothing runs) and kept in
:data:`CACHE`; every run works on a fresh copy, so the build is never timed.
APScheduler 4 and huey run W7 only (:mod:`benchmarks._stores_others`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import pickle
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import jobsched as js
import jobsched_sqlite
from benchmarks._work import noop
from benchmarks._workloads import Metric, Workload

WORKLOADS = {
    w.wid: w
    for w in (
        Workload(
            "W7",
            "no-op async jobs through a SQLite file (submit, run, complete), 64 workers; "
            "raw: a hand-written sqlite3 loop, same durability and batches",
            (100_000,),
            (10_000,),
            (Metric("jobs_per_s", "throughput", "jobs/s", True),),
        ),
        Workload(
            "W8",
            "dispatch (claim, run, record) of 4,000 jobs from a SQLite file holding n "
            "queued, 64 workers",
            (10_000, 100_000, 1_000_000),
            (10_000, 100_000),
            (Metric("dispatch_us", "dispatch", "µs/job", False),),
        ),
        Workload(
            "W9",
            "restart: from opening a SQLite file holding n queued jobs to the first job started",
            (100_000,),
            (10_000,),
            (Metric("first_job_ms", "first job started", "ms", False),),
        ),
    )
}
#: The systems beyond the suite's three that run W7: huey
#: (benchmarks._stores_others), ``store``, jobsched's SQLite store driven
#: without a scheduler (benchmarks._stores_floor), and ``raw-indexed``, raw's
#: loop on a table with the store's indexes (also W7c8's).
EXTRA_SYSTEMS = ("huey", "store", "raw-indexed")

#: Workers for every store workload: a claim takes at most as many jobs as
#: are idle, and each transaction waits for an fsync (about 1 ms here), so
#: with W1's 4 workers the disk alone would cap a run at ~2,000 jobs/s.
WORKERS = 64
#: Jobs W8 dispatches from each store, whatever it holds (at most half of
#: it, for the smoke test's tiny stores).
DISPATCHED = 4_000


def _dispatched(size: int) -> int:
    return min(DISPATCHED, max(1, size // 2))


FILL_CHUNK = 10_000
#: Queued stores, one per system, size and version of the code (delete the
#: folder to rebuild them).
CACHE = Path(tempfile.gettempdir()) / "jobsched-bench-stores"


# ── raw: the hand-written loop ──────────────────────────────────────────────

_RAW_DDL = (
    "CREATE TABLE jobs (id INTEGER PRIMARY KEY, status TEXT NOT NULL, "
    "priority INTEGER NOT NULL, payload BLOB NOT NULL, finished_at REAL)",
    "CREATE INDEX jobs_ready ON jobs (priority, id) WHERE status = 'pending'",
)
#: ``raw-indexed``: the same loop on a table that also keeps the indexes the
#: store's claim and completion write through (the ready index is raw's own):
#: the status index of unfinished jobs (operators' lists, takeovers of lost
#: attempts) and the finished-time index (``history_limit``'s order). Its
#: statements are raw's; what the store does beyond them (fencing columns,
#: counts, the prune, wider rows, the scheduler) is jobsched's figure over this.
_INDEXED_DDL = (
    "CREATE INDEX jobs_status ON jobs (status, id) WHERE status != 'completed'",
    "CREATE INDEX jobs_finished ON jobs (finished_at) WHERE finished_at IS NOT NULL",
)
_RAW_CLAIM = (
    "UPDATE jobs SET status = 'running' WHERE id IN (SELECT id FROM jobs "
    "WHERE status = 'pending' ORDER BY priority, id LIMIT ?) RETURNING id, payload"
)
_RAW_DONE = "UPDATE jobs SET status = 'completed', finished_at = ? WHERE id = ?"


def _raw_connect(path: Path, *, indexed: bool = False) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'jobs'").fetchone():
        for statement in _RAW_DDL + (_INDEXED_DDL if indexed else ()):
            conn.execute(statement)
    return conn


def _raw_insert(conn: sqlite3.Connection, count: int) -> None:
    payload = pickle.dumps((noop, ()))
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany(
        "INSERT INTO jobs (status, priority, payload) VALUES ('pending', 0, ?)",
        ((payload,) for _ in range(count)),
    )
    conn.execute("COMMIT")


async def _raw_dispatch(conn: sqlite3.Connection, wanted: int | None) -> int:
    """Claim, run and complete batches of :data:`WORKERS` jobs; the number done."""
    done = 0
    while wanted is None or done < wanted:
        conn.execute("BEGIN IMMEDIATE")
        rows = conn.execute(_RAW_CLAIM, (WORKERS,)).fetchall()
        conn.execute("COMMIT")
        if not rows:
            break
        finished = []
        for job_id, payload in rows:
            func, args = pickle.loads(payload)
            await func(*args)
            finished.append((time.time(), job_id))
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany(_RAW_DONE, finished)
        conn.execute("COMMIT")
        done += len(rows)
    return done


async def raw_w7(path: Path, size: int, *, indexed: bool = False) -> dict[str, float]:
    conn = _raw_connect(path, indexed=indexed)
    t0 = time.perf_counter()
    _raw_insert(conn, size)
    done = await _raw_dispatch(conn, None)
    elapsed = time.perf_counter() - t0
    conn.close()
    assert done == size, (done, size)
    return {"jobs_per_s": size / elapsed}


async def raw_w8(path: Path, size: int) -> dict[str, float]:
    conn = _raw_connect(path)
    t0 = time.perf_counter()
    done = await _raw_dispatch(conn, _dispatched(size))
    elapsed = time.perf_counter() - t0
    conn.close()
    return {"dispatch_us": elapsed / done * 1e6}


async def raw_w9(path: Path, size: int) -> dict[str, float]:
    t0 = time.perf_counter()
    conn = _raw_connect(path)
    conn.execute("BEGIN IMMEDIATE")
    rows = conn.execute(_RAW_CLAIM, (WORKERS,)).fetchall()
    conn.execute("COMMIT")
    func, args = pickle.loads(rows[0][1])
    first = time.perf_counter()
    await func(*args)
    conn.close()
    return {"first_job_ms": (first - t0) * 1e3}


def _raw_fill(path: Path, size: int) -> None:
    conn = _raw_connect(path)
    _raw_insert(conn, size)
    conn.close()


# ── jobsched ────────────────────────────────────────────────────────────────


class Noop(js.AsyncJob):
    """The no-op job, stored by reference (this module is importable)."""

    async def run(self) -> None:
        return None


class _Blocker(js.AsyncJob):
    """Holds the only worker while a queued store is filled, so nothing runs."""

    async def run(self) -> None:
        await asyncio.Event().wait()


def _url(path: Path) -> str:
    return f"sqlite:///{path}"


async def jobsched_w7(path: Path, size: int, workers: int = WORKERS) -> dict[str, float]:
    scheduler = js.JobScheduler(num_workers=workers, store=_url(path))
    await scheduler.start()
    t0 = time.perf_counter()
    for _ in range(size):
        scheduler.submit(Noop("noop"))
    await scheduler.join()
    elapsed = time.perf_counter() - t0
    await scheduler.stop()
    return {"jobs_per_s": size / elapsed}


def _on(status: js.JobStatus, count: int) -> tuple[Callable[..., None], asyncio.Event]:
    """A listener that sets its event at the ``count``-th transition to ``status``."""
    seen = 0
    reached = asyncio.Event()

    def listener(job: js.Job, old: js.JobStatus, new: js.JobStatus) -> None:
        nonlocal seen
        if new is status:
            seen += 1
            if seen == count:
                reached.set()

    return listener, reached


async def jobsched_w8(path: Path, size: int) -> dict[str, float]:
    scheduler = js.JobScheduler(num_workers=WORKERS, store=_url(path))
    dispatched = _dispatched(size)
    ended: list[js.Job] = []
    done = asyncio.Event()

    def listener(job: js.Job, old: js.JobStatus, new: js.JobStatus) -> None:
        if new.is_terminal:
            ended.append(job)
            if len(ended) == dispatched:
                done.set()

    scheduler.add_listener(listener)
    await scheduler.start()
    t0 = time.perf_counter()
    await done.wait()
    await scheduler.flush()  # the last outcomes are committed too
    elapsed = time.perf_counter() - t0
    await scheduler.stop(cancel_running=True)
    failed = [job for job in ended if job.status is not js.JobStatus.COMPLETED]
    if failed:
        raise RuntimeError(f"{len(failed)} jobs did not complete: {failed[0].last_error}")
    return {"dispatch_us": elapsed / dispatched * 1e6}


async def jobsched_w9(path: Path, size: int) -> dict[str, float]:
    first: list[tuple[float, js.Job, js.JobStatus]] = []
    started = asyncio.Event()

    def listener(job: js.Job, old: js.JobStatus, new: js.JobStatus) -> None:
        if not first and (new is js.JobStatus.RUNNING or new.is_terminal):
            first.append((time.perf_counter(), job, new))
            started.set()

    t0 = time.perf_counter()
    scheduler = js.JobScheduler(num_workers=WORKERS, store=_url(path))
    scheduler.add_listener(listener)
    await scheduler.start()
    await started.wait()
    await scheduler.stop(cancel_running=True)
    at, job, status = first[0]
    if status is not js.JobStatus.RUNNING:
        raise RuntimeError(f"the first job ended {status.value} unstarted: {job.last_error}")
    return {"first_job_ms": (at - t0) * 1e3}


async def _jobsched_fill(path: Path, size: int) -> None:
    scheduler = js.JobScheduler(num_workers=1, store=_url(path))
    listener, blocking = _on(js.JobStatus.RUNNING, 1)
    scheduler.add_listener(listener)
    await scheduler.start()
    # No timeout: a fill outlasts the default 30 s, and a timed-out blocker's
    # worker would run queued jobs until its retry.
    blocker = scheduler.submit(_Blocker("blocker", timeout=None))
    await blocking.wait()
    for start in range(0, size, FILL_CHUNK):
        for _ in range(min(FILL_CHUNK, size - start)):
            scheduler.submit(Noop("noop"))
        await scheduler.flush()
    # Cancelled, not stopped past: a stop hands a durable job back, queued.
    scheduler.cancel(blocker)
    await scheduler.stop()


async def _warm_up() -> None:
    """anyio's backend and the async executor, loaded outside the timings."""
    async with js.JobScheduler(num_workers=1) as scheduler:
        scheduler.submit(Noop("warm-up"))
        await scheduler.join()


# ── files and the entry point ───────────────────────────────────────────────

_RUNS: dict[tuple[str, str], Callable[[Path, int], Any]] = {
    ("raw", "W7"): raw_w7,
    ("raw", "W8"): raw_w8,
    ("raw", "W9"): raw_w9,
    ("jobsched", "W7"): jobsched_w7,
    ("jobsched", "W8"): jobsched_w8,
    ("jobsched", "W9"): jobsched_w9,
}


def _code_stamp() -> str:
    """A hash of this module's, jobsched's and its SQLite store's code: a change rebuilds."""
    digest = hashlib.sha256(Path(__file__).read_bytes())
    for package in (js, jobsched_sqlite):
        for source in sorted(Path(package.__file__).parent.glob("*.py")):
            digest.update(source.read_bytes())
    return digest.hexdigest()[:12]


def _template(system: str, size: int) -> Path:
    """The queued store of ``size`` jobs for ``system``, built on first use."""
    path = CACHE / f"{system}-{size}-{_code_stamp()}.db"
    if not path.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.partial")
        _remove(partial)
        try:
            if system == "raw":
                _raw_fill(partial, size)
            else:
                asyncio.run(_jobsched_fill(partial, size))
            _checkpointed(partial, size)
        except BaseException:
            _remove(partial)
            raise
        partial.rename(path)
    return path


def _checkpointed(path: Path, queued: int) -> None:
    """Check the file holds ``queued`` queued jobs; fold the WAL in, so one copy is all of it."""
    conn = sqlite3.connect(path)
    try:
        (found,) = conn.execute("SELECT COUNT(*) FROM jobs WHERE status = 'pending'").fetchone()
        if found != queued:
            raise RuntimeError(f"{path} holds {found} queued jobs, not {queued}: not used")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def _remove(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


@contextmanager
def _scratch() -> Iterator[Path]:
    """A fresh folder on the same disk as the cache (never a RAM disk: fsyncs count)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(dir=CACHE))
    try:
        yield folder / "store.db"
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def run(system: str, workload: str, size: int) -> dict[str, float]:
    """One measurement of a store workload on a fresh file (a copy of a queued one for W8/W9)."""
    if system == "store":
        from benchmarks import _stores_floor

        with _scratch() as path:
            return asyncio.run(_stores_floor.store_w7(path, size))
    if system == "raw-indexed":
        if workload != "W7":
            raise ValueError(f"raw-indexed runs W7 (and W7c8), not {workload}")
        with _scratch() as path:
            return asyncio.run(raw_w7(path, size, indexed=True))
    if system not in ("raw", "jobsched"):
        from benchmarks import _stores_others

        with _scratch() as path:
            return _stores_others.run(system, workload, path, size)
    with _scratch() as path:
        if workload != "W7":
            shutil.copyfile(_template(system, size), path)

        async def measure() -> dict[str, float]:
            await _warm_up()
            return await _RUNS[system, workload](path, size)  # type: ignore[no-any-return]

        return asyncio.run(measure())


if __name__ == "__main__":
    # Through the module's own name: jobs pickled here must name
    # ``benchmarks._stores.Noop``, not ``__main__.Noop``, to load in any process.
    from benchmarks import _stores

    system, workload, size = sys.argv[1:4]
    print(json.dumps(_stores.run(system, workload, int(size))))
