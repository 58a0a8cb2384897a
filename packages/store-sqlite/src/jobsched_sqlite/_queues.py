"""Named queues (``NewJob.queue``) in the SQLite file, without a schema version.

A job's queue is the column ``queue_name`` (``queue`` is taken: the internal
state of a waiting row, see _schema), NULL for the default queue. The column
and its index are made by the first job of a named queue, in that job's
transaction (``ALTER TABLE ... ADD COLUMN``: no table rewrite, the rows
already there read NULL, default), as own_ids and the tenant index are: a
file that never sees a named queue has neither and pays nothing, and a
schema-3 file of the code before opens as it did.

``jobs_ready_queues`` (queue_name, k0, k1, k2) WHERE queue = 0: a claim
serving some queues reads one range of it per queue (the default one's is
``queue_name IS NULL``) and merges them by key, so a worker on a small
queue never reads a big queue's rows, nor one on the default queue a named
queue's. A file with the column pays this second index entry per ready
job; one without it claims as before.

Every statement that names the column first asks whether the index exists
(:func:`present`: a look at sqlite_master, inside the statement's
transaction), so a member that opened the file before another added the
column sees it at its next claim or read; SQLite prepares its cached
statements again when the schema changed.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Mapping

from jobsched import JobStatus
from jobsched.store import DEFAULT_QUEUE

from . import _pauses

COLUMN = "ALTER TABLE jobs ADD COLUMN queue_name TEXT"
INDEX = (
    "CREATE INDEX IF NOT EXISTS jobs_ready_queues ON jobs (queue_name, k0, k1, k2) WHERE queue = 0"
)

_ORDER = "ORDER BY k0, k1, k2"

#: Where a claim serving some queues reads. Named, as the planner would
#: rather read jobs_ready_tenants for a fair share's tenant term and filter
#: the queue: every ready row of the tenant, in every queue (a big one's
#: too). Only said once :func:`present` found the index in this transaction.
SOURCE = "jobs INDEXED BY jobs_ready_queues"


def present(conn: sqlite3.Connection) -> bool:
    """Whether the file has named queues' column (made with its index)."""
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'jobs_ready_queues'"
    ).fetchone()
    return row is not None


def ensure(conn: sqlite3.Connection) -> None:
    """Make the column and its index unless the file has them (inside the
    write transaction of the first named-queue job, so all or nothing)."""
    if present(conn):
        return
    columns = {row[1] for row in conn.execute("PRAGMA table_info(jobs)")}
    if "queue_name" not in columns:  # a failed index creation left it alone
        conn.execute(COLUMN)
    conn.execute(INDEX)


def stored(name: str | None) -> str | None:
    """A queue as the column holds it: the default one as NULL."""
    return None if name == DEFAULT_QUEUE else name


def read(value: str | None) -> str:
    return DEFAULT_QUEUE if value is None else value


def condition(name: str) -> tuple[str, tuple[str, ...]]:
    """One queue's term (``AND ...``) and its parameters: the default
    queue's rows are the index's NULL range."""
    if name == DEFAULT_QUEUE:
        return "AND queue_name IS NULL", ()
    return "AND queue_name = ?", (name,)


def served(
    conn: sqlite3.Connection,
    queues: Collection[str] | None,
    room: Mapping[str, int] | None,
    want: int,
) -> tuple[dict[str, int] | None, int]:
    """The queues a claim reads, each with the most jobs it may take, and how
    many the claim may take at most.

    None for the queues: read every queue without a queue term (the claim
    of the code before, on jobs_ready): nothing bounds them, or the file
    has no named queue, where every job is on the default one. Called after
    promotion and unparking, so the ready queues are those a claim sees.
    Paused queues (see _pauses) are left out, read in the claim's transaction.
    """
    room = room or {}
    paused = _pauses.paused(conn)
    if queues is None and not paused and all(n >= want for n in room.values()):
        return None, want
    if not present(conn):
        default = DEFAULT_QUEUE in queues if queues is not None else True
        default = default and DEFAULT_QUEUE not in paused
        left = min(want, room.get(DEFAULT_QUEUE, want)) if default else 0
        return None, max(left, 0)
    names = (set(queues) if queues is not None else _ready_queues(conn)) - paused
    rooms = {name: min(room.get(name, want), want) for name in sorted(names)}
    return {name: n for name, n in rooms.items() if n > 0}, want


def _ready_queues(conn: sqlite3.Connection) -> set[str]:
    """The queues with ready jobs: one seek of jobs_ready_queues per queue."""
    names: set[str] = set()
    # Named: on a file of mostly ready rows ANALYZE has the planner scan the
    # table for the first NULL one, past every named queue's rows.
    null = f"SELECT 1 FROM {SOURCE} WHERE queue = 0 AND queue_name IS NULL LIMIT 1"
    if conn.execute(null).fetchone():
        names.add(DEFAULT_QUEUE)
    after = ""
    while True:
        row = conn.execute(
            f"SELECT queue_name FROM {SOURCE} WHERE queue = 0 AND queue_name > ? "
            "ORDER BY queue_name LIMIT 1",
            (after,),
        ).fetchone()
        if row is None:
            return names
        after = row[0]
        names.add(after)


def arms(
    base: str, params: tuple[object, ...], names: Collection[str], limit: int
) -> tuple[str, tuple[object, ...]]:
    """``base`` (a SELECT of ready rows with the key columns and a WHERE),
    once per queue, each its best ``limit`` by key, merged best first: each
    arm one range of jobs_ready_queues."""
    if len(names) == 1:  # one range, already in key order
        term, values = condition(next(iter(names)))
        return f"{base} {term} {_ORDER} LIMIT ?", (*params, *values, limit)
    parts: list[str] = []
    args: list[object] = []
    for name in names:
        term, values = condition(name)
        parts.append(f"SELECT * FROM ({base} {term} {_ORDER} LIMIT ?)")
        args += [*params, *values, limit]
    return f"{' UNION ALL '.join(parts)} {_ORDER} LIMIT ?", (*args, limit)


def counts(conn: sqlite3.Connection) -> dict[tuple[str, JobStatus], int]:
    """The unfinished jobs by (queue, status): the rows jobs_status holds
    (the unfinished and the ended ones), never the completed history.
    Named, as the planner would rather scan the table when ANALYZE found
    most rows unfinished, and then pays for every finished row as it grows."""
    column = "queue_name" if present(conn) else "NULL"
    rows = conn.execute(
        f"SELECT {column}, status, COUNT(*) FROM jobs INDEXED BY jobs_status "
        "WHERE status IN ('pending', 'retry_wait', 'running') AND status != 'completed' "
        f"GROUP BY {column}, status"
    )
    return {(read(name), JobStatus(status)): n for name, status, n in rows}
