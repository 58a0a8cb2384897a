"""Workflows in the PostgreSQL store (issue 37): one added whole in one
transaction, its reads, and its cancel. A mixin of :class:`PostgresStore`
over ``Reads._run``; the SQL is functions of a connection.

A workflow's jobs are found by ``jobsched_jobs_workflow`` (workflow, id);
its row goes when prune deletes its last job (``_prune``).
"""

from __future__ import annotations

from abc import abstractmethod
from collections import Counter
from collections.abc import Sequence
from typing import Any

import psycopg

from jobsched import JobStatus
from jobsched.store import (
    DEFAULT_QUEUE,
    OWN_ID_HEAD,
    Change,
    GraphJob,
    NewJob,
    NewWorkflow,
    WorkflowGraph,
    WorkflowRow,
    check_limit,
    check_workflows_args,
    own_id_in,
)

from . import _cancels, _sql
from ._inputs import WorkflowReads

_CANCELLED = JobStatus.CANCELLED
_STATUSES = {status.value: status for status in JobStatus}
#: The unfinished rows, by jobsched_jobs_status (the live jobs, never the history).
_UNFINISHED = "status IN ('pending', 'retry_wait', 'running')"
# A workflow's jobs, by jobsched_jobs_workflow: counted by status (an
# index-only read: it INCLUDEs the status), read for its graph, and its
# unfinished ones locked (a cancel).
COUNTS = (
    "SELECT workflow, status, count(*) FROM jobsched_jobs WHERE workflow = ANY(%s) GROUP BY 1, 2"
)
# An own id (a negative one) is read from the head of the payload only.
GRAPH = (
    "SELECT id, name, status, progress, attempts, finished_at, progress_message, "
    "CASE WHEN id < 0 THEN substring(payload FROM 1 FOR %s) END "
    "FROM jobsched_jobs WHERE workflow = %s ORDER BY id LIMIT %s"
)
OPEN = (
    "SELECT id, status FROM jobsched_jobs WHERE workflow = %s AND finished_at IS NULL "
    "ORDER BY id FOR UPDATE"
)


def add_workflow(conn: _sql.Conn, workflow: NewWorkflow, now: float) -> list[Change]:
    """The workflow's jobs by one COPY, their edges by one INSERT, then its
    row, in the caller's transaction; a ValueError (which rolls it back)
    for a held own id or workflow number."""
    jobs = workflow.jobs
    if not jobs:
        raise ValueError(f"workflow {workflow.id} has no jobs: a workflow needs at least one")
    inside = {job.id for job in jobs}
    if len(inside) < len(jobs):
        raise _held(sorted(i for i, n in Counter(job.id for job in jobs).items() if n > 1))
    own = sorted(job.id for job in jobs if job.own_id)
    if own:
        held = conn.execute(
            "SELECT id FROM jobsched_jobs WHERE id = ANY(%s) ORDER BY id", (own,)
        ).fetchall()
        if held:
            raise _held([i for (i,) in held])
    # Upstreams outside the workflow, FOR SHARE as add() reads them: one
    # that completes meanwhile waits for this transaction to see its edges.
    outside = sorted({u for job in jobs for u in job.depends_on} - inside)
    status_of: dict[int, str] = {}
    if outside:
        status_of = dict(
            conn.execute(
                "SELECT id, status FROM jobsched_jobs WHERE id = ANY(%s) ORDER BY id FOR SHARE",
                (outside,),
            ).fetchall()
        )
    named = any(job.queue != DEFAULT_QUEUE for job in jobs)
    planned = _sql.plan(jobs, status_of, now, named)
    columns, types = _sql.add_columns(named)
    with conn.cursor() as cur:
        try:
            with cur.copy(
                f"COPY jobsched_jobs ({columns}, workflow) FROM STDIN (FORMAT BINARY)"
            ) as copy:
                copy.set_types([*types, "int8"])
                for row in (*planned.own_rows, *planned.rows):
                    copy.write_row((*row, workflow.id))
        except psycopg.errors.UniqueViolation:
            # An own id another member added since the look above (the COPY
            # waited for its commit): the whole workflow fails.
            raise _held(own) from None
        if planned.edges:
            up, down, policy, state = zip(*planned.edges, strict=True)
            cur.execute(
                "INSERT INTO jobsched_deps (upstream, downstream, on_failure, settled) "
                "SELECT * FROM unnest(%s::bigint[], %s::bigint[], %s::smallint[], %s::smallint[])",
                tuple(map(_sql.int_array, (up, down, policy, state))),
            )
    _sql.add_tenants(conn, planned.tenants)
    added = conn.execute(
        "INSERT INTO jobsched_workflows (id, name, created_at, size) VALUES (%s, %s, %s, %s) "
        "ON CONFLICT (id) DO NOTHING RETURNING id",
        (workflow.id, workflow.name, workflow.created_at, len(jobs)),
    ).fetchone()
    if added is None:
        raise ValueError(f"the store holds a workflow numbered {workflow.id} already")
    if len(planned.changes) < len(jobs):
        _sql.notify(conn)
    return planned.changes


def _held(ids: Sequence[int]) -> ValueError:
    # add() lets a held own id stand; half a workflow would be another's half.
    return ValueError(
        f"the store holds a job with the id of workflow job(s) {list(ids)} already "
        "(an id of your own, given twice): nothing of the workflow was added"
    )


