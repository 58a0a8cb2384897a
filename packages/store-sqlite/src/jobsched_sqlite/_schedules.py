"""Stored schedules in the SQLite store: registering, claiming a due fire,
firing it (its job added in the same transaction), pause, resume and a
manual trigger. Each a function of a connection inside ``BEGIN IMMEDIATE``
(see ``SQLiteStore._write``)."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Collection, Sequence

from jobsched import JobStatus
from jobsched.store import DueSchedule, NewJob

from . import _own
from ._add import AlreadyFired, add

#: +inf in SQLite's SQL: a paused schedule's next_fire (REAL holds it, and
#: ``next_fire <= now`` never holds for it).
INF = "9e999"


def put(conn: sqlite3.Connection, schedules: Sequence[tuple[str, bytes, float]]) -> None:
    conn.executemany(
        "INSERT INTO schedules (id, payload, next_fire) VALUES (?, ?, ?) "
        "ON CONFLICT (id) DO UPDATE SET payload = excluded.payload, "
        # A paused schedule (next_fire +inf; 9e999 is SQLite's way to
        # write it) stays paused when a worker registers it again.
        f"next_fire = CASE WHEN schedules.next_fire = {INF} THEN schedules.next_fire "
        "ELSE excluded.next_fire END, owner = NULL, lease_until = NULL "
        # The same schedule again (every worker registers the app's at its
        # start) keeps its timing: an interval restarted at each deploy
        # would never fire under deploys more frequent than it.
        "WHERE schedules.payload <> excluded.payload",
        list(schedules),
    )


def remove(conn: sqlite3.Connection, ids: Collection[str]) -> None:
    conn.executemany("DELETE FROM schedules WHERE id = ?", [(i,) for i in ids])


def claim(conn: sqlite3.Connection, owner: str, now: float, lease: float) -> list[DueSchedule]:
    rows = conn.execute(
        "UPDATE schedules SET owner = ?, lease_until = ? WHERE next_fire <= ? "
        "AND (owner IS NULL OR lease_until < ?) "
        "RETURNING id, payload, next_fire, last_job",
        (owner, now + lease, now, now),
    ).fetchall()
    due = []
    for schedule_id, payload, fire_time, last_job in rows:
        status = None
        if last_job is not None:
            row = conn.execute(
                "SELECT status FROM jobs WHERE id = ?", (_own.row_of(conn, last_job),)
            ).fetchone()
            status = JobStatus(row[0]) if row is not None else None
        due.append(DueSchedule(schedule_id, payload, fire_time, status))
    return due


def fire(
    conn: sqlite3.Connection,
    owner: str,
    schedule: str,
    fire_time: float,
    next_fire: float,
    job: NewJob | None,
) -> bool:
    """:raises AlreadyFired: the fire's job exists (roll back)."""
    moved = conn.execute(
        "UPDATE schedules SET next_fire = ?, owner = NULL, lease_until = NULL, "
        "last_job = COALESCE(?, last_job) "
        "WHERE id = ? AND owner = ? AND next_fire = ?",
        (next_fire, job.id if job is not None else None, schedule, owner, fire_time),
    ).rowcount
    if moved != 1:
        return False
    if job is not None:
        try:
            add(conn, [job], fire_time)
        except sqlite3.IntegrityError:
            # This fire was made already: the unique index on
            # (schedule, fire_time) makes a second one impossible.
            raise AlreadyFired() from None
    return True


def pause(conn: sqlite3.Connection, schedule_id: str) -> bool:
    return bool(
        conn.execute(
            f"UPDATE schedules SET next_fire = {INF}, owner = NULL, lease_until = NULL "
            "WHERE id = ?",
            (schedule_id,),
        ).rowcount
    )


def resume(conn: sqlite3.Connection, schedule_id: str, next_fire: float) -> bool:
    conn.execute(
        f"UPDATE schedules SET next_fire = ? WHERE id = ? AND next_fire = {INF}",
        (next_fire, schedule_id),
    )
    return _exists(conn, schedule_id)


def trigger(conn: sqlite3.Connection, schedule_id: str, job: NewJob) -> bool:
    if not conn.execute(
        "UPDATE schedules SET last_job = ? WHERE id = ?", (job.id, schedule_id)
    ).rowcount:
        return False
    add(conn, [job], time.time())
    return True


def _exists(conn: sqlite3.Connection, schedule_id: str) -> bool:
    return (
        conn.execute("SELECT 1 FROM schedules WHERE id = ?", (schedule_id,)).fetchone() is not None
    )
