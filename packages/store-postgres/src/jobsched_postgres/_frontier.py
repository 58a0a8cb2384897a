"""Where a member's claims start reading (issue 34): per executor, a bound
below which it knows there is nothing ready for it, except what was made
ready since its last claim.

Why. A claim takes the best ready rows from the front of
``jobsched_jobs_ready``. Every row claimed leaves its entry there, pointing
at a row version that is no longer ready. The next scan that meets such an
entry marks it dead for the scans after it (``kill_prior_tuple``), once no
snapshot can still see that version, and VACUUM removes it. While a
transaction holds the xmin horizon back (an idle-in-transaction session
that took an xid, a long report, a replica's ``hot_standby_feedback``),
neither can: each claim walked every entry claimed since the hold began, a
heap visit each, and a member at 4,000 jobs a second fell behind within
seconds (W20, docs/performance.md).

How. Per executor (and per gate: the keys held, the names known), the
member keeps a bound ``B`` (a key ``(k0, k1, k2, id)``) and the snapshot
``S`` of its last claim statement, such that every ready row it may claim
has a key ``>= B`` or was made ready by a transaction ``S`` does not see.
A claim then reads two ranges, each a seek:

- the ready rows from ``B`` on, through the ready index (a row comparison
  the btree seeks to);
- the rows made ready since ``S`` (their ``entered_xid``, see
  ``_schema._ENTERED_XID``, at or past ``S``'s xmax, or of a transaction
  ``S`` saw running that has ended since: PgQ's test for a batch's events)
  with a key below ``B``, through ``jobsched_jobs_entered``; at most
  :data:`SINCE_MAX` of them (one read for every executor), else every
  executor is read from the front.

The same statement returns, per executor, the new bound: the least key of
the rows it may claim that it saw ready and did not take (a row it skipped
because another session holds it locked is one of those, so the bound
never passes a row that may come back) or, when there is none, the
greatest key it took (the rows made ready next lie past it, where the read
from the bound finds them), else the bound it had; and its own snapshot,
the new ``S``. Each read costs what the
fleet claimed and made ready since this member's last claim, however long
the horizon is held (when a long transaction ends, the next claim reads
what was made ready since it began, once). A member's first claim (no
bound) reads from the front, as every claim did before.

A snapshot says which transactions were committed in one history of the
server's transaction ids. A failover to a replica that had not replayed
the last transactions, or a restore to a point in time, goes back in that
history: the ids after it are handed out again, and a snapshot taken
before would see them as committed long ago (and the rows they make
ready, below the bound, would never be read). Both start the server
anew, so a snapshot is kept with the server's start time
(:data:`SNAPSHOT`), and one of another start is no snapshot: that claim
reads from the front, as a first claim does. A crash of a backend under
``restart_after_crash`` runs crash recovery under the same start time,
and hands out again the ids whose WAL was never flushed (an aborted
transaction's, a ``synchronous_commit = off`` commit's): every one of
those (a crash, a failover, a restore) ends every connection, so the
store forgets its bounds and snapshots whenever its pool opens a new one
(:meth:`Frontier.forget`), and a claim whose statement ran before keeps
nothing (:meth:`Frontier.generation`).

A row made ready without a new ``entered_xid`` (a trigger disabled by
``session_replication_role = replica`` while a tool writes the table, a
dump restored under running members) is read again once a claim's bound
is at or below its key: a member that restarts reads from the front.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable, Sequence
from typing import Any

from psycopg.types.numeric import Int8

from ._gate import OPAQUE_KEY_FILTER, Gate

#: What a claim's bound row says its key is (see _NEXT): the least key it
#: saw ready and did not take, or the greatest it took.
SEEN, TOOK = 0, 1
#: Claims in a row that take nothing and see nothing ready keep the bound
#: they had, at most; then the end of the keys. A kept bound is a seek
#: past every entry other members claimed since (under a held xmin none is
#: marked dead): each such claim walked them again, 10,114 entries after a
#: peer's 5,000 jobs, where the end of the keys reads none. The end of the
#: keys as soon as a claim finds nothing would be cheap for an idle member,
#: but a member that keeps up finds nothing every other claim, and a burst
#: of more than SINCE_MAX rows after such a claim read from the front.
KEEP_EMPTY = 8
#: A key of the ready index: (k0, k1, k2, id).
Key = tuple[float, float, float, int]
#: No bound: a claim reads from the front.
START: Key = (-math.inf, -math.inf, -math.inf, -(2**63))
#: Nothing was left ready: only rows made ready since are read.
END: Key = (math.inf, math.inf, math.inf, 2**63 - 1)

#: The marker (``attempts``) of a claim's rows that carry an executor's new bound.
BOUND_ROW = -2

#: The server's start (seconds since the epoch: no session setting changes
#: its text) and the statement's snapshot, as a member keeps them.
SNAPSHOT = (
    "(extract(epoch FROM pg_postmaster_start_time())::text || '/' || pg_current_snapshot()::text)"
)


def snapshot(kept: str) -> str:
    """The snapshot of ``kept`` (see :data:`SNAPSHOT`) if it was taken since
    the server's start, else NULL, in SQL (``kept`` an expression)."""
    return (
        f"CASE WHEN split_part({kept}, '/', 1) = "
        "extract(epoch FROM pg_postmaster_start_time())::text "
        f"THEN split_part({kept}, '/', 2)::pg_snapshot END"
    )


