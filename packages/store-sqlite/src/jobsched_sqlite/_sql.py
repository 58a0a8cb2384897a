"""The SQLite store's transactions: each a function of a connection inside
``BEGIN IMMEDIATE`` (see ``SQLiteStore._write``), run on the store's thread."""

from __future__ import annotations

import os
import socket
import sqlite3
from collections.abc import Collection, Iterable, Sequence
from typing import Any

from jobsched._enums import JobStatus
from jobsched._store import (
    KEY_WIDTH,
    Change,
    Claimed,
    NewJob,
    Outcome,
    Recorded,
)

_READY, _WAITING, _BLOCKED = 0, 1, 2
_CANCELLED = JobStatus.CANCELLED
_COMPLETED = JobStatus.COMPLETED
_RETRY_WAIT = JobStatus.RETRY_WAIT


class AlreadyFired(Exception):
    """Rolls a fire's transaction back: its job exists already."""


def _padded(key: tuple[float, ...]) -> tuple[float, ...]:
    if len(key) > KEY_WIDTH:
        raise ValueError(f"a stored sort key has at most {KEY_WIDTH} fields, got {key!r}")
    return tuple(key) + (0.0,) * (KEY_WIDTH - len(key))


def add(conn: sqlite3.Connection, jobs: Sequence[NewJob], now: float) -> list[Change]:
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


def claim(
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
        start_attempts(conn, owner, now, [(r[3], r[4]) for r in rows])
    return claimed


def start_attempts(
    conn: sqlite3.Connection, owner: str, now: float, started: Sequence[tuple[int, int]]
) -> None:
    """The attempt rows of jobs just claimed ``(id, attempt)``: RUNNING under ``owner``."""
    conn.executemany(
        "INSERT OR REPLACE INTO attempts (job_id, attempt, owner, started_at, status) "
        "VALUES (?, ?, ?, ?, 'running')",
        [(job_id, attempt, owner, now) for job_id, attempt in started],
    )


def finish_attempts(conn: sqlite3.Connection, owner: str, ended: Sequence[Outcome]) -> None:
    """Close the attempt rows of accepted outcomes (a lost attempt's too: its
    row keeps the owner that ran it). A row that is missing is made."""
    conn.executemany(
        "INSERT INTO attempts (job_id, attempt, owner, started_at, finished_at, status, error) "
        "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (job_id, attempt) DO UPDATE SET "
        "finished_at = excluded.finished_at, status = excluded.status, error = excluded.error",
        [
            (o.id, o.attempt, owner, o.finished_at, o.finished_at, o.status.value, o.error)
            for o in ended
        ],
    )


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


def record(conn: sqlite3.Connection, owner: str, outcomes: Sequence[Outcome]) -> Recorded:
    recorded = Recorded()
    accepted: list[Outcome] = []
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
        accepted.append(out)
        if out.status is _COMPLETED:
            _release(conn, out.id, out.finished_at)
        elif out.status.is_terminal:
            recorded.changes.extend(_cascade(conn, out.id, out.status, out.finished_at))
    finish_attempts(conn, owner, accepted)
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


def cancel_queued(conn: sqlite3.Connection, ids: Collection[int], now: float) -> list[Change]:
    """Cancel queued jobs (and what depends on them); flag running ones for their owner."""
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
