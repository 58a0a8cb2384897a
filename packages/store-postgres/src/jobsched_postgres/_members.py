"""The members list in the PostgreSQL store: each member's report (its
heartbeat for ``jobsched members``, the dashboard and ``queues()``), a clean
stop's goodbye, and the list read back. Functions of a connection (see
``Reads._run``)."""

from __future__ import annotations

from jobsched.store import MEMBERS_KEEP, Member

from ._schema import VERSION
from ._sql import Conn

# jobsched_members: one row per member that reported (the members list),
# made by the first report under an advisory lock of its own (two members
# creating it at once would otherwise collide in the catalog); a database no
# member reported to has none, and reads as no members. Reports delete rows
# silent for MEMBERS_KEEP, so the table is as small as the fleet.
_MEMBERS_LOCK = 0x6A6F6273_6D656D62  # "jobsmemb"
_MEMBERS_TABLE = (
    "CREATE TABLE IF NOT EXISTS jobsched_members (owner text PRIMARY KEY, "
    "workers integer NOT NULL, busy integer NOT NULL, started_at double precision NOT NULL, "
    "seen_at double precision NOT NULL, names text[], queues text[], executors text[], "
    "level smallint)"
)
# What a member serves (queues NULL: every queue), added by the first report
# of a member that reports them, to a table an older one made: a catalog
# change of a table as small as the fleet, under the same lock.
# level: the schema the member's code writes (6 on; NULL: older code), for
# a producer to tell old workers apart during an upgrade.
_SERVES = (
    "ALTER TABLE jobsched_members ADD COLUMN IF NOT EXISTS queues text[], "
    "ADD COLUMN IF NOT EXISTS executors text[], ADD COLUMN IF NOT EXISTS level smallint"
)


def report(conn: Conn, member: Member, *, made: bool) -> None:
    """Upsert the member's row (making the table and its later columns first
    unless ``made``) and drop the rows silent for MEMBERS_KEEP."""
    if not made:
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MEMBERS_LOCK,))
        conn.execute(_MEMBERS_TABLE)
        conn.execute(_SERVES)
    conn.execute(
        "INSERT INTO jobsched_members (owner, workers, busy, started_at, seen_at, names, "
        "queues, executors, level) VALUES (%s, %s, %s, %s, %s, %s, %s::text[], %s, %s) "
        "ON CONFLICT (owner) DO UPDATE SET workers = excluded.workers, busy = excluded.busy, "
        "seen_at = excluded.seen_at, names = excluded.names, queues = excluded.queues, "
        "executors = excluded.executors, level = excluded.level",
        (
            member.owner, member.workers, member.busy, member.started_at, member.seen_at,
            list(member.names) or None,
            None if member.queues is None else list(member.queues),
            list(member.executors) or None,
            VERSION,
        ),
    )  # fmt: skip
    conn.execute(
        "DELETE FROM jobsched_members WHERE seen_at < %s", (member.seen_at - MEMBERS_KEEP,)
    )


def forget(conn: Conn, owner: str) -> None:
    if _has_members(conn):
        conn.execute("DELETE FROM jobsched_members WHERE owner = %s", (owner,))


def members(conn: Conn, limit: int) -> list[Member]:
    if not _has_members(conn):
        return []
    serves, level = _has_columns(conn)
    rows = conn.execute(
        "SELECT owner, workers, busy, started_at, seen_at, names, "
        f"{'queues, executors' if serves else 'NULL::text[], NULL::text[]'}, "
        f"{'level' if level else 'NULL::smallint'} "
        "FROM jobsched_members ORDER BY seen_at DESC, owner LIMIT %s",
        (limit,),
    ).fetchall()
    return [
        Member(
            row[0], row[1], row[2], row[3], row[4],
            names=tuple(row[5] or ()),
            queues=None if row[6] is None else tuple(row[6]),
            executors=tuple(row[7] or ()),
            level=row[8],
        )
        for row in rows
    ]  # fmt: skip


def _has_members(conn: Conn) -> bool:
    row = conn.execute("SELECT to_regclass('jobsched_members') IS NOT NULL").fetchone()
    return bool(row and row[0])


def _has_columns(conn: Conn) -> tuple[bool, bool]:
    """Whether the table has the serves columns and the level column (a table
    only older members reported to has not)."""
    row = conn.execute(
        "SELECT bool_or(attname = 'executors'), bool_or(attname = 'level') FROM pg_attribute "
        "WHERE attrelid = 'jobsched_members'::regclass AND NOT attisdropped"
    ).fetchone()
    return (bool(row and row[0]), bool(row and row[1]))
