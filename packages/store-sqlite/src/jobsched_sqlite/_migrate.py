"""The SQLite schema's migrations: a file of an older version brought to this one."""

from __future__ import annotations

import sqlite3

#: The schema this code writes. A file with a newer one was written by a
#: newer jobsched, and this one refuses it rather than guess.
VERSION = 5

# completed_counts: how many COMPLETED jobs each executor has, kept by the
# statements that complete a job (an outcome) or delete one (a prune), in
# their transaction, one upsert per executor and batch. counts() adds the
# other statuses from jobs_status, which leaves completed rows out, so it
# reads a few rows plus the unfinished and failed ones instead of a million
# (a GROUP BY over every row: 2.5 s at 1M). Schema 2 kept them by triggers,
# an upsert per row: 6.3 us of SQL per plain completion instead of 3.8.
#
# ended_counts: the same for FAILED, TIMED_OUT and CANCELLED, by (status,
# executor), kept by the statements that end, retry or delete such a job
# (outcomes, cancels, the cascade, retry, prune). counts() read those rows
# from jobs_status, and they grow with the history too (2% of 1M jobs: 19 ms
# a read, 14x the figure at 10k); only the unfinished rows are counted now.
# A file of schema 3 made before it gets the table at its first opening,
# counted from its rows (ENDED_FIX), without a new schema version: a file
# of the previous code still opens there. A process of that code writing to
# the file does not keep the table, though: run one version on a file.

#: Schema 5's table and indexes, in a new file and in a migrated one:
#: workflows (ids from next_id, as jobs'); a workflow's jobs by id, with
#: their status (the list's counts read the index alone, not every row of
#: a big workflow; a status change of a workflow's job rewrites its entry); the
#: edges by dependent (a job's upstreams: fetch, retry) and the waiting
#: ones by upstream (the "any edge waiting?" probe of a batch of outcomes,
#: which with edges kept would otherwise be true for ever).
WORKFLOW_DDL = [
    "CREATE TABLE IF NOT EXISTS workflows (id INTEGER PRIMARY KEY, name TEXT NOT NULL, "
    "created_at REAL NOT NULL, size INTEGER NOT NULL)",
    "CREATE INDEX IF NOT EXISTS jobs_workflow ON jobs (workflow, id, status) "
    "WHERE workflow IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS deps_downstream ON deps (downstream)",
    "CREATE INDEX IF NOT EXISTS deps_waiting ON deps (upstream) WHERE settled = 0",
]

# Workflows (issue 37): a job's workflow and progress; an edge's policy
# (on_failure 0: an upstream that did not complete cancels the dependent,
# 1: the dependent runs anyway) and state (settled 0: waiting, 1: met, 2:
# settled by an end other than COMPLETED), kept until the dependent goes
# instead of deleted when met. Column adds (nullable, or with a constant
# default) rewrite no row. The edges there are the waiting ones (schema 4
# deleted the met ones), so settled 0 is right for every one of them. Each
# column is added unless there, as PostgreSQL's ADD COLUMN IF NOT EXISTS.
WORKFLOW_COLUMNS = [
    ("jobs", "workflow", "INTEGER"),
    ("jobs", "progress", "REAL"),
    ("jobs", "progress_message", "TEXT"),
    ("deps", "on_failure", "INTEGER NOT NULL DEFAULT 0"),
    ("deps", "settled", "INTEGER NOT NULL DEFAULT 0"),
]

#: Statements that bring a file of the version before each key to it, run
#: in one ``BEGIN IMMEDIATE`` transaction with the version check, so one
#: process migrates and the others see the result.
MIGRATIONS: dict[int, list[str]] = {
    # The running rows' and the unfinished rows' indexes go (jobs_status
    # serves both), and an attempt's row is written when it ends unless it
    # completed: schema 1's rows of running attempts go, their member kept
    # in ran_by.
    2: [
        "DROP INDEX IF EXISTS jobs_leases",
        "DROP INDEX IF EXISTS jobs_unfinished",
        "ALTER TABLE jobs ADD COLUMN ran_by TEXT",
        "UPDATE jobs SET ran_by = (SELECT owner FROM attempts a WHERE a.job_id = jobs.id "
        "AND a.attempt = jobs.attempts) WHERE attempts > 0",
        "DELETE FROM attempts WHERE finished_at IS NULL",
    ],
    # completed_counts is kept by the outcome and prune statements (the
    # counts the triggers kept stay right).
    3: [
        "DROP TRIGGER IF EXISTS jobs_completed_insert",
        "DROP TRIGGER IF EXISTS jobs_completed_update",
        "DROP TRIGGER IF EXISTS jobs_uncompleted",
        "DROP TRIGGER IF EXISTS jobs_completed_delete",
    ],
    # A registered job's arguments (JSON text), NULL on every row there: a
    # pickled job's. Adding a nullable column rewrites no row.
    4: ["ALTER TABLE jobs ADD COLUMN args TEXT"],
    # Workflows (issue 37): the columns of WORKFLOW_COLUMNS first (see
    # migrate), then WORKFLOW_DDL.
    5: WORKFLOW_DDL,
}

#: Creates ended_counts in a schema-3 file made before it, counting the
#: rows it stands for (from jobs_status: only the unfinished and ended rows
#: are read; 1M jobs of which 40,000 ended: see docs/performance.md W15).
ENDED_FIX = [
    "CREATE TABLE IF NOT EXISTS ended_counts (status TEXT NOT NULL, executor TEXT NOT NULL, "
    "n INTEGER NOT NULL, PRIMARY KEY (status, executor)) WITHOUT ROWID",
    "INSERT INTO ended_counts (status, executor, n) SELECT status, executor, COUNT(*) FROM jobs "
    "WHERE status IN ('failed', 'timed_out', 'cancelled') AND status != 'completed' "
    "GROUP BY status, executor",
]


def migrate(conn: sqlite3.Connection) -> None:
    # Another process may have migrated it between our look and the lock.
    (version,) = conn.execute("SELECT value FROM jobsched_meta WHERE key = 'schema'").fetchone()
    for step in range(version + 1, VERSION + 1):
        if step == 5:
            add_columns(conn, WORKFLOW_COLUMNS)
        for statement in MIGRATIONS.get(step, ()):
            conn.execute(statement)
    if version < 5:
        member_columns(conn)
    conn.execute("UPDATE jobsched_meta SET value = ? WHERE key = 'schema'", (VERSION,))
    count_ended(conn)


def add_columns(conn: sqlite3.Connection, columns: list[tuple[str, str, str]]) -> None:
    """Add each ``(table, column, type)`` the table does not have yet."""
    have: dict[str, set[str]] = {}
    for table, column, kind in columns:
        if table not in have:
            have[table] = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        if column not in have[table]:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")


def member_columns(conn: sqlite3.Connection) -> None:
    """Schema 4's column of the names a member runs and schema 5's of the
    schema its code writes, in a members table the code before made (one
    made on demand: a file may have none, and a member of the code before
    still running may make one after the migration)."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(members)")}
    if columns and "names" not in columns:
        conn.execute("ALTER TABLE members ADD COLUMN names TEXT")
    if columns and "level" not in columns:
        conn.execute("ALTER TABLE members ADD COLUMN level INTEGER")


def count_ended(conn: sqlite3.Connection) -> None:
    # Another process may have made it between our look and the lock.
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'ended_counts'").fetchone():
        return
    for statement in ENDED_FIX:
        conn.execute(statement)
