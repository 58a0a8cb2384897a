"""The SQLite schema, and opening a file: pragmas, checks, creation (migrations: _migrate)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

from jobsched import StoreUnavailableError

from ._errors import corrupt, is_corrupt
from ._migrate import VERSION, WORKFLOW_DDL, count_ended, migrate

# queue: where a PENDING or RETRY_WAIT job waits. 0: ready (a claim takes it
# in key order), 1: waiting for run_at (a delay or a retry backoff), 2:
# blocked on dependencies (unmet > 0), 3: parked, its rate key's bucket
# empty (a claim moves the best back to 0 when tokens come). NULL: running or
# finished. Each queue has a partial index, so a claim reads only ready rows
# in key order and promotion reads only due waiting rows: both stay cheap at
# a million rows. jobs_rated finds a rate key's queued rows (only rows with a
# rate key pay for it).
# rate_buckets holds one token bucket per rate key and fair_turns the
# round-robin's place per tenant ('' for None), both shared by every member
# that opens the file (see _claim.py).
#
# jobs_status serves the operator's lists by status, newest first (failed,
# queued...), and counts() of every status but completed. Completed rows, the
# bulk of a long history, are left out; a read that asks for other statuses
# says `status != 'completed'` so the planner may use it. Without it a list
# by a status no job had scanned every row (0.9 s at 1M).
#
# Running rows are found through jobs_status too (status = 'running', with
# `status != 'completed'` repeated so the planner may use it): lost attempts,
# a member's cancels, the running attempts. They are few (the fleet's
# workers), so an index of their own cost every claim and outcome an entry
# for nothing; nor has the count of unfinished jobs one (schema 1 had both).
#
# attempts: one row per attempt that ended other than COMPLETED, written by
# its outcome; the operator's timeline and a job's history. A running
# attempt, and a job's completed last one, are the job's own row (ran_by:
# the member that started its last attempt, started_at, finished_at), so the
# common path (claim, complete) writes no attempt row at all. It goes with
# its job when prune deletes the job.
#
# args: a registered job's arguments, JSON text (SQLite's json functions
# read it: json_extract(args, '$.to')); NULL for a pickled job. A claim
# hands a row with args only to a member that knows its name.
#
# deps: one row per edge, kept until its dependent goes (settled: 0 waiting,
# 1 met, 2 settled by an upstream's other end; on_failure: 0 cancel, 1 run),
# with workflows, workflow, progress: schema 5, see _migrate.WORKFLOW_DDL.
_DDL = """
CREATE TABLE jobsched_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE jobs (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    executor TEXT NOT NULL,
    status TEXT NOT NULL,
    queue INTEGER,
    k0 REAL NOT NULL,
    k1 REAL NOT NULL,
    k2 REAL NOT NULL,
    run_at REAL NOT NULL,
    submitted_at REAL NOT NULL,
    started_at REAL,
    finished_at REAL,
    attempts INTEGER NOT NULL DEFAULT 0,
    owner TEXT,
    ran_by TEXT,
    lease_until REAL,
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    unmet INTEGER NOT NULL DEFAULT 0,
    tenant TEXT,
    rate_key TEXT,
    payload BLOB NOT NULL,
    result BLOB,
    last_error TEXT,
    last_traceback TEXT,
    schedule TEXT,
    fire_time REAL,
    args TEXT,
    workflow INTEGER,
    progress REAL,
    progress_message TEXT
);
CREATE TABLE deps (
    upstream INTEGER NOT NULL,
    downstream INTEGER NOT NULL,
    on_failure INTEGER NOT NULL DEFAULT 0,
    settled INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (upstream, downstream)
) WITHOUT ROWID;
CREATE INDEX jobs_ready ON jobs (k0, k1, k2) WHERE queue = 0;
CREATE INDEX jobs_waiting ON jobs (run_at) WHERE queue = 1;
CREATE INDEX jobs_rated ON jobs (queue, rate_key, k0, k1, k2)
    WHERE rate_key IS NOT NULL AND queue IS NOT NULL;