# The gate's filter, its arrays opaque to the planner (see _claim.PREPARE_CLAIM).
_KEYS = OPAQUE_KEY_FILTER.replace("{", "{{").replace("}", "}}")  # for str.format

#: The most rows made ready since the last claim (below its bound) that a
#: claim reads by their own index; with more, it reads from the front.
SINCE_MAX = 1000

# Each executor's bound, and where the rows made ready since its snapshot
# start (`floor`: its xmax, lowered to the oldest of the transactions it saw
# running that have ended since, PgQ's range for a batch of events; the
# rows of the few in between that it saw committed were ready then, and
# none below the bound may be claimed; the transactions still running are
# not seen now either, and the next claim looks). Seeks of each of those
# transactions would be cheaper when an old one ends (the range then starts
# where it began), but the planner guessed how many rows one transaction
# made ready from the statistics (a bulk add made 100,000), and chose to
# scan the table.
# A snapshot of another start of the server (see the module), or none:
# from the front, and no rows made ready since. The arrays are unnested
# from a subquery the planner keeps (`OFFSET 0`): a custom plan would read
# how many executors they hold, which the generic plan guesses (10), and
# cost itself apart from it (see _claim.PREPARE_CLAIM).
_RAW_BOUNDS = (
    """raw_bounds AS (
    SELECT e.name, e.room,
        CASE WHEN s.s IS NULL THEN '-Infinity' ELSE e.b0 END AS b0,
        CASE WHEN s.s IS NULL THEN '-Infinity' ELSE e.b1 END AS b1,
        CASE WHEN s.s IS NULL THEN '-Infinity' ELSE e.b2 END AS b2,
        CASE WHEN s.s IS NULL THEN -9223372036854775808 ELSE e.bid END AS bid,
        LEAST(pg_snapshot_xmax(s.s), (SELECT min(x) FROM pg_snapshot_xip(s.s) AS x
            WHERE pg_visible_in_snapshot(x, pg_current_snapshot()))) AS floor
    FROM (SELECT %(names)s::text[] AS names, %(rooms)s::int[] AS rooms, %(b0)s::float8[] AS b0,
        %(b1)s::float8[] AS b1, %(b2)s::float8[] AS b2, %(bid)s::int8[] AS bid,
        %(snaps)s::text[] AS snaps OFFSET 0) AS a
    CROSS JOIN LATERAL unnest(a.names, a.rooms, a.b0, a.b1, a.b2, a.bid, a.snaps)
        AS e(name, room, b0, b1, b2, bid, s)
    CROSS JOIN LATERAL (SELECT """
    + snapshot("e.s")
    + """ AS s) AS s
)"""
)

# The rows made ready since the snapshots, each below its executor's bound:
# one read for every executor, from the lowest floor, in entered_xid order,
# at most SINCE_MAX + 1 (the index's order and a known limit: a plan the
# planner costs as cheap). `queue IS NOT DISTINCT FROM 0` is `queue = 0` in
# the form of the index's predicate (_schema._ENTERED_XID): no other index
# of the ready rows matches it, and with the ready index (the planner
# judges a row comparison by its first column alone) it walked every entry
# below the bound, which is what this module avoids. Each row's executor's
# bound and floor by a lookup of its own (none for another executor's row),
# not a join, nor `executor = ANY(...)`: neither keeps the index's order,
# and the limit then cut a sort of every row read. Before those look-ups,
# the highest bound, read once: a row at or above it is above its own
# executor's. Most new rows are (a queue's keys grow with time), and each
# paid both look-ups: a member's claim after a bulk add of 20,000 rows
# below no bound evaluated 40,000 of them.
_FRESH = (
    """fresh AS MATERIALIZED (
    SELECT id, executor, k0, k1, k2 FROM jobsched_jobs AS j
    WHERE queue IS NOT DISTINCT FROM 0 AND entered_xid >= (SELECT min(floor) FROM raw_bounds)
        AND (k0, k1, k2, id) < (SELECT b0, b1, b2, bid FROM raw_bounds
            ORDER BY b0 DESC, b1 DESC, b2 DESC, bid DESC LIMIT 1)
        AND entered_xid >= (SELECT floor FROM raw_bounds WHERE name = j.executor)
        AND (k0, k1, k2, id)
            < (SELECT b0, b1, b2, bid FROM raw_bounds WHERE name = j.executor)
        AND {guard}"""
    + _KEYS
    + """
    ORDER BY entered_xid LIMIT <max> + 1
)"""
)

