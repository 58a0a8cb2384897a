"""The PostgreSQL claim from a member's bounds (issue 34,
``jobsched_postgres._frontier``) takes exactly what a claim from the front
takes, whatever happened since the member's last claim.

A claim reads the ready rows from where its last claim left them, plus the
rows made ready since its last snapshot; a claim from the front reads them
all, as every claim did before. A hypothesis state machine runs programs of
what a fleet does to the ready rows (jobs added behind, in front of and
among the ready ones, delayed, registered under names the member knows or
not, on two executors; other members' claims; completions, retries,
releases, deferrals, cancels, hand-backs of a gone member's claims; time
passing; rows held locked by another session's open transaction, then let
go; an add left uncommitted across claims, then committed; an xid held) and
before each of the member's claims runs the claim from the front in a
transaction rolled back: both must take the same jobs, in the same order.
After each claim, the bound's own promise is checked directly: no ready row
the member may claim has a key below its bound unless a transaction its
snapshot did not see made it ready.

The member's look for lost attempts (``jobsched_postgres._running``) reads
the running rows its last look saw and those made running since; at any
step, what it reads must be every running row (another member's claim
left uncommitted across looks, then committed, included).

The ``ci`` profile runs a few derandomized programs; ``thorough`` many more
(``JOBSCHED_HYPOTHESIS_PROFILE``).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import anyio.from_thread
import profiles
import psycopg
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from pg import SECRET, schema_url

import jobsched as js
from jobsched.store import NewJob, Outcome
from jobsched_postgres import PostgresStore, _claim, _sql, _takeover
from jobsched_postgres._frontier import Frontier
from jobsched_postgres._gate import KEY_FILTER, Gate
from jobsched_postgres._running import Running

pytestmark = pytest.mark.postgres

S = js.JobStatus
EXECUTORS = ("async", "thread")
#: The registered names this member knows, and one it does not.
KNOWN, UNKNOWN = "shop.known", "shop.unknown"
LEASE = 60.0

PROFILES = {
    "ci": settings(
        max_examples=25,
        stateful_step_count=50,
        derandomize=True,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    ),
    "thorough": settings(
        max_examples=150,
        stateful_step_count=80,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    ),
}


class _Rollback(Exception):
    """Ends the reference claim's transaction without a trace."""


#: The store's tables a program writes, emptied before each (a schema made
#: per program cost a second or more of fsyncs on a busy disk).
TABLES = ("jobsched_jobs", "jobsched_deps", "jobsched_attempts", "jobsched_counts")


class Shared:
    """What every program uses: one schema, its store, and a portal to call it."""

    url: str
    store: PostgresStore
    portal: Any


