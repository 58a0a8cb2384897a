"""Named queues (``NewJob.queue``) in the PostgreSQL store, without a schema version.

A job's named queue is the column ``queue_name`` (text; NULL is the default
queue), added to ``jobsched_jobs`` by the first job of a named queue, as a
nullable column without a default: metadata only, no table rewrite, rows
written before it read as the default queue. (``queue`` is already the
column of where a waiting job waits, ready, delayed or blocked.) A store
that never sees a named queue has neither the column nor its index, and
its claims, adds and reads are the statements of before.

Two partial indexes of the ready rows serve the claims that name queues:
the named queues' by ``(queue_name, executor, key)``, so a worker on a small
queue reads a range of its own however many ready jobs other queues hold,
and the default queue's by ``(executor, key)``, so one serving the default
queue never walks the named queues' rows (the ready index holds every
queue's: with a filter on the queue the planner may pick it, and walk a
big queue with better keys). They are built with ``CREATE INDEX
CONCURRENTLY``, so the fleet's claims and outcomes write on while they are
built; only the ``ALTER TABLE`` takes the table's exclusive lock, briefly.

The other members notice the column without a round trip of their own: a
member that has not seen it claims the default queue with the plain claim
and a guard (:data:`HAS_COLUMN`, a catalog lookup in the same statement,
so in its snapshot): the claim takes nothing once the column is there and
says so, and the member claims again knowing it. A job of a named queue is
only written after the column's commit, so a snapshot without the column
holds none. The reads carry the same guard.
"""

from __future__ import annotations

import logging
import time
import weakref
from collections.abc import Iterable

from psycopg import errors

from jobsched.store import DEFAULT_QUEUE, NewJob, Registered

from . import _schema
from ._sql import Conn

logger = logging.getLogger("jobsched")

#: Whether ``jobsched_jobs`` has the column, in the statement's snapshot.
HAS_COLUMN = (
    "EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'jobsched_jobs'::regclass "
    "AND attname = 'queue_name' AND NOT attisdropped)"
)
_ADD_COLUMN = "ALTER TABLE jobsched_jobs ADD COLUMN IF NOT EXISTS queue_name text"

#: The claims' indexes of the ready rows by queue (see the module's docstring).
INDEXES = {
    "jobsched_jobs_named_ready": "ON jobsched_jobs (queue_name, executor, k0, k1, k2, id) "
    "WHERE queue = 0 AND queue_name IS NOT NULL",
    "jobsched_jobs_default_ready": "ON jobsched_jobs (executor, k0, k1, k2, id) "
    "WHERE queue = 0 AND queue_name IS NULL",
}

#: The ALTER TABLE waits this long (ms) for the table's lock, then tries
#: again: while it waits, every member's statement on the table queues
#: behind it, and theirs time out after _connect.LOCK_TIMEOUT (5 s).
ALTER_LOCK_TIMEOUT_MS = 1000
ALTER_TRIES = 5
#: Seconds between the tries.
ALTER_PAUSE = 0.2

# One member builds the index at a time; the others do not wait for it
# (a wait on a lock would be a transaction CREATE INDEX CONCURRENTLY waits
# for in turn) and look again at their next named job.
_INDEX_LOCK = 0x6A6F627371756575  # "jobsqueu"


def stored(queue: str) -> str | None:
    """A job's ``queue_name``: NULL for the default queue, as rows from before hold."""
    return None if queue == DEFAULT_QUEUE else queue


def named(jobs: Iterable[NewJob | Registered]) -> bool:
    """Whether any of ``jobs`` is of a named queue."""
    return any(job.queue != DEFAULT_QUEUE for job in jobs)


# The sessions that have seen the column: their reads name it. Known per
# session, since a read is a function of its connection alone (a claim
# asks the store, _leases.Leases._queue_column); a session that has not
# seen it reads with the guard, at most once more than it needs.
_SEEN: weakref.WeakSet[Conn] = weakref.WeakSet()


def seen(conn: Conn) -> bool:
    """Whether this session has seen the column."""
    return conn in _SEEN


def saw(conn: Conn) -> None:
    _SEEN.add(conn)


def has_column(conn: Conn) -> bool:
    row = conn.execute(f"SELECT {HAS_COLUMN}").fetchone()
    there = bool(row is not None and row[0])
    if there:
        saw(conn)
    return there


def add_column(conn: Conn) -> None:
    """Add the column unless it is there (on an autocommit connection).

    :raises psycopg.errors.LockNotAvailable: the table stayed locked by other
        sessions for every try.
    """
    if has_column(conn):
        return
    for attempt in range(ALTER_TRIES):
        try:
            with conn.transaction():
                conn.execute(
                    "SELECT set_config('lock_timeout', %s, true)", (f"{ALTER_LOCK_TIMEOUT_MS}ms",)
                )
                # With the schema's creation and migrations: one at a time.
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_schema.SCHEMA_LOCK,))
                conn.execute(_ADD_COLUMN)
            saw(conn)
            return
        except errors.LockNotAvailable:
            if attempt == ALTER_TRIES - 1:
                raise
            time.sleep(ALTER_PAUSE)


def build_indexes(conn: Conn) -> bool:
    """Build the claims' indexes unless they are there and valid (on an
    autocommit connection); whether they are.

    False when another member is building them, or a build was cancelled
    (a lock or statement timeout: an invalid index is left, dropped and
    built again by the next try).
    """
    if not _missing(conn):
        return True
    row = conn.execute("SELECT pg_try_advisory_lock(%s)", (_INDEX_LOCK,)).fetchone()
    if row is None or not row[0]:
        return False
    try:
        for name in _missing(conn):
            # A build that failed left its index, invalid: IF NOT EXISTS would keep it.
            conn.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")
            conn.execute(f"CREATE INDEX CONCURRENTLY {name} {INDEXES[name]}")
        return True
    except (errors.QueryCanceled, errors.LockNotAvailable, errors.DeadlockDetected) as exc:
        logger.warning(
            "jobsched: the indexes of named queues are not built yet (%s); claims that name "
            "queues read the ready jobs without them until a later job of one builds them",
            " ".join(str(exc).split()),
        )
        return False
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (_INDEX_LOCK,))


def _missing(conn: Conn) -> list[str]:
    """The claims' indexes not there, or not valid."""
    valid = {
        name
        for (name,) in conn.execute(
            "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "WHERE i.indexrelid = ANY(ARRAY(SELECT to_regclass(n) FROM unnest(%s::text[]) n)) "
            "AND i.indisvalid",
            (list(INDEXES),),
        )
    }
    return [name for name in INDEXES if name not in valid]