# More than SINCE_MAX rows made ready below the bounds: the claim reads
# every executor from the front, as a first claim does (a read of the new
# rows in entered_xid order would miss the best of them).
_BOUNDS = """bounds AS (
    SELECT name, room, over,
        CASE WHEN over THEN '-Infinity' ELSE b0 END AS b0,
        CASE WHEN over THEN '-Infinity' ELSE b1 END AS b1,
        CASE WHEN over THEN '-Infinity' ELSE b2 END AS b2,
        CASE WHEN over THEN -9223372036854775808 ELSE bid END AS bid
    FROM raw_bounds, (SELECT count(*) > <max> AS over FROM fresh) AS o
)"""

# The rows from the bound on, in key order.
_FROM_BOUND = (
    """SELECT id, k0, k1, k2 FROM jobsched_jobs
        WHERE queue = 0 AND executor = e.name AND (k0, k1, k2, id) >= (e.b0, e.b1, e.b2, e.bid)
            AND {guard}"""
    + _KEYS
    + "{taken}\n        ORDER BY k0, k1, k2, id"
)

# The claim's pick: per executor its best rows of both reads, at most its
# room; of those, the best `limit`. SKIP LOCKED: rows another member is
# claiming right now are not waited for, they are simply not ours. Each
# read locks in key order until it has the executor's room (or `limit`):
# the rows made ready since are locked one by one, and the window over all
# of them locked every one (up to SINCE_MAX: a tuple lock, a WAL record and
# a dirtied page each; a claim of 1 held 501 rows, which other members'
# claims skipped). The limit is an InitPlan's (see _claim.PREPARE_CLAIM).
_PICK = """
    SELECT id, row_number() OVER (ORDER BY k0, k1, k2, id) AS n FROM (
        SELECT c.*, row_number() OVER (PARTITION BY c.name ORDER BY c.k0, c.k1, c.k2, c.id) AS r
        FROM (
            SELECT e.name, e.room, j.* FROM bounds AS e CROSS JOIN LATERAL (
                <from_bound>
                LIMIT LEAST(e.room, %(limit)s) FOR UPDATE SKIP LOCKED
            ) AS j
            UNION ALL
            SELECT e.name, e.room, j.* FROM bounds AS e CROSS JOIN LATERAL (
                SELECT j.* FROM (
                    SELECT id FROM fresh WHERE executor = e.name AND NOT e.over
                    ORDER BY k0, k1, k2, id
                ) AS f CROSS JOIN LATERAL (
                    SELECT id, k0, k1, k2 FROM jobsched_jobs
                    WHERE id = f.id AND queue + 0 = 0 FOR UPDATE SKIP LOCKED
                ) AS j
                LIMIT LEAST(e.room, %(limit)s)
            ) AS j
        ) AS c
    ) AS c WHERE c.r <= c.room
    ORDER BY k0, k1, k2, id
    LIMIT (SELECT %(limit)s::int)
"""

# Per executor, its new bound: the least key of what both reads see ready
# (in the statement's snapshot, locked or not) that the claim did not take
# (SEEN). When they see none, any key is a bound (nothing it may claim is
# ready in the snapshot): the greatest key it took (TOOK); with none taken
# (no row), Frontier.update keeps the bound it had or takes the end of the
# keys (see KEEP_EMPTY). Not the end whenever the claim took the last ready row:
# a queue's keys grow with time, so the rows made ready next lie past the
# greatest key taken, where the read from the bound seeks to them. With the
# end as the bound every one of them was a row made ready since (the read
# of `fresh`), and a member that keeps up with its queue, whose claims each
# take every ready row, read from the front after any pause of a second
# (more than SINCE_MAX rows added at 3,000 jobs/s: a slow prune, a
# checkpoint's fsync): under a held xmin, every entry claimed since the
# hold began, 0.3-1.1 s a claim in W20, 62,680 buffers in one, the pause
# growing with each claim that read so (docs/performance.md).
_NEXT = """
UNION ALL SELECT NULL, {marker}, NULL, f.k0, f.k1, f.k2, NULL,
    <snapshot>, e.name, f.id, f.o::float8
FROM bounds AS e LEFT JOIN LATERAL (
    SELECT o, id, k0, k1, k2 FROM ((
        SELECT 0 AS o, m.* FROM ((
            <from_bound> LIMIT 1
        ) UNION ALL (
            SELECT id, k0, k1, k2 FROM fresh WHERE executor = e.name AND NOT e.over<taken>
        )) AS m ORDER BY k0, k1, k2, id LIMIT 1
    ) UNION ALL (
        SELECT 1, id, k0, k1, k2 FROM claimed WHERE executor = e.name
        ORDER BY k0 DESC, k1 DESC, k2 DESC, id DESC LIMIT 1
    )) AS b ORDER BY o LIMIT 1
) AS f ON true"""