class Fleet(RuleBasedStateMachine):
    """The member under test ("m"), the rest of the fleet, and the rows."""

    shared: Shared

    def __init__(self) -> None:
        super().__init__()
        self.url, self.store, self.portal = self.shared.url, self.shared.store, self.shared.portal
        self.conn = psycopg.connect(self.url, autocommit=True)
        for table in TABLES:
            self.conn.execute(f"DELETE FROM {table}")  # type: ignore[arg-type]
        # Ids from 1 again: a program replayed to shrink it meets the same rows.
        self.conn.execute("UPDATE jobsched_meta SET value = 1 WHERE key = 'next_id'")
        self.frontier = Frontier()
        self.gate = Gate(self.store.key_ids, [KNOWN])
        self.now = 1_000.0
        self.rng = random.Random(0)
        #: Keys handed out so far: new jobs go behind, in front, or among them.
        self.low, self.high = 0.0, 0.0
        self.running: dict[int, tuple[str, int]] = {}  # id -> (owner, attempt)
        self.locker: psycopg.Connection[Any] | None = None
        self.producer: psycopg.Connection[Any] | None = None
        self.holder: psycopg.Connection[Any] | None = None
        self.claimer: psycopg.Connection[Any] | None = None
        self.slow: list[tuple[int, int]] = []
        self.looks = Running()
        self.claims = 0

    def teardown(self) -> None:
        for conn in (self.locker, self.producer, self.holder, self.claimer, self.conn):
            if conn is not None:
                conn.close()

    # ── jobs ─────────────────────────────────────────────────────────────

    def _jobs(self, n: int, where: str, delay: float, named: str | None) -> list[NewJob]:
        first = self.store.reserve_ids(n)
        jobs = []
        for i in range(n):
            if where == "behind":
                self.high += 1.0
                key = self.high
            elif where == "front":
                self.low -= 1.0
                key = self.low
            else:  # among the keys handed out so far (or on one: ties break by id)
                key = float(self.rng.randint(int(self.low), int(self.high)))
            jobs.append(
                NewJob(
                    first + i, named or f"j{first + i}", EXECUTORS[(first + i) % 2],
                    (0.0, key, 0.0), run_at=self.now + delay, submitted_at=self.now,
                    payload=b"J" if named else b"P",
                    args="{}" if named else None,
                )
            )  # fmt: skip
        return jobs

    @rule(
        n=st.integers(1, 12),
        where=st.sampled_from(["behind", "behind", "front", "among"]),
        delay=st.sampled_from([0.0, 0.0, 0.0, 3.0]),
        named=st.sampled_from([None, None, None, KNOWN, UNKNOWN]),
    )
    def add(self, n: int, where: str, delay: float, named: str | None) -> None:
        self.portal.call(self.store.add, self._jobs(n, where, delay, named), self.now)

    @precondition(lambda self: self.producer is None)
    @rule(n=st.integers(1, 6), where=st.sampled_from(["front", "among", "behind"]))
    def add_uncommitted(self, n: int, where: str) -> None:
        """An add whose transaction stays open across the member's claims."""
        self.producer = psycopg.connect(self.url)
        _sql.add(self.producer, self._jobs(n, where, 0.0, None), self.now)

    @precondition(lambda self: self.producer is not None)
    @rule()
    def commit_add(self) -> None:
        assert self.producer is not None
        self.producer.commit()
        self.producer.close()
        self.producer = None

    @rule(seconds=st.sampled_from([0.5, 1.0, 2.0, 4.0]))
    def tick(self, seconds: float) -> None:
        self.now += seconds

    # ── the member under test ────────────────────────────────────────────

    @rule(
        limit=st.integers(1, 10),
        rooms=st.tuples(st.integers(0, 10), st.integers(0, 10)),
    )
    def claim(self, limit: int, rooms: tuple[int, int]) -> None:
        """The member's claim, and before it the same claim from the front."""
        room = {name: r for name, r in zip(EXECUTORS, rooms, strict=True) if r > 0}
        if not room:
            return
        try:
            with self.conn.transaction():
                front, _ = _claim.claim_by_key(
                    self.conn, "m", limit, room, self.now, LEASE, self.gate
                )
                raise _Rollback
        except _Rollback:
            pass
        got, _ = _claim.claim_by_key(
            self.conn, "m", limit, room, self.now, LEASE, self.gate, frontier=self.frontier
        )
        assert [c.id for c in got] == [c.id for c in front]
        self.claims += 1
        for c in got:
            self.running[c.id] = ("m", c.attempt)

    @invariant()
    def nothing_claimable_below_a_bound(self) -> None:
        """Every ready row the member may claim has a key at or past its
        executor's bound, or was made ready by a transaction the bound's
        snapshot did not see."""
        for name in EXECUTORS:
            params = self.frontier.params(self.gate, [name])
            if params["snaps"][0] is None:
                continue  # no claim of this executor yet: from the front
            below = self.conn.execute(
                "SELECT id FROM jobsched_jobs WHERE queue = 0 AND executor = %(name)s "
                "AND (k0, k1, k2, id) < (%(b0)s, %(b1)s, %(b2)s, %(bid)s) AND "
                + KEY_FILTER
                + " AND (entered_xid IS NULL OR pg_visible_in_snapshot(entered_xid, %(snap)s))",
                {"name": name, **self.gate.params(), "snap": params["snaps"][0]}
                | {k: params[k][0] for k in ("b0", "b1", "b2", "bid")},
            ).fetchall()
            assert below == [], (name, self.frontier.bound(self.gate, name), below)

    # ── the rest of the fleet ────────────────────────────────────────────

    @rule(limit=st.integers(1, 8), ahead=st.booleans())
    def other_claims(self, limit: int, ahead: bool) -> None:
        """Another member (which knows the other name) claims, from its own bounds
        (the store's claim), or ahead of its workers and then goes away."""
        owner = "gone" if ahead else "other"
        got, _ = _claim.claim_by_key(
            self.conn, owner, limit, {e: limit for e in EXECUTORS}, self.now, LEASE,
            Gate(self.store.key_ids, [KNOWN, UNKNOWN]), starting=0 if ahead else _claim.ALL,
        )  # fmt: skip
        for c in got:
            self.running[c.id] = (owner, c.attempt)

    # Its row locks would keep a locker or a cancel waiting: one at a time.
    @precondition(lambda self: self.claimer is None and self.locker is None)
    @rule(limit=st.integers(1, 6))
    def claim_uncommitted(self, limit: int) -> None:
        """Another member's claim whose transaction stays open across looks."""
        self.claimer = psycopg.connect(self.url)
        got, _ = _claim.claim_by_key(
            self.claimer, "slow", limit, {e: limit for e in EXECUTORS}, self.now, LEASE,
            Gate(self.store.key_ids, [KNOWN, UNKNOWN]),
        )  # fmt: skip
        self.slow = [(c.id, c.attempt) for c in got]

    @precondition(lambda self: self.claimer is not None)
    @rule()
    def commit_claim(self) -> None:
        assert self.claimer is not None
        self.claimer.commit()
        self.claimer.close()
        self.claimer = None
        for job_id, attempt in self.slow:
            self.running[job_id] = ("slow", attempt)

    @rule()
    def look(self) -> None:
        """The member's look reads every running row there is now."""
        seen = sorted(r.id for r in self.looks.look(self.conn))
        every = [i for (i,) in self.conn.execute(
            "SELECT id FROM jobsched_jobs WHERE status = 'running' ORDER BY id")]  # fmt: skip
        assert seen == every

    @precondition(lambda self: any(o == "gone" for o, _ in self.running.values()))
    @rule()
    def hand_back(self) -> None:
        """The gone member's unstarted jobs back to the queue, uncounted."""
        ids = [i for i, (o, _) in self.running.items() if o == "gone"]
        _takeover.hand_back(self.conn, "m", 100, ["gone"], self.now, ids)
        self.running = {i: r for i, r in self.running.items() if r[0] != "gone"}

    def _some_running(self, owners: tuple[str, ...], share: float) -> list[tuple[int, int]]:
        mine = sorted((i, a) for i, (o, a) in self.running.items() if o in owners)
        picked = [r for r in mine if self.rng.random() < share]
        for job_id, _ in picked:
            del self.running[job_id]
        return picked

    @precondition(lambda self: self.running)
    @rule(
        how=st.sampled_from(["completed", "completed", "retry", "retry later", "failed"]),
        share=st.sampled_from([0.3, 1.0]),
    )
    def finish(self, how: str, share: float) -> None:
        for owner in ("m", "other", "slow"):
            picked = self._some_running((owner,), share)
            outcomes = []
            for job_id, attempt in picked:
                if how.startswith("retry"):
                    at = self.now + (3.0 if how == "retry later" else 0.0)
                    outcomes.append(Outcome(job_id, attempt, S.RETRY_WAIT, self.now, run_at=at,
                                            error="again"))  # fmt: skip
                else:
                    outcomes.append(Outcome(job_id, attempt, S(how), self.now))
            if outcomes:
                recorded = self.portal.call(self.store.record, owner, outcomes)
                assert recorded.refused == []

    @precondition(lambda self: any(o == "m" for o, _ in self.running.values()))
    @rule(share=st.sampled_from([0.5, 1.0]), later=st.booleans())
    def give_back(self, share: float, later: bool) -> None:
        """The member releases jobs it claimed (a stop), or defers them."""
        picked = [i for i, _ in self._some_running(("m",), share)]
        if not picked:
            return
        if later:
            self.portal.call(self.store.defer, "m", [(i, self.now + 2.0, "later") for i in picked])
        else:
            self.portal.call(self.store.release, "m", picked)

    # A cancel would wait for their locks.
    @precondition(lambda self: self.locker is None and self.claimer is None)
    @rule(share=st.sampled_from([0.2, 0.5]))
    def cancel_some_waiting(self, share: float) -> None:
        ids = [
            i
            for (i,) in self.conn.execute("SELECT id FROM jobsched_jobs WHERE queue IS NOT NULL")
            if self.rng.random() < share
        ]
        if ids:
            self.portal.call(self.store.cancel, ids, self.now)

    @precondition(lambda self: self.locker is None and self.claimer is None)
    @rule(n=st.integers(1, 6))
    def lock_best(self, n: int) -> None:
        """Another session locks some of the best ready rows and keeps them
        (a member's claim under way, an operator's SELECT ... FOR UPDATE)."""
        self.locker = psycopg.connect(self.url)
        self.locker.execute(
            "SELECT id FROM jobsched_jobs WHERE queue = 0 ORDER BY k0, k1, k2, id LIMIT %s "
            "FOR UPDATE",
            (n,),
        ).fetchall()

    @precondition(lambda self: self.locker is not None)
    @rule()
    def unlock(self) -> None:
        """Its transaction ends without taking them (a claim that failed)."""
        assert self.locker is not None
        self.locker.rollback()
        self.locker.close()
        self.locker = None

    @precondition(lambda self: self.holder is None)
    @rule()
    def hold_xmin(self) -> None:
        self.holder = psycopg.connect(self.url)
        self.holder.execute("SELECT txid_current()")

    @precondition(lambda self: self.holder is not None)
    @rule()
    def let_go_of_xmin(self) -> None:
        assert self.holder is not None
        self.holder.rollback()
        self.holder.close()
        self.holder = None

    @initialize()
    def start_with_a_backlog(self) -> None:
        self.add(20, "behind", 0.0, None)


@pytest.fixture
def shared(pg_session_database: str) -> Iterator[Shared]:
    out = Shared()
    out.url = schema_url(pg_session_database)
    out.store = PostgresStore(out.url, secret=SECRET)
    with anyio.from_thread.start_blocking_portal() as out.portal:
        out.portal.call(out.store.open)
        try:
            yield out
        finally:
            out.portal.call(out.store.close)


#: Many programs, each of many steps and statements.
@pytest.mark.timeout(900)
def test_a_claim_from_its_bounds_takes_what_a_claim_from_the_front_takes(shared: Shared) -> None:
    """Program after program: the member's claims equal the claims from the
    front, and no claimable row is ever below a bound unseen."""
    Fleet.shared = shared
    run_state_machine_as_test(Fleet, settings=PROFILES[profiles.chosen(__file__)])
