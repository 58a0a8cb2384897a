"""Jobs a member hands back unfinished in the SQLite store: claims that
never started (``release``) and attempts a stop cut short past its grace
(``hand_back``), each a function of a connection inside ``BEGIN IMMEDIATE``.

Either way the job waits again with its attempt not counted (the number is
the next claim's again). A cut attempt ran, so it stays in the history: a
row of ``attempts`` under a key of its own (see ``jobsched.store``'s
``hand_back_key``), which the attempt that runs next under the same number
never collides with.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Collection, Sequence

from jobsched.store import HANDED_BACK_AT_STOP, hand_back_key

from . import _own, _sql


def release(conn: sqlite3.Connection, owner: str, ids: Collection[int]) -> None:
    """``JobStore.release``: ``owner``'s running rows ``ids`` wait again, uncounted."""
    own = _own.rows_of(conn, ids)
    rows = [own.get(i, i) for i in ids]
    _sql.cancel_released(conn, owner, rows, time.time())
    # A running attempt has no row of its own to remove. A cut one's progress
    # goes: the next attempt starts with none.
    conn.executemany(
        "UPDATE jobs SET status = CASE WHEN attempts > 1 THEN 'retry_wait' "
        "ELSE 'pending' END, queue = 0, attempts = attempts - 1, owner = NULL, "
        "lease_until = NULL, progress = NULL, progress_message = NULL "
        "WHERE id = ? AND owner = ? AND status = 'running'",
        [(i, owner) for i in rows],
    )


def hand_back(
    conn: sqlite3.Connection, owner: str, attempts: Sequence[tuple[int, int, float]]
) -> None:
    """``JobStore.hand_back``: each cut attempt into the history, then released."""
    own = _own.rows_of(conn, [job_id for job_id, _, _ in attempts])
    history = []
    for job_id, attempt, ended_at in attempts:
        row = own.get(job_id, job_id)
        ran = conn.execute(
            "SELECT COALESCE(ran_by, owner), started_at FROM jobs "
            "WHERE id = ? AND owner = ? AND attempts = ? AND status = 'running'",
            (row, owner, attempt),
        ).fetchone()
        if ran is None:
            continue  # no longer this attempt of this member's: fenced off
        taken = [
            k for (k,) in conn.execute("SELECT attempt FROM attempts WHERE job_id = ?", (row,))
        ]
        key = hand_back_key(attempt, taken)
        if key is not None:
            started = ended_at if ran[1] is None else min(ran[1], ended_at)
            history.append((row, key, ran[0], started, ended_at, "retry_wait", HANDED_BACK_AT_STOP))
    conn.executemany(
        "INSERT INTO attempts (job_id, attempt, owner, started_at, finished_at, status, error) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        history,
    )
    release(conn, owner, [job_id for job_id, _, _ in attempts])
