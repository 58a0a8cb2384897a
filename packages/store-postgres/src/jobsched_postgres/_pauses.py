"""Paused queues in the PostgreSQL store: a side table every claim reads.

``jobsched_queue_pauses`` (one row per paused queue, by its public name:
``default`` for the default one) is made at open (``CREATE TABLE IF NOT
EXISTS``, under the schema's lock), without a schema version: it is not the
jobs' table, and an older member that never reads it claims as before.

Every claim statement reads it in its own snapshot (``_claim._HELD``): while
it is empty, the statement claims as it did, and a look at an empty table of
a few pages is its whole cost; once a queue is paused, the statement takes
nothing and says so, and the member claims through the locked candidates
with the paused queues left out (``_limits``), reading the pauses in the
statement that promotes due jobs, until it reads none. So a pause committed
before a claim's statement began is honoured by every member, without a
round trip of its own, and no paused queue's job is claimed and handed back.

The store's methods are in ``_pausing``. A pause adds the named queues'
column first (``_queues.add_column``), so the claims that leave paused
queues out may always name it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # _schema calls ensure(), and _sql imports _schema
    from ._sql import Conn

TABLE = (
    "CREATE TABLE IF NOT EXISTS jobsched_queue_pauses (queue text PRIMARY KEY, "
    "paused_at double precision NOT NULL)"
)


def ensure(conn: Conn) -> None:
    """Make the table unless it is there (at open; a user who may not create
    tables opens a store whose table another member made)."""
    row = conn.execute("SELECT to_regclass('jobsched_queue_pauses') IS NULL").fetchone()
    if row is not None and row[0]:
        conn.execute(TABLE)


def paused(conn: Conn) -> set[str]:
    return {q for (q,) in conn.execute("SELECT queue FROM jobsched_queue_pauses")}


def pause(conn: Conn, queue: str) -> bool:
    row = conn.execute(
        "INSERT INTO jobsched_queue_pauses (queue, paused_at) "
        "VALUES (%s, extract(epoch FROM now())::float8) ON CONFLICT DO NOTHING RETURNING 1",
        (queue,),
    ).fetchone()
    return row is not None


def resume(conn: Conn, queue: str) -> bool:
    row = conn.execute(
        "DELETE FROM jobsched_queue_pauses WHERE queue = %s RETURNING 1", (queue,)
    ).fetchone()
    return row is not None
