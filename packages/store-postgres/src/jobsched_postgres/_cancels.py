"""The PostgreSQL store's cancels: the failure cascade through a job's
dependents, an operator's cancel of queued jobs (running ones are flagged
for their owner), and the cancelled jobs among those a member hands back.
Each a function of a connection, run inside one transaction."""

from __future__ import annotations

from collections.abc import Collection

from jobsched import JobStatus
from jobsched.store import Change

from ._sql import Conn, notify

_CANCELLED = JobStatus.CANCELLED


# Everything downstream of a job that did not complete, transitively, through
# its waiting "cancel" edges to jobs still waiting (only they are cancelled,
# and only through them does the cascade go on), with the upstream each was
# reached from first. A "run" edge stops the walk: its dependent is counted
# off instead (SETTLE).
_CASCADE = """
WITH RECURSIVE down(id, up, how) AS (
    SELECT d.downstream, d.upstream, %(how)s::text
    FROM jobsched_deps d JOIN jobsched_jobs j ON j.id = d.downstream
    WHERE d.upstream = %(root)s AND d.on_failure = 0 AND d.settled = 0
      AND j.status IN ('pending', 'retry_wait')
  UNION
    SELECT d.downstream, d.upstream, 'cancelled'
    FROM down JOIN jobsched_deps d ON d.upstream = down.id
    JOIN jobsched_jobs j ON j.id = d.downstream
    WHERE d.on_failure = 0 AND d.settled = 0 AND j.status IN ('pending', 'retry_wait')
)
SELECT DISTINCT ON (id) id, up, how FROM down ORDER BY id, up
"""

# The waiting edges of the jobs that ended (the root and those it
# cancelled) settled by a failure (2), kept: a retry of a dependent does not
# wait for them again. The dependents of their "run" edges still blocked
# count them off as a completion does (the free ones queue); a dependent
# cancelled above is no longer blocked, and is left alone. `settled < 1`:
# see _outcomes._RECORD's `gone`, the plan it keeps.
SETTLE = """
WITH settled AS (
    UPDATE jobsched_deps SET settled = 2
    WHERE upstream = ANY(%(ended)s) AND settled < 1
    RETURNING downstream, on_failure
),
met AS (
    SELECT downstream, count(*) AS n FROM settled WHERE on_failure = 1 GROUP BY downstream
)
UPDATE jobsched_jobs AS j SET unmet = j.unmet - met.n,
    queue = CASE WHEN j.unmet > met.n THEN 2 WHEN j.run_at <= %(now)s THEN 0 ELSE 1 END
FROM met WHERE j.id = met.downstream AND j.queue = 2
RETURNING j.queue
"""


def cascade(conn: Conn, root: int, status: JobStatus, now: float) -> list[Change]:
    """An upstream did not complete: settle its edges, cancel every job
    downstream of it through "cancel" edges, transitively, and count off
    the dependents of the "run" edges of it and of the jobs cancelled.

    Four statements however long the chain (a recursive query, not a
    round trip per dependent); each dependent's reason names its own upstream.
    """
    # The planner, without statistics on a young table, may hash-join the
    # whole edge table at every step of the recursion (quadratic: a 5,000
    # chain took 44 s); an index probe per step is what a walk needs.
    conn.execute("SET LOCAL enable_hashjoin = off")
    conn.execute("SET LOCAL enable_mergejoin = off")
    reached = conn.execute(_CASCADE, {"root": root, "how": status.value}).fetchall()
    conn.execute("RESET enable_hashjoin")
    conn.execute("RESET enable_mergejoin")
    errors = {job_id: f"upstream job-{up} {how}" for job_id, up, how in reached}
    cancelled: set[int] = set()
    if errors:
        # Blocked rows (queue 2) no claim can take; the status check stands
        # against a concurrent cancel.
        cancelled = {
            job_id
            for (job_id,) in conn.execute(
                "UPDATE jobsched_jobs AS j SET status = 'cancelled', queue = NULL, "
                "finished_at = %s, owner = NULL, lease_until = NULL, last_error = c.error "
                "FROM unnest(%s::bigint[], %s::text[]) AS c(id, error) "
                "WHERE j.id = c.id AND j.status IN ('pending', 'retry_wait') RETURNING j.id",
                (now, list(errors), list(errors.values())),
            ).fetchall()
        }
    freed = conn.execute(SETTLE, {"ended": [root, *sorted(cancelled)], "now": now}).fetchall()
    if any(queue == 0 for (queue,) in freed):
        notify(conn)
    return [Change(i, _CANCELLED, errors[i]) for i in sorted(cancelled)]


def finish(conn: Conn, job_id: int, status: JobStatus, now: float, error: str | None) -> None:
    conn.execute(
        "UPDATE jobsched_jobs SET status = %s, queue = NULL, finished_at = %s, owner = NULL, "
        "lease_until = NULL, last_error = COALESCE(%s, last_error) WHERE id = %s",
        (status.value, now, error, job_id),
    )


def cancel_released(conn: Conn, owner: str, ids: Collection[int], now: float) -> None:
    """Of jobs a member hands back unfinished, end those someone asked to
    cancel CANCELLED (their attempt not counted, as for any hand-back): a
    released row with a cancel request would be claimed again, and the claim
    clears the request."""
    # An owner is set on RUNNING rows only; saying status = 'running' too
    # let the planner read every running row by an index of the running
    # rows (see Leases.extend).
    rows = conn.execute(
        "UPDATE jobsched_jobs SET status = 'cancelled', queue = NULL, finished_at = %s, "
        "owner = NULL, lease_until = NULL, attempts = attempts - 1, last_error = 'cancelled' "
        "WHERE id = ANY(%s) AND owner = %s AND cancel_requested "
        "RETURNING id, attempts + 1",
        (now, sorted(ids), owner),
    ).fetchall()
    if not rows:
        return
    conn.execute(
        "DELETE FROM jobsched_attempts a USING unnest(%s::bigint[], %s::int[]) "
        "AS r(id, attempt) WHERE a.job_id = r.id AND a.attempt = r.attempt",
        ([r[0] for r in rows], [r[1] for r in rows]),
    )
    for job_id, _ in sorted(rows):
        cascade(conn, job_id, _CANCELLED, now)
    notify(conn)


def cancel(conn: Conn, ids: Collection[int], now: float) -> list[Change]:
    """Cancel queued jobs (and what depends on them); flag running ones for their owner."""
    changes: list[Change] = []
    rows = conn.execute(
        "SELECT id, status FROM jobsched_jobs WHERE id = ANY(%s) ORDER BY id FOR UPDATE",
        (sorted(set(ids)),),
    ).fetchall()
    flagged = False
    for job_id, status in rows:
        if status == "running":
            conn.execute(
                "UPDATE jobsched_jobs SET cancel_requested = true WHERE id = %s", (job_id,)
            )
            flagged = True
        elif status in ("pending", "retry_wait"):
            finish(conn, job_id, _CANCELLED, now, "cancelled")
            changes.append(Change(job_id, _CANCELLED, "cancelled"))
            changes.extend(cascade(conn, job_id, _CANCELLED, now))
    if flagged or changes:
        notify(conn)
    return changes
