"""The PostgreSQL store's stored schedules: registering and removing them,
claiming the due ones under a lease, and firing one (fenced on owner and fire
time). Each a function of a connection, run in one transaction on one of the
store's threads (see ``PostgresStore._tx``)."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from psycopg import errors

from jobsched import JobStatus
from jobsched.store import DueSchedule, NewJob

from ._sql import DB_NOW, Conn, add, notify


class AlreadyFired(Exception):
    """Rolls a fire's transaction back: its job exists already."""


def put(conn: Conn, schedules: Sequence[tuple[str, bytes, float]]) -> None:
    # In id order, so two members' batches lock rows in one order; a
    # stable sort keeps the later of two registrations of one id last.
    ordered: list[tuple[str, bytes, float]] = sorted(schedules, key=_first)
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO jobsched_schedules (id, payload, next_fire) VALUES (%s, %s, %s) "
            "ON CONFLICT (id) DO UPDATE SET payload = excluded.payload, "
            # A paused schedule (next_fire +inf) stays paused when a worker
            # registers it again.
            f"next_fire = CASE WHEN jobsched_schedules.next_fire = {INF} "
            "THEN jobsched_schedules.next_fire ELSE excluded.next_fire END, "
            "owner = NULL, lease_until = NULL "
            # The same schedule again (every worker registers the app's at
            # its start) keeps its timing: an interval restarted at each
            # deploy would never fire under deploys more frequent than it.
            "WHERE jobsched_schedules.payload <> excluded.payload",
            ordered,
        )
    notify(conn)


#: A paused schedule's next_fire: double precision holds +inf, and the due
#: query's ``next_fire <= now`` (on the next_fire index) never holds for it.
INF = "'Infinity'::double precision"


def pause(conn: Conn, schedule: str) -> bool:
    """Stop firing ``schedule``; its lease ends, so a fire under way is fenced out."""
    return (
        conn.execute(
            f"UPDATE jobsched_schedules SET next_fire = {INF}, owner = NULL, lease_until = NULL "
            "WHERE id = %s",
            (schedule,),
        ).rowcount
        == 1
    )


def resume(conn: Conn, schedule: str, next_fire: float) -> bool:
    """Fire a paused ``schedule`` from ``next_fire`` on; False if it is unknown."""
    moved = conn.execute(
        f"UPDATE jobsched_schedules SET next_fire = %s WHERE id = %s AND next_fire = {INF}",
        (next_fire, schedule),
    ).rowcount
    if moved:
        notify(conn)  # the claimers look for due schedules again
        return True
    return (
        conn.execute("SELECT 1 FROM jobsched_schedules WHERE id = %s", (schedule,)).fetchone()
        is not None
    )


def trigger(conn: Conn, schedule: str, job: NewJob, now: float) -> bool:
    """Add ``job`` as ``schedule``'s last job; False (nothing added) if it is unknown."""
    if not conn.execute(
        "UPDATE jobsched_schedules SET last_job = %s WHERE id = %s", (job.id, schedule)
    ).rowcount:
        return False
    add(conn, [job], now)
    return True


def remove(conn: Conn, ids: Collection[str]) -> None:
    conn.execute("DELETE FROM jobsched_schedules WHERE id = ANY(%s)", (sorted(ids),))


def claim(conn: Conn, owner: str, now: float, lease: float) -> list[DueSchedule]:
    """The schedules due by ``now``, leased to ``owner`` for ``lease`` seconds
    of the server's clock (as jobs' leases are), each with its last job's status."""
    rows = conn.execute(
        "WITH due AS (SELECT id FROM jobsched_schedules WHERE next_fire <= %s "
        f"AND (owner IS NULL OR lease_until < {DB_NOW}) FOR UPDATE SKIP LOCKED), "
        f"taken AS (UPDATE jobsched_schedules s SET owner = %s, lease_until = {DB_NOW} + %s "
        "FROM due WHERE s.id = due.id RETURNING s.id, s.payload, s.next_fire, s.last_job) "
        "SELECT taken.id, taken.payload, taken.next_fire, j.status FROM taken "
        "LEFT JOIN jobsched_jobs j ON j.id = taken.last_job ORDER BY taken.next_fire",
        (now, owner, lease),
    ).fetchall()
    return [DueSchedule(i, payload, fire, _status(status)) for i, payload, fire, status in rows]


def fire(
    conn: Conn, owner: str, schedule: str, fire_time: float, next_fire: float, job: NewJob | None
) -> bool:
    """Move ``schedule`` on to ``next_fire`` and add its ``job``; False if
    ``owner`` no longer holds this fire. Raises :class:`AlreadyFired` if the
    job was added already, so the caller's transaction rolls the move back."""
    moved = conn.execute(
        "UPDATE jobsched_schedules SET next_fire = %s, owner = NULL, lease_until = NULL, "
        "last_job = COALESCE(%s, last_job) "
        "WHERE id = %s AND owner = %s AND next_fire = %s",
        (next_fire, job.id if job is not None else None, schedule, owner, fire_time),
    ).rowcount
    if moved != 1:
        return False
    if job is not None:
        try:
            with conn.transaction():  # a savepoint: the error ends only it
                add(conn, [job], fire_time)
        except errors.UniqueViolation:
            # This fire was made already: the unique index on
            # (schedule, fire_time) makes a second one impossible.
            raise AlreadyFired() from None
    return True


def _status(value: str | None) -> JobStatus | None:
    return JobStatus(value) if value is not None else None


def _first(row: tuple[str, bytes, float]) -> str:
    return row[0]
