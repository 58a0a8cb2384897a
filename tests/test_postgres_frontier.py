"""The PostgreSQL claim from a member's bounds (issue 34,
``jobsched_postgres._frontier``) takes exactly what a claim from the front
takes, whatever happened since the member's last claim.

A claim reads the ready rows from where its last claim left them, plus the
rows made ready since its last snapshot; a claim from the front reads them
all, as every claim did before. A hypothesis state machine runs programs of
what a fleet does to the ready rows (jobs added behind, in front of and
among the ready ones, delayed, registered under names the member knows or
not, on two executors, dependents of unfinished jobs; other members'
claims, and those of a member still on schema 4's code; completions,
retries, releases, deferrals, cancels, hand-backs of a gone member's
claims; a completion in a caller's transaction (``complete_in``) left
open across claims, then committed or rolled back, releasing dependents;
ready rows moved in front by a plain UPDATE of their key; time passing;
rows held locked by another session's open transaction, then let go; an
add left uncommitted across claims, then committed; an xid held) and
before each of the member's claims (with one set of known names or
another: each its own bounds) runs the claim from the front in a
transaction rolled back: both must take the same jobs, in the same order.
After each claim, the bound's own promise is checked directly: no ready row
the member may claim has a key below its bound unless a transaction its
snapshot did not see made it ready.

The member's look for lost attempts (``jobsched_postgres._running``) reads
the running rows its last look saw and those made running since; at any
step, what it reads must be every running row (another member's claim
left uncommitted across looks, then committed, and a schema 4 member's
claim included). A last test checks that a snapshot of another start of
the server (a failover, a restore to a point in time) is not trusted.

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
from jobsched.store import Completion, NewJob, Outcome
from jobsched_postgres import PostgresStore, _claim, _sql, _takeover
from jobsched_postgres._frontier import Frontier
from jobsched_postgres._gate import KEY_FILTER, Gate
from jobsched_postgres._running import Running

pytestmark = pytest.mark.postgres

S = js.JobStatus
EXECUTORS = ("async", "thread")
#: The registered names this member knows, and one it does not.
KNOWN, UNKNOWN = "shop.known", "shop.unknown"
#: The member's gates: it knows KNOWN, or (an app that registered more
#: since) both; each gate has bounds of its own.
GATES = ((KNOWN,), (KNOWN, UNKNOWN))
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
        self.gates = [Gate(self.store.key_ids, list(known)) for known in GATES]
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
        #: A caller's transaction that completed a job (complete_in), still open.
        self.completing: psycopg.Connection[Any] | None = None
        self.completed = (0, "", 0)
        self.looks = Running()
        self.claims = 0

    def teardown(self) -> None:
        conns = (self.locker, self.producer, self.holder, self.claimer, self.completing, self.conn)
        for conn in conns:
            if conn is not None:
                conn.close()

    # ── jobs ─────────────────────────────────────────────────────────────

    def _jobs(
        self, n: int, where: str, delay: float, named: str | None, upstream: int | None = None
    ) -> list[NewJob]:
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
                    depends_on=() if upstream is None else (upstream,),
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

    # The add holds its upstream FOR SHARE, which a completion's, a locker's
    # or a claim's open transaction would keep waiting: not while one is open.
    @precondition(
        lambda self: self.completing is None and self.locker is None and self.claimer is None
    )
    @rule(
        n=st.integers(1, 6),
        where=st.sampled_from(["behind", "front", "among"]),
        pick=st.integers(0, 1_000),
    )
    def add_dependents(self, n: int, where: str, pick: int) -> None:
        """Jobs that wait for one unfinished job (ready, waiting or running):
        made ready when it completes, by its outcome's transaction."""
        unfinished = [i for (i,) in self.conn.execute(
            "SELECT id FROM jobsched_jobs WHERE queue IN (0, 1) OR status = 'running' "
            "ORDER BY id")]  # fmt: skip
        if not unfinished:
            return
        upstream = unfinished[pick % len(unfinished)]
        self.portal.call(self.store.add, self._jobs(n, where, 0.0, None, upstream), self.now)

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
        gate=st.sampled_from([0, 0, 0, 1]),
    )
    def claim(self, limit: int, rooms: tuple[int, int], gate: int) -> None:
        """The member's claim, and before it the same claim from the front."""
        room = {name: r for name, r in zip(EXECUTORS, rooms, strict=True) if r > 0}
        if not room:
            return
        try:
            with self.conn.transaction():
                front, _ = _claim.claim_by_key(
                    self.conn, "m", limit, room, self.now, LEASE, self.gates[gate]
                )
                raise _Rollback
        except _Rollback:
            pass
        got, _ = _claim.claim_by_key(
            self.conn, "m", limit, room, self.now, LEASE, self.gates[gate],
            frontier=self.frontier,
        )  # fmt: skip
        assert [c.id for c in got] == [c.id for c in front]
        self.claims += 1
        for c in got:
            self.running[c.id] = ("m", c.attempt)

    @invariant()
    def nothing_claimable_below_a_bound(self) -> None:
        """Every ready row the member may claim has a key at or past its
        executor's bound, or was made ready by a transaction the bound's
        snapshot did not see."""
        for gate, name in ((g, n) for g in self.gates for n in EXECUTORS):
            params = self.frontier.params(gate, [name])
            if params["snaps"][0] is None:
                continue  # no claim of this executor yet: from the front
            below = self.conn.execute(
                "SELECT id FROM jobsched_jobs WHERE queue = 0 AND executor = %(name)s "
                "AND (k0, k1, k2, id) < (%(b0)s, %(b1)s, %(b2)s, %(bid)s) AND "
                + KEY_FILTER
                + " AND (entered_xid IS NULL OR pg_visible_in_snapshot(entered_xid, "
                "split_part(%(snap)s, '/', 2)::pg_snapshot))",
                {"name": name, **gate.params(), "snap": params["snaps"][0]}
                | {k: params[k][0] for k in ("b0", "b1", "b2", "bid")},
            ).fetchall()
            assert below == [], (gate.known, name, self.frontier.bound(gate, name), below)

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

    @rule(limit=st.integers(1, 4))
    def old_member_claims(self, limit: int) -> None:
        """A member still on schema 4's code (a rolling upgrade) claims with
        its own statement, which sets no entered_xid (the trigger does)."""
        rows = self.conn.execute(
            "WITH picked AS (SELECT id FROM jobsched_jobs WHERE queue = 0 "
            "ORDER BY k0, k1, k2, id LIMIT %s FOR UPDATE SKIP LOCKED) "
            "UPDATE jobsched_jobs AS t SET status = 'running', queue = NULL, owner = 'other', "
            "ran_by = 'other', lease_until = extract(epoch from now())::float8 + 60, "
            "attempts = t.attempts + 1, cancel_requested = false, started_at = %s "
            "FROM picked WHERE t.id = picked.id AND t.queue = 0 RETURNING t.id, t.attempts",
            (limit, self.now),
        ).fetchall()
        for job_id, attempt in rows:
            self.running[job_id] = ("other", attempt)

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
    @precondition(
        lambda self: self.locker is None and self.claimer is None and self.completing is None
    )
    @rule(share=st.sampled_from([0.2, 0.5]))
    def cancel_some_waiting(self, share: float) -> None:
        ids = [
            i
            # In id order: heap order differs between a program and its replay
            # (the tables keep their dead rows), and the rng must meet the same rows.
            for (i,) in self.conn.execute(
                "SELECT id FROM jobsched_jobs WHERE queue IS NOT NULL ORDER BY id"
            )
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

    @precondition(
        lambda self: (
            self.completing is None and any(o in ("m", "other") for o, _ in self.running.values())
        )
    )
    @rule(pick=st.integers(0, 1_000))
    def complete_in_open(self, pick: int) -> None:
        """A job completed in a caller's transaction (``complete_in``) that
        stays open across the member's claims: the dependents it releases
        are ready once it commits, made so by a transaction the claims'
        snapshots saw running."""
        mine = sorted((i, r) for i, r in self.running.items() if r[0] in ("m", "other"))
        job_id, (owner, attempt) = mine[pick % len(mine)]
        del self.running[job_id]
        self.completed = (job_id, owner, attempt)
        self.completing = psycopg.connect(self.url)
        self.store.completer().write(
            self.completing, Completion(job_id, owner, attempt, self.now, b"J1")
        )

    @precondition(lambda self: self.completing is not None)
    @rule(commit=st.booleans())
    def end_complete_in(self, commit: bool) -> None:
        """The caller commits; or rolls back, and the job stays running
        (another look or outcome ends it later)."""
        assert self.completing is not None
        if commit:
            self.completing.commit()
        else:
            self.completing.rollback()
        self.completing.close()
        self.completing = None
        if not commit:
            job_id, owner, attempt = self.completed
            self.running[job_id] = (owner, attempt)

    # Its update waits for no lock: the rows it moves are ready and unlocked.
    @precondition(lambda self: self.locker is None and self.claimer is None)
    @rule(share=st.sampled_from([0.2, 0.5]))
    def move_to_front(self, share: float) -> None:
        """Some ready rows get a better key by a plain UPDATE (an operator's
        tool, another version's code): the trigger makes them ready anew."""
        ready = self.conn.execute("SELECT id FROM jobsched_jobs WHERE queue = 0 ORDER BY id")
        ids = [i for (i,) in ready if self.rng.random() < share]
        if ids:
            self.low -= 1.0
            self.conn.execute(
                "UPDATE jobsched_jobs SET k1 = %s WHERE id = ANY(%s) AND queue = 0",
                (self.low, ids),
            )

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


def test_a_snapshot_of_another_start_of_the_server_is_no_snapshot(shared: Shared) -> None:
    """A failover to a replica that had not replayed the last transactions,
    or a restore to a point in time, hands out transaction ids again that a
    member's last snapshot saw as committed: a row made ready (or running)
    by one of them, in front of the bound, would never be read. Both start
    the server anew. Here the member's kept snapshot is one whose xmax is
    ahead of the server's ids, as the old primary's was: kept with this
    start of the server (the control), the claim misses the row in front
    and the look the row made running; kept with another start, the claim
    reads from the front and takes it, and the look reads every running row."""
    store, gate = shared.store, Gate(shared.store.key_ids, [])
    with psycopg.connect(shared.url, autocommit=True) as conn:
        for table in TABLES:
            conn.execute(f"DELETE FROM {table}")  # type: ignore[arg-type]
        first = store.reserve_ids(13)
        jobs = [
            NewJob(first + i, f"j{i}", "thread" if i == 12 else "async", (0.0, float(i), 0.0),
                   run_at=0.0, submitted_at=0.0, payload=b"P")
            for i in range(13)
        ]  # fmt: skip
        shared.portal.call(store.add, jobs[1:12], 0.0)
        frontier, looks = Frontier(), Running()
        got, _ = _claim.claim_by_key(conn, "m", 3, {"async": 3}, 0.0, LEASE, gate,
                                     frontier=frontier)  # fmt: skip
        mine = [c.id for c in got]
        assert mine == [j.id for j in jobs[1:4]]
        assert [r.id for r in looks.look(conn)] == mine
        bound = frontier.bound(gate, "async")
        assert bound[3] == jobs[4].id
        # Since: a job in front of the bound, and another member's claim.
        shared.portal.call(store.add, [jobs[0], jobs[12]], 0.0)
        other, _ = _claim.claim_by_key(conn, "other", 1, {"thread": 1}, 0.0, LEASE, gate)
        assert [c.id for c in other] == [jobs[12].id]
        row = conn.execute(
            "SELECT pg_current_xact_id()::text::bigint, "
            "extract(epoch FROM pg_postmaster_start_time())::text"
        ).fetchone()
        assert row is not None
        xid, start = row
        ahead = f"{xid + 1000}:{xid + 1000}:"

        def claim_one(kept: str) -> list[int]:
            frontier._marks[(*frontier._gate(gate), "async")] = (bound, kept, 0)
            try:
                with conn.transaction():
                    got, _ = _claim.claim_by_key(conn, "m", 1, {"async": 1}, 0.0, LEASE, gate,
                                                 frontier=frontier)  # fmt: skip
                    raise _Rollback
            except _Rollback:
                return [c.id for c in got]

        def look(kept: str) -> list[int]:
            looks._state = (mine, kept)
            return sorted(r.id for r in looks.look(conn))

        # The control: this start's snapshot hides both.
        assert claim_one(f"{start}/{ahead}") == [jobs[4].id]
        assert look(f"{start}/{ahead}") == mine
        # Another start's: from the front, every running row.
        assert claim_one(f"0.5/{ahead}") == [jobs[0].id]
        assert look(f"0.5/{ahead}") == sorted([*mine, jobs[12].id])
        # A claim rolled back keeps nothing (its rows are ready again).
        assert frontier.params(gate, ["async"])["snaps"][0] == f"0.5/{ahead}"
        # One that commits keeps a state of this start again, as the look did.
        got, _ = _claim.claim_by_key(conn, "m", 1, {"async": 1}, 0.0, LEASE, gate,
                                     frontier=frontier)  # fmt: skip
        assert [c.id for c in got] == [jobs[0].id]
        assert frontier.params(gate, ["async"])["snaps"][0].startswith(f"{start}/")
        assert looks._state is not None and looks._state[1].startswith(f"{start}/")
