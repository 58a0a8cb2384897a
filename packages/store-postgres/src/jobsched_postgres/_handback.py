"""Jobs a member hands back unfinished: claims that never started
(``release``) and attempts a stop cut short past its grace (``hand_back``),
each a function of a connection in one transaction.

Either way the job waits again with its attempt not counted (the number is
the next claim's again). A cut attempt ran, so it stays in the history: a
row of jobsched_attempts under a key of its own (see ``jobsched.store``'s
``hand_back_key``), which the attempt that runs next under the same number
never collides with.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Sequence

from jobsched.store import HANDED_BACK_AT_STOP, hand_back_key

from . import _cancels, _sql


def release(conn: _sql.Conn, owner: str, ids: Collection[int]) -> None:
    """``JobStore.release``: ``owner``'s running rows ``ids`` wait again, uncounted."""
    _cancels.cancel_released(conn, owner, ids, time.time())
    # A cut attempt's progress goes with it: the next attempt starts with none.
    rows = conn.execute(
        "UPDATE jobsched_jobs SET status = CASE WHEN attempts > 1 THEN 'retry_wait' "
        "ELSE 'pending' END, queue = 0, attempts = attempts - 1, owner = NULL, "
        "lease_until = NULL, progress = NULL, progress_message = NULL "
        "WHERE id = ANY(%s) AND owner = %s "
        "RETURNING id, attempts + 1",
        (sorted(ids), owner),
    ).fetchall()
    if rows:
        # The attempt never started: it leaves no row.
        conn.execute(
            "DELETE FROM jobsched_attempts a USING unnest(%s::bigint[], %s::int[]) "
            "AS r(id, attempt) WHERE a.job_id = r.id AND a.attempt = r.attempt",
            ([r[0] for r in rows], [r[1] for r in rows]),
        )
        _sql.notify(conn)


def hand_back(conn: _sql.Conn, owner: str, attempts: Sequence[tuple[int, int, float]]) -> None:
    """``JobStore.hand_back``: each cut attempt into the history, then released."""
    wanted = {job_id: (attempt, ended) for job_id, attempt, ended in attempts}
    # Locked in id order, as every writer of several rows locks them. By
    # primary key: `status || ''` proves no partial index's predicate (see
    # _takeover: said plainly, jobsched_jobs_running was read whole).
    rows = conn.execute(
        "SELECT id, attempts, COALESCE(ran_by, owner), started_at FROM jobsched_jobs "
        "WHERE id = ANY(%s) AND owner = %s AND status || '' = 'running' ORDER BY id FOR UPDATE",
        (sorted(wanted), owner),
    ).fetchall()
    ran = [r for r in rows if r[1] == wanted[r[0]][0]]  # fenced on the attempt too
    if ran:
        taken: dict[int, list[int]] = {}
        for job_id, key in conn.execute(
            "SELECT job_id, attempt FROM jobsched_attempts WHERE job_id = ANY(%s)",
            ([r[0] for r in ran],),
        ):
            taken.setdefault(job_id, []).append(key)
        history = []
        for job_id, attempt, member, started in ran:
            key = hand_back_key(attempt, taken.get(job_id, ()))
            ended = wanted[job_id][1]
            if key is not None:
                start = ended if started is None else min(started, ended)
                history.append((job_id, key, member, start, ended))
        if history:
            conn.cursor().executemany(
                "INSERT INTO jobsched_attempts (job_id, attempt, owner, started_at, "
                "finished_at, status, error) VALUES (%s, %s, %s, %s, %s, 'retry_wait', %s)",
                [(*row, HANDED_BACK_AT_STOP) for row in history],
            )
    release(conn, owner, list(wanted))
