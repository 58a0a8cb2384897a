"""SQLiteStore: the JobStore interface on one SQLite file.

One connection, used from one thread at a time (a lock; the async methods
run in anyio's worker threads), so the event loop never waits on the disk.
Every method is one ``BEGIN IMMEDIATE`` transaction. Several schedulers may
open one file, in one process or many: claims, leases and fenced outcomes
keep each attempt in exactly one of them, as on PostgreSQL.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import threading
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import anyio

from jobsched._enums import JobStatus
from jobsched._exceptions import StoreUnavailableError
from jobsched._store import (
    KEY_WIDTH,
    Change,
    Claimed,
    DueSchedule,
    JobStore,
    NewJob,
    Outcome,
    Recorded,
    StoredJob,
)

from . import _schema

T = TypeVar("T")

_READY, _WAITING, _BLOCKED = 0, 1, 2
_CANCELLED = JobStatus.CANCELLED
_COMPLETED = JobStatus.COMPLETED
_RETRY_WAIT = JobStatus.RETRY_WAIT
#: Rows a prune deletes per transaction: short transactions keep writers moving.
PRUNE_BATCH = 1000


class SQLiteStore(JobStore):
    """Jobs in one SQLite file (``sqlite:///jobs.db``).

    :param url: ``sqlite:///relative.db`` or ``sqlite:////absolute.db``.
    :param secret: signs payloads; optional for SQLite.
    :param lease: seconds a claimed attempt stays owned without a heartbeat.
    """

    def __init__(self, url: str, *, secret: str | bytes | None = None, lease: float = 30.0) -> None:
        #: The database file.
        self.path: Path = _schema.path_from_url(url)
        super().__init__(url, secret=secret, lease=lease)
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._limiter = anyio.CapacityLimiter(1)

    # ── plumbing ──────────────────────────────────────────────────────────

    async def open(self) -> None:
        if self._conn is None:
            self._conn = await anyio.to_thread.run_sync(_schema.connect, self.path)

    async def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with self._lock:
                conn.close()

    def _write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` in one write transaction (on the calling thread)."""
        conn = self._conn
        if conn is None:
            raise StoreUnavailableError(f"the store {self.url!r} is not open; open() it first")
        with self._lock:
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = fn(conn)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            return result

    def _read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        conn = self._conn
        if conn is None:
            raise StoreUnavailableError(f"the store {self.url!r} is not open; open() it first")
        with self._lock:
            return fn(conn)

    async def _write_async(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        return await anyio.to_thread.run_sync(self._write, fn, limiter=self._limiter)

    async def _read_async(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        return await anyio.to_thread.run_sync(self._read, fn, limiter=self._limiter)

    # ── the interface ─────────────────────────────────────────────────────

    def reserve_ids(self, count: int) -> int:
        if self._conn is None:
            # submit() before the scheduler started: ids come from the file
            # now, so open it now (quick for a local file).
            with self._lock:
                if self._conn is None:
                    self._conn = _schema.connect(self.path)

        def reserve(conn: sqlite3.Connection) -> int:
            (first,) = conn.execute(
                "UPDATE jobsched_meta SET value = value + ? WHERE key = 'next_id' "
                "RETURNING value - ?",
                (count, count),
            ).fetchone()
            return int(first)

        return self._write(reserve)

    async def add(self, jobs: Sequence[NewJob], now: float) -> list[Change]:
        return await self._write_async(lambda conn: _add(conn, jobs, now))

    async def claim(
        self, owner: str, limit: int, executors: Collection[str], now: float, lease: float
    ) -> list[Claimed]:
        if limit < 1:
            return []
        names = tuple(sorted(set(executors)))
        return await self._write_async(
            lambda conn: _claim(conn, owner, limit, names, now, now + lease)
        )

    async def record(self, owner: str, outcomes: Sequence[Outcome]) -> Recorded:
        return await self._write_async(lambda conn: _record(conn, owner, outcomes))

    async def extend(self, owner: str, ids: Collection[int], until: float) -> list[int]:
        def extend(conn: sqlite3.Connection) -> list[int]:
            conn.executemany(
                "UPDATE jobs SET lease_until = ? WHERE id = ? AND owner = ? AND status = 'running'",
                [(until, i, owner) for i in ids],
            )
            return [
                i
                for (i,) in conn.execute(
                    "SELECT id FROM jobs WHERE owner = ? AND status = 'running' "
                    "AND cancel_requested = 1",
                    (owner,),
                )
            ]

        return await self._write_async(extend)

    async def release(self, owner: str, ids: Collection[int]) -> None:
        def release(conn: sqlite3.Connection) -> None:
            conn.executemany(
                "UPDATE jobs SET status = CASE WHEN attempts > 1 THEN 'retry_wait' "
                "ELSE 'pending' END, queue = 0, attempts = attempts - 1, owner = NULL, "
                "lease_until = NULL WHERE id = ? AND owner = ? AND status = 'running'",
                [(i, owner) for i in ids],
            )

        await self._write_async(release)

    async def cancel(self, ids: Collection[int], now: float) -> list[Change]:
        def cancel(conn: sqlite3.Connection) -> list[Change]:
            changes: list[Change] = []
            for job_id in ids:
                row = conn.execute("SELECT status FROM jobs WHERE id = ?", (job_id,)).fetchone()
                if row is None:
                    continue
                status = row[0]
                if status == "running":
                    conn.execute("UPDATE jobs SET cancel_requested = 1 WHERE id = ?", (job_id,))
                elif status in ("pending", "retry_wait"):
                    _finish(conn, job_id, _CANCELLED, now, "cancelled")
                    changes.append(Change(job_id, _CANCELLED, "cancelled"))
                    changes.extend(_cascade(conn, job_id, _CANCELLED, now))
            return changes

        return await self._write_async(cancel)

    async def next_due(self) -> float | None:
        def next_due(conn: sqlite3.Connection) -> float | None:
            (job,) = conn.execute("SELECT MIN(run_at) FROM jobs WHERE queue = 1").fetchone()
            (fire,) = conn.execute("SELECT MIN(next_fire) FROM schedules").fetchone()
            due = [t for t in (job, fire) if t is not None]
            return min(due) if due else None

        return await self._read_async(next_due)

    async def fetch(self, job_id: int) -> StoredJob | None:
        def fetch(conn: sqlite3.Connection) -> StoredJob | None:
            row = conn.execute(
                "SELECT id, name, executor, status, attempts, run_at, submitted_at, "
                "started_at, finished_at, result, last_error, last_traceback, owner, payload, "
                "tenant "
                "FROM jobs WHERE id = ?",
                (job_id,),
            ).fetchone()
            if row is None:
                return None
            deps = tuple(
                u
                for (u,) in conn.execute(
                    "SELECT upstream FROM deps WHERE downstream = ?", (job_id,)
                )
            )
            return StoredJob(
                id=row[0],
                name=row[1],
                executor=row[2],
                status=JobStatus(row[3]),
                attempts=row[4],
                run_at=row[5],
                submitted_at=row[6],
                started_at=row[7],
                finished_at=row[8],
                result=row[9],
                last_error=row[10],
                last_traceback=row[11],
                owner=row[12],
                payload=row[13],
                tenant=row[14],
                depends_on=deps,
            )

        return await self._read_async(fetch)

    async def unfinished(self) -> int:
        def count(conn: sqlite3.Connection) -> int:
            (n,) = conn.execute("SELECT COUNT(*) FROM jobs WHERE finished_at IS NULL").fetchone()
            return int(n)

        return await self._read_async(count)

    async def put_schedules(self, schedules: Sequence[tuple[str, bytes, float]]) -> None:
        def put(conn: sqlite3.Connection) -> None:
            conn.executemany(
                "INSERT INTO schedules (id, payload, next_fire) VALUES (?, ?, ?) "
                "ON CONFLICT (id) DO UPDATE SET payload = excluded.payload, "
                "next_fire = excluded.next_fire, owner = NULL, lease_until = NULL",
                list(schedules),
            )

        await self._write_async(put)

    async def remove_schedules(self, ids: Collection[str]) -> None:
        def remove(conn: sqlite3.Connection) -> None:
            conn.executemany("DELETE FROM schedules WHERE id = ?", [(i,) for i in ids])

        await self._write_async(remove)

    async def claim_schedules(self, owner: str, now: float, lease: float) -> list[DueSchedule]:
        def claim(conn: sqlite3.Connection) -> list[DueSchedule]:
            rows = conn.execute(
                "UPDATE schedules SET owner = ?, lease_until = ? WHERE next_fire <= ? "
                "AND (owner IS NULL OR lease_until < ?) "
                "RETURNING id, payload, next_fire, last_job",
                (owner, now + lease, now, now),
            ).fetchall()
            due = []
            for schedule_id, payload, fire_time, last_job in rows:
                status = None
                if last_job is not None:
                    row = conn.execute(
                        "SELECT status FROM jobs WHERE id = ?", (last_job,)
                    ).fetchone()
                    status = JobStatus(row[0]) if row is not None else None
                due.append(DueSchedule(schedule_id, payload, fire_time, status))
            return due

        return await self._write_async(claim)

    async def fire(
        self, owner: str, schedule: str, fire_time: float, next_fire: float, job: NewJob | None
    ) -> bool:
        def fire(conn: sqlite3.Connection) -> bool:
            moved = conn.execute(
                "UPDATE schedules SET next_fire = ?, owner = NULL, lease_until = NULL, "
                "last_job = COALESCE(?, last_job) "
                "WHERE id = ? AND owner = ? AND next_fire = ?",
                (next_fire, job.id if job is not None else None, schedule, owner, fire_time),
            ).rowcount
            if moved != 1:
                return False
            if job is not None:
                try:
                    _add(conn, [job], fire_time)
                except sqlite3.IntegrityError:
                    # This fire was made already: the unique index on
                    # (schedule, fire_time) makes a second one impossible.
                    raise _AlreadyFired() from None
            return True

        try:
            return await self._write_async(fire)
        except _AlreadyFired:
            return False

    async def prune(self, keep: int) -> int:
        def prune(conn: sqlite3.Connection) -> int:
            cursor = conn.execute(
                "DELETE FROM jobs WHERE id IN (SELECT id FROM jobs WHERE finished_at IS NOT NULL "
                "ORDER BY finished_at DESC LIMIT ? OFFSET ?)",
                (PRUNE_BATCH, keep),
            )
            return cursor.rowcount

        total = 0
        while True:
            deleted = await self._write_async(prune)
            total += deleted
            if deleted < PRUNE_BATCH:
                return total


# ── transactions (run on the store's thread, inside _write) ──────────────


class _AlreadyFired(Exception):
    """Rolls a fire's transaction back: its job exists already."""


def _padded(key: tuple[float, ...]) -> tuple[float, ...]:
    if len(key) > KEY_WIDTH:
        raise ValueError(f"a stored sort key has at most {KEY_WIDTH} fields, got {key!r}")
    return tuple(key) + (0.0,) * (KEY_WIDTH - len(key))


def _add(conn: sqlite3.Connection, jobs: Sequence[NewJob], now: float) -> list[Change]:
    changes: list[Change] = []
    for job in jobs:
        unmet = 0
        failed: tuple[int, str] | None = None
        for upstream in job.depends_on:
            row = conn.execute("SELECT status FROM jobs WHERE id = ?", (upstream,)).fetchone()
            status = row[0] if row is not None else "unknown"
            if status == "completed":
                continue
            if row is None or JobStatus(status).is_terminal:
                failed = (upstream, status)
                break
            unmet += 1
        if failed is not None:
            queue, status = None, _CANCELLED.value
        elif unmet:
            queue, status = _BLOCKED, "pending"
        else:
            queue, status = (_READY if job.run_at <= now else _WAITING), "pending"
        k0, k1, k2 = _padded(job.key)
        conn.execute(
            "INSERT INTO jobs (id, name, executor, status, queue, k0, k1, k2, run_at, "
            "submitted_at, unmet, tenant, rate_key, payload, schedule, fire_time) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                job.id, job.name, job.executor, status, queue, k0, k1, k2, job.run_at,
                job.submitted_at, unmet, job.tenant, job.rate_key, job.payload,
                job.schedule, job.fire_time,
            ),
        )  # fmt: skip
        if failed is not None:
            error = f"upstream job-{failed[0]} {failed[1]}"
            conn.execute(
                "UPDATE jobs SET finished_at = ?, last_error = ? WHERE id = ?",
                (now, error, job.id),
            )
            changes.append(Change(job.id, _CANCELLED, error))
        elif unmet:
            conn.executemany(
                "INSERT OR IGNORE INTO deps (upstream, downstream) VALUES (?, ?)",
                [(u, job.id) for u in job.depends_on],
            )
    return changes


def _claim(
    conn: sqlite3.Connection,
    owner: str,
    limit: int,
    executors: tuple[str, ...],
    now: float,
    until: float,
) -> list[Claimed]:
    # Due waiting jobs join the ready queue first, so the claim orders them
    # against everything else by key.
    conn.execute("UPDATE jobs SET queue = 0 WHERE queue = 1 AND run_at <= ?", (now,))
    # Attempts whose owner is gone: its lease ran out, or it was a process
    # on this machine that no longer exists (a restart after a crash need not
    # wait out the lease).
    dead = _dead_local_owners(conn)
    marks = ", ".join("?" * len(dead))
    claimed = [
        Claimed(job_id, attempt, payload, lost=True)
        for job_id, attempt, payload in conn.execute(
            "UPDATE jobs SET owner = ?, lease_until = ? WHERE id IN (SELECT id FROM jobs "
            f"WHERE status = 'running' AND (lease_until < ? OR owner IN ({marks})) LIMIT ?) "
            "RETURNING id, attempts, payload",
            (owner, until, now, *dead, limit),
        ).fetchall()
    ]
    if len(claimed) < limit and executors:
        marks = ", ".join("?" * len(executors))
        rows = conn.execute(
            "UPDATE jobs SET status = 'running', queue = NULL, owner = ?, lease_until = ?, "
            "attempts = attempts + 1, started_at = ?, cancel_requested = 0 "
            f"WHERE id IN (SELECT id FROM jobs WHERE queue = 0 AND executor IN ({marks}) "
            "ORDER BY k0, k1, k2 LIMIT ?) "
            "RETURNING k0, k1, k2, id, attempts, payload",
            (owner, until, now, *executors, limit - len(claimed)),
        ).fetchall()
        # RETURNING gives no order: restore the key's.
        rows.sort(key=lambda r: (r[0], r[1], r[2]))
        claimed.extend(Claimed(r[3], r[4], r[5]) for r in rows)
    return claimed


def _dead_local_owners(conn: sqlite3.Connection) -> list[str]:
    """Owners (``host:pid:token``) of running rows that were processes here and are gone."""
    host = socket.gethostname()
    dead = []
    for (owner,) in conn.execute("SELECT DISTINCT owner FROM jobs WHERE status = 'running'"):
        parts = str(owner).split(":")
        if len(parts) == 3 and parts[0] == host and parts[1].isdigit():
            pid = int(parts[1])
            if pid != os.getpid() and not _alive(pid):
                dead.append(owner)
    return dead


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    return True


def _record(conn: sqlite3.Connection, owner: str, outcomes: Sequence[Outcome]) -> Recorded:
    recorded = Recorded()
    for out in outcomes:
        if out.status is _RETRY_WAIT:
            assert out.run_at is not None
            cursor = conn.execute(
                "UPDATE jobs SET status = 'retry_wait', queue = 1, run_at = ?, owner = NULL, "
                "lease_until = NULL, last_error = ?, last_traceback = ? "
                "WHERE id = ? AND owner = ? AND attempts = ? AND status = 'running'",
                (out.run_at, out.error, out.traceback, out.id, owner, out.attempt),
            )
        else:
            cursor = conn.execute(
                "UPDATE jobs SET status = ?, queue = NULL, finished_at = ?, owner = NULL, "
                "lease_until = NULL, result = ?, last_error = COALESCE(?, last_error), "
                "last_traceback = COALESCE(?, last_traceback) "
                "WHERE id = ? AND owner = ? AND attempts = ? AND status = 'running'",
                (
                    out.status.value, out.finished_at, out.result, out.error, out.traceback,
                    out.id, owner, out.attempt,
                ),
            )  # fmt: skip
        if cursor.rowcount != 1:
            recorded.refused.append(out.id)
            continue
        if out.status is _COMPLETED:
            _release(conn, out.id, out.finished_at)
        elif out.status.is_terminal:
            recorded.changes.extend(_cascade(conn, out.id, out.status, out.finished_at))
    return recorded


def _finish(
    conn: sqlite3.Connection, job_id: int, status: JobStatus, now: float, error: str | None
) -> None:
    conn.execute(
        "UPDATE jobs SET status = ?, queue = NULL, finished_at = ?, owner = NULL, "
        "lease_until = NULL, last_error = COALESCE(?, last_error) WHERE id = ?",
        (status.value, now, error, job_id),
    )


def _release(conn: sqlite3.Connection, upstream: int, now: float) -> None:
    """An upstream completed: count it off its dependents, and queue the free ones."""
    downstream = [
        d for (d,) in conn.execute("SELECT downstream FROM deps WHERE upstream = ?", (upstream,))
    ]
    if not downstream:
        return
    conn.execute("DELETE FROM deps WHERE upstream = ?", (upstream,))
    conn.executemany(
        "UPDATE jobs SET unmet = unmet - 1 WHERE id = ? AND queue = 2",
        [(d,) for d in downstream],
    )
    conn.executemany(
        "UPDATE jobs SET queue = CASE WHEN run_at <= ? THEN 0 ELSE 1 END "
        "WHERE id = ? AND queue = 2 AND unmet = 0",
        [(now, d) for d in downstream],
    )


def _cascade(conn: sqlite3.Connection, root: int, status: JobStatus, now: float) -> list[Change]:
    """An upstream did not complete: cancel every job downstream of it, transitively."""
    changes: list[Change] = []
    # A worklist, not a recursive CTE: each dependent's reason names its own
    # upstream, as the in-memory scheduler's does.
    todo: list[tuple[int, str]] = [(root, status.value)]
    while todo:
        upstream, how = todo.pop()
        downstream = _take_edges(conn, upstream)
        for job_id in downstream:
            row = conn.execute("SELECT status FROM jobs WHERE id = ?", (job_id,)).fetchone()
            if row is None or JobStatus(row[0]).is_terminal or row[0] == "running":
                continue
            error = f"upstream job-{upstream} {how}"
            _finish(conn, job_id, _CANCELLED, now, error)
            changes.append(Change(job_id, _CANCELLED, error))
            todo.append((job_id, _CANCELLED.value))
    return changes


def _take_edges(conn: sqlite3.Connection, upstream: int) -> list[int]:
    rows: Iterable[tuple[Any, ...]] = conn.execute(
        "DELETE FROM deps WHERE upstream = ? RETURNING downstream", (upstream,)
    ).fetchall()
    return [d for (d,) in rows]
