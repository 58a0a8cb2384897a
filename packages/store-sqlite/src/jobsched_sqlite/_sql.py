"""The SQLite store's transactions: each a function of a connection inside
``BEGIN IMMEDIATE`` (see ``SQLiteStore._write``), run on the store's thread.

This module: the counters of finished jobs, the dependency cascade, cancels
and prune. Adding jobs is ``_add``, recording outcomes ``_outcomes``.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from jobsched import JobStatus
from jobsched.store import EDGE_FAILED, ON_FAILURE_RUN, Change

from . import _own

_CANCELLED = JobStatus.CANCELLED


def count_completed(conn: sqlite3.Connection, completed: dict[str, int]) -> None:
    """Add to completed_counts (negative counts take off: a prune). The
    statements that complete or delete a job keep the counts, not triggers:
    a trigger's upsert per row made a plain completion's SQL 6.3 us, not 3.8."""
    conn.executemany(
        "INSERT INTO completed_counts (executor, n) VALUES (?, ?) "
        "ON CONFLICT (executor) DO UPDATE SET n = n + excluded.n",
        list(completed.items()),
    )


#: The ends other than COMPLETED, counted in ended_counts: the failures a
#: long history keeps (2% of a million jobs is 20,000 rows to count).
ENDED = ("failed", "timed_out", "cancelled")


def count_ended(conn: sqlite3.Connection, ended: dict[tuple[str, str], int]) -> None:
    """Add to ended_counts, by (status, executor); negative counts take off
    (a prune, a retry). Kept by the statements that change those statuses,
    as completed_counts is, so counts() reads no finished row."""
    conn.executemany(
        "INSERT INTO ended_counts (status, executor, n) VALUES (?, ?, ?) "
        "ON CONFLICT (status, executor) DO UPDATE SET n = n + excluded.n",
        [(status, executor, n) for (status, executor), n in ended.items()],
    )


def _finish(
    conn: sqlite3.Connection, job_id: int, status: JobStatus, now: float, error: str | None
) -> None:
    """End a queued job (a cancel), counted in ended_counts."""
    row = conn.execute(
        "UPDATE jobs SET status = ?, queue = NULL, finished_at = ?, owner = NULL, "
        "lease_until = NULL, last_error = COALESCE(?, last_error) WHERE id = ? "
        "RETURNING executor",
        (status.value, now, error, job_id),
    ).fetchone()
    if row is not None:
        count_ended(conn, {(status.value, row[0]): 1})


def _cascade(conn: sqlite3.Connection, root: int, status: JobStatus, now: float) -> list[Change]:
    """An upstream did not complete (``root``, a row's number): settle its
    waiting edges; cancel each dependent on a "cancel" edge, transitively,
    and count off each on a "run" edge (as a completion does); the changes
    name the cancelled by their ids."""
    changes: list[Change] = []
    # A worklist, not a recursive CTE: each dependent's reason names its own
    # upstream, as the in-memory scheduler's does.
    todo: list[tuple[int, str]] = [(root, status.value)]
    while todo:
        upstream, how = todo.pop()
        lenient: dict[int, int] = {}
        for job_id, on_failure in _settle_edges(conn, upstream):
            if on_failure == ON_FAILURE_RUN:
                lenient[job_id] = 1
                continue
            row = conn.execute("SELECT status FROM jobs WHERE id = ?", (job_id,)).fetchone()
            if row is None or JobStatus(row[0]).is_terminal or row[0] == "running":
                continue
            error = f"upstream job-{_own.id_of(conn, upstream)} {how}"
            _finish(conn, job_id, _CANCELLED, now, error)
            changes.append(Change(_own.id_of(conn, job_id), _CANCELLED, error))
            todo.append((job_id, _CANCELLED.value))
        if lenient:
            count_off(conn, lenient, now)
    return changes


def _settle_edges(conn: sqlite3.Connection, upstream: int) -> list[tuple[int, int]]:
    """Mark the waiting edges of an upstream that ended other than COMPLETED
    settled (kept, not deleted: a retry must not wait for it again); their
    dependents and policies."""
    rows: Iterable[tuple[Any, ...]] = conn.execute(
        f"UPDATE deps SET settled = {EDGE_FAILED} WHERE upstream = ? AND settled = 0 "
        "RETURNING downstream, on_failure",
        (upstream,),
    ).fetchall()
    return [(d, p) for d, p in rows]


def count_off(conn: sqlite3.Connection, unmet: dict[int, int], now: float) -> None:
    """Take ``unmet[d]`` settled edges off each dependent ``d`` still
    blocked, and queue the free ones. ``now``: the earliest of the ends
    that settled them: a dependent whose run_at is later waits for it in
    queue 1 (promotion), never runs early."""
    conn.executemany(
        "UPDATE jobs SET unmet = unmet - ? WHERE id = ? AND queue = 2",
        [(n, d) for d, n in unmet.items()],
    )
    conn.executemany(
        "UPDATE jobs SET queue = CASE WHEN run_at <= ? THEN 0 ELSE 1 END "
        "WHERE id = ? AND queue = 2 AND unmet = 0",
        [(now, d) for d in unmet],
    )


# The retention guard (workflows-plan section 8, Oban #722): a finished job
# that an unfinished job has an edge from stays, whatever its age, for that
# dependent still waits for it or reads its result when it is claimed. A
# probe of the deps primary key by upstream, then of jobs by id per edge: a
# job without dependents costs one probe.
_FREE = (
    "NOT EXISTS (SELECT 1 FROM deps AS d JOIN jobs AS w ON w.id = d.downstream "
    "WHERE d.upstream = {}.id AND w.finished_at IS NULL)"
)
#: One status's rows that finished before a cutoff, oldest first (jobs_ended),
#: those held by the guard passed over: an age is a bound, not a position.
AGED = (
    "SELECT id FROM jobs AS o WHERE status = ? AND finished_at IS NOT NULL "
    f"AND finished_at < ? AND {_FREE.format('o')} ORDER BY finished_at LIMIT ?"
)
#: The oldest finished rows (jobs_finished), from the oldest end (no OFFSET
#: walk), each with whether the guard frees it: the guard filters the
#: oldest ``over`` and never reaches past them, so a held job never costs one
#: of the newest ``keep`` its place (it is kept beyond the count instead).
OLDEST = (
    f"SELECT id, {_FREE.format('jobs')} FROM jobs WHERE finished_at IS NOT NULL "
    "ORDER BY finished_at LIMIT ?"
)


def prune(
    conn: sqlite3.Connection, keep: int | None, before: Mapping[JobStatus, float], batch: int
) -> tuple[int, int]:
    """Delete up to ``batch`` finished jobs, with their attempts and edges:
    first those of each status in ``before`` that finished before its
    cutoff, then the oldest beyond the newest ``keep``; never an upstream of
    an unfinished job (``_FREE``). How many went, and how many were looked
    at (the held ones too: a batch full of them is no sign the prune is done).

    Both read an index from its oldest end (jobs_ended by status, then
    jobs_finished), so a prune costs the rows it deletes and the ones the
    guard holds, never a walk over the rows kept (the count bound's OFFSET
    walked ``keep`` rows).
    """
    gone = 0
    for status, cutoff in before.items():
        if gone >= batch:
            return gone, gone
        gone += _delete(conn, AGED, (status.value, cutoff, batch - gone))
    seen = gone
    if keep is not None and gone < batch:
        # The finished jobs, from the counts the outcomes keep (no row read).
        (finished,) = conn.execute(
            "SELECT (SELECT COALESCE(SUM(n), 0) FROM completed_counts) "
            "+ (SELECT COALESCE(SUM(n), 0) FROM ended_counts)"
        ).fetchone()
        over = min(finished - keep, batch - gone)
        if over > 0:
            window = conn.execute(OLDEST, (over,)).fetchall()
            seen += len(window)
            free = [job_id for job_id, is_free in window if is_free]
            if free:
                gone += _delete(conn, ", ".join("?" * len(free)), tuple(free))
    return gone, seen


def _delete(conn: sqlite3.Connection, chosen: str, params: tuple[Any, ...]) -> int:
    """Delete the finished jobs ``chosen`` selects, their attempts, edges and
    own ids, and the workflows left without a job; take them off the counts;
    how many went."""
    gone = conn.execute(
        f"DELETE FROM jobs WHERE id IN ({chosen}) AND finished_at IS NOT NULL "
        "RETURNING id, executor, status, workflow",
        params,
    ).fetchall()
    if not gone:
        return 0
    completed: dict[str, int] = {}
    ended: dict[tuple[str, str], int] = {}
    for _, executor, status, _ in gone:
        if status == "completed":
            completed[executor] = completed.get(executor, 0) - 1
        elif status in ENDED:
            ended[status, executor] = ended.get((status, executor), 0) - 1
    if completed:
        count_completed(conn, completed)
    if ended:
        count_ended(conn, ended)
    # One statement (an executemany was a statement per job, for the few
    # that have attempt rows: only attempts that did not complete do).
    ids = [job_id for job_id, _, _, _ in gone]
    marks = ", ".join("?" * len(ids))
    conn.execute(f"DELETE FROM attempts WHERE job_id IN ({marks})", ids)
    # Their edges both ways (the primary key by upstream, deps_downstream by
    # downstream): kept after the upstream ends, they would otherwise outlive
    # both jobs, and an own id used again would find its old edges.
    conn.execute(f"DELETE FROM deps WHERE upstream IN ({marks})", ids)
    conn.execute(f"DELETE FROM deps WHERE downstream IN ({marks})", ids)
    _own.forget(conn, ids)
    # A workflow goes with its last job (jobs_workflow: a probe each).
    flows = sorted({flow for _, _, _, flow in gone if flow is not None})
    if flows:
        conn.execute(
            f"DELETE FROM workflows WHERE id IN ({', '.join('?' * len(flows))}) AND NOT EXISTS "
            "(SELECT 1 FROM jobs WHERE jobs.workflow = workflows.id)",
            flows,
        )
    return len(gone)


def cancel_released(conn: sqlite3.Connection, owner: str, ids: Collection[int], now: float) -> None:
    """Of jobs a member hands back unfinished, end those someone asked to
    cancel CANCELLED (their attempt not counted, as for any hand-back): a
    released row with a cancel request would be claimed again, and the claim
    clears the request. ``ids``: rows' numbers."""
    for job_id in ids:
        row = conn.execute(
            "UPDATE jobs SET status = 'cancelled', queue = NULL, finished_at = ?, "
            "owner = NULL, lease_until = NULL, attempts = attempts - 1, last_error = 'cancelled' "
            "WHERE id = ? AND owner = ? AND status = 'running' AND cancel_requested = 1 "
            "RETURNING executor",
            (now, job_id, owner),
        ).fetchone()
        if row is not None:
            count_ended(conn, {(_CANCELLED.value, row[0]): 1})
            _cascade(conn, job_id, _CANCELLED, now)


def defer(conn: sqlite3.Connection, owner: str, jobs: Sequence[tuple[int, float, str]]) -> None:
    """``JobStore.defer``: claimed jobs handed back as :meth:`release` does,
    waiting (queue 1) until their ``run_at``, so that the member that could
    not load one does not claim it straight back; their error kept."""
    own = _own.rows_of(conn, [job_id for job_id, _, _ in jobs])
    rows = [(own.get(i, i), run_at, error) for i, run_at, error in jobs]
    cancel_released(conn, owner, [row for row, _, _ in rows], time.time())
    conn.executemany(
        "UPDATE jobs SET status = CASE WHEN attempts > 1 THEN 'retry_wait' "
        "ELSE 'pending' END, queue = 1, run_at = ?, last_error = ?, "
        "attempts = attempts - 1, owner = NULL, lease_until = NULL "
        "WHERE id = ? AND owner = ? AND status = 'running'",
        [(run_at, error, row, owner) for row, run_at, error in rows],
    )


def cancel_queued(conn: sqlite3.Connection, ids: Collection[int], now: float) -> list[Change]:
    """Cancel queued jobs (and what depends on them); flag running ones for their owner."""
    changes: list[Change] = []
    rows = _own.rows_of(conn, ids)
    for job_id in ids:
        number = rows.get(job_id, job_id)
        row = conn.execute("SELECT status FROM jobs WHERE id = ?", (number,)).fetchone()
        if row is None:
            continue
        status = row[0]
        if status == "running":
            conn.execute("UPDATE jobs SET cancel_requested = 1 WHERE id = ?", (number,))
        elif status in ("pending", "retry_wait"):
            _finish(conn, number, _CANCELLED, now, "cancelled")
            changes.append(Change(job_id, _CANCELLED, "cancelled"))
            changes.extend(_cascade(conn, number, _CANCELLED, now))
    return changes
