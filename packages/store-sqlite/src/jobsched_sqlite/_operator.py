"""What an operator asks of the SQLite store about jobs (the CLI, the
dashboard): lists, counts, the waiting jobs no member claims, and retrying
finished jobs (the attempts, schedules and members have modules of their own).

Kept apart from ``_sql``, the scheduler's hot path: these run when a person
asks, each one statement or a few, and none is on a claim's or an outcome's
way. Reads run outside a write transaction (WAL: they see the last commit
and block no writer); ``retry`` is a write transaction like the others.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection
from typing import Any

from jobsched import JobStatus
from jobsched.store import (
    KEY_ID_SIZE,
    KEY_ID_START,
    KEYED,
    StoredJob,
)

from . import _own, _queues
from ._sql import count_ended

#: The statuses ``retry`` takes back; any other job is left alone.
RETRYABLE = (JobStatus.FAILED, JobStatus.TIMED_OUT, JobStatus.CANCELLED)

_JOB_COLUMNS = (
    "id, name, executor, status, attempts, run_at, submitted_at, started_at, finished_at, "
    "result, last_error, last_traceback, owner, payload, tenant, args, schedule"
)


def job_columns(conn: sqlite3.Connection) -> str:
    """``_JOB_COLUMNS`` and the job's queue: NULL (default) in a file
    without named queues' column (see _queues)."""
    queue = "queue_name" if _queues.present(conn) else "NULL"
    return f"{_JOB_COLUMNS}, {queue}, workflow, progress, progress_message"


def stored_job(row: tuple[Any, ...], depends_on: tuple[int, ...]) -> StoredJob:
    """A :class:`StoredJob` from a row of :func:`job_columns`."""
    return StoredJob(
        id=row[0],
        name=row[1],
        executor=row[2],
        status=JobStatus(row[3]),
        attempts=row[4],
        run_at=row[5],
        submitted_at=row[6],
        started_at=row[7],
        finished_at=row[8],
        result=row[9],
        last_error=row[10],
        last_traceback=row[11],
        owner=row[12],
        payload=row[13],
        tenant=row[14],
        args=row[15],
        schedule=row[16],
        depends_on=depends_on,
        queue=_queues.read(row[17]),
        workflow=row[18],
        progress=row[19],
        progress_message=row[20],
    )


def fetch(conn: sqlite3.Connection, job_id: int) -> StoredJob | None:
    number = _own.row_of(conn, job_id)
    row = conn.execute(f"SELECT {job_columns(conn)} FROM jobs WHERE id = ?", (number,)).fetchone()
    if row is None:
        return None
    edges = conn.execute(
        "SELECT upstream, on_failure, settled FROM deps WHERE downstream = ? ORDER BY upstream",
        (number,),
    ).fetchall()
    ids = _own.ids_of(conn, [u for u, _, _ in edges])
    job = stored_job((job_id, *row[1:]), tuple(ids.get(u, u) for u, _, s in edges if s == 0))
    job.deps = tuple((ids.get(u, u), p, s) for u, p, s in edges)
    return job


def jobs(
    conn: sqlite3.Connection, statuses: list[str], limit: int, before: int | None
) -> list[StoredJob]:
    if before is not None:
        before = _own.row_of(conn, before)  # a page's cursor: the last job's id
    return jobs_of(conn, newest_ids(conn, statuses, limit, before))