def _rows(conn: _sql.Conn, found: list[tuple[Any, ...]]) -> list[WorkflowRow]:
    """Rows of (id, name, created_at, size), with their jobs' counts by
    status (one read of their jobs by jobsched_jobs_workflow)."""
    ids = [row[0] for row in found]
    counts: dict[int, dict[JobStatus, int]] = {i: {} for i in ids}
    if ids:
        for workflow, status, n in conn.execute(COUNTS, (ids,)):
            counts[workflow][_STATUSES[status]] = int(n)
    return [WorkflowRow(i, name, at, size, counts[i]) for i, name, at, size in found]


def workflow(conn: _sql.Conn, workflow_id: int) -> WorkflowRow | None:
    found = conn.execute(
        "SELECT id, name, created_at, size FROM jobsched_workflows WHERE id = %s", (workflow_id,)
    ).fetchall()
    rows = _rows(conn, found)
    return rows[0] if rows else None


def workflows(
    conn: _sql.Conn, limit: int, before: int | None, unfinished: bool
) -> list[WorkflowRow]:
    where = ["id < %(before)s"] if before is not None else []
    if unfinished:
        where.append(
            f"id IN (SELECT workflow FROM jobsched_jobs WHERE {_UNFINISHED} "
            "AND workflow IS NOT NULL)"
        )
    sql = "SELECT id, name, created_at, size FROM jobsched_workflows"
    if where:
        sql += " WHERE " + " AND ".join(where)
    found = conn.execute(
        sql + " ORDER BY id DESC LIMIT %(limit)s", {"before": before, "limit": limit}
    ).fetchall()
    return _rows(conn, found)


def graph(conn: _sql.Conn, workflow_id: int, limit: int) -> WorkflowGraph | None:
    row = workflow(conn, workflow_id)
    if row is None:
        return None
    found = conn.execute(GRAPH, (OWN_ID_HEAD, workflow_id, limit + 1)).fetchall()
    truncated = len(found) > limit
    jobs = [
        GraphJob(
            i,
            name,
            _STATUSES[status],
            progress,
            attempts,
            finished,
            message,
            None if head is None else own_id_in(bytes(head), i),
        )
        for i, name, status, progress, attempts, finished, message, head in found[:limit]
    ]
    edges = conn.execute(
        "SELECT upstream, downstream, on_failure FROM jobsched_deps "
        "WHERE downstream = ANY(%s) ORDER BY downstream, upstream",
        ([job.id for job in jobs],),
    ).fetchall()
    return WorkflowGraph(row, jobs, [(u, d, int(p)) for u, d, p in edges], truncated)


def cancel_workflow(conn: _sql.Conn, workflow_id: int, now: float) -> tuple[int, list[Change]]:
    """Every unfinished job of the workflow locked; the waiting ones
    cancelled and the running ones flagged by one statement each; then the
    cascade from each cancelled job with a waiting edge to a job outside
    the workflow (its own dependents are cancelled already), and the edges
    of the others settled at once."""
    rows = conn.execute(OPEN, (workflow_id,)).fetchall()
    if not rows:
        return 0, []
    running = [i for i, status in rows if status == "running"]
    waiting = [i for i, status in rows if status != "running"]
    if running:
        conn.execute(
            "UPDATE jobsched_jobs SET cancel_requested = true WHERE id = ANY(%s)", (running,)
        )
    changes = [Change(i, _CANCELLED, "cancelled") for i in waiting]
    if waiting:
        conn.execute(
            "UPDATE jobsched_jobs SET status = 'cancelled', queue = NULL, finished_at = %s, "
            "owner = NULL, lease_until = NULL, last_error = 'cancelled' WHERE id = ANY(%s)",
            (now, waiting),
        )
        roots = conn.execute(
            "SELECT DISTINCT d.upstream FROM jobsched_deps d "
            "JOIN jobsched_jobs j ON j.id = d.downstream "
            "WHERE d.upstream = ANY(%s) AND d.settled = 0 AND j.workflow IS DISTINCT FROM %s "
            "ORDER BY 1",
            (waiting, workflow_id),
        ).fetchall()
        for (root,) in roots:
            changes += _cancels.cascade(conn, root, _CANCELLED, now)
        # The rest's edges, all to jobs of the workflow cancelled above.
        conn.execute(_cancels.SETTLE, {"ended": waiting, "now": now})
    _sql.notify(conn)
    return len(rows), changes


class Workflows(WorkflowReads):
    """The store's workflows: added, read and cancelled."""

    @abstractmethod
    async def _named_queues(self, jobs: Sequence[NewJob]) -> None:
        """The named queues' column and index before a write (``PostgresStore``)."""

    async def add_workflow(self, workflow: NewWorkflow, now: float) -> list[Change]:
        await self._named_queues(workflow.jobs)
        return await self._run(lambda conn: add_workflow(conn, workflow, now))

    async def workflow(self, workflow_id: int) -> WorkflowRow | None:
        return await self._run(lambda conn: workflow(conn, workflow_id), again=True)

    async def workflows(
        self, *, limit: int = 50, before: int | None = None, unfinished: bool = False
    ) -> list[WorkflowRow]:
        limit, before = check_workflows_args(limit=limit, before=before)
        return await self._run(lambda conn: workflows(conn, limit, before, unfinished), again=True)

    async def workflow_graph(self, workflow_id: int, *, limit: int = 2_000) -> WorkflowGraph | None:
        limit = check_limit(limit)
        return await self._run(lambda conn: graph(conn, workflow_id, limit), again=True)

    async def cancel_workflow(self, workflow_id: int, now: float) -> tuple[int, list[Change]]:
        return await self._run(lambda conn: cancel_workflow(conn, workflow_id, now))
