"""The PostgreSQL store's prune: finished jobs past their age (per status,
``js.Retention``) and beyond the count kept, oldest first, by index.

Each batch is one transaction under an advisory lock, so two members'
prunes never both delete the same excess (a count read by one and acted on
after the other's delete would take twice the excess).
"""

from __future__ import annotations

import time
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

# The retention guard (workflows-plan section 8, Oban #722): a finished job
# that an unfinished job has an edge from stays, whatever its age, for that
# dependent still waits for it or reads its result when it is claimed. A
# probe of jobsched_deps' primary key by upstream, then of the jobs' primary
# key per edge: a job without dependents costs one probe.
_FREE = """NOT EXISTS (
        SELECT 1 FROM jobsched_deps d JOIN jobsched_jobs w ON w.id = d.downstream
        WHERE d.upstream = {}.id AND w.finished_at IS NULL OFFSET 0)"""

# The chosen rows, their attempts and their edges both ways (by the deps'
# primary key and jobsched_deps_downstream): kept after the upstream ends,
# edges would otherwise outlive both jobs, and an own id used again would
# find its old ones. By id arrays, so each DELETE probes an index (joined,
# the planner hashed both tables whole: 20 ms a batch at 20k rows).
#
# The rows come locked from a statement before (AGED, OLDEST: FOR UPDATE,
# skipping rows an add holds FOR SHARE), and the guard is asked again here,
# in a snapshot taken after the locks: an add that read an upstream before
# the prune locked it has committed by then, and its edges are seen (asked
# in the picking statement only, it missed them: that snapshot predates the
# add's commit, and the locked row is the same row, so the server checks
# nothing again). An add that reads it later waits for this transaction and
# finds it gone. The DELETE says finished_at IS NOT NULL again: a row retried
# since it was read is unfinished now, and stays. It answers the rows
# deleted and the workflows they were of.
DELETE = (
    """WITH old AS (
    SELECT id FROM jobsched_jobs o WHERE id = ANY(%(ids)s) AND """
    + _FREE.format("o")
    + """),
jobs AS (
    DELETE FROM jobsched_jobs WHERE id = ANY(ARRAY(SELECT id FROM old))
    AND finished_at IS NOT NULL RETURNING id, workflow
),
attempts AS (DELETE FROM jobsched_attempts WHERE job_id = ANY(ARRAY(SELECT id FROM jobs))),
up AS (DELETE FROM jobsched_deps WHERE upstream = ANY(ARRAY(SELECT id FROM jobs))),
down AS (DELETE FROM jobsched_deps WHERE downstream = ANY(ARRAY(SELECT id FROM jobs)))
SELECT COUNT(*), array_remove(array_agg(DISTINCT workflow), NULL) FROM jobs
"""
)

# The workflows whose last job a batch deleted: a statement of its own in
# the batch's transaction (the CTEs above share one snapshot, in which the
# rows being deleted are still there); a probe of jobsched_jobs_workflow each.
_EMPTIED = """
DELETE FROM jobsched_workflows w WHERE id = ANY(%s)
AND NOT EXISTS (SELECT 1 FROM jobsched_jobs j WHERE j.workflow = w.id)
"""

#: One status's rows that finished before its cutoff (jobsched_jobs_ended),
#: those the guard holds passed over (an age is a bound, not a position),
#: locked for DELETE.
AGED = (
    """SELECT id FROM jobsched_jobs o WHERE status = %(status)s AND finished_at IS NOT NULL
    AND finished_at < %(cutoff)s AND """
    + _FREE.format("o")
    + """ ORDER BY finished_at LIMIT %(batch)s FOR UPDATE OF o SKIP LOCKED"""
)

#: The oldest finished rows (jobsched_jobs_finished), from the oldest end (no
#: OFFSET walk over the rows kept), locked for DELETE, which passes over
#: those the guard holds: it never reaches past the oldest ``over``, so a
#: held job never costs one of the newest ``keep`` its place (it is kept
#: beyond the count).
OLDEST = """SELECT id, finished_at FROM jobsched_jobs WHERE finished_at IS NOT NULL
    ORDER BY finished_at, id LIMIT %(batch)s FOR UPDATE SKIP LOCKED"""

#: The same, from past the last row this store's previous prune picked (see
#: :class:`Bound`). ``finished_at >=`` as well: the row comparison alone is
#: estimated at a third of the rows, and on a small table the planner sorted
#: a seq scan of them all; with it, every plan reads the index from the bound.
OLDEST_AFTER = """SELECT id, finished_at FROM jobsched_jobs WHERE finished_at IS NOT NULL
    AND finished_at >= %(finished_at)s::float8
    AND (finished_at, id) > (%(finished_at)s::float8, %(id)s::bigint)
    ORDER BY finished_at, id LIMIT %(batch)s FOR UPDATE SKIP LOCKED"""

