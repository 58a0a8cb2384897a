"""The attempts an operator reads from the SQLite store: a job's history
(``jobsched show``, the job page) and the fleet's timeline (the dashboard).

A running attempt, and a job's completed last one, are the job's own row;
every other attempt has a row of its own in ``attempts`` (see _schema).
"""

from __future__ import annotations

import sqlite3
from typing import Any

from jobsched import JobStatus
from jobsched.store import Attempt, attempt_of_key

from . import _own


def attempts(
    conn: sqlite3.Connection, since: float | None, job_id: int | None, limit: int
) -> list[Attempt]:
    # A running attempt, and a job's completed last one, have no row of
    # their own (see _schema): the job's row stands for them. Each arm reads
    # an index: attempts_finished, jobs_status for the running rows,
    # jobs_finished for the recently completed ones (or a primary key).
    # CROSS JOIN keeps attempts first: SQLite's planner does not reorder it,
    # and with few attempt rows it would rather read every job.
    rows_of = (
        "SELECT a.job_id, a.attempt, j.name, j.executor, a.owner, a.started_at, a.finished_at, "
        "a.status, a.error FROM attempts a CROSS JOIN jobs j ON j.id = a.job_id WHERE "
    )
    # A job claimed ahead of the workers that has not started (started_at
    # NULL) is no attempt yet.
    jobs_of = (
        "SELECT j.id, j.attempts, j.name, j.executor, j.ran_by, "
        "COALESCE(j.started_at, j.finished_at) AS started_at, j.finished_at, "
        "j.status, NULL FROM jobs j WHERE j.attempts > 0 AND NOT EXISTS (SELECT 1 FROM "
        "attempts a WHERE a.job_id = j.id AND a.attempt = j.attempts) "
        "AND COALESCE(j.started_at, j.finished_at) IS NOT NULL AND "
    )
    running = "j.status = 'running' AND j.status != 'completed'"
    params: tuple[Any, ...]
    if job_id is not None:
        job_id = _own.row_of(conn, job_id)
        query = (
            f"{rows_of}a.job_id = ? UNION ALL "
            f"{jobs_of}j.id = ? AND j.status IN ('running', 'completed')"
        )
        params = (job_id, job_id)
    elif since is not None:
        query = (
            f"{rows_of}a.finished_at >= ? UNION ALL {jobs_of}{running} UNION ALL "
            f"{jobs_of}j.finished_at >= ? AND j.status = 'completed'"
        )
        params = (since, since)
    else:
        query = f"{rows_of}1 UNION ALL {jobs_of}j.status IN ('running', 'completed')"
        params = ()
    # The newest ``limit``, then oldest first.
    rows = conn.execute(
        f"SELECT * FROM ({query}) ORDER BY started_at DESC, job_id DESC, attempt DESC LIMIT ?",
        (*params, limit),
    ).fetchall()
    rows.reverse()
    own = _own.ids_of(conn, [r[0] for r in rows])
    return [
        Attempt(
            job_id=own.get(r[0], r[0]),
            attempt=attempt_of_key(r[1])[0],
            name=r[2],
            executor=r[3],
            owner=r[4],
            started_at=r[5],
            finished_at=r[6],
            status=JobStatus(r[7]),
            error=r[8],
            handed_back=r[1] < 0,
        )
        for r in rows
    ]
