"""The PostgreSQL store's prune: finished jobs past their age (per status,
``js.Retention``) and beyond the count kept, oldest first, by index.

Each batch is one transaction under an advisory lock, so two members'
prunes never both delete the same excess (a count read by one and acted on
after the other's delete would take twice the excess).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any, Generic, TypeVar

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
#
# Said as `finished_at + 0 IS NOT NULL`, which proves no partial index's
# predicate (as the claim's `queue + 0 = 0`), so the rows are read by the
# primary key whatever the statistics say. Said plainly, it let the planner
# serve it from jobsched_jobs_ended or jobsched_jobs_finished (`WHERE
# finished_at IS NOT NULL`) and test each entry against the ids: after an
# autovacuum ANALYZE under a held xid (W20, issue 34), which sees only the
# few finished rows retention keeps, the condition was estimated at 1 row,
# while the index held an entry for every row finished since the hold began
# (463,787 entries, 28,145 heap blocks and 30,122 buffers read, 0.3-0.9 s a
# DELETE, which the committer and so every claim waited for).
DELETE = (
    """WITH old AS (
    SELECT id FROM jobsched_jobs o WHERE id = ANY(%(ids)s) AND """
    + _FREE.format("o")
    + """),
jobs AS (
    DELETE FROM jobsched_jobs WHERE id = ANY(ARRAY(SELECT id FROM old))
    AND finished_at + 0 IS NOT NULL RETURNING id, workflow
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
#: from ``after`` on (``-inf``: the oldest end; else the lane's bound, see
#: :class:`Lane`), those the guard holds passed over (an age is a bound, not
#: a position), locked for DELETE. By finish time only, with ``>=`` at the
#: bound: the index holds no id (an ``id`` tiebreak would sort each
#: instant's rows, and its row comparison would still read the entries at
#: the bound's instant), so rows that finished at that very instant are read
#: again, the picked ones as entries only (deleted). Outcomes carry each
#: job's own wall-clock time, so such ties are few.
AGED = (
    """SELECT id, finished_at FROM jobsched_jobs o WHERE status = %(status)s
    AND finished_at IS NOT NULL AND finished_at >= %(after)s AND finished_at < %(cutoff)s AND """
    + _FREE.format("o")
    + """ ORDER BY finished_at LIMIT %(batch)s FOR UPDATE OF o SKIP LOCKED"""
)

#: How many of one status's finished rows lie from ``after`` to before
#: ``reach``: more than AGED picked there, and it passed one over (the guard
#: held it, another session locked it, or it finished there since). A bound
#: past such a row would leave it until the next read from the oldest end,
#: so the lane sets none. A count, not the picked ids sent back: ``id <>
#: ALL`` tested each row against every id (2.4 ms at 1,000 rows, against
#: 1.2 ms for the pick itself).
PASSED = """SELECT count(*) FROM jobsched_jobs WHERE status = %(status)s
    AND finished_at IS NOT NULL AND finished_at >= %(after)s AND finished_at < %(reach)s"""

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

#: Seconds a lane's prunes read from its bound before one reads from the
#: oldest end again, at least.
FRONT_EVERY = 60.0
#: The share of the time a lane's reads from the oldest end may take, at
#: most: one that took c seconds puts the next c / FRONT_SHARE off (when
#: that is past FRONT_EVERY). The prune runs in the committer, which waits
#: for it; under a held xmin a read from the oldest end walks every row
#: pruned since the hold began (a second and more after a million jobs),
#: and W20's claim p99 met those stalls, once a minute, and one more, the
#: longest, after the hold ended. 0.05%: with the claimer's looks
#: (_timing.LOOKS_SHARE) the stalls a hold leaves touch well under 1% of
#: the jobs, which is where a p99 is; at 0.2% each, a ten-minute hold in
#: W20 still had a second of them every minute or so.
FRONT_SHARE = 0.0005


K = TypeVar("K")


class Lane(Generic[K]):
    """Where one of a store's reads of finished rows starts (see
    :class:`Bound` for why): a key (the count's ``(finished_at, id)``, an
    age's ``finished_at``) below which no row is left that the lane's reads
    did not pick, or None, the oldest end."""

    def __init__(self) -> None:
        self._key: K | None = None
        # What the prune in flight makes the key once it commits, if it
        # read (``_read``).
        self._pending: K | None = None
        self._read = False
        self._front_at = 0.0
        # Seconds from a read from the oldest end to the next (its cost's).
        self._front_wait = FRONT_EVERY

    def start(self) -> K | None:
        """The key a read starts past, or None: the oldest end (no key yet,
        or the last read from there was long enough ago, see FRONT_SHARE)."""
        self._pending, self._read = self._key, True
        if self._key is not None and time.monotonic() - self._front_at < self._front_wait:
            return self._key
        self.front()
        return None

    def front(self) -> None:
        """The read goes to the oldest end now (call :meth:`fronted` after it)."""
        self._front_at = time.monotonic()

    def fronted(self) -> None:
        """The read from the oldest end is done: its cost sets when the next is due."""
        cost = time.monotonic() - self._front_at
        self._front_wait = max(FRONT_EVERY, cost / FRONT_SHARE)

    def reach(self, key: K | None) -> None:
        """The read's rows end at ``key`` (None: it sets no key)."""
        self._pending = key

    def left(self, count: int) -> None:
        """``count`` of the rows the last read picked were not deleted."""
        if count:
            self._pending = None

    def commit(self) -> None:
        """The last prune's transaction committed: the next starts past its
        rows (or from the oldest end, if it left one)."""
        if self._read:
            self._key, self._read = self._pending, False


class Bound:
    """Where this store's next prune reads: per lane (the count, each status
    by age), past the last row its previous one picked (issue 34, W20).

    Why. The index entries of the rows a prune deletes stay in
    jobsched_jobs_finished and jobsched_jobs_ended until VACUUM removes
    them; a read from the oldest end passes them, and the next read marks
    them dead, so a prune reads what it takes. While a transaction holds an
    xid, no entry can be marked and none removed: each prune from the oldest
    end walked every row pruned since the hold began (17,000 entries at its
    start, 480,000 a prune after 500,000 jobs, 0.7 s each). Read from past
    the last picked row, it walks none of them.

    By count. A prune that left a row it picked (the guard held it, see
    ``_FREE``) sets no bound: the next reads from the oldest end again,
    where the held row is looked at anew and, while held, kept beyond the
    count, as before (a store whose history is full of held upstreams
    prunes as it did). What a bound may miss: a row below it that was not
    picked (locked by another session, or an outcome that committed after
    the prune passed its ``finished_at``, a clock of another member's)
    stays while a newer row goes. So a prune also reads from the oldest end
    when the rows past the bound are fewer than it must delete, and at
    least every :data:`FRONT_EVERY` seconds.

    By age. The read passes over held rows (``AGED``), so a lane sets no
    bound past a row it did not pick (``PASSED`` counts the rows of the range
    it read: a held or locked one is read again, and a held upstream goes at
    the next prune after its dependent ends, as before), nor when it left one.
    It has no count of the aged rows, so a read past the bound that finds
    fewer than it may delete is its normal end, not a sign of rows below
    it; a late outcome below the bound waits for the next read from the
    oldest end (:data:`FRONT_EVERY`; an age is a lower bound). Every bound
    moves only once the prune's transaction has committed (:meth:`commit`).
    """

    def __init__(self) -> None:
        self._count: Lane[tuple[float, int]] = Lane()
        self._aged: dict[JobStatus, Lane[float]] = {}

    def read(self, conn: Conn, excess: int, batch: int) -> list[tuple[Any, ...]]:
        """The oldest of the ``excess`` finished rows beyond the count kept
        (up to ``batch``), locked: from the bound where there are enough."""
        lane, over = self._count, min(excess, batch)
        if over <= 0:
            return []
        key = lane.start()
        if key is not None:
            params = {"finished_at": key[0], "id": key[1], "batch": over}
            rows = conn.execute(OLDEST_AFTER, params).fetchall()
            if len(rows) == over:
                lane.reach((rows[-1][1], rows[-1][0]))
                return rows
            lane.front()
        rows = conn.execute(OLDEST, {"batch": over}).fetchall()
        lane.fronted()
        lane.reach((rows[-1][1], rows[-1][0]) if rows else None)
        return rows

    def aged(self, conn: Conn, status: JobStatus, cutoff: float, batch: int) -> list[Any]:
        """Up to ``batch`` of ``status``'s rows that finished before
        ``cutoff`` and that the guard lets go, oldest first, locked."""
        lane: Lane[float] = self._aged.setdefault(status, Lane())
        key = lane.start()
        after = -math.inf if key is None else key
        params: dict[str, Any] = {"status": status.value, "after": after, "cutoff": cutoff}
        rows = conn.execute(AGED, {**params, "batch": batch}).fetchall()
        # From the oldest end, a read that picked nothing looked at every
        # aged row: none lies below the cutoff but those it passed over.
        reach: float | None = rows[-1][1] if rows else (cutoff if key is None else key)
        if reach is not None and reach > after:
            there = conn.execute(PASSED, {**params, "reach": reach}).fetchone()
            if there is None or there[0] > sum(1 for r in rows if r[1] < reach):
                reach = None
        if key is None:
            lane.fronted()
        lane.reach(reach)
        return rows

    def left(self, status: JobStatus | None, count: int) -> None:
        """``count`` of the rows the last read of ``status``'s lane (None:
        the count's) picked were not deleted."""
        (self._count if status is None else self._aged[status]).left(count)

    def commit(self) -> None:
        """The last prune's transaction committed: each lane it read moves."""
        self._count.commit()
        for lane in self._aged.values():
            lane.commit()


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
    bound = bound or Bound()
    for status, cutoff in before.items():
        if gone >= batch:
            break
        looked, went = _delete(conn, bound.aged(conn, status, cutoff, batch - gone), flows)
        bound.left(status, looked - went)
        gone, seen = gone + went, seen + looked
    if keep is not None and gone < batch:
        row = conn.execute(FINISHED).fetchone()
        picked = bound.read(conn, (int(row[0]) if row is not None else 0) - keep, batch - gone)
        looked, went = _delete(conn, picked, flows)
        bound.left(None, looked - went)
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