# `NOT IN` a subquery: a hashed look-up per row read (`<> ALL(ARRAY(...))`
# compared each with every row taken, 100,000 comparisons for 320).
_TAKEN = " AND id NOT IN (SELECT id FROM claimed)"


def _reads(sql: str, guard: str, taken: str) -> str:
    return (
        sql.replace("<from_bound>", _FROM_BOUND.format(guard=guard, taken=taken))
        .replace("<taken>", taken)
        .replace("<max>", str(SINCE_MAX))
        .replace("<snapshot>", SNAPSHOT)
    )


def bounds(guard: str) -> str:
    """The claim's first CTEs: ``raw_bounds``, ``fresh`` and ``bounds`` (each
    executor's, from the parameters), guarded by ``guard``."""
    fresh = _reads(_FRESH.format(guard=guard), guard, "")
    return ",\n".join((_RAW_BOUNDS, fresh, _reads(_BOUNDS, guard, "")))


def pick(guard: str) -> str:
    """The claim's ``picked`` (it needs :func:`bounds`), its rows guarded by ``guard``."""
    return _reads(_PICK, guard, "")


def bound_rows(guard: str) -> str:
    """The claim's last rows, one per executor: its new bound and snapshot."""
    return _reads(_NEXT.format(marker=BOUND_ROW), guard, _TAKEN)


class Frontier:
    """A member's bounds and snapshots, by gate and executor (see the module).

    Claims may run at once (each in a thread of its own): each replaces an
    executor's entry as one assignment, and any claim's result is a valid
    entry, since each is read from the state before it.
    """

    def __init__(self) -> None:
        # (gate keys, gate names, executor) -> (bound, snapshot, claims in a
        # row that kept it: see KEEP_EMPTY).
        self._marks: dict[
            tuple[tuple[bytes, ...], tuple[str, ...], str], tuple[Key, str | None, int]
        ] = {}
        self._lock = threading.Lock()
        self._forgotten = 0

    def generation(self) -> int:
        """How many times the bounds were forgotten: read before a claim's
        statement, given to :meth:`update` after it."""
        return self._forgotten

    @staticmethod
    def _gate(gate: Gate) -> tuple[tuple[bytes, ...], tuple[str, ...]]:
        return tuple(gate.keys), tuple(gate.known)

    def params(self, gate: Gate, names: Sequence[str]) -> dict[str, list[Any]]:
        """The claim's parameters for ``names`` (its executors, in order)."""
        g = self._gate(gate)
        marks = [self._marks.get((*g, name), (START, None, 0)) for name in names]
        return {
            "b0": [m[0][0] for m in marks],
            "b1": [m[0][1] for m in marks],
            "b2": [m[0][2] for m in marks],
            "bid": [Int8(m[0][3]) for m in marks],  # typed alike (see _claim)
            "snaps": [m[1] for m in marks],
        }

    def update(self, gate: Gate, rows: Iterable[Sequence[Any]], generation: int) -> None:
        """Take a claim's bound rows (see :func:`bound_rows`), unless the
        bounds were forgotten since ``generation`` (its snapshot may be of
        the server's history before a crash)."""
        g = self._gate(gate)
        with self._lock:
            if generation != self._forgotten:
                return
            for row in rows:
                snapshot, name, bid, kind = row[7], row[8], row[9], row[10]
                old, _, kept = self._marks.get((*g, name), (START, None, 0))
                if bid is None:
                    # Nothing seen, nothing taken: any key is a bound.
                    kept += 1
                    key = old if old > START and kept <= KEEP_EMPTY else END
                else:
                    kept, key = 0, (row[3], row[4], row[5], bid)
                    if kind == TOOK and START < old < END:
                        # Never back below the bound it had: a claim that
                        # took only an earlier key (a due delayed job, a
                        # retry, a higher priority) would seek again past
                        # every entry claimed since that key.
                        key = max(key, old)
                self._marks[(*g, name)] = (key, snapshot, kept)

    def bound(self, gate: Gate, name: str) -> Key:
        """Where the next claim of ``name``'s rows starts reading the ready index."""
        return self._marks.get((*self._gate(gate), name), (START, None, 0))[0]

    def forget(self) -> None:
        """Read from the front at the next claim (called for each new
        connection of the store's pool: see the module)."""
        with self._lock:
            self._marks.clear()
            self._forgotten += 1
