"""The members list in the SQLite store: each member's report (its
heartbeat for ``jobsched members``, the dashboard and ``queues()``), a clean
stop's goodbye, and the list read back."""

from __future__ import annotations

import sqlite3

from jobsched.store import MEMBERS_KEEP, Member

from ._migrate import VERSION, member_columns

# members: one row per member that reported (its heartbeat for the members
# list), made by the first report: a file no scheduler reports to (an old
# one, or one only read) has no such table, and reads as no members. Reports
# delete rows silent for MEMBERS_KEEP, so the table is as small as the fleet.
# names: the registered job names the member runs, a JSON list (schema 4).
# queues (NULL: every queue) and executors, JSON lists: what it serves, added
# by the first report of a member that reports them (ALTER TABLE ADD COLUMN,
# no rewrite), so no schema version: a row of an older member reads NULL.
# level: the schema its code writes (schema 5; NULL: a member of older
# code), for a producer to tell whether every worker keeps workflows' edges.
MEMBERS_TABLE = (
    "CREATE TABLE IF NOT EXISTS members (owner TEXT PRIMARY KEY, workers INTEGER NOT NULL, "
    "busy INTEGER NOT NULL, started_at REAL NOT NULL, seen_at REAL NOT NULL, names TEXT, "
    "queues TEXT, executors TEXT, level INTEGER) WITHOUT ROWID"
)
_SERVES = ("queues", "executors")


def report_member(conn: sqlite3.Connection, member: Member) -> None:
    import json

    conn.execute(MEMBERS_TABLE)
    member_columns(conn)
    there = {row[1] for row in conn.execute("PRAGMA table_info(members)")}
    for column in _SERVES:
        if column not in there:  # a table an older member made
            conn.execute(f"ALTER TABLE members ADD COLUMN {column} TEXT")
    names = json.dumps(list(member.names)) if member.names else None
    queues = None if member.queues is None else json.dumps(list(member.queues))
    executors = json.dumps(list(member.executors)) if member.executors else None
    conn.execute(
        "INSERT INTO members (owner, workers, busy, started_at, seen_at, names, queues, "
        "executors, level) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (owner) DO UPDATE SET "
        "workers = excluded.workers, busy = excluded.busy, seen_at = excluded.seen_at, "
        "names = excluded.names, queues = excluded.queues, executors = excluded.executors, "
        "level = excluded.level",
        (
            member.owner, member.workers, member.busy, member.started_at, member.seen_at,
            names, queues, executors, VERSION,
        ),
    )  # fmt: skip
    conn.execute("DELETE FROM members WHERE seen_at < ?", (member.seen_at - MEMBERS_KEEP,))


def forget_member(conn: sqlite3.Connection, owner: str) -> None:
    if _has_members(conn):
        conn.execute("DELETE FROM members WHERE owner = ?", (owner,))


def members(conn: sqlite3.Connection, limit: int) -> list[Member]:
    import json

    if not _has_members(conn):
        return []
    there = {row[1] for row in conn.execute("PRAGMA table_info(members)")}
    serves = ", queues, executors" if all(c in there for c in _SERVES) else ", NULL, NULL"
    serves += ", level" if "level" in there else ", NULL"
    rows = conn.execute(
        f"SELECT owner, workers, busy, started_at, seen_at, names{serves} FROM members "
        "ORDER BY seen_at DESC, owner LIMIT ?",
        (limit,),
    ).fetchall()
    return [
        Member(
            row[0], row[1], row[2], row[3], row[4],
            names=tuple(json.loads(row[5] or "[]")),
            queues=None if row[6] is None else tuple(json.loads(row[6])),
            executors=tuple(json.loads(row[7] or "[]")),
            level=row[8],
        )
        for row in rows
    ]  # fmt: skip


def _has_members(conn: sqlite3.Connection) -> bool:
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'members'"
    ).fetchone()
    return row is not None
