"""What an operator reads of stored schedules in the SQLite store: the
schedules themselves (``jobsched schedules``, the dashboard) and the jobs a
schedule's fires made (its fire history). Reads outside a write
transaction, as ``_operator``'s."""

from __future__ import annotations

import sqlite3

from jobsched.store import StoredJob, StoredSchedule

from . import _own
from ._operator import jobs_of


def schedules(conn: sqlite3.Connection, now: float) -> list[StoredSchedule]:
    return [
        # An owner whose lease lapsed fires it no more: any member may take it.
        StoredSchedule(
            sid,
            next_fire,
            owner if lease_until is not None and lease_until >= now else None,
            payload,
            last_job,
        )
        for sid, next_fire, owner, lease_until, payload, last_job in conn.execute(
            "SELECT id, next_fire, owner, lease_until, payload, last_job FROM schedules "
            "ORDER BY next_fire, id"
        )
    ]


def schedule_jobs(conn: sqlite3.Connection, schedule_id: str, limit: int) -> list[StoredJob]:
    """The jobs a schedule's fires made, latest fire first: through the
    unique index on (schedule, fire_time) that keeps one job per fire."""
    ids = [
        i
        for (i,) in conn.execute(
            "SELECT id FROM jobs WHERE schedule = ? ORDER BY fire_time DESC LIMIT ?",
            (schedule_id, limit),
        )
    ]
    by_id = {job.id: job for job in jobs_of(conn, ids)}
    own = _own.ids_of(conn, ids)
    return [by_id[own.get(i, i)] for i in ids if own.get(i, i) in by_id]