#: Seconds a store's prunes read from its :class:`Bound` before one reads
#: from the oldest end again.
FRONT_EVERY = 60.0


class Bound:
    """Where this store's next prune by count starts: past the last row its
    previous one picked (issue 34, W20).

    Why. The index entries of the rows a prune deletes stay in
    jobsched_jobs_finished until VACUUM removes them; a read from the oldest
    end passes them, and the next read marks them dead, so a prune reads
    what it takes. While a transaction holds an xid, no entry can be marked
    and none removed: each prune from the oldest end walked every row pruned
    since the hold began (17,000 entries at its start, 480,000 a prune
    after 500,000 jobs, 0.7 s each). Read from past the last picked row, it
    walks none of them.

    A prune that left a row it picked (the guard held it, see ``_FREE``)
    sets no bound: the next reads from the oldest end again, where the held
    row is looked at anew and, while held, kept beyond the count, as before
    (a store whose history is full of held upstreams prunes as it did). What
    a bound may miss: a row below it that was not picked (locked by another
    session, or an outcome that committed after the prune passed its
    ``finished_at``, a clock of another member's) stays while a newer row
    goes. So a prune also reads from the oldest end when the rows past the
    bound are fewer than it must delete, and at least every
    :data:`FRONT_EVERY` seconds; the bound moves only once the prune's
    transaction has committed (:meth:`commit`).
    """

    def __init__(self) -> None:
        self._key: tuple[float, int] | None = None
        # What the prune in flight makes the bound (None: the oldest end)
        # once it commits, if it read (``_read``).
        self._pending: tuple[float, int] | None = None
        self._read = False
        self._front_at = 0.0

    def read(self, conn: Conn, excess: int, batch: int) -> list[tuple[Any, ...]]:
        """The oldest of the ``excess`` finished rows beyond the count kept
        (up to ``batch``), locked: from the bound where there are enough."""
        key, now, over = self._key, time.monotonic(), min(excess, batch)
        self._pending, self._read = key, True
        if over <= 0:
            return []
        if key is not None and now - self._front_at < FRONT_EVERY:
            params = {"finished_at": key[0], "id": key[1], "batch": over}
            rows = conn.execute(OLDEST_AFTER, params).fetchall()
            if len(rows) == over:
                self._pending = (rows[-1][1], rows[-1][0])
                return rows
        rows = conn.execute(OLDEST, {"batch": over}).fetchall()
        self._front_at = now
        self._pending = (rows[-1][1], rows[-1][0]) if rows else None
        return rows

    def left(self, count: int) -> None:
        """``count`` of the rows the last read picked were not deleted."""
        if count:
            self._pending = None

    def commit(self) -> None:
        """The last prune's transaction committed: the next starts past its
        rows (or from the oldest end, if it left one)."""
        if self._read:
            self._key, self._read = self._pending, False


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


def prune(
    conn: Conn,
    keep: int | None,
    before: Mapping[JobStatus, float],
    batch: int,
    bound: Bound | None = None,
) -> tuple[int, int]:
    """Delete up to ``batch`` finished jobs and their edges, in the caller's
    transaction: those of each status in ``before`` that finished before
    its cutoff, then the oldest beyond the newest ``keep``; never an
    upstream of an unfinished job (``_FREE``). How many went and how many
    were looked at (the held ones too: a batch full of them is no sign the
    prune is done); (0, 0) while another member prunes."""
    locked = conn.execute("SELECT pg_try_advisory_xact_lock(%s)", (_PRUNE_LOCK,)).fetchone()
    if locked is None or not locked[0]:
        return 0, 0
    gone = seen = 0
    flows: set[int] = set()
    for status, cutoff in before.items():
        if gone >= batch:
            break
        params = {"status": status.value, "cutoff": cutoff, "batch": batch - gone}
        looked, went = _delete(conn, conn.execute(AGED, params).fetchall(), flows)
        gone, seen = gone + went, seen + looked
    if keep is not None and gone < batch:
        row = conn.execute(FINISHED).fetchone()
        bound = bound or Bound()
        picked = bound.read(conn, (int(row[0]) if row is not None else 0) - keep, batch - gone)
        looked, went = _delete(conn, picked, flows)
        bound.left(looked - went)
        gone, seen = gone + went, seen + looked
    if flows:
        conn.execute(_EMPTIED, (sorted(flows),))
    return gone, seen


def _delete(conn: Conn, picked: list[tuple[Any, ...]], flows: set[int]) -> tuple[int, int]:
    """(looked, deleted) of the rows ``picked`` (and locked): those the guard
    lets go are deleted, and their workflows go in ``flows``."""
    if not picked:
        return 0, 0
    row = conn.execute(DELETE, {"ids": [r[0] for r in picked]}).fetchone()
    if row is None:
        return len(picked), 0
    flows.update(row[1] or ())
    return len(picked), int(row[0])
