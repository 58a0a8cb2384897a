"""Workflows in the SQLite store (issue 37): one added whole, its reads, and
its cancel. Functions of a connection: the writes run inside a write
transaction (``add_workflow`` as one write of the group commit: its own
savepoint, so a failure undoes it alone), the reads outside one.

A workflow's jobs are found by ``jobs_workflow`` (workflow, id); its row
and its jobs go when prune deletes its last job (``_sql._delete``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from jobsched import JobStatus
from jobsched.store import (
    EDGE_FAILED,
    OWN_ID_HEAD,
    Change,
    GraphJob,
    NewWorkflow,
    WorkflowGraph,
    WorkflowRow,
    own_id_in,
)

from . import _own
from ._add import add
from ._sql import _cascade, count_ended

_CANCELLED = JobStatus.CANCELLED
#: Ids per statement: under SQLite's oldest limit of parameters (999).
CHUNK = 500
#: The statuses of an unfinished job; said with ``status != 'completed'``
#: so the planner may read them from jobs_status.
_UNFINISHED = "status IN ('pending', 'retry_wait', 'running') AND status != 'completed'"
# A workflow's jobs, by jobs_workflow: counted by status (from the index
# alone: it holds the status), read for its graph, and its unfinished ones
# (a cancel).
COUNTS = (
    "SELECT workflow, status, COUNT(*) FROM jobs WHERE workflow IN ({}) GROUP BY workflow, status"
)
GRAPH = (
    "SELECT id, name, status, progress, attempts, finished_at, progress_message FROM jobs "
    "WHERE workflow = ? ORDER BY id LIMIT ?"
)
#: The head of the payloads of jobs with ids of their own, where their ids are.
HEADS = "SELECT id, substr(payload, 1, ?) FROM jobs WHERE id IN ({})"
OPEN = "SELECT id, status FROM jobs WHERE workflow = ? AND finished_at IS NULL ORDER BY id"


def add_workflow(conn: sqlite3.Connection, workflow: NewWorkflow, now: float) -> list[Change]:
    """The workflow's jobs (by ``_add.add``, naming it), then its row; a
    ValueError (which undoes the write) for an id held already."""
    if not workflow.jobs:
        raise ValueError(f"workflow {workflow.id} has no jobs: a workflow needs at least one")
    held = conn.execute("SELECT 1 FROM workflows WHERE id = ?", (workflow.id,)).fetchone()
    if held is not None:
        raise ValueError(f"the store holds a workflow numbered {workflow.id} already")
    changes = add(conn, workflow.jobs, now, workflow=workflow.id)
    existed = [job.id for job in workflow.jobs if job.existed]
    if existed:
        # add() lets a held own id stand; half a workflow would be another's half.
        raise ValueError(
            f"the store holds a job with the id of workflow job(s) {existed} already "
            "(an id of your own, given twice): nothing of the workflow was added"
        )
    conn.execute(
        "INSERT INTO workflows (id, name, created_at, size) VALUES (?, ?, ?, ?)",
        (workflow.id, workflow.name, workflow.created_at, len(workflow.jobs)),
    )
    return changes


def _counts(conn: sqlite3.Connection, ids: list[int]) -> dict[int, dict[JobStatus, int]]:
    counts: dict[int, dict[JobStatus, int]] = {i: {} for i in ids}
    for start in range(0, len(ids), CHUNK):
        part = ids[start : start + CHUNK]
        for workflow, status, n in conn.execute(COUNTS.format(", ".join("?" * len(part))), part):
            counts[workflow][JobStatus(status)] = n
    return counts


def _rows(
    conn: sqlite3.Connection, found: Iterable[tuple[int, str, float, int]]
) -> list[WorkflowRow]:
    listed = list(found)
    counts = _counts(conn, [row[0] for row in listed])
    return [WorkflowRow(i, name, at, size, counts[i]) for i, name, at, size in listed]


def workflow(conn: sqlite3.Connection, workflow_id: int) -> WorkflowRow | None:
    found = conn.execute(
        "SELECT id, name, created_at, size FROM workflows WHERE id = ?", (workflow_id,)
    ).fetchall()
    rows = _rows(conn, found)
    return rows[0] if rows else None


def workflows(
    conn: sqlite3.Connection, limit: int, before: int | None, unfinished: bool
) -> list[WorkflowRow]:
    """Newest first; ``unfinished``: those with a job among the unfinished
    rows (read from jobs_status: the live jobs, never the history)."""
    where = "WHERE id < ?" if before is not None else ""
    params: list[int] = [before] if before is not None else []
    if unfinished:
        where += " AND " if where else "WHERE "
        where += f"id IN (SELECT workflow FROM jobs WHERE {_UNFINISHED} AND workflow IS NOT NULL)"
    found = conn.execute(
        f"SELECT id, name, created_at, size FROM workflows {where} ORDER BY id DESC LIMIT ?",
        (*params, limit),
    ).fetchall()
    return _rows(conn, found)


def graph(conn: sqlite3.Connection, workflow_id: int, limit: int) -> WorkflowGraph | None:
    row = workflow(conn, workflow_id)
    if row is None:
        return None
    found = conn.execute(GRAPH, (workflow_id, limit + 1)).fetchall()
    truncated = len(found) > limit
    found = found[:limit]
    numbers = [r[0] for r in found]
    edges: list[tuple[int, int, int]] = []
    for start in range(0, len(numbers), CHUNK):
        part = numbers[start : start + CHUNK]
        edges += conn.execute(
            "SELECT upstream, downstream, on_failure FROM deps "
            f"WHERE downstream IN ({', '.join('?' * len(part))})",
            part,
        ).fetchall()
    ids = _own.ids_of(conn, [*numbers, *(u for u, _, _ in edges)])
    own = _own_ids(conn, [n for n in numbers if n in ids], ids)
    jobs = [
        GraphJob(
            ids.get(n, n),
            name,
            JobStatus(status),
            progress,
            attempts,
            finished,
            message,
            own.get(n),
        )
        for n, name, status, progress, attempts, finished, message in found
    ]
    order = {n: i for i, n in enumerate(numbers)}
    edges.sort(key=lambda e: (order[e[1]], e[0]))
    return WorkflowGraph(
        row,
        jobs,
        [(ids.get(u, u), ids.get(d, d), policy) for u, d, policy in edges],
        truncated,
    )


def _own_ids(conn: sqlite3.Connection, numbers: list[int], ids: dict[int, int]) -> dict[int, str]:
    """The ids given at submit of the jobs stored as ``numbers`` (rows that
    ``ids`` maps to their negative ids), read from their payloads' heads
    only: no other job's payload is read."""
    found: dict[int, str] = {}
    for start in range(0, len(numbers), CHUNK):
        part = numbers[start : start + CHUNK]
        sql = HEADS.format(", ".join("?" * len(part)))
        for n, head in conn.execute(sql, (OWN_ID_HEAD, *part)):
            text = own_id_in(bytes(head), ids[n]) if head is not None else None
            if text is not None:
                found[n] = text
    return found


