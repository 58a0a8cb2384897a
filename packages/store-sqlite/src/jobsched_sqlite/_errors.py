"""Which SQLite errors are an outage, which are one job's data, and what they become.

A locked file (another process held the write lock past the busy timeout), a
full disk, an I/O error, a file turned read-only: each may pass while the
scheduler runs, so the store raises :class:`StoreUnavailableError`, which the
scheduler's link retries with backoff instead of ending on it. A value SQLite
cannot keep (a string or blob over its length limit, a string with a lone
surrogate that cannot be encoded) is that job's: :class:`JobDataError`, and
the scheduler fails that job alone. Every other error (a constraint, a bug in
a statement) is raised as it is.
"""

from __future__ import annotations

import shlex
import sqlite3
from pathlib import Path

from jobsched import SchedulerError, StoreUnavailableError
from jobsched.store import JobDataError

# Primary result codes (sqlite3.h). Python < 3.11 has no sqlite_errorcode:
# the messages below, which SQLite has used for these codes for decades.
_BUSY, _LOCKED, _NOMEM, _READONLY, _IOERR, _FULL, _CANTOPEN, _PROTOCOL = 5, 6, 7, 8, 10, 13, 14, 15
_TRANSIENT_CODES = frozenset(
    {_BUSY, _LOCKED, _NOMEM, _READONLY, _IOERR, _FULL, _CANTOPEN, _PROTOCOL}
)
_TOOBIG = 18
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


def is_data(exc: BaseException) -> bool:
    """True if ``exc`` is a value of the call's jobs that SQLite cannot keep."""
    if isinstance(exc, UnicodeError):
        return True
    if not isinstance(exc, sqlite3.Error):
        return False
    code: int | None = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF == _TOOBIG
    return "string or blob too big" in str(exc).lower()


def refused(exc: BaseException) -> JobDataError:
    """The JobDataError a value SQLite cannot keep (``exc``) becomes."""
    if isinstance(exc, UnicodeEncodeError):
        return JobDataError(
            f"a text holds a character that cannot be encoded as {exc.encoding} "
            f"({exc.reason}: a lone surrogate?)"
        )
    return JobDataError(f"SQLite: {exc} (over its length limit, SQLITE_MAX_LENGTH)")


def classified(exc: BaseException, path: Path) -> BaseException:
    """What the store raises for ``exc``: an outage, one job's data, a corrupt
    file, or ``exc`` itself."""
    if is_transient(exc):
        assert isinstance(exc, sqlite3.Error)
        return unavailable(exc, path)
    if is_data(exc):
        return refused(exc)
    if is_corrupt(exc):
        assert isinstance(exc, sqlite3.Error)
        return corrupt(exc, path)
    return exc


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