def jobs_of(conn: sqlite3.Connection, ids: list[int]) -> list[StoredJob]:
    """The jobs of row numbers ``ids``, newest first, with their upstreams."""
    if not ids:
        return []
    rows = conn.execute(
        f"SELECT {job_columns(conn)} FROM jobs WHERE id IN ({', '.join('?' * len(ids))}) "
        "ORDER BY id DESC",
        ids,
    ).fetchall()
    if not rows:
        return []
    ids = [r[0] for r in rows]
    upstreams: dict[int, list[int]] = {}
    for upstream, downstream in conn.execute(
        f"SELECT upstream, downstream FROM deps WHERE downstream IN ({', '.join('?' * len(ids))}) "
        "AND settled = 0 ORDER BY upstream",
        ids,
    ):
        upstreams.setdefault(downstream, []).append(upstream)
    own = _own.ids_of(conn, [*ids, *(u for us in upstreams.values() for u in us)])
    return [
        stored_job(
            (own.get(r[0], r[0]), *r[1:]), tuple(own.get(u, u) for u in upstreams.get(r[0], ()))
        )
        for r in rows
    ]


def newest_ids(
    conn: sqlite3.Connection, statuses: list[str], limit: int, before: int | None
) -> list[int]:
    """The ids of :func:`jobs`' page, newest first, read so that a page costs
    the same on any history.

    Without statuses, or for the completed ones, the primary key walked
    backwards (the bulk of the rows match). Every other status from the
    partial index jobs_status (status, executor, id): one range per executor
    the status has, found by seeking past the previous one, each read
    newest first for ``limit`` ids. One ``status IN`` range over the index
    sorted every row of its statuses (every failure ever kept: 36 ms at 1M
    jobs, 2% failed); the primary key filtered by status walked every
    finished row when no job had the status (0.9 s at 1M).
    """
    below, after = ("", ()) if before is None else (" AND id < ?", (before,))
    if not statuses:
        return [
            i for (i,) in conn.execute(f"SELECT id FROM jobs WHERE TRUE{below} "
                                       "ORDER BY id DESC LIMIT ?", (*after, limit))
        ]  # fmt: skip
    ids: list[int] = []
    for status in dict.fromkeys(statuses):
        if status == JobStatus.COMPLETED.value:
            ids += [
                i
                for (i,) in conn.execute(
                    f"SELECT id FROM jobs WHERE status = 'completed'{below} "
                    "ORDER BY id DESC LIMIT ?",
                    (*after, limit),
                )
            ]
            continue
        # `status != 'completed'` repeated: the planner uses the partial
        # index only when the query says its condition.
        executor = conn.execute(
            "SELECT min(executor) FROM jobs WHERE status = ? AND status != 'completed'",
            (status,),
        ).fetchone()[0]
        while executor is not None:
            ids += [
                i
                for (i,) in conn.execute(
                    "SELECT id FROM jobs WHERE status = ? AND status != 'completed' "
                    f"AND executor = ?{below} ORDER BY id DESC LIMIT ?",
                    (status, executor, *after, limit),
                )
            ]
            executor = conn.execute(
                "SELECT min(executor) FROM jobs WHERE status = ? AND status != 'completed' "
                "AND executor > ?",
                (status, executor),
            ).fetchone()[0]
    return sorted(ids, reverse=True)[:limit]


def waiting_for_keys(conn: sqlite3.Connection, keys: Collection[bytes]) -> dict[bytes, int]:
    """Waiting jobs signed with a key id not in ``keys`` -> how many, by key id."""
    marks = ", ".join("?" * len(keys))
    # From jobs_status (status != 'completed'), which holds every waiting row:
    # the scan reads only the unfinished jobs' payloads' first bytes.
    rows = conn.execute(
        f"SELECT substr(payload, {KEY_ID_START}, {KEY_ID_SIZE}), COUNT(*) FROM jobs "
        "WHERE status IN ('pending', 'retry_wait') AND status != 'completed' "
        f"AND substr(payload, 1, 1) = X'{KEYED.hex()}' "
        f"AND substr(payload, {KEY_ID_START}, {KEY_ID_SIZE}) NOT IN ({marks}) GROUP BY 1",
        tuple(keys),
    )
    return {bytes(kid): n for kid, n in rows}


