"""Jobs written in the caller's own transaction (``enqueue(..., connection=conn)``):
a ``sqlite3.Connection`` of the caller's to the store's file.

The row goes in by the store's own :func:`~._add.add`, on the caller's
connection, inside the transaction the caller has open: the job, its
dependency edges and its number commit or roll back with the caller's
rows. A plain job is numbered from the file's sequence in that same
transaction (``_own.next_numbers``), not from the scheduler's reserved
blocks: a reservation is a write transaction of the store's own
connection, which would wait for the caller's write lock, held by the
caller's thread until it commits (a deadlock that the busy timeout would
end ten seconds later). Under the caller's write lock no other member
numbers anything, and a rollback hands the number back.

A worker in another process sees the job as it sees any other process's:
at its next poll of the file (``POLL_INTERVAL``), SQLite having no
notifications.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from jobsched import UnknownJobError
from jobsched.store import Joined, NewJob

from . import _own
from ._add import add


def joined(path: Path, connection: object) -> Joined:
    """``connection``, checked, as a writer into its open transaction.

    :raises TypeError: it is not a ``sqlite3.Connection``.
    :raises ValueError: it is to another file, in autocommit mode outside a
        transaction, or the file has no jobsched schema yet.
    """
    if not isinstance(connection, sqlite3.Connection):
        raise TypeError(
            f"connection={connection!r}: the SQLite store {str(path)!r} writes jobs in your "
            "transaction through a sqlite3.Connection to its file (from SQLAlchemy: "
            "session.connection().connection.driver_connection)"
        )
    main = _main_file(connection)
    if not main or not _same_file(main, path):
        raise ValueError(
            f"the sqlite3 connection is to {main or 'a temporary or in-memory database'!r}, "
            f"not to the store's file {str(path)!r}: connect to the store's file "
            f"(sqlite3.connect({str(path)!r})) to enqueue in its transactions"
        )
    if not connection.in_transaction and _autocommit(connection):
        raise ValueError(
            "the sqlite3 connection is in autocommit mode with no transaction open, so the "
            "job would commit on its own: BEGIN a transaction first (connection.execute("
            '"BEGIN")), or enqueue without connection='
        )
    has_schema = connection.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'jobsched_meta'"
    ).fetchone()
    if has_schema is None:
        raise ValueError(
            f"the SQLite store {str(path)!r} has no jobsched schema yet: start a scheduler on "
            "it once (`jobsched worker --store sqlite:///...`, or `async with "
            "app.scheduler():`), which creates it"
        )
    return _Joined(connection)


class _Joined(Joined):
    def __init__(self, connection: sqlite3.Connection) -> None:
        self._conn = connection

    def add(self, job: NewJob, now: float) -> int | None:
        conn = self._conn
        _check_upstreams(conn, job)
        if not job.own_id:
            job.id = _own.next_numbers(conn, 1)
        # The store's add, in the caller's transaction: for a held own id it
        # writes nothing and says so (job.existed), never an error.
        add(conn, [job], now)
        if job.existed:
            return None
        return job.id


def _check_upstreams(conn: sqlite3.Connection, job: NewJob) -> None:
    """UnknownJobError, before anything is written, for an upstream the file
    does not hold (as the caller's transaction sees it: jobs it enqueued too)."""
    if not job.depends_on:
        return
    rows = _own.rows_of(conn, job.depends_on)
    missing = [
        upstream
        for upstream in dict.fromkeys(job.depends_on)
        if conn.execute(
            "SELECT 1 FROM jobs WHERE id = ?", (rows.get(upstream, upstream),)
        ).fetchone()
        is None
    ]
    if missing:
        raise UnknownJobError(
            f"{job.name} depends on job(s) {[_shown(m) for m in missing]} that the store "
            "does not hold (as your transaction sees it): enqueue dependencies first"
        )


def _shown(number: int) -> str:
    return f"job-{number}" if number > 0 else f"an id of your own ({number})"


def _main_file(conn: sqlite3.Connection) -> str:
    for _, name, file in conn.execute("PRAGMA database_list"):
        if name == "main":
            return str(file or "")
    return ""


def _same_file(a: str, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _autocommit(conn: sqlite3.Connection) -> bool:
    """Whether a statement outside a transaction commits on its own (the
    legacy mode, ``isolation_level`` not None, opens one before a write)."""
    mode = getattr(conn, "autocommit", None)  # Python 3.12+
    if mode is True:
        return True
    if mode is False:
        return False
    return conn.isolation_level is None
