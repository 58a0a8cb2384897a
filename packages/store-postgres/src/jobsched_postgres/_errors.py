"""Which PostgreSQL errors are an outage, which are one job's data, and which a
bug: by the error's SQLSTATE class, the server's own grouping of causes.

- An outage passes on its own: the connection (class 08), the server shutting
  down or cancelling a statement (57), its resources (53: a full disk, too
  many connections), its I/O (58), a transaction rolled back to be run again
  (40: a serialization failure or deadlock, once the store's own retries are
  spent), a lock not granted in time (55P03), a read-only database (25006: a
  hot standby, a failover, ``default_transaction_read_only``). The store raises
  :class:`StoreUnavailableError` and the scheduler waits and retries.
- A value the database refuses (22: NUL in text, an invalid encoding, a value
  too long or out of range; 54: a value over a limit), or one the driver
  cannot send (a lone surrogate): :class:`JobDataError`, and the scheduler
  fails that job alone.
- Anything else (a syntax error, a missing column, a constraint) is a bug in
  jobsched, raised as it is.

psycopg's own errors without a SQLSTATE (the connection lost on the client's
side, a NUL its text dumper refuses) are classed by their type.
"""

from __future__ import annotations

import re

import psycopg
from psycopg import errors
from psycopg_pool import PoolTimeout

from jobsched import StoreUnavailableError
from jobsched.store import JobDataError

from . import _connect

#: SQLSTATE classes that pass (see the module).
TRANSIENT_CLASSES = frozenset({"08", "40", "53", "57", "58"})
#: Single SQLSTATEs that pass, of classes that otherwise do not.
TRANSIENT_STATES = frozenset({"25006", "55P03"})
#: SQLSTATE classes of a value the database refuses.
DATA_CLASSES = frozenset({"22", "54"})
#: A transaction that lost to another (serialization failure, deadlock): the
#: store runs it again itself a few times before it counts as an outage.
CONFLICT_CLASS = "40"
READ_ONLY = "25006"


def sqlstate(exc: BaseException) -> str | None:
    return getattr(exc, "sqlstate", None) if isinstance(exc, psycopg.Error) else None


def is_conflict(exc: BaseException) -> bool:
    """A transaction the server rolled back for another's sake: run it again."""
    state = sqlstate(exc)
    return state is not None and state[:2] == CONFLICT_CLASS


def is_transient(exc: BaseException) -> bool:
    """An error that passes: the store is unavailable for now."""
    if isinstance(exc, PoolTimeout):
        return True
    state = sqlstate(exc)
    if state is not None:
        return state[:2] in TRANSIENT_CLASSES or state in TRANSIENT_STATES
    return isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError))


def is_data(exc: BaseException) -> bool:
    """A value of the call's jobs that the database or the driver refuses."""
    if isinstance(exc, UnicodeError):
        return True
    state = sqlstate(exc)
    if state is not None:
        return state[:2] in DATA_CLASSES
    return isinstance(exc, psycopg.DataError)


def refused(exc: BaseException) -> JobDataError:
    """The JobDataError a refused value ``exc`` becomes: what was wrong, not the value."""
    if isinstance(exc, UnicodeEncodeError):
        said = (
            f"a text holds a character that cannot be encoded as {exc.encoding} "
            f"({exc.reason}: a lone surrogate?)"
        )
    elif sqlstate(exc) is None:
        said = " ".join(str(exc).split())  # the driver's: it names PostgreSQL
    else:
        said = "PostgreSQL: " + " ".join(str(exc).split())
    return JobDataError(said)


def read_only(url: str, said: str) -> StoreUnavailableError:
    """The database takes no writes (``said``: how that showed)."""
    return StoreUnavailableError(
        f"the PostgreSQL store {url!r} is read-only ({said}): is the URL on a hot standby "
        "or replica, is a failover under way, or is default_transaction_read_only on? "
        "It is used again once the database takes writes"
    )


def unavailable(url: str, exc: BaseException) -> StoreUnavailableError:
    """What a transient failure means, for the log and the CLI."""
    said = " ".join(str(exc).split())
    where = f"the PostgreSQL store {url!r}"
    state = sqlstate(exc)
    if state == READ_ONLY:
        return read_only(url, said)
    if isinstance(exc, errors.LockNotAvailable):
        table = getattr(exc.diag, "context", None) or ""
        found = re.search(r'relation "(\w+)"', table)
        text = (
            f"{where}: a row{f' of {found.group(1)}' if found else ''} is locked by "
            f"another session (lock_timeout {_connect.LOCK_TIMEOUT:g}s; an open SELECT ... "
            "FOR UPDATE or a long transaction?); nothing was changed: try again once "
            "that session has ended"
        )
    elif isinstance(exc, errors.QueryCanceled):
        text = (
            f"{where}: a statement was cancelled ({said}; statement_timeout "
            f"{_connect.STATEMENT_TIMEOUT:g}s, or pg_cancel_backend); nothing was changed: "
            "try again"
        )
    elif isinstance(exc, (errors.AdminShutdown, errors.CrashShutdown)):
        text = (
            f"{where}: the server ended the connection ({said}: an administrator's "
            "pg_terminate_backend, or the server shutting down or restarting)"
        )
    elif isinstance(exc, PoolTimeout):
        text = (
            f"{where} is unreachable: no connection within {_connect.CONNECT_TIMEOUT:g}s "
            f"({said}); check that the server runs and accepts connections"
        )
    else:
        text = f"{where} failed: {said}"
    return StoreUnavailableError(text)
