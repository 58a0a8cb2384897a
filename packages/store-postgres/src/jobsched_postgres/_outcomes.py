"""The PostgreSQL store's ends of jobs: a batch of outcomes, fenced on owner
and attempt (the failure cascade and cancels are in ``_cancels``). A
function of a connection, run on one of the store's threads (see
``PostgresStore._tx``)."""

from __future__ import annotations

import logging
import struct
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from jobsched import JobStatus
from jobsched.store import Change, Outcome, Recorded

from ._cancels import cascade
from ._sql import FINISHED, Conn, notify

logger = logging.getLogger("jobsched")

_BLOCKED = 2
_CANCELLED = JobStatus.CANCELLED
_COMPLETED = JobStatus.COMPLETED
_RETRY_WAIT = JobStatus.RETRY_WAIT


# Every row of a batch, locked for the transaction and looked at: the fence
# (owner and attempt) and a cancel request. A row another session holds
# locked (an operator's SELECT ... FOR UPDATE, a cancel committing) is
# skipped, not waited for: the batch's other outcomes are written at once
# (their jobs are no longer heartbeated, so waiting cost them their leases),
# and record() tries the skipped ones again. One table read by its primary
# key, so no statistics can give it a worse plan.
_LOOK = (
    "SELECT id, owner, attempts, cancel_requested FROM jobsched_jobs "
    "WHERE id = ANY(%s) FOR NO KEY UPDATE SKIP LOCKED"
)

# Every outcome of a batch in one statement: only rows the look locked and
# found fenced (owner and attempt) reach it, so it joins the outcomes to
# their rows by id and nothing else. (A filter on the owner made the
# planner trust its estimate of this member's running rows, stale as soon
# as a queue moves: it took a batch of 2,000 for one row and compared every
# pair, 4 million, 1.2 s for one statement where 30 ms do.) A retry waits in
# queue 1 until its run_at; a terminal outcome ends the row. The same
# statement writes the rows of the attempts that did not complete (a
# completed one is its job's row) and lets completed upstreams count off
# their dependents (the free ones queue), so a batch is one statement after
# its look. An attempt's row is new (the upsert only guards against writing
# one twice; its conflict check probes the primary key, where an UPDATE ...
# FROM chose to scan the whole table). Dependents are never RUNNING, so the
# two updates of jobsched_jobs touch different rows. The completed ids go to
# the dependency index as one array (one scan), not joined (a probe each:
# three times as long). A met edge is kept, settled (1), not deleted: the
# workflow graph, the retention guard and a dependent's inputs read it. Only
# waiting edges are met (a retried upstream's settled 2 ones were counted
# off): `settled < 1`, not `= 0`, which the planner without statistics on
# the edges takes for 0.5% of them, estimates one edge met, and joins the
# blocked rows to the met ones in a nested loop (`met` read once per blocked
# row: the quadratic shape test_big_batches_plan_by_id_... pins out).
_RECORD = """
WITH o AS (
    SELECT * FROM unnest(%(ids)s::bigint[], %(attempts)s::int[], %(statuses)s::text[],
        %(finished)s::float8[], %(run_at)s::float8[], %(results)s::bytea[],
        %(errors)s::text[], %(tracebacks)s::text[], %(started)s::float8[],
        %(progress)s::float8[], %(messages)s::text[])
    AS o(id, attempt, status, finished_at, run_at, result, error, tb, started_at, progress, pm)
),
written AS (
    UPDATE jobsched_jobs AS j SET
        status = o.status,
        queue = CASE WHEN o.status = 'retry_wait' THEN 1 END,
        run_at = CASE WHEN o.status = 'retry_wait' THEN o.run_at ELSE j.run_at END,
        finished_at = CASE WHEN o.status = 'retry_wait' THEN NULL ELSE o.finished_at END,
        started_at = COALESCE(o.started_at, j.started_at),
        owner = NULL,
        lease_until = NULL,
        result = CASE WHEN o.status = 'retry_wait' THEN j.result ELSE o.result END,
        last_error = CASE WHEN o.status = 'retry_wait' THEN o.error
            WHEN o.status = 'completed' THEN NULL
            ELSE COALESCE(o.error, j.last_error) END,
        last_traceback = CASE WHEN o.status = 'retry_wait' THEN o.tb
            WHEN o.status = 'completed' THEN NULL
            ELSE COALESCE(o.tb, j.last_traceback) END,
        -- A retry clears the progress: the next attempt starts with none.
        progress = CASE WHEN o.status = 'retry_wait' THEN NULL
            ELSE COALESCE(o.progress, j.progress) END,
        progress_message = CASE WHEN o.status = 'retry_wait' THEN NULL
            ELSE COALESCE(o.pm, j.progress_message) END
    FROM o
    WHERE j.id = o.id AND j.attempts = o.attempt
    RETURNING j.id, o.attempt, o.status, o.finished_at, o.error, j.started_at, j.ran_by
),
closed AS (
    INSERT INTO jobsched_attempts AS a (job_id, attempt, owner, started_at, finished_at,
        status, error)
    SELECT id, attempt, COALESCE(ran_by, %(owner)s), COALESCE(started_at, finished_at),
        finished_at, status, error FROM written WHERE status <> 'completed'
    ON CONFLICT (job_id, attempt) DO UPDATE SET finished_at = excluded.finished_at,
        status = excluded.status, error = excluded.error
),
gone AS (
    UPDATE jobsched_deps SET settled = 1 WHERE upstream = ANY(ARRAY(
        SELECT id FROM written WHERE status = 'completed')) AND settled < 1
    RETURNING downstream
),
met AS (SELECT downstream, COUNT(*) AS n FROM gone GROUP BY downstream),
freed AS (
    UPDATE jobsched_jobs AS j SET unmet = j.unmet - met.n,
        queue = CASE WHEN j.unmet > met.n THEN 2 WHEN j.run_at <= %(now)s THEN 0 ELSE 1 END
    FROM met WHERE j.id = met.downstream AND j.queue = 2
    RETURNING j.queue
)
SELECT id, NULL::smallint FROM written UNION ALL SELECT NULL, queue FROM freed
"""