def cancel_workflow(
    conn: sqlite3.Connection, workflow_id: int, now: float
) -> tuple[int, list[Change]]:
    """Cancel the workflow's waiting jobs and flag its running ones (a
    statement per few hundred), then walk the cascade from each cancelled
    job with a waiting edge to a job outside it (its own dependents are
    cancelled already), and settle the other edges at once."""
    # By jobs_workflow alone: the workflow's rows, not every unfinished one.
    rows = conn.execute(OPEN, (workflow_id,)).fetchall()
    running = [n for n, status in rows if status == "running"]
    waiting = [n for n, status in rows if status != "running"]
    ended: dict[tuple[str, str], int] = {}
    roots: list[int] = []
    for start in range(0, len(rows), CHUNK):
        part = running[start : start + CHUNK]
        if part:
            conn.execute(
                f"UPDATE jobs SET cancel_requested = 1 WHERE id IN ({', '.join('?' * len(part))})",
                part,
            )
        part = waiting[start : start + CHUNK]
        if not part:
            continue
        marks = ", ".join("?" * len(part))
        for (executor,) in conn.execute(
            "UPDATE jobs SET status = 'cancelled', queue = NULL, finished_at = ?, owner = NULL, "
            "lease_until = NULL, last_error = 'cancelled' "
            f"WHERE id IN ({marks}) RETURNING executor",
            (now, *part),
        ).fetchall():
            ended["cancelled", executor] = ended.get(("cancelled", executor), 0) + 1
        roots += [
            root
            for (root,) in conn.execute(
                "SELECT DISTINCT d.upstream FROM deps AS d JOIN jobs AS j ON j.id = d.downstream "
                f"WHERE d.upstream IN ({marks}) AND d.settled = 0 AND j.workflow IS NOT ?",
                (*part, workflow_id),
            )
        ]
    count_ended(conn, ended)
    ids = _own.ids_of(conn, waiting)
    changes = [Change(ids.get(n, n), _CANCELLED, "cancelled") for n in waiting]
    for root in sorted(roots):
        changes += _cascade(conn, root, _CANCELLED, now)
    # The rest's edges, all to jobs of the workflow cancelled above.
    for start in range(0, len(waiting), CHUNK):
        part = waiting[start : start + CHUNK]
        conn.execute(
            f"UPDATE deps SET settled = {EDGE_FAILED} WHERE upstream IN "
            f"({', '.join('?' * len(part))}) AND settled = 0",
            part,
        )
    return len(rows), changes