CREATE INDEX jobs_finished ON jobs (finished_at) WHERE finished_at IS NOT NULL;
CREATE INDEX jobs_status ON jobs (status, executor, id) WHERE status != 'completed';
CREATE UNIQUE INDEX jobs_fires ON jobs (schedule, fire_time) WHERE schedule IS NOT NULL;
CREATE TABLE schedules (
    id TEXT PRIMARY KEY,
    payload BLOB NOT NULL,
    next_fire REAL NOT NULL,
    last_job INTEGER,
    owner TEXT,
    lease_until REAL
);
CREATE INDEX schedules_due ON schedules (next_fire);
CREATE TABLE rate_buckets (
    key TEXT PRIMARY KEY,
    tokens REAL NOT NULL,
    updated_at REAL NOT NULL
) WITHOUT ROWID;
CREATE TABLE fair_turns (
    tenant TEXT PRIMARY KEY,
    served INTEGER NOT NULL,
    credit INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE attempts (
    job_id INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    owner TEXT,
    started_at REAL NOT NULL,
    finished_at REAL,
    status TEXT NOT NULL,
    error TEXT,
    PRIMARY KEY (job_id, attempt)
) WITHOUT ROWID;
CREATE INDEX attempts_finished ON attempts (finished_at) WHERE finished_at IS NOT NULL;
CREATE TABLE completed_counts (executor TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE ended_counts (
    status TEXT NOT NULL,
    executor TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (status, executor)
) WITHOUT ROWID;
INSERT INTO jobsched_meta (key, value) VALUES ('schema', 5), ('next_id', 1);
"""

#: A fair-share claim reads each tenant's ready rows in key order. The first
#: one creates this index (in its transaction): every job written pays for an
#: index (about a tenth of W7's throughput), so a file never claimed by a fair
#: share doesn't have it.
# Finished rows by status, oldest first: a prune by age (js.Retention) reads
# the aged rows of one status from the head, never the rows a longer age
# keeps. Added on open to a store of any version (IF NOT EXISTS): an index
# is no format change, and an older jobsched ignores it.
ENDED_INDEX = (
    "CREATE INDEX IF NOT EXISTS jobs_ended ON jobs (status, finished_at) "
    "WHERE finished_at IS NOT NULL"
)
TENANT_INDEX = (
    "CREATE INDEX IF NOT EXISTS jobs_ready_tenants ON jobs (tenant, k0, k1, k2) WHERE queue = 0"
)

#: How long a writer waits for another process's write lock before failing.
BUSY_TIMEOUT_MS = 10_000


def path_from_url(url: str) -> Path:
    """The file a ``sqlite:///relative`` or ``sqlite:////absolute`` URL names.

    :raises ValueError: the URL is not of that form.
    """
    prefix = "sqlite:///"
    if not url.startswith(prefix) or len(url) == len(prefix):
        raise ValueError(
            f"malformed SQLite store URL {url!r}: use sqlite:///relative/path.db or "
            "sqlite:////absolute/path.db"
        )
    rest = url[len(prefix) :]
    if "?" in rest or "#" in rest:
        raise ValueError(
            f"SQLite store URL {url!r} has a query or fragment; pass options to "
            "open_store() as keyword arguments instead"
        )
    return Path(rest)


def connect(path: Path) -> sqlite3.Connection:
    """Open ``path``, creating the schema in a new file and checking an old one.

    :raises StoreUnavailableError: the file cannot be opened or created, is not
        a SQLite database, belongs to another application, or was written by a
        newer jobsched.
    """
    if not path.parent.is_dir():
        raise StoreUnavailableError(
            f"cannot open the SQLite store {str(path)!r}: the folder "
            f"{str(path.parent)!r} does not exist; create it first"
        )
    try:
        # Autocommit mode: every write transaction is an explicit BEGIN
        # IMMEDIATE, which takes the write lock up front. A deferred one that
        # upgrades from read to write gets SQLITE_BUSY at once in WAL mode,
        # whatever the busy timeout.
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise StoreUnavailableError(
            f"cannot open the SQLite store {str(path)!r}: {exc}; check the path and "
            "that this process may write there"
        ) from exc
    try:
        _prepare(conn, path)
    except BaseException as exc:
        conn.close()
        if isinstance(exc, sqlite3.Error) and is_corrupt(exc):
            raise corrupt(exc, path) from exc
        raise
    return conn


def exists(path: Path) -> bool | None:
    """Whether ``path`` holds a database with tables (connect() would not
    create a schema there); None when it cannot be read, for connect() to say why."""
    if not path.is_file():
        return False
    try:
        # Read-only, so a file that is not there is never made.
        conn = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True)
        try:
            tables: int = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            return tables > 0
        finally:
            conn.close()
    except sqlite3.Error:
        return None


def _prepare(conn: sqlite3.Connection, path: Path) -> None:
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        # FULL: a commit is on disk before submit's flush returns, so a
        # committed job survives a power cut too, not only a process crash
        # (NORMAL in WAL mode may lose the last commits on power loss).
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("PRAGMA foreign_keys = OFF")
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    except sqlite3.DatabaseError as exc:
        if _is_read_only(exc):
            raise _read_only(path, exc) from exc
        if is_corrupt(exc):
            raise corrupt(exc, path) from exc
        raise StoreUnavailableError(
            f"cannot open the SQLite store {str(path)!r}: {exc} (is it a SQLite database? "
            "a corrupt or foreign file is never overwritten; point the URL at a new file)"
        ) from exc
    if mode.lower() != "wal":
        raise StoreUnavailableError(
            f"the SQLite store {str(path)!r} cannot use WAL mode (got {mode!r}); "
            "put it on a local file system"
        )
    if not tables:
        _locked(conn, path, _create, "create")
        return
    if "jobsched_meta" not in tables:
        raise StoreUnavailableError(
            f"{str(path)!r} is a SQLite database of another application (tables: "
            f"{', '.join(sorted(tables)[:5])}); point the store URL at a new file"
        )
    row = conn.execute("SELECT value FROM jobsched_meta WHERE key = 'schema'").fetchone()
    version = row[0] if row else 0
    if version > VERSION:
        raise StoreUnavailableError(
            f"the SQLite store {str(path)!r} has schema version {version}, written by a "
            f"newer jobsched (this one knows up to {VERSION}); upgrade jobsched-store-sqlite"
        )
    if version < 1:
        raise StoreUnavailableError(
            f"the SQLite store {str(path)!r} has no valid schema version; it is damaged "
            "or not jobsched's"
        )
    if version < VERSION:
        _locked(conn, path, migrate, f"migrate to schema version {VERSION}")
    elif "ended_counts" not in tables:
        _locked(conn, path, count_ended, "count the ended jobs of")
    else:
        _check_writable(conn, path)
    if "jobs_ended" not in tables:
        _locked(conn, path, _index_ended, "index the finished jobs of")


def _index_ended(conn: sqlite3.Connection) -> None:
    conn.execute(ENDED_INDEX)


def _check_writable(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse a file this process can read but not write, now rather than at
    the first write (SQLite opens such a file read-only without a word)."""
    try:
        conn.execute("BEGIN IMMEDIATE")
        # Writes the page back as it is: the one way to learn that a write fails.
        conn.execute("UPDATE jobsched_meta SET value = value WHERE key = 'schema'")
        conn.execute("COMMIT")
    except sqlite3.Error as exc:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        if is_corrupt(exc):
            raise corrupt(exc, path) from exc
        if not _is_read_only(exc):
            raise StoreUnavailableError(
                f"cannot write the SQLite store {str(path)!r}: {exc}; check that this "
                "process may write there"
            ) from exc
        raise _read_only(path, exc) from exc


def _is_read_only(exc: sqlite3.Error) -> bool:
    code: int | None = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF == 8  # SQLITE_READONLY
    return "readonly" in str(exc)


def _read_only(path: Path, exc: sqlite3.Error) -> StoreUnavailableError:
    """The refusal of a file this process may not write, saying which part is read-only."""
    if not os.access(path, os.W_OK):
        what = "the file is read-only"
    elif not os.access(path.parent, os.W_OK | os.X_OK):
        what = (
            f"its folder {str(path.parent)!r} is read-only, and SQLite writes "
            f"{path.name}-wal and {path.name}-shm there"
        )
    else:
        what = "its file system may be mounted read-only"
    return StoreUnavailableError(
        f"the SQLite store {str(path)!r} is read-only ({what}: {exc}); make the file "
        "and its folder writable by this process, or point the URL at a writable file"
    )


def _create(conn: sqlite3.Connection) -> None:
    # Another process may have created it between our look and the lock.
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'jobsched_meta'").fetchone():
        return
    for statement in [*_DDL.split(";"), *WORKFLOW_DDL]:
        if statement.strip():
            conn.execute(statement)
    conn.execute(ENDED_INDEX)


def _locked(
    conn: sqlite3.Connection, path: Path, change: Callable[[sqlite3.Connection], None], what: str
) -> None:
    """Run ``change`` in one BEGIN IMMEDIATE transaction: all of it or nothing."""
    try:
        conn.execute("BEGIN IMMEDIATE")
        change(conn)
        conn.execute("COMMIT")
    except sqlite3.Error as exc:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        if is_corrupt(exc):
            raise corrupt(exc, path) from exc
        raise StoreUnavailableError(
            f"cannot {what} the SQLite store {str(path)!r}: {exc}; check that this "
            "process may write there"
        ) from exc
