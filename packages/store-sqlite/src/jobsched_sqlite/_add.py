"""Adding jobs to the SQLite store: a batch of submits, a fire's job (a
function of a connection inside ``BEGIN IMMEDIATE``, see ``_sql``)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from jobsched import JobStatus
from jobsched.store import (
    DEFAULT_QUEUE,
    EDGE_FAILED,
    EDGE_MET,
    EDGE_WAITING,
    KEY_WIDTH,
    ON_FAILURE_CANCEL,
    ON_FAILURE_RUN,
    Change,
    NewJob,
)

from . import _own, _queues
from ._sql import count_ended

# The queues (see _schema): ready, waiting for run_at, blocked on upstreams.
_READY, _WAITING, _BLOCKED = 0, 1, 2
_CANCELLED = JobStatus.CANCELLED


class AlreadyFired(Exception):
    """Rolls a fire's transaction back: its job exists already."""


def _padded(key: tuple[float, ...]) -> tuple[float, ...]:
    if len(key) == KEY_WIDTH:
        return key
    if len(key) > KEY_WIDTH:
        raise ValueError(f"a stored sort key has at most {KEY_WIDTH} fields, got {key!r}")
    return tuple(key) + (0.0,) * (KEY_WIDTH - len(key))


_COLUMNS = (
    "id, name, executor, status, queue, k0, k1, k2, run_at, submitted_at, unmet, tenant, "
    "rate_key, payload, schedule, fire_time, finished_at, last_error, args"
)


def _insert(named: bool, workflow: bool) -> str:
    """The INSERT of a job's row: with its queue's column for a batch holding
    a job of a named queue (only such a batch names the column, which it
    makes: see _queues), with its workflow's for a workflow's jobs."""
    columns = _COLUMNS + (", queue_name" if named else "") + (", workflow" if workflow else "")
    return f"INSERT INTO jobs ({columns}) VALUES ({', '.join('?' * (19 + named + workflow))})"


_INSERT = _insert(named=False, workflow=False)
_INSERT_QUEUED = _insert(named=True, workflow=False)


#: The usual job (no dependencies, tenant, rate key or schedule): the other
#: columns keep their defaults. Binding a parameter costs about as much as
#: writing its column, and this is most of a submit's SQL. A registered
#: job's arguments are one parameter more.
_INSERT_PLAIN = (
    "INSERT INTO jobs (id, name, executor, status, queue, k0, k1, k2, run_at, submitted_at, "
    "payload, args) VALUES (?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?)"
)


