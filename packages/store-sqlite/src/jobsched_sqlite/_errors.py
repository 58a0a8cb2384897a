"""Which SQLite errors are an outage, and the StoreUnavailableError they become.

A locked file (another process held the write lock past the busy timeout), a
full disk, an I/O error: each may pass while the scheduler runs, so the store
raises :class:`StoreUnavailableError`, which the scheduler's link retries with
backoff instead of ending on it. Every other error (a constraint, a bug in a
statement) is raised as it is.
"""

from __future__ import annotations

import shlex
import sqlite3
from pathlib import Path

from jobsched import SchedulerError, StoreUnavailableError

# Primary result codes (sqlite3.h). Python < 3.11 has no sqlite_errorcode:
# the messages below, which SQLite has used for these codes for decades.
_BUSY, _LOCKED, _NOMEM, _READONLY, _IOERR, _FULL, _CANTOPEN, _PROTOCOL = 5, 6, 7, 8, 10, 13, 14, 15
_TRANSIENT_CODES = frozenset(
    {_BUSY, _LOCKED, _NOMEM, _READONLY, _IOERR, _FULL, _CANTOPEN, _PROTOCOL}
)
_TRANSIENT_MESSAGES = (
    "database is locked",
    "database table is locked",
    "disk i/o error",
    "database or disk is full",
    "out of memory",
    "unable to open database file",
    "attempt to write a readonly database",
    "locking protocol",
)
_HINTS = {
    _BUSY: "another process holds its write lock",
    _LOCKED: "another process holds its write lock",
    _FULL: "the disk (or this process's file size limit) is full",
    _IOERR: "a read or write failed: a full disk, a file size limit, or a failing disk",
    _READONLY: "the file or its folder became read-only",
}


def is_transient(exc: BaseException) -> bool:
    """True if ``exc`` is a SQLite error that may pass (see the module)."""
    if not isinstance(exc, sqlite3.Error):
        return False
    code: int | None = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in _TRANSIENT_CODES
    message = str(exc).lower()
    return any(m in message for m in _TRANSIENT_MESSAGES)


def unavailable(exc: sqlite3.Error, path: Path) -> StoreUnavailableError:
    """The StoreUnavailableError a transient ``exc`` on the file ``path`` becomes."""
    code: int | None = getattr(exc, "sqlite_errorcode", None)
    hint = _HINTS.get(code & 0xFF) if code is not None else None
    return StoreUnavailableError(
        f"the SQLite store {str(path)!r} cannot be written now: {exc}"
        + (f" ({hint})" if hint else "")
    )


# ── a corrupt file: neither an outage nor a bug ────────────────────────────

_CORRUPT = 11  # SQLITE_CORRUPT: "database disk image is malformed"


class StoreCorruptError(SchedulerError):
    """The store's file is damaged: no retry mends it, so the scheduler ends,
    and the command line shows the message in one line (a SchedulerError)."""


def is_corrupt(exc: BaseException) -> bool:
    """True if ``exc`` says the database file is damaged (SQLITE_CORRUPT)."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    code: int | None = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF == _CORRUPT
    return "malformed" in str(exc).lower()


def corrupt(exc: sqlite3.Error, path: Path) -> StoreCorruptError:
    """The one-line error of a damaged file: which file, and what to do."""
    file = shlex.quote(str(path))
    return StoreCorruptError(
        f"the SQLite store {str(path)!r} is corrupt ({exc}): check it with "
        f"`sqlite3 {file} 'PRAGMA integrity_check'`, then restore it from a backup, "
        f"or salvage its rows with `sqlite3 {file} .recover | sqlite3 NEW.db` and "
        "point the store URL at NEW.db"
    )