# The usual outcome, a completion with nothing but its time and result:
# four arrays to send and an UPDATE of the columns it changes (the eight of
# _RECORD cost a batch of 64 no-op jobs about twice the server and client
# time). Its dependents count off as in _RECORD.
_COMPLETE = """
WITH o AS (
    SELECT * FROM unnest(%(ids)s::bigint[], %(attempts)s::int[], %(finished)s::float8[],
        %(results)s::bytea[], %(started)s::float8[])
    AS o(id, attempt, finished_at, result, started_at)
),
written AS (
    UPDATE jobsched_jobs AS j SET status = 'completed', queue = NULL,
        finished_at = o.finished_at, started_at = COALESCE(o.started_at, j.started_at),
        owner = NULL, lease_until = NULL, result = o.result,
        last_error = NULL, last_traceback = NULL
    FROM o
    WHERE j.id = o.id AND j.attempts = o.attempt
    RETURNING j.id, 'completed' AS status
),""" + _RECORD[_RECORD.index("gone AS (") :]


#: A result at least this big is left out of the batch's arrays and streamed
#: in by a binary COPY, a slice at a time: in a bytea[] array this process
#: held about six copies of it (hex text, the array, libpq's buffer), as one
#: parameter two.
BIG_RESULT = 1 << 20
_SLICE = 1 << 20
_COPY_HEADER = b"PGCOPY\n\xff\r\n\x00" + bytes(8)  # the signature, no flags, no extension


def _big(result: bytes | None) -> bool:
    return result is not None and len(result) >= BIG_RESULT


