"""Paused queues in the SQLite file: a side table every member's claim reads.

``queue_pauses`` (one row per paused queue, by its public name: ``default``
for the default one) is made by the first pause (``CREATE TABLE IF NOT
EXISTS``, as ``members`` and ``own_ids``), without a schema version: a file
without it has nothing paused. A claim reads it in its own write
transaction (see ``_queues.served``), so a pause committed before a claim
began is always honoured, by every process on the file: the paused queues
are left out of the queues the claim reads, never claimed and released.
"""

from __future__ import annotations

import sqlite3

TABLE = (
    "CREATE TABLE IF NOT EXISTS queue_pauses (queue TEXT PRIMARY KEY, paused_at REAL NOT NULL) "
    "WITHOUT ROWID"
)


def paused(conn: sqlite3.Connection) -> frozenset[str]:
    """The paused queues (the table's look-up in sqlite_master first: a file
    never paused has no table, and its claims pay that one look-up)."""
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'queue_pauses'"
    ).fetchone()
    if row is None:
        return frozenset()
    return frozenset(name for (name,) in conn.execute("SELECT queue FROM queue_pauses"))


def pause(conn: sqlite3.Connection, queue: str, now: float) -> bool:
    conn.execute(TABLE)
    done = conn.execute(
        "INSERT INTO queue_pauses (queue, paused_at) VALUES (?, ?) ON CONFLICT DO NOTHING",
        (queue, now),
    )
    return done.rowcount > 0


def resume(conn: sqlite3.Connection, queue: str) -> bool:
    if not paused(conn):
        return False
    return conn.execute("DELETE FROM queue_pauses WHERE queue = ?", (queue,)).rowcount > 0
