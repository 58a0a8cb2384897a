"""A member's running jobs: claims (with takeovers of lost attempts), lease
renewals, outcomes and hand-backs; the half of ``PostgresStore`` the
scheduler's claimer, heartbeat and committer call."""

from __future__ import annotations

import time
from abc import abstractmethod
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TypeVar

from jobsched import RateLimit
from jobsched.store import (
    Claimed,
    JobStore,
    Outcome,
    Recorded,
    TakeoverLooks,
    dead_local,
    local_prefix,
)

from . import (
    _cancels,
    _candidates,
    _claim,
    _connect,
    _frontier,
    _gate,
    _handback,
    _limits,
    _orphans,
    _outcomes,
    _queues,
    _running,
    _sql,
    _takeover,
)

T = TypeVar("T")

#: Seconds between looks for attempts of dead processes on this machine.
DEAD_OWNER_EVERY = 1.0

# A heartbeat: the rows by their primary key alone. An owner is set on
# RUNNING rows only, and saying status = 'running' too let the planner read
# every running row by an index of the running rows (the leases' before
# schema 5, jobsched_jobs_running since), whose statistics a queue always
# outruns, and test each against the ids (a heartbeat of 2,000 leases took
# 400 ms).
#
# The rows it updates are an array an InitPlan builds once from the locking
# read (`= ANY(ARRAY(...))`, as the prune's DELETE), not a join to it:
# joined, statistics that a queue outran (the table analyzed while it was
# small) let the planner scan the whole primary key for j and run the
# locking read again for every row of it, a Nested Loop with the read on
# its inner side: 41 s and a 60 s statement timeout in W19 (issue 34), the
# rows locked all that while and the outcomes for them refused.
EXTEND = (
    f"UPDATE jobsched_jobs AS j SET lease_until = {_sql.DB_NOW} + %s "
    "WHERE j.id = ANY(ARRAY(SELECT id FROM jobsched_jobs WHERE id = ANY(%s) AND owner = %s "
    "FOR UPDATE SKIP LOCKED)) "
    "RETURNING j.id, j.cancel_requested"
)


# The starts of jobs claimed ahead, by primary key as a heartbeat's, fenced
# on owner and attempt; the rows it updates an InitPlan's array, as EXTEND's.
START = (
    "WITH s AS MATERIALIZED ("
    "SELECT t.id, s.at FROM unnest(%(ids)s::bigint[], %(attempts)s::int[], %(at)s::float8[]) "
    "AS s(id, attempt, at) JOIN jobsched_jobs t ON t.id = s.id "
    "WHERE t.id = ANY(%(ids)s) AND t.owner = %(owner)s AND t.attempts = s.attempt "
    "FOR UPDATE OF t SKIP LOCKED) "
    "UPDATE jobsched_jobs AS j SET started_at = s.at FROM s "
    "WHERE j.id = ANY(ARRAY(SELECT id FROM s)) AND j.id = s.id"
)