def _write_big_results(conn: Conn, done: Sequence[Outcome]) -> None:
    """The big results of the outcomes just written, in the same transaction."""
    big = [out for out in done if _big(out.result)]
    if not big:
        return
    if conn.execute("SELECT to_regclass('pg_temp.jobsched_big_results')").fetchone()[0] is None:  # type: ignore[index]
        conn.execute(
            "CREATE TEMP TABLE jobsched_big_results (id bigint, result bytea) ON COMMIT DELETE ROWS"
        )
    with (
        conn.cursor() as cursor,
        cursor.copy("COPY jobsched_big_results (id, result) FROM STDIN (FORMAT BINARY)") as copy,
    ):
        copy.write(_COPY_HEADER)
        for out in big:
            assert out.result is not None
            # A tuple: two fields, an 8-byte id, then the result's length and bytes.
            copy.write(struct.pack("!hiqi", 2, 8, out.id, len(out.result)))
            with memoryview(out.result) as view:
                for start in range(0, len(view), _SLICE):
                    copy.write(view[start : start + _SLICE])
        copy.write(struct.pack("!h", -1))
    conn.execute(
        "UPDATE jobsched_jobs AS j SET result = b.result FROM jobsched_big_results AS b "
        "WHERE j.id = b.id"
    )


def _arrays(outs: list[Outcome], owner: str, now: float, *, full: bool = False) -> dict[str, Any]:
    """A batch's parameters: _COMPLETE's four arrays, or all of _RECORD's (progress included)."""
    params: dict[str, Any] = {
        "ids": [o.id for o in outs],
        "attempts": [o.attempt for o in outs],
        "finished": [o.finished_at for o in outs],
        "results": [None if _big(o.result) else o.result for o in outs],
        "started": [o.started_at for o in outs],
        "owner": owner,
        "now": now,
    }
    if full:
        params["statuses"] = [o.status.value for o in outs]
        params["run_at"] = [o.run_at for o in outs]
        params["errors"] = [o.error for o in outs]
        params["tracebacks"] = [o.traceback for o in outs]
        params["progress"] = [o.progress for o in outs]
        params["messages"] = [o.progress_message for o in outs]
    return params


def record(conn: Conn, owner: str, outcomes: Sequence[Outcome], *, wait: float = 0.0) -> Recorded:
    """Write a batch of outcomes; call it outside a transaction (each try is
    one of its own).

    :param wait: seconds to keep trying the outcomes whose rows another
        session holds locked (the rest are written at once). One still
        locked then is given up on, logged, and counted refused: its lease
        lapses and another member runs the job again (at least once), where
        waiting longer held up every later outcome of this member.
    """
    recorded = Recorded()
    if not outcomes:
        return recorded
    # One outcome per job and statement: of two for the same job, the later
    # attempt's is kept and the other refused. A member's outcome can wait
    # out an outage in its batch while the job is taken over, retried, and
    # claimed by the same member again: keeping the first (stale) one
    # refused both, and the newer attempt's lease lapsed.
    batch: dict[int, Outcome] = {}
    for out in outcomes:
        kept = batch.get(out.id)
        if kept is None:
            batch[out.id] = out
        elif out.attempt > kept.attempt:
            recorded.refused.append(kept.id)
            batch[out.id] = out
        else:
            recorded.refused.append(out.id)
    rows = list(batch.values())
    for out in rows:
        if out.status is _RETRY_WAIT and out.run_at is None:
            raise ValueError(f"a RETRY_WAIT outcome needs run_at (job {out.id})")
    deadline = time.monotonic() + wait
    pause = 0.02
    while rows:
        locked = _record(conn, owner, rows, recorded)
        if not locked:
            break
        if time.monotonic() >= deadline:
            logger.warning(
                "the outcomes of %s could not be written: their rows stayed locked by "
                "another session (an open SELECT ... FOR UPDATE?) for %.3g s; their leases "
                "lapse and the jobs run again",
                ", ".join(f"job-{i}" for i in sorted(locked)),
                wait,
            )
            recorded.refused.extend(sorted(locked))
            break
        time.sleep(pause)
        pause = min(pause * 2, 0.2)
        rows = [o for o in rows if o.id in locked]
    return recorded


