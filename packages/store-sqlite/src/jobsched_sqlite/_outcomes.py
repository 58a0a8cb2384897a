"""Recording attempts' outcomes in the SQLite store: fenced updates by the
batch, the attempt rows, releasing dependents and the cascade (a function
of a connection inside ``BEGIN IMMEDIATE``, see ``_sql``)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

from jobsched import JobStatus
from jobsched.store import EDGE_MET, Change, Outcome, Recorded

from . import _own
from ._sql import ENDED, _cascade, count_completed, count_ended, count_off

_WAITING = 1  # the queue of jobs waiting for run_at (see _schema)
_CANCELLED = JobStatus.CANCELLED
_COMPLETED = JobStatus.COMPLETED
_RETRY_WAIT = JobStatus.RETRY_WAIT


def write_attempts(
    conn: sqlite3.Connection,
    owner: str,
    ended: Sequence[Outcome],
    ran: dict[int, tuple[float | None, str | None]],
) -> None:
    """The rows of accepted attempts that did not complete (a completed one
    is its job's row). ``ran``: each job's ``(started_at, ran_by)``, which
    name the member that started the attempt, a lost one's too."""
    rows = [
        (o.id, o.attempt, ran[o.id][1] or owner, ran[o.id][0] or o.finished_at,
         o.finished_at, o.status.value, o.error)
        for o in ended
        if o.status is not _COMPLETED
    ]  # fmt: skip
    if rows:
        conn.executemany(
            "INSERT INTO attempts (job_id, attempt, owner, started_at, finished_at, status, "
            "error) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (job_id, attempt) DO UPDATE SET "
            "finished_at = excluded.finished_at, status = excluded.status, error = excluded.error",
            rows,
        )


#: A result at least this big is left out of the batch's UPDATE (its VALUES
#: table copies it about six times) and written by an UPDATE of its own,
#: which copies it twice (the bound parameter, the row's record).
BIG_RESULT = 1 << 20

#: Outcomes per fenced UPDATE: 12 parameters each, well under SQLite's 32766.
RECORD_CHUNK = 500
_RECORD_ROW = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"


def _cancel_wins(
    conn: sqlite3.Connection, outcomes: Sequence[Outcome]
) -> tuple[list[Outcome], dict[int, Outcome]]:
    """Retries of jobs someone asked to cancel while the attempt ran become
    CANCELLED ends; also the retries replaced, by id (their attempt rows).

    The request is a flag on the running row that reaches the owner with its
    next heartbeat; an attempt that fails before then must not retry, or the
    next claim clears the flag and the cancel is lost (cancel() said True).
    """
    retries = [o.id for o in outcomes if o.status is _RETRY_WAIT]
    if not retries:
        return list(outcomes), {}
    flagged: set[int] = set()
    for start in range(0, len(retries), RECORD_CHUNK):
        part = retries[start : start + RECORD_CHUNK]
        flagged.update(
            job_id
            for (job_id,) in conn.execute(
                f"SELECT id FROM jobs WHERE id IN ({', '.join('?' * len(part))}) "
                "AND status = 'running' AND cancel_requested = 1",
                part,
            )
        )
    if not flagged:
        return list(outcomes), {}
    replaced = {o.id: o for o in outcomes if o.status is _RETRY_WAIT and o.id in flagged}
    return [
        replace(o, status=_CANCELLED, run_at=None, error="cancelled", traceback=None)
        if replaced.get(o.id) is o
        else o
        for o in outcomes
    ], replaced


def record(conn: sqlite3.Connection, owner: str, outcomes: Sequence[Outcome]) -> Recorded:
    recorded = Recorded()
    # Own-id jobs by their rows' numbers here; the changes and refusals
    # name them as the scheduler knows them.
    rows = _own.rows_of(conn, [o.id for o in outcomes])
    ids = {row: job_id for job_id, row in rows.items()}
    if rows:
        outcomes = [replace(o, id=rows[o.id]) if o.id in rows else o for o in outcomes]
    outcomes, retries = _cancel_wins(conn, outcomes)
    big = {o.id: o.result for o in outcomes if o.result is not None and len(o.result) >= BIG_RESULT}
    if big:
        outcomes = [replace(o, result=None) if o.id in big else o for o in outcomes]
    accepted: list[Outcome] = []
    ran: dict[int, tuple[float | None, str | None]] = {}
    completed: dict[str, int] = {}  # executor -> jobs this batch completed
    ended: dict[tuple[str, str], int] = {}  # (status, executor) -> its other ends
    for chunk in _chunks(outcomes):
        ok: dict[int, tuple[float | None, str | None]] = {}
        plain = [o for o in chunk if o.plain]
        if plain:
            for job_id, executor in _complete(conn, owner, plain):
                ok[job_id] = (None, None)
                completed[executor] = completed.get(executor, 0) + 1
        if len(plain) < len(chunk):
            rest = [o for o in chunk if not o.plain]
            for job_id, started, ran_by, executor, status in _record_chunk(conn, owner, rest):
                ok[job_id] = (started, ran_by)
                if status == "completed":
                    completed[executor] = completed.get(executor, 0) + 1
                elif status in ENDED:
                    ended[status, executor] = ended.get((status, executor), 0) + 1
        for out in chunk:
            if out.id in ok:
                accepted.append(out)
            else:
                recorded.refused.append(ids.get(out.id, out.id))
        ran.update(ok)
    for out in accepted:
        if out.id in big:
            conn.execute("UPDATE jobs SET result = ? WHERE id = ?", (big[out.id], out.id))
    if completed:
        count_completed(conn, completed)
        # Most batches have no dependents at all: one probe instead of one
        # per id (of the waiting edges: the settled ones are kept, deps_waiting).
        if conn.execute("SELECT 1 FROM deps WHERE settled = 0 LIMIT 1").fetchone() is not None:
            done = [out for out in accepted if out.status is _COMPLETED]
            _release(conn, [out.id for out in done], min(o.finished_at for o in done))
    if ended:
        count_ended(conn, ended)
    for out in accepted:
        if out.status.is_terminal and out.status is not _COMPLETED:
            if out.id in retries:
                # The member recorded a retry: its view follows the cancel.
                recorded.changes.append(Change(ids.get(out.id, out.id), _CANCELLED, "cancelled"))
            recorded.changes.extend(_cascade(conn, out.id, out.status, out.finished_at))
    # The attempt itself failed: its row says how, as for any retry.
    write_attempts(conn, owner, [retries.get(o.id, o) for o in accepted], ran)
    return recorded


def _chunks(outcomes: Sequence[Outcome]) -> Iterator[list[Outcome]]:
    """Runs of outcomes for one UPDATE each: a job twice in a run would be
    updated once, so a second outcome of one job starts the next run (and is
    refused by the fence, as the first one ended the attempt)."""
    chunk: list[Outcome] = []
    ids: set[int] = set()
    for out in outcomes:
        if out.id in ids or len(chunk) == RECORD_CHUNK:
            yield chunk
            chunk, ids = [], set()
        chunk.append(out)
        ids.add(out.id)
    if chunk:
        yield chunk


def _complete(
    conn: sqlite3.Connection, owner: str, chunk: Sequence[Outcome]
) -> list[tuple[int, str]]:
    """Plain completions in one fenced UPDATE of the columns they change
    (four parameters each, not nine); the ids written, with their executors."""
    params: list[Any] = []
    for out in chunk:
        params += (out.id, out.attempt, out.finished_at, out.result, out.started_at)
    params.append(owner)
    return conn.execute(
        "WITH v (id, attempt, finished_at, result, started_at) AS "
        f"(VALUES {', '.join(['(?, ?, ?, ?, ?)'] * len(chunk))}) "
        "UPDATE jobs SET status = 'completed', queue = NULL, finished_at = v.finished_at, "
        "started_at = COALESCE(v.started_at, jobs.started_at), "
        "owner = NULL, lease_until = NULL, result = v.result, last_error = NULL, "
        "last_traceback = NULL "
        "FROM v WHERE jobs.id = v.id AND jobs.owner = ? AND jobs.attempts = v.attempt "
        "AND jobs.status = 'running' RETURNING jobs.id, jobs.executor",
        params,
    ).fetchall()


def _record_chunk(
    conn: sqlite3.Connection, owner: str, chunk: Sequence[Outcome]
) -> list[tuple[Any, ...]]:
    """Write a run of outcomes in one fenced UPDATE; the rows it wrote, each
    ``(id, started_at, ran_by, executor, status)``."""
    params: list[Any] = []
    for out in chunk:
        if out.status is _RETRY_WAIT:
            assert out.run_at is not None
            params += (out.id, out.attempt, "retry_wait", _WAITING, out.run_at, None, None)
        else:
            params += (out.id, out.attempt, out.status.value, None, None, out.finished_at)
            params.append(out.result)
        params += (out.error, out.traceback, out.started_at, out.progress, out.progress_message)
    # A retry waits (queue 1) until its run_at, keeping its error as the
    # last one; an end sets finished_at and the result, and keeps the
    # previous error when it has none of its own (a cancel after a retry),
    # except a completion, which clears it (the attempts table keeps it).
    return conn.execute(
        "WITH v (id, attempt, status, queue, run_at, finished_at, result, error, tb, "
        f"started_at, progress, pm) AS (VALUES {', '.join([_RECORD_ROW] * len(chunk))}) "
        "UPDATE jobs SET status = v.status, queue = v.queue, "
        "started_at = COALESCE(v.started_at, jobs.started_at), "
        "run_at = COALESCE(v.run_at, jobs.run_at), finished_at = v.finished_at, "
        "owner = NULL, lease_until = NULL, result = v.result, "
        "last_error = CASE WHEN v.status = 'retry_wait' THEN v.error "
        "WHEN v.status = 'completed' THEN NULL ELSE COALESCE(v.error, jobs.last_error) END, "
        "last_traceback = CASE WHEN v.status = 'retry_wait' THEN v.tb "
        "WHEN v.status = 'completed' THEN NULL ELSE COALESCE(v.tb, jobs.last_traceback) END, "
        # The attempt's last progress, when it reported any (None: as it was);
        # a retry clears it, so the next attempt starts with none.
        "progress = CASE WHEN v.status = 'retry_wait' THEN NULL "
        "ELSE COALESCE(v.progress, jobs.progress) END, "
        "progress_message = CASE WHEN v.status = 'retry_wait' THEN NULL "
        "ELSE COALESCE(v.pm, jobs.progress_message) END "
        "FROM v WHERE jobs.id = v.id AND jobs.owner = ? AND jobs.attempts = v.attempt "
        "AND jobs.status = 'running' "
        "RETURNING jobs.id, jobs.started_at, jobs.ran_by, jobs.executor, jobs.status",
        (*params, owner),
    ).fetchall()


def _release(conn: sqlite3.Connection, upstreams: Sequence[int], now: float) -> None:
    """Upstreams completed: settle their edges (kept: the workflow graph, the
    retention guard and a dependent's inputs read them), count them off
    their dependents, and queue the free ones."""
    unmet: dict[int, int] = {}
    for start in range(0, len(upstreams), RECORD_CHUNK):
        part = upstreams[start : start + RECORD_CHUNK]
        for (downstream,) in conn.execute(
            f"UPDATE deps SET settled = {EDGE_MET} WHERE upstream IN "
            f"({', '.join('?' * len(part))}) AND settled = 0 RETURNING downstream",
            part,
        ):
            unmet[downstream] = unmet.get(downstream, 0) + 1
    if unmet:
        count_off(conn, unmet, now)