def waiting_for_executors(conn: sqlite3.Connection, installed: Collection[str]) -> dict[str, int]:
    """Waiting jobs on an executor not in ``installed`` -> how many, by executor."""
    marks = ", ".join("?" * len(installed))
    # Read from jobs_status alone (status, executor): the waiting rows'
    # index entries, never a row of the table nor the history.
    rows = conn.execute(
        "SELECT executor, COUNT(*) FROM jobs "
        "WHERE status IN ('pending', 'retry_wait') AND status != 'completed' "
        f"AND executor NOT IN ({marks}) GROUP BY executor",
        tuple(installed),
    )
    return dict(rows)


def waiting_for_names(conn: sqlite3.Connection, known: Collection[str]) -> dict[str, int]:
    """Waiting registered jobs (``args`` set) of a name not in ``known`` -> how many."""
    marks = ", ".join("?" * len(known))
    # The waiting rows from jobs_status, never the finished history.
    rows = conn.execute(
        "SELECT name, COUNT(*) FROM jobs "
        "WHERE status IN ('pending', 'retry_wait') AND status != 'completed' "
        f"AND args IS NOT NULL AND name NOT IN ({marks}) GROUP BY name",
        tuple(known),
    )
    return dict(rows)


def counts(conn: sqlite3.Connection) -> dict[tuple[JobStatus, str], int]:
    # Finished jobs from the tables the outcome, cancel, retry and prune
    # statements keep, the unfinished ones from the partial index
    # jobs_status (see _schema): none reads the finished history.
    out = {
        (JobStatus.COMPLETED, executor): n
        for executor, n in conn.execute("SELECT executor, n FROM completed_counts WHERE n > 0")
    }
    for status, executor, n in conn.execute(
        "SELECT status, executor, n FROM ended_counts WHERE n > 0"
    ):
        out[JobStatus(status), executor] = n
    for status, executor, n in conn.execute(
        "SELECT status, executor, COUNT(*) FROM jobs "
        "WHERE status IN ('pending', 'retry_wait', 'running') AND status != 'completed' "
        "GROUP BY status, executor"
    ):
        out[JobStatus(status), executor] = n
    return out


def retry(conn: sqlite3.Connection, ids: Collection[int], now: float) -> list[int]:
    """Requeue FAILED, TIMED_OUT and CANCELLED jobs from ``now``.

    The attempt count stays, so the next claim makes attempt n + 1 and an
    outcome of an old attempt stays fenced out. A job that still has
    upstreams unfinished (it was cancelled while it waited) waits for them
    again; an upstream that ended settled its edge (met, or by a failure
    that cancelled it), so it does not wait for that one.
    """
    marks = ", ".join("?" * len(RETRYABLE))
    done: list[int] = []
    ended: dict[tuple[str, str], int] = {}
    rows = _own.rows_of(conn, ids)
    for wanted in dict.fromkeys(ids):  # once each, in the caller's order
        job_id = rows.get(wanted, wanted)
        # The status it leaves, for ended_counts (RETURNING gives the new one).
        was = conn.execute("SELECT status, executor FROM jobs WHERE id = ?", (job_id,)).fetchone()
        if was is None or was[0] not in {s.value for s in RETRYABLE}:
            continue
        row = conn.execute(
            "UPDATE jobs SET status = 'pending', "
            "unmet = (SELECT COUNT(*) FROM deps WHERE downstream = jobs.id AND settled = 0), "
            "queue = CASE WHEN EXISTS (SELECT 1 FROM deps WHERE downstream = jobs.id "
            "AND settled = 0) "
            "THEN 2 ELSE 0 END, "
            "run_at = ?, finished_at = NULL, result = NULL, owner = NULL, lease_until = NULL, "
            "cancel_requested = 0 "
            f"WHERE id = ? AND status IN ({marks}) RETURNING id",
            (now, job_id, *(s.value for s in RETRYABLE)),
        ).fetchone()
        if row is not None:
            done.append(wanted)
            ended[was[0], was[1]] = ended.get((was[0], was[1]), 0) - 1
    if ended:
        count_ended(conn, ended)
    return done