class Leases(JobStore):
    """Claims, leases and outcomes: every write fenced on the owner (and attempt)."""

    _dead_checked: float
    _looks: TakeoverLooks
    # When a bucket this member's last claim left empty has its next
    # token (a bucket's row says nothing of the member's RateLimit).
    _token_due: float | None
    # Whether this member has seen the named queues' column (see _queues):
    # until it has, its claims of the default queue carry the guard.
    _queue_column: bool
    # Whether a queue was paused at this member's last claim (see _pauses).
    _pauses: bool
    # Where this member's claims of every queue start reading (see _frontier).
    _frontier: _frontier.Frontier
    # The running rows this member's last look for lost attempts saw (see _running).
    _running: _running.Running
    # The rows this member's heartbeats named lately (see _orphans).
    _held: _orphans.Held

    @abstractmethod
    async def _run(
        self, fn: Callable[[_sql.Conn], T], *, transaction: bool = True, again: bool = False
    ) -> T:
        """Run ``fn`` on a worker thread (see ``PostgresStore._tx``)."""

    async def claim(
        self,
        owner: str,
        limit: int,
        executors: Mapping[str, int],
        now: float,
        lease: float,
        *,
        rates: Mapping[str, RateLimit] | None = None,
        tenants: Mapping[str | None, int] | None = None,
        queues: Collection[str] | None = None,
        queue_room: Mapping[str, int] | None = None,
        starting: int | None = None,
        names: Collection[str] = (),
    ) -> list[Claimed]:
        if limit < 1 or not executors:
            return []
        first = _claim.ALL if starting is None else max(0, starting)
        # The signing keys it holds and the registered names it knows.
        keys = _gate.Gate(self.key_ids, sorted(set(names)))
        names = sorted(executors)
        rooms = {name: executors[name] for name in names if executors[name] > 0}
        # Queues as stored (None: the default); rooms of `limit` or more bind nothing.
        served = None if queues is None else {_queues.stored(q) for q in queues}
        bound = {
            _queues.stored(q): max(0, room)
            for q, room in (queue_room or {}).items()
            if room < limit and (served is None or _queues.stored(q) in served)
        }
        if served is not None:
            served -= {q for q, room in bound.items() if room == 0}
        limited = bool(rates) or tenants is not None
        full = {q for q, room in bound.items() if room == 0}
        named = served is not None or bool(bound)

        def under_limits(
            conn: _sql.Conn, left: int, queues: bool, guarded: bool = False
        ) -> tuple[list[Claimed], float | None]:
            """Through the locked candidates, in one transaction whose first
            statement promotes due jobs and reads the paused queues (see
            _pauses): those are left out."""
            with conn.transaction():
                paused = _claim.promote(conn, now)
                if paused:
                    # A pause made the column: the filter may name it.
                    self._queue_column = queues = True
                    guarded = False
                elif self._pauses:
                    self._frontier.forget()  # its bounds passed rows it left paused
                self._pauses = bool(paused)
                rest = None if served is None else served - paused
                return _limits.claim(
                    conn, owner, left, rooms, now, lease, rates or {}, tenants, keys,
                    _candidates.QueueFilter(rest, full | paused) if queues else None,
                    bound if queues else None, guarded=guarded, starting=first,
                )  # fmt: skip

        def by_queue(conn: _sql.Conn, left: int) -> tuple[list[Claimed], float | None]:
            """The claim of a store whose named queues' column this member
            knows, of some queues or within some queues' rooms."""
            if served is not None and not bound and not limited:
                picked = sorted(served, key=lambda q: (q is None, q))
                return _claim.claim_by_key(
                    conn, owner, left, rooms, now, lease, keys, queues=picked, starting=first
                )[0], None
            return under_limits(conn, left, True)

        def unseen(conn: _sql.Conn, left: int) -> tuple[list[Claimed], float | None] | None:
            """The claim of a member that has not seen the column: every job
            the default queue's, unless the column is there (then None)."""
            if served is not None and None not in served:
                return None if _queues.has_column(conn) else ([], None)
            left = min(left, bound.get(None, left))
            if left <= 0:
                return [], None
            if not limited:
                got, saw = _claim.claim_by_key(
                    conn, owner, left, rooms, now, lease, keys, guarded=True, starting=first,
                    frontier=self._frontier,
                )  # fmt: skip
                if saw:
                    self._queue_column = True
                # What rounds before the column's commit took stands.
                return (got, None) if got or not saw else None
            try:
                return under_limits(conn, left, False, guarded=True)
            except _candidates.SawColumn:
                return None  # rolled back: nothing taken

        # Each step is one statement that commits on its own (a claimed row
        # is owned and leased, whatever happens next), so the common claim
        # is one round trip.
        runs = 0

        def claim(conn: _sql.Conn) -> tuple[list[Claimed], float | None]:
            nonlocal runs
            runs += 1
            if runs > 1:
                # Run again (see _pool): what the first run took may be committed.
                self._held.claimed_again()
            claimed = self._look(conn, owner, limit, now, lease, names, keys)
            left = limit - len(claimed)
            if left <= 0 or not rooms or not (served is None or served):
                return claimed, None
            if self._pauses:
                # A queue was paused at this member's last claim: no claim
                # statement of the plain kind takes anything while one is.
                more, due = under_limits(conn, left, True)
                return claimed + more, due
            try:
                more, due = unpaused(conn, left)
            except _claim.SawPauses as seen:
                self._pauses = True
                claimed += seen.claimed
                more, due = under_limits(conn, left - len(seen.claimed), True)
            return claimed + more, due

        def unpaused(conn: _sql.Conn, left: int) -> tuple[list[Claimed], float | None]:
            if not named:
                # Every queue, unbounded: the claim of a store without named queues.
                if limited:
                    # Reads, then updates under the locks it read: one transaction.
                    return under_limits(conn, left, False)
                more, _ = _claim.claim_by_key(
                    conn, owner, left, rooms, now, lease, keys, starting=first,
                    frontier=self._frontier,
                )  # fmt: skip
                return more, None
            got = None if self._queue_column else unseen(conn, left)
            if got is None:
                self._queue_column = True
                got = by_queue(conn, left)
            return got

        claimed, self._token_due = await self._run(claim, transaction=False)
        return claimed

    def _look(
        self,
        conn: _sql.Conn,
        owner: str,
        limit: int,
        now: float,
        lease: float,
        names: list[str],
        keys: _gate.Gate,
    ) -> list[Claimed]:
        """Attempts to take over and jobs to hand back: at the first claim, then
        at most every TAKEOVER_EVERY (and quarter of the lease), and at once
        when an owner of running rows was a process on this machine that is
        gone (looked for at most every DEAD_OWNER_EVERY, by any member here).
        One read of the running rows (see _running) serves both; the writes
        run only when it found a row to take."""
        dead_due = now - self._dead_checked >= DEAD_OWNER_EVERY
        due = self._looks.due(owner, now, lease)
        if not (due or dead_due):
            return []
        running = self._running.look(conn)
        dead: list[str] = []
        if dead_due:
            self._dead_checked = now
            prefix = local_prefix()
            dead = dead_local({r.owner for r in running if r.owner.startswith(prefix)})
        if not (due or dead):
            return []
        gone = set(dead)
        mine = self._held.orphans(running, owner, max(lease, self.lease))
        ids = sorted(r.id for r in running if (r.lapsed and r.owner != owner) or r.owner in gone)
        if not (ids or mine):
            return []
        _takeover.hand_back(conn, owner, limit, dead, now, sorted({*ids, *mine}), mine)
        return _takeover.take_over(conn, owner, limit, names, dead, lease, keys, ids=ids)

    async def record(self, owner: str, outcomes: Sequence[Outcome]) -> Recorded:
        # A locked row's outcome is tried again for a quarter of the lease
        # at most: this member's later outcomes wait behind it, and their
        # jobs' leases lapse meanwhile.
        wait = min(_connect.LOCK_TIMEOUT, self.lease / 4)
        return await self._run(
            lambda conn: _outcomes.record(conn, owner, outcomes, wait=wait), transaction=False
        )

    async def start(self, owner: str, starts: Sequence[tuple[int, int, float]]) -> None:
        """Write the starts of jobs ``owner`` claimed ahead; rows locked by
        another session are skipped, as by a heartbeat (such a job looks
        unstarted: a takeover would hand it back uncounted, once)."""
        if not starts:
            return

        def start(conn: _sql.Conn) -> None:
            conn.execute(START, {"ids": [s[0] for s in starts], "attempts": [s[1] for s in starts],
                                 "at": [s[2] for s in starts], "owner": owner})  # fmt: skip

        await self._run(start, transaction=False)

    async def extend(self, owner: str, ids: Collection[int], until: float) -> list[int]:
        """Renew ``owner``'s leases for :attr:`lease` seconds of the server's
        clock (``until``, on the member's clock, is not compared with anything).

        A row another session holds locked (an operator's ``SELECT ... FOR
        UPDATE``) is skipped, not waited for: it alone may lose its lease, and
        the member's other jobs keep theirs.
        """

        self._held.named(ids, self.lease)

        def extend(conn: _sql.Conn) -> list[int]:
            rows = conn.execute(EXTEND, (self.lease, sorted(ids), owner)).fetchall()
            return sorted(i for i, flagged in rows if flagged)

        return await self._run(extend, again=True)

    async def release(self, owner: str, ids: Collection[int]) -> None:
        await self._run(lambda conn: _handback.release(conn, owner, ids))

    async def hand_back(self, owner: str, attempts: Sequence[tuple[int, int, float]]) -> None:
        await self._run(lambda conn: _handback.hand_back(conn, owner, attempts))

    async def defer(self, owner: str, jobs: Sequence[tuple[int, float, str]]) -> None:
        def defer(conn: _sql.Conn) -> None:
            ids = [job_id for job_id, _, _ in jobs]
            _cancels.cancel_released(conn, owner, ids, time.time())
            # As release, but waiting (queue 1) until run_at: the member that
            # could not load it must not claim it straight back.
            rows = conn.execute(
                "UPDATE jobsched_jobs j SET status = CASE WHEN j.attempts > 1 "
                "THEN 'retry_wait' ELSE 'pending' END, queue = 1, run_at = d.run_at, "
                "last_error = d.error, attempts = j.attempts - 1, owner = NULL, "
                "lease_until = NULL "
                "FROM unnest(%s::bigint[], %s::float8[], %s::text[]) AS d(id, run_at, error) "
                "WHERE j.id = d.id AND j.owner = %s RETURNING j.id, j.attempts + 1",
                (ids, [r for _, r, _ in jobs], [e for _, _, e in jobs], owner),
            ).fetchall()
            if rows:
                # The attempt never started: it leaves no row.
                conn.execute(
                    "DELETE FROM jobsched_attempts a USING unnest(%s::bigint[], %s::int[]) "
                    "AS r(id, attempt) WHERE a.job_id = r.id AND a.attempt = r.attempt",
                    ([r[0] for r in rows], [r[1] for r in rows]),
                )
                _sql.notify(conn)

        await self._run(defer)