def _record(conn: Conn, owner: str, rows: list[Outcome], recorded: Recorded) -> set[int]:
    """Write ``rows`` (one outcome per job) into ``recorded``, in one
    transaction; the ids whose rows another session held locked (neither
    written nor refused)."""
    now = max(o.finished_at for o in rows)
    with conn.transaction():
        looked = _look(conn, rows)
        skipped = {o.id for o in rows if o.id not in looked}
        if skipped:
            # Not found by the look: held by another session, or not there
            # at all (pruned, retried away: refused like any fenced outcome).
            skipped = {
                job_id
                for (job_id,) in conn.execute(
                    "SELECT id FROM jobsched_jobs WHERE id = ANY(%s)", (sorted(skipped),)
                )
            }
        # Only a claim or a takeover sets the owner, and every end of an
        # attempt clears it: a row with this member's owner and the
        # outcome's attempt is RUNNING that attempt here.
        fenced = [o for o in rows if looked.get(o.id, (None, 0, False))[:2] == (owner, o.attempt)]
        replaced = {o.id: o for o in fenced if o.status is _RETRY_WAIT and looked[o.id][2]}
        if replaced:
            fenced = [_cancel_wins(o) if o.id in replaced else o for o in fenced]
        plain = [o for o in fenced if o.plain]
        rest = [o for o in fenced if not o.plain]
        result: list[tuple[Any, ...]] = []
        # Prepared at their first run on a connection, as the claim is (see
        # _claim.PREPARE_CLAIM): each round of outcomes runs them.
        if plain:
            result += conn.execute(_COMPLETE, _arrays(plain, owner, now), prepare=True).fetchall()
        if rest:
            result += conn.execute(
                _RECORD, _arrays(rest, owner, now, full=True), prepare=True
            ).fetchall()
        written = {job_id for job_id, _ in result if job_id is not None}
        recorded.refused.extend(o.id for o in rows if o.id not in written and o.id not in skipped)
        done = [o for o in fenced if o.id in written]
        _write_big_results(conn, done)
        wake = any(o.status is _RETRY_WAIT for o in done) or any(
            queue != _BLOCKED for job_id, queue in result if job_id is None
        )
        fixed = [replaced[o.id] for o in done if o.id in replaced]
        if fixed:
            # The attempt itself failed: its row says how, as for any retry.
            conn.execute(
                "UPDATE jobsched_attempts AS a SET status = 'retry_wait', error = f.error "
                "FROM unnest(%s::bigint[], %s::int[], %s::text[]) AS f(id, attempt, error) "
                "WHERE a.job_id = f.id AND a.attempt = f.attempt",
                ([o.id for o in fixed], [o.attempt for o in fixed], [o.error for o in fixed]),
            )
        for out in done:
            if out.status.is_terminal and out.status is not _COMPLETED:
                if out.id in replaced:
                    # The member recorded a retry: its view follows the cancel.
                    recorded.changes.append(Change(out.id, _CANCELLED, "cancelled"))
                recorded.changes.extend(cascade(conn, out.id, out.status, out.finished_at))
        if wake:
            notify(conn)
        if any(o.status.is_terminal for o in done):
            notify(conn, FINISHED)  # wakes wait() in every member, not the claimers
    return skipped


def _look(conn: Conn, rows: list[Outcome]) -> dict[int, tuple[str | None, int, bool]]:
    """Lock the rows of ``rows`` that no other session holds (see _LOOK):
    each one's owner, attempt and cancel request, by id.

    The lock lasts until the outcomes commit. A retry must not be written
    past a cancel request: the request is a flag on the running row that
    reaches the owner with its next heartbeat, an attempt that fails before
    then must not retry, or the next claim clears the flag and the cancel is
    lost (cancel() said True). A cancel committing meanwhile holds the row,
    so it is skipped here and seen when record() tries it again.
    """
    found = conn.execute(_LOOK, (sorted(o.id for o in rows),), prepare=True).fetchall()
    return {row[0]: (row[1], row[2], row[3]) for row in found}


def _cancel_wins(retry: Outcome) -> Outcome:
    """A retry of a job someone asked to cancel while the attempt ran: its
    CANCELLED end instead."""
    return replace(retry, status=_CANCELLED, run_at=None, error="cancelled", traceback=None)
