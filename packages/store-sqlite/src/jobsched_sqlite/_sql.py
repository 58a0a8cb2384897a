"""The SQLite store's transactions: each a function of a connection inside
``BEGIN IMMEDIATE`` (see ``SQLiteStore._write``), run on the store's thread."""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import replace
from typing import Any

from jobsched._enums import JobStatus
from jobsched._store import (
    KEY_WIDTH,
    Change,
    NewJob,
    Outcome,
    Recorded,
)

from . import _own

_READY, _WAITING, _BLOCKED = 0, 1, 2
_CANCELLED = JobStatus.CANCELLED
_COMPLETED = JobStatus.COMPLETED
_RETRY_WAIT = JobStatus.RETRY_WAIT


class AlreadyFired(Exception):
    """Rolls a fire's transaction back: its job exists already."""


def _padded(key: tuple[float, ...]) -> tuple[float, ...]:
    if len(key) == KEY_WIDTH:
        return key
    if len(key) > KEY_WIDTH:
        raise ValueError(f"a stored sort key has at most {KEY_WIDTH} fields, got {key!r}")
    return tuple(key) + (0.0,) * (KEY_WIDTH - len(key))


_INSERT = (
    "INSERT INTO jobs (id, name, executor, status, queue, k0, k1, k2, run_at, submitted_at, "
    "unmet, tenant, rate_key, payload, schedule, fire_time, finished_at, last_error) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


#: The usual job (no dependencies, tenant, rate key or schedule): the other
#: columns keep their defaults. Binding a parameter costs about as much as
#: writing its column, and this is most of a submit's SQL.
_INSERT_PLAIN = (
    "INSERT INTO jobs (id, name, executor, status, queue, k0, k1, k2, run_at, submitted_at, "
    "payload) VALUES (?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?)"
)


def add(conn: sqlite3.Connection, jobs: Sequence[NewJob], now: float) -> list[Change]:
    changes: list[Change] = []
    # Jobs without dependencies go in by the batch (one executemany); a job
    # with some is looked at alone, after the jobs before it went in, as its
    # upstreams may be among them. Jobs with ids of their own go in by the
    # batch too, each only if no job has its id (see _add_own).
    plain: list[tuple[Any, ...]] = []
    rows: list[tuple[Any, ...]] = []
    own: list[tuple[NewJob, bool, tuple[Any, ...]]] = []
    for job in jobs:
        k0, k1, k2 = _padded(job.key)
        if not job.depends_on:
            ready = _READY if job.run_at <= now else _WAITING
            short = job.tenant is None and job.rate_key is None and job.schedule is None
            if short:
                row: tuple[Any, ...] = (
                    job.id, job.name, job.executor, ready, k0, k1, k2, job.run_at,
                    job.submitted_at, job.payload,
                )  # fmt: skip
            else:
                row = (
                    job.id, job.name, job.executor, "pending", ready, k0, k1, k2, job.run_at,
                    job.submitted_at, 0, job.tenant, job.rate_key, job.payload, job.schedule,
                    job.fire_time, None, None,
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
            conn.executemany(_INSERT, rows)
            rows = []
        if own:
            _add_own(conn, own)
            own = []
        waits: list[int] = []  # the rows of the upstreams not completed yet
        failed: tuple[int, str] | None = None
        upstream_rows = _own.rows_of(conn, job.depends_on)
        for upstream in dict.fromkeys(job.depends_on):  # an upstream named twice counts once
            up_row = upstream_rows.get(upstream, upstream)
            row = conn.execute("SELECT status FROM jobs WHERE id = ?", (up_row,)).fetchone()
            status = row[0] if row is not None else "is not in the store"
            if status == "completed":
                continue
            if row is None or JobStatus(status).is_terminal:
                failed = (upstream, status)
                break
            waits.append(up_row)
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
            _INSERT,
            (
                number, job.name, job.executor, status, queue, k0, k1, k2, job.run_at,
                job.submitted_at, unmet, job.tenant, job.rate_key, job.payload,
                job.schedule, job.fire_time, finished, error,
            ),
        )  # fmt: skip
        if failed is not None:
            count_ended(conn, {(_CANCELLED.value, job.executor): 1})
        if unmet and failed is None:
            # An edge per upstream still to complete: a completion deletes
            # its edges, so one to a completed upstream would never go.
            conn.executemany(
                "INSERT OR IGNORE INTO deps (upstream, downstream) VALUES (?, ?)",
                [(u, number) for u in waits],
            )
    if plain:
        conn.executemany(_INSERT_PLAIN, plain)
    if rows:
        conn.executemany(_INSERT, rows)
    if own:
        _add_own(conn, own)
    return changes


def _add_own(conn: sqlite3.Connection, own: list[tuple[NewJob, bool, tuple[Any, ...]]]) -> None:
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
        conn.executemany(_INSERT, full)


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


#: Outcomes per fenced UPDATE: 9 parameters each, well under SQLite's 32766.
RECORD_CHUNK = 500
_RECORD_ROW = "(?, ?, ?, ?, ?, ?, ?, ?, ?)"


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
    if completed:
        count_completed(conn, completed)
        # Most batches have no dependents at all: one probe instead of one per id.
        if conn.execute("SELECT 1 FROM deps LIMIT 1").fetchone() is not None:
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
        params += (out.id, out.attempt, out.finished_at, out.result)
    params.append(owner)
    return conn.execute(
        "WITH v (id, attempt, finished_at, result) AS "
        f"(VALUES {', '.join(['(?, ?, ?, ?)'] * len(chunk))}) "
        "UPDATE jobs SET status = 'completed', queue = NULL, finished_at = v.finished_at, "
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
        params += (out.error, out.traceback)
    # A retry waits (queue 1) until its run_at, keeping its error as the
    # last one; an end sets finished_at and the result, and keeps the
    # previous error when it has none of its own (a cancel after a retry),
    # except a completion, which clears it (the attempts table keeps it).
    return conn.execute(
        "WITH v (id, attempt, status, queue, run_at, finished_at, result, error, tb) AS "
        f"(VALUES {', '.join([_RECORD_ROW] * len(chunk))}) "
        "UPDATE jobs SET status = v.status, queue = v.queue, "
        "run_at = COALESCE(v.run_at, jobs.run_at), finished_at = v.finished_at, "
        "owner = NULL, lease_until = NULL, result = v.result, "
        "last_error = CASE WHEN v.status = 'retry_wait' THEN v.error "
        "WHEN v.status = 'completed' THEN NULL ELSE COALESCE(v.error, jobs.last_error) END, "
        "last_traceback = CASE WHEN v.status = 'retry_wait' THEN v.tb "
        "WHEN v.status = 'completed' THEN NULL ELSE COALESCE(v.tb, jobs.last_traceback) END "
        "FROM v WHERE jobs.id = v.id AND jobs.owner = ? AND jobs.attempts = v.attempt "
        "AND jobs.status = 'running' "
        "RETURNING jobs.id, jobs.started_at, jobs.ran_by, jobs.executor, jobs.status",
        (*params, owner),
    ).fetchall()


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


def _release(conn: sqlite3.Connection, upstreams: Sequence[int], now: float) -> None:
    """Upstreams completed: count them off their dependents, and queue the free ones."""
    unmet: dict[int, int] = {}
    for start in range(0, len(upstreams), RECORD_CHUNK):
        part = upstreams[start : start + RECORD_CHUNK]
        for (downstream,) in conn.execute(
            f"DELETE FROM deps WHERE upstream IN ({', '.join('?' * len(part))}) "
            "RETURNING downstream",
            part,
        ):
            unmet[downstream] = unmet.get(downstream, 0) + 1
    if not unmet:
        return
    conn.executemany(
        "UPDATE jobs SET unmet = unmet - ? WHERE id = ? AND queue = 2",
        [(n, d) for d, n in unmet.items()],
    )
    # ``now`` is the earliest completion's: a dependent whose run_at is later
    # waits for it in queue 1 (promotion), never runs early.
    conn.executemany(
        "UPDATE jobs SET queue = CASE WHEN run_at <= ? THEN 0 ELSE 1 END "
        "WHERE id = ? AND queue = 2 AND unmet = 0",
        [(now, d) for d in unmet],
    )


def _cascade(conn: sqlite3.Connection, root: int, status: JobStatus, now: float) -> list[Change]:
    """An upstream did not complete (``root``, a row's number): cancel every
    job downstream of it, transitively; the changes name them by their ids."""
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
            error = f"upstream job-{_own.id_of(conn, upstream)} {how}"
            _finish(conn, job_id, _CANCELLED, now, error)
            changes.append(Change(_own.id_of(conn, job_id), _CANCELLED, error))
            todo.append((job_id, _CANCELLED.value))
    return changes


def _take_edges(conn: sqlite3.Connection, upstream: int) -> list[int]:
    rows: Iterable[tuple[Any, ...]] = conn.execute(
        "DELETE FROM deps WHERE upstream = ? RETURNING downstream", (upstream,)
    ).fetchall()
    return [d for (d,) in rows]


def prune(conn: sqlite3.Connection, keep: int, batch: int) -> int:
    """Delete up to ``batch`` of the oldest finished jobs beyond the newest
    ``keep``, with their attempts; how many went."""
    gone = conn.execute(
        "DELETE FROM jobs WHERE id IN (SELECT id FROM jobs WHERE finished_at IS NOT NULL "
        "ORDER BY finished_at DESC LIMIT ? OFFSET ?) RETURNING id, executor, status",
        (batch, keep),
    ).fetchall()
    if not gone:
        return 0
    completed: dict[str, int] = {}
    ended: dict[tuple[str, str], int] = {}
    for _, executor, status in gone:
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
    ids = [job_id for job_id, _, _ in gone]
    conn.execute(f"DELETE FROM attempts WHERE job_id IN ({', '.join('?' * len(ids))})", ids)
    _own.forget(conn, ids)
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