def add(
    conn: sqlite3.Connection, jobs: Sequence[NewJob], now: float, workflow: int | None = None
) -> list[Change]:
    """Add ``jobs`` (see ``JobStore.add``); with ``workflow``, every row
    names that workflow (``add_workflow``: the jobs are its own)."""
    changes: list[Change] = []
    # Jobs without dependencies go in by the batch (one executemany); a job
    # with some is looked at alone, after the jobs before it went in, as its
    # upstreams may be among them. Jobs with ids of their own go in by the
    # batch too, each only if no job has its id (see _add_own).
    plain: list[tuple[Any, ...]] = []
    rows: list[tuple[Any, ...]] = []
    own: list[tuple[NewJob, bool, tuple[Any, ...]]] = []
    named = any(job.queue != DEFAULT_QUEUE for job in jobs)
    if named:
        _queues.ensure(conn)
    insert = _INSERT_QUEUED if named else _INSERT
    flow: tuple[int, ...] = ()
    if workflow is not None:
        insert, flow = _insert(named, workflow=True), (workflow,)
    for job in jobs:
        k0, k1, k2 = _padded(job.key)
        queue_name = (_queues.stored(job.queue),) if named else ()
        if not job.depends_on:
            ready = _READY if job.run_at <= now else _WAITING
            short = (
                job.tenant is None
                and job.rate_key is None
                and job.schedule is None
                and job.queue == DEFAULT_QUEUE
                and not flow
            )
            if short:
                row: tuple[Any, ...] = (
                    job.id, job.name, job.executor, ready, k0, k1, k2, job.run_at,
                    job.submitted_at, job.payload, job.args,
                )  # fmt: skip
            else:
                row = (
                    job.id, job.name, job.executor, "pending", ready, k0, k1, k2, job.run_at,
                    job.submitted_at, 0, job.tenant, job.rate_key, job.payload, job.schedule,
                    job.fire_time, None, None, job.args, *queue_name, *flow,
                )  # fmt: skip
            if job.own_id:
                own.append((job, short, row))
            else:
                (plain if short else rows).append(row)
            continue
        if plain:
            conn.executemany(_INSERT_PLAIN, plain)
            plain = []
        if rows:
            conn.executemany(insert, rows)
            rows = []
        if own:
            _add_own(conn, own, insert)
            own = []
        waits: list[int] = []  # the rows of the upstreams not ended yet
        # Every edge, kept until the job goes: (upstream row, policy, state).
        edges: list[tuple[int, int, int]] = []
        failed: tuple[int, str] | None = None
        upstream_rows = _own.rows_of(conn, job.depends_on)
        lenient = set(job.run_on_failure)
        upstreams = list(dict.fromkeys(job.depends_on))  # an upstream named twice counts once
        statuses = _statuses(conn, [upstream_rows.get(u, u) for u in upstreams])
        for upstream in upstreams:
            up_row = upstream_rows.get(upstream, upstream)
            found = statuses.get(up_row)
            status = found if found is not None else "is not in the store"
            policy = ON_FAILURE_RUN if upstream in lenient else ON_FAILURE_CANCEL
            if status == "completed":
                edges.append((up_row, policy, EDGE_MET))
            elif status == "pending":
                waits.append(up_row)
                edges.append((up_row, policy, EDGE_WAITING))
            elif found is None or (JobStatus(status).is_terminal and policy == ON_FAILURE_CANCEL):
                # Not in the store: no one can tell how it ended, whatever the policy.
                failed = (upstream, status)
                break
            elif JobStatus(status).is_terminal:
                edges.append((up_row, policy, EDGE_FAILED))
            else:
                waits.append(up_row)
                edges.append((up_row, policy, EDGE_WAITING))
        if job.own_id:
            taken = _own.take(conn, [job.id]).get(job.id)
            job.existed = taken is None  # set anew if a retried transaction runs this again
            if taken is None:
                continue  # an id of the submitter's own that the store holds: that job stands
            number = taken
        else:
            number = job.id
        unmet = len(waits)
        error = None
        queue: int | None
        finished: float | None
        if failed is not None:
            queue, status, finished = None, _CANCELLED.value, now
            error = f"upstream job-{failed[0]} {failed[1]}"
            changes.append(Change(job.id, _CANCELLED, error))
        elif unmet:
            queue, status, finished = _BLOCKED, "pending", None
        else:
            queue = _READY if job.run_at <= now else _WAITING
            status, finished = "pending", None
        conn.execute(
            insert,
            (
                number, job.name, job.executor, status, queue, k0, k1, k2, job.run_at,
                job.submitted_at, unmet, job.tenant, job.rate_key, job.payload,
                job.schedule, job.fire_time, finished, error, job.args, *queue_name, *flow,
            ),
        )  # fmt: skip
        if failed is not None:
            count_ended(conn, {(_CANCELLED.value, job.executor): 1})
        if edges and failed is None:
            conn.executemany(
                "INSERT OR IGNORE INTO deps (upstream, downstream, on_failure, settled) "
                "VALUES (?, ?, ?, ?)",
                [(u, number, policy, state) for u, policy, state in edges],
            )
    if plain:
        conn.executemany(_INSERT_PLAIN, plain)
    if rows:
        conn.executemany(insert, rows)
    if own:
        _add_own(conn, own, insert)
    return changes


#: Upstreams per look-up of their statuses (under SQLite's oldest limit of 999).
_CHUNK = 500


def _statuses(conn: sqlite3.Connection, rows: list[int]) -> dict[int, str]:
    """The status of each of ``rows`` the store holds: one statement per
    few hundred (a fan-in's 10,000 upstreams were 10,000 look-ups), or
    the plain look-up for a job's one upstream."""
    if len(rows) == 1:
        found = conn.execute("SELECT status FROM jobs WHERE id = ?", (rows[0],)).fetchone()
        return {} if found is None else {rows[0]: found[0]}
    out: dict[int, str] = {}
    for start in range(0, len(rows), _CHUNK):
        part = rows[start : start + _CHUNK]
        sql = f"SELECT id, status FROM jobs WHERE id IN ({', '.join('?' * len(part))})"
        out.update(conn.execute(sql, part))
    return out


def _add_own(
    conn: sqlite3.Connection, own: list[tuple[NewJob, bool, tuple[Any, ...]]], insert: str
) -> None:
    """Jobs with ids of their own and no upstreams, each unless the store
    holds a job with its id (then it is flagged ``existed``, and that job
    stands): ``own_ids`` numbers the new ones in rowid order (see
    ``_own.take``), then one ``executemany`` adds their rows. An ``INSERT OR
    IGNORE`` of each job's row, to read its ``rowcount``, cost 1.7x a plain
    batch."""
    numbers = _own.take(conn, [job.id for job, _, _ in own])
    short: list[tuple[Any, ...]] = []
    full: list[tuple[Any, ...]] = []
    for job, is_short, row in own:
        # Popped: the same id again in this batch finds it held, the first one stands.
        number = numbers.pop(job.id, None)
        job.existed = number is None  # set anew if a retried transaction runs this again
        if number is not None:
            (short if is_short else full).append((number, *row[1:]))
    # Plain INSERTs: a number taken here is a bug to hear of, not to ignore.
    if short:
        conn.executemany(_INSERT_PLAIN, short)
    if full:
        conn.executemany(insert, full)
