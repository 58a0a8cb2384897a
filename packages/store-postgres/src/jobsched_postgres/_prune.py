"""The PostgreSQL store's prune: finished jobs past their age (per status,
``js.Retention``) and beyond the count kept, oldest first, by index.

Each batch is one transaction under an advisory lock, so two members'
prunes never both delete the same excess (a count read by one and acted on
after the other's delete would take twice the excess).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import psycopg

from jobsched import JobStatus
from jobsched.store import check_prune_args as check_prune_args  # for _store

Conn = psycopg.Connection[Any]

# Finished rows by status, oldest first: a prune by age reads the aged rows
# of one status from the head, never the rows a longer age keeps (failures
# kept a week among completions kept a day). Added on open (IF NOT EXISTS,
# after a look in the catalogue: CREATE INDEX locks the table even when the
# index is there), not by a schema version: an index changes no format.
ENDED_INDEX = (
    "CREATE INDEX IF NOT EXISTS jobsched_jobs_ended ON jobsched_jobs (status, finished_at) "
    "WHERE finished_at IS NOT NULL"
)

_PRUNE_LOCK = 0x6A6F627370726E  # "jobsprn"

# The chosen rows, and their attempts. By id arrays, so each DELETE probes a
# primary key (joined, the planner hashed both tables whole: 20 ms a batch
# at 20k rows). The DELETE says finished_at IS NOT NULL again: a row retried
# since the SELECT read it is unfinished now, and stays.
_DELETE = """
jobs AS (
    DELETE FROM jobsched_jobs WHERE id = ANY(ARRAY(SELECT id FROM old))
    AND finished_at IS NOT NULL RETURNING id
),
attempts AS (DELETE FROM jobsched_attempts WHERE job_id = ANY(ARRAY(SELECT id FROM jobs)))
SELECT COUNT(*) FROM jobs
"""

#: One status's rows that finished before its cutoff (jobsched_jobs_ended).
AGED = (
    """WITH old AS (
    SELECT id FROM jobsched_jobs WHERE status = %(status)s AND finished_at IS NOT NULL
    AND finished_at < %(cutoff)s ORDER BY finished_at LIMIT %(batch)s
),"""
    + _DELETE
)

#: The oldest finished rows (jobsched_jobs_finished), from the oldest end:
#: no OFFSET walk over the rows kept.
OLDEST = (
    """WITH old AS (
    SELECT id FROM jobsched_jobs WHERE finished_at IS NOT NULL
    ORDER BY finished_at, id LIMIT %(batch)s
),"""
    + _DELETE
)

#: The finished jobs, from the counts' deltas (see _schema._COUNTS): no row read.
FINISHED = (
    "SELECT COALESCE(sum(n), 0) FROM jobsched_counts "
    "WHERE status IN ('completed', 'failed', 'timed_out', 'cancelled')"
)


def index_ended(conn: Conn) -> None:
    """Add the index by status and finish time if it is missing."""
    row = conn.execute("SELECT to_regclass('jobsched_jobs_ended') IS NULL").fetchone()
    if row is not None and row[0]:
        conn.execute(ENDED_INDEX)


def prune(conn: Conn, keep: int | None, before: Mapping[JobStatus, float], batch: int) -> int:
    """Delete up to ``batch`` finished jobs, in the caller's transaction:
    those of each status in ``before`` that finished before its cutoff,
    then the oldest beyond the newest ``keep``; how many went (0 while
    another member prunes)."""
    locked = conn.execute("SELECT pg_try_advisory_xact_lock(%s)", (_PRUNE_LOCK,)).fetchone()
    if locked is None or not locked[0]:
        return 0
    gone = 0
    for status, cutoff in before.items():
        if gone >= batch:
            return gone
        params = {"status": status.value, "cutoff": cutoff, "batch": batch - gone}
        gone += _count(conn.execute(AGED, params).fetchone())
    if keep is not None and gone < batch:
        over = min(_count(conn.execute(FINISHED).fetchone()) - keep, batch - gone)
        if over > 0:
            gone += _count(conn.execute(OLDEST, {"batch": over}).fetchone())
    return gone


def _count(row: tuple[Any, ...] | None) -> int:
    return int(row[0]) if row is not None else 0
