"""What workflows ask of the SQLite store (issue 37): the upstreams a
dependent receives, sizes first, and running attempts' progress, fenced as
outcomes are. Functions of a connection: ``inputs`` a read, ``progress`` a
write inside ``BEGIN IMMEDIATE`` (see ``SQLiteStore._write``)."""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Sequence

from jobsched import JobStatus
from jobsched.store import Input, ProgressRow

from . import _own

#: Ids per statement: well under SQLite's 32766 parameters.
CHUNK = 1_000
_STATUSES = {status.value: status for status in JobStatus}


def inputs(
    conn: sqlite3.Connection, ids: Collection[int], max_bytes: int
) -> dict[int, Input] | int:
    """The upstreams as their dependents receive them, by the ids asked;
    their results' total size instead when it exceeds ``max_bytes`` (read
    before any result is)."""
    wanted = list(dict.fromkeys(ids))
    rows = _own.rows_of(conn, wanted)
    numbers = {rows.get(i, i): i for i in wanted}
    order = list(numbers)
    total = 0
    for start in range(0, len(order), CHUNK):
        part = order[start : start + CHUNK]
        (size,) = conn.execute(
            f"SELECT COALESCE(SUM(length(result)), 0) FROM jobs "
            f"WHERE id IN ({', '.join('?' * len(part))})",
            part,
        ).fetchone()
        total += size
    if total > max_bytes:
        return total
    found: dict[int, Input] = {}
    for start in range(0, len(order), CHUNK):
        part = order[start : start + CHUNK]
        for number, status, result, error in conn.execute(
            f"SELECT id, status, result, last_error FROM jobs "
            f"WHERE id IN ({', '.join('?' * len(part))})",
            part,
        ):
            job_id = numbers[number]
            # A dict's look-up, not the enum's call per row (a fan-in reads
            # 10,000); the call stays for a value that is no status.
            found[job_id] = Input(job_id, _STATUSES.get(status) or JobStatus(status), result, error)
    return found


def progress(conn: sqlite3.Connection, owner: str, rows: Sequence[ProgressRow]) -> None:
    """Each row's progress on its job while ``owner`` runs that attempt."""
    numbers = _own.rows_of(conn, [r.id for r in rows])
    conn.executemany(
        "UPDATE jobs SET progress = ?, progress_message = ? "
        "WHERE id = ? AND owner = ? AND attempts = ? AND status = 'running'",
        [(r.fraction, r.message, numbers.get(r.id, r.id), owner, r.attempt) for r in rows],
    )
