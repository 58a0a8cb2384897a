"""The running rows a member's look for lost attempts reads (issue 34).

Why. A member looks every second, in a claim, for the attempts it should
take over or hand back (a lease that ran out, an owner that is a dead
process on this machine): it reads every running row. Through an index of
the running rows, that read walked every entry a finished job left there
since the xmin horizon last moved: while a transaction holds it back (see
``_frontier``), one entry per job run since the hold began, once a second.

How. The member keeps the ids of the running rows its last look saw and
that look's snapshot ``S``. A row running now was running then (one of
those ids, read by primary key) or was made running since: by a claim
that ``S`` did not see (``entered_xid``, which a claim sets, at or past
``S``'s xmax, or one of the transactions ``S`` saw running that has ended
since: the range from the oldest of those), through
``jobsched_jobs_running``. A takeover keeps a row running
(its id is known), a hand-back or an outcome ends it; nothing else makes a
row running. So a look reads the fleet's running rows and the entries of
the claims made since the last look, however long the horizon is held. A
member's first look reads every running row, and so does a look whose
last one's snapshot is of another start of the server (a failover, a
restore to a point in time: see ``_frontier``).
"""

from __future__ import annotations

import threading
from typing import Any, NamedTuple

from ._frontier import SNAPSHOT, snapshot
from ._sql import DB_NOW, Conn

# Each running row: its id, owner, whether it started, and whether its
# lease ran out on the server's clock.
_COLUMNS = f"id, owner, started_at IS NOT NULL, lease_until < {DB_NOW}"

FIRST = f"""
SELECT {_COLUMNS}, NULL FROM jobsched_jobs WHERE status = 'running'
UNION ALL SELECT NULL, NULL, NULL, NULL, {SNAPSHOT}
"""

# The range starts at the last look's xmax, lowered to the oldest of the
# transactions it saw running that have ended since (as _frontier's reads
# of the new ready rows: seeks of each misled the planner). In entered_xid
# order with a known limit, the index's plan; a fleet has far fewer
# running rows. A snapshot of another start of the server: every running
# row (a condition on no column, which the plan checks once, before its scan).
#
# The last look's rows are read by primary key alone, and only then tested
# for status (OFFSET 0: the test is not pushed into the read). Written as
# one WHERE, the planner could serve `status = 'running'` from
# jobsched_jobs_running, whose statistics say it is small, and test each
# entry against the ids: while an xid is held that index keeps an entry for
# every job run since (none can be marked dead), so each look walked them
# all (1.1 s and 34,000 buffers a look after 500,000 jobs under a held xid;
# the heartbeat's EXTEND had the same fault, see _leases).
SINCE = f"""
WITH seen AS (SELECT {snapshot("%(snapshot)s::text")} AS s),
floor AS (
    SELECT LEAST(pg_snapshot_xmax(s), (SELECT min(x) FROM pg_snapshot_xip(s) AS x
        WHERE pg_visible_in_snapshot(x, pg_current_snapshot()))) AS x
    FROM seen
)
SELECT {_COLUMNS}, NULL FROM (
    SELECT id, owner, started_at, lease_until, status FROM jobsched_jobs
    WHERE id = ANY(%(ids)s) OFFSET 0
) AS known WHERE status = 'running'
UNION
SELECT * FROM (
    SELECT {_COLUMNS}, NULL FROM jobsched_jobs
    WHERE status = 'running' AND entered_xid >= (SELECT x FROM floor)
    ORDER BY entered_xid LIMIT 1000000
) AS since
UNION
SELECT {_COLUMNS}, NULL FROM jobsched_jobs WHERE status = 'running' AND (SELECT s FROM seen) IS NULL
UNION ALL SELECT NULL, NULL, NULL, NULL, {SNAPSHOT}
"""


class Row(NamedTuple):
    """A running row as a look sees it."""

    id: int
    owner: str
    started: bool
    lapsed: bool


class Running:
    """What a member's last look saw (see the module): the running rows' ids
    and its snapshot.

    Looks may run at once (each in a thread of its own): each replaces the
    whole state, and any look's result is a valid state.
    """

    def __init__(self) -> None:
        self._state: tuple[list[int], str] | None = None
        self._lock = threading.Lock()
        self._forgotten = 0

    def look(self, conn: Conn) -> list[Row]:
        """Every running row, in this statement's snapshot."""
        state, generation = self._state, self._forgotten
        if state is None:
            rows = conn.execute(FIRST).fetchall()
        else:
            rows = conn.execute(SINCE, {"ids": state[0], "snapshot": state[1]}).fetchall()
        running = [Row(*r[:4]) for r in rows if r[0] is not None]
        snapshot: Any = next(r[4] for r in rows if r[0] is None)
        with self._lock:
            # Forgotten meanwhile: this snapshot may be of before a crash.
            if generation == self._forgotten:
                self._state = ([r.id for r in running], snapshot)
        return running

    def forget(self) -> None:
        """Read every running row at the next look (called for each new
        connection of the store's pool: see ``_frontier``)."""
        with self._lock:
            self._state = None
            self._forgotten += 1
