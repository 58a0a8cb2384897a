"""Takeovers: started attempts whose lease ran out (or whose owner is a dead
local process) taken by a live member, and jobs a gone member claimed ahead
but never started handed back to the queue uncounted."""

from __future__ import annotations

from collections.abc import Sequence

from jobsched import JobStatus
from jobsched.store import Claimed

from ._cancels import cascade
from ._gate import KEY_FILTER, NO_GATE, Gate
from ._sql import DB_NOW, Conn, notify

_CANCELLED = JobStatus.CANCELLED


# Jobs claimed ahead of the workers whose owner is gone before they started
# (started_at NULL), and the owner's own rows it never got (`mine`, see
# _orphans; started or not, they never ran): back to the queue, the attempt the claim numbered not
# counted (a hand-back, as at a stop), cancelled if someone asked to.
#
# Each statement here reads the look's rows by primary key and tests their
# status as `status || '' = 'running'`, which proves no partial index's
# predicate (as the prune's `finished_at + 0`, see _prune.DELETE). Said
# plainly, it let the planner read every entry of jobsched_jobs_running
# (`WHERE status = 'running'`), whose statistics say it is small, and test
# each against the ids: under stale statistics (no running row at the last
# ANALYZE, 20,000 running since) EXPLAIN showed an Index Scan on it with
# `id = ANY(...)` as a Filter; while an xid is held that index keeps an
# entry for every job run since (see _running.SINCE).
# lease_until, NULL on every other waiting row, marks them: their next claim
# starts them (see _TAKE), so a job that kills its member as it starts is
# handed back uncounted at most once per attempt.
HAND_BACK = f"""
WITH gone AS (
    SELECT id FROM jobsched_jobs WHERE id = ANY(%(ids)s) AND status || '' = 'running'
        AND ((started_at IS NULL
            AND ((lease_until < {DB_NOW} AND owner <> %(owner)s) OR owner = ANY(%(dead)s)))
        OR (id = ANY(%(mine)s) AND owner = %(owner)s AND lease_until < {DB_NOW}))
    ORDER BY lease_until LIMIT %(limit)s FOR UPDATE SKIP LOCKED
)
UPDATE jobsched_jobs j SET status = CASE WHEN j.cancel_requested THEN 'cancelled'
        WHEN j.attempts > 1 THEN 'retry_wait' ELSE 'pending' END,
    queue = CASE WHEN j.cancel_requested THEN NULL ELSE 0 END,
    finished_at = CASE WHEN j.cancel_requested THEN %(now)s END,
    last_error = CASE WHEN j.cancel_requested THEN 'cancelled' ELSE j.last_error END,
    attempts = j.attempts - 1, owner = NULL,
    lease_until = CASE WHEN j.cancel_requested THEN NULL ELSE 0 END
FROM gone WHERE j.id = gone.id
RETURNING j.id, j.status
"""


# The owner's own rows it never got that a takeover of its had taken (an
# attempt another member started and ran: ran_by names it): they go back to
# that member, lease lapsed, and the next look takes them over again, so the
# attempt that ran is settled "worker lost" (a hand-back would lose it from
# the history, issue 38) and counted.
UNTAKE = f"""
UPDATE jobsched_jobs SET owner = ran_by
WHERE id = ANY(%(mine)s) AND owner = %(owner)s AND status || '' = 'running'
    AND started_at IS NOT NULL AND ran_by IS NOT NULL AND ran_by <> %(owner)s
    AND lease_until < {DB_NOW}
RETURNING id
"""


def hand_back(
    conn: Conn,
    owner: str,
    limit: int,
    dead: list[str],
    now: float,
    ids: list[int],
    mine: Sequence[int] = (),
) -> int:
    """Hand back jobs claimed ahead by members that are gone and never
    started, and ``owner``'s rows ``mine`` it never got (see HAND_BACK; those
    a takeover of its had taken go back to the member that ran them, see
    UNTAKE), of the running rows ``ids`` (a look's, see _running), in one
    transaction with the cascades of those cancelled; how many."""
    with conn.transaction():
        if mine:
            untaken = {row[0] for row in conn.execute(UNTAKE, {"mine": list(mine), "owner": owner})}
            mine = [i for i in mine if i not in untaken]
            ids = [i for i in ids if i not in untaken]
        rows = conn.execute(
            HAND_BACK,
            {
                "owner": owner,
                "dead": dead,
                "limit": limit,
                "now": now,
                "ids": ids,
                "mine": list(mine),
            },
        ).fetchall()
        for job_id, status in sorted(rows):
            if status == "cancelled":
                cascade(conn, job_id, _CANCELLED, now)
        if rows:
            notify(conn)
    return len(rows)


def take_over(
    conn: Conn,
    owner: str,
    limit: int,
    names: list[str],
    dead: list[str],
    lease: float,
    gate: Gate = NO_GATE,
    *,
    ids: list[int],
) -> list[Claimed]:
    """Started attempts whose lease ran out on the server's clock (or whose
    owner is a dead local process), of the running rows ``ids`` (a look's,
    see _running), now ``owner``'s (ran_by still names the member that ran
    them). Jobs claimed ahead that never started are not taken over but
    handed back (:func:`hand_back`).

    Never ``owner``'s own: a member whose heartbeat could not reach a row for
    a while (a lock held on it) still runs that attempt, and taking it as
    lost settled it as failed under the running worker (whose outcome then
    met a RETRY_WAIT job: ``retry_wait -> completed``). Its next heartbeat
    renews the lease; another member takes it if the member is gone.
    """
    # The old lease (from the locked rows) says when the owner last renewed
    # it: the end of the time the attempt really ran.
    # The rows it updates an InitPlan's array, not a join to the locking
    # read (see _leases.EXTEND: joined, stale statistics ran the read again
    # for every row of the table).
    rows = conn.execute(
        "WITH old AS MATERIALIZED ("
        "SELECT id, lease_until, started_at FROM jobsched_jobs WHERE id = ANY(%s) "
        "AND status || '' = 'running' AND started_at IS NOT NULL "
        f"AND executor = ANY(%s) AND ((lease_until < {DB_NOW} AND owner <> %s) "
        "OR owner = ANY(%s)) AND "
        + KEY_FILTER.replace("%(keys)s", "%s").replace("%(known)s", "%s")
        + " ORDER BY lease_until LIMIT %s FOR UPDATE SKIP LOCKED) "
        f"UPDATE jobsched_jobs j SET owner = %s, lease_until = {DB_NOW} + %s FROM old "
        "WHERE j.id = ANY(ARRAY(SELECT id FROM old)) AND j.id = old.id "
        "RETURNING j.id, j.attempts, j.payload, j.cancel_requested, "
        # Never before its start: a member with a longer lease than this one's.
        "GREATEST(old.lease_until - %s, old.started_at), j.args::text, "
        "CASE WHEN j.args IS NOT NULL THEN j.name END",
        (ids, names, owner, dead, *gate.params().values(), limit, owner, lease, lease),
    ).fetchall()
    return [
        Claimed(
            job_id,
            attempt,
            payload,
            lost=True,
            cancelled=bool(cancel),
            renewed_at=renewed,
            args=args,
            name=name,
        )
        for job_id, attempt, payload, cancel, renewed, args, name in rows
    ]
