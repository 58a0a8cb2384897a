"""What a member's periodic reads cost while a transaction holds an xid
(issue 34, W20): counts of index entries, not timings.

While an xid is held no index entry of a row version dead since can be
marked dead, so a read that walks an index range walks every entry the
jobs run since the hold began left in it. A member's periodic reads must
start at a bound, or read by primary key; these tests churn jobs under a
held xid and count the entries each read gets from each index of the jobs
table (``pg_stat_get_xact_tuples_returned``, in the reading session's own
transaction: deterministic).
"""

from __future__ import annotations

from collections.abc import Mapping

import pg_store
import psycopg
import pytest

import jobsched as js
import jobsched_postgres._prune as prunes
from jobsched.store import NewJob, Outcome
from jobsched_postgres import PostgresStore, _handback, _takeover
from jobsched_postgres._prune import FINISHED, FRONT_EVERY, FRONT_SHARE, Bound, Lane, prune
from jobsched_postgres._running import Running
from jobsched_postgres._store import PRUNE_BATCH

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]

NOW = 1_700_000_000.0
BATCH = 64
MS = 0.001
DONE = js.JobStatus.COMPLETED
CHURN = 3_008  # 47 rounds of BATCH


# The schema and the open store every test here uses (tests/pg_store.py).
anyio_backend, url, store = pg_store.anyio_backend, pg_store.url, pg_store.store
held = pg_store.held

#: Index entries each index of the jobs table gave this session's
#: transaction (dead ones too), not yet sent to the statistics.
_ENTRIES = (
    "SELECT c.relname, pg_stat_get_xact_tuples_returned(c.oid) FROM pg_index i "
    "JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = 'jobsched_jobs'::regclass"
)


def _new(job_id: int) -> NewJob:
    return NewJob(job_id, f"j{job_id}", "async", (0.0, float(job_id), 0.0), run_at=NOW,
                  submitted_at=NOW, payload=b"P")  # fmt: skip


async def _churn(
    store: PostgresStore, first: int, jobs: int, *, at: float = NOW + 1, step: float = 0.0
) -> None:
    """``jobs`` jobs added, claimed and completed, BATCH a round, as a member
    runs them: the job ``first + i`` finished at ``at + i * step``."""
    for start in range(first, first + jobs, BATCH):
        await store.add([_new(i) for i in range(start, start + BATCH)], NOW)
        claims = await store.claim("m", BATCH, {"async": BATCH}, NOW, 30)
        ended = js.JobStatus.COMPLETED
        outcomes = [Outcome(c.id, c.attempt, ended, at + (c.id - first) * step) for c in claims]
        await store.record("m", outcomes)


def _read(conn: psycopg.Connection, read: object) -> tuple[object, dict[str, int]]:
    """What ``read()`` answers, and the index entries it read, by index (in
    one transaction of ``conn``, rolled back)."""
    before = dict(conn.execute(_ENTRIES).fetchall())
    out = read()  # type: ignore[operator]
    after = conn.execute(_ENTRIES).fetchall()
    conn.rollback()
    return out, {k: n - before.get(k, 0) for k, n in after if n > before.get(k, 0)}


async def test_with_an_xid_held_a_look_for_lost_attempts_reads_its_rows_by_primary_key(
    store: PostgresStore, url: str, held: None
) -> None:
    """64 jobs running while 3,008 more are run under a held xid: a look
    after the member's first reads the rows the last look saw by primary
    key, not the index of the running rows, whose 3,008 dead entries a
    look read each second before (the control: a first look reads them)."""
    await store.add([_new(i) for i in range(1, BATCH + 1)], NOW)
    running = await store.claim("other", BATCH, {"async": BATCH}, NOW, 30)
    await _churn(store, 1_000_000, CHURN)
    with psycopg.connect(url) as conn:
        # The planner's figures for the table as autovacuum leaves them.
        conn.execute("ANALYZE jobsched_jobs")
        conn.commit()
        looks = Running()
        first, walked = _read(conn, lambda: looks.look(conn))
        assert walked["jobsched_jobs_running"] >= CHURN, walked
        again, entries = _read(conn, lambda: looks.look(conn))
    mine = sorted(c.id for c in running)
    assert sorted(r.id for r in first) == sorted(r.id for r in again) == mine  # type: ignore[attr-defined]
    assert entries.get("jobsched_jobs_running", 0) <= BATCH, entries
    assert entries.get("jobsched_jobs_pkey", 0) <= 4 * BATCH, entries


def _prune(
    conn: psycopg.Connection,
    bound: Bound,
    *,
    keep: int | None = 500,
    before: Mapping[js.JobStatus, float] | None = None,
    commit: bool = True,
) -> tuple[int, int]:
    """The store's prune of one batch keeping ``keep`` (or by age, ``before``),
    by ``conn`` from ``bound``; how many went and the entries it read from
    the finished rows' index (and, by age, the index by status: the planner
    may serve a read by age of a table of one status from either)."""
    entries = dict(conn.execute(_ENTRIES).fetchall())
    gone, _ = prune(conn, keep, before or {}, PRUNE_BATCH, bound)
    after = dict(conn.execute(_ENTRIES).fetchall())
    if commit:
        conn.commit()
        bound.commit()
    else:
        conn.rollback()
    names = ["jobsched_jobs_finished"] + ([] if before is None else ["jobsched_jobs_ended"])
    return gone, sum(after.get(n, 0) - entries.get(n, 0) for n in names)


async def test_with_an_xid_held_a_prune_reads_from_past_the_rows_it_deleted(
    store: PostgresStore, url: str, held: None
) -> None:
    """3,008 jobs run and 2,508 of them pruned under a held xid: the entries
    they left in the finished rows' index cannot be marked dead. A prune from
    the oldest end walks them all (the control: a store's first prune); the
    next prune of the store that deleted them reads from past the last row
    it picked: the rows it deletes, and no dead entry. It deletes the oldest."""
    await _churn(store, 1, CHURN)
    bound = Bound()
    with psycopg.connect(url) as conn:
        assert [_prune(conn, bound)[0] for _ in range(3)] == [PRUNE_BATCH, PRUNE_BATCH, 508]
        await _churn(store, 2_000_000, 640)
        gone, walked = _prune(conn, Bound(), commit=False)
        assert gone == 640 and walked >= 2_508 + 640, walked
        # A plan may read the rows past the bound in the index's order (640
        # entries) or all of them and sort (500 + 640: the planner's choice on
        # a table this small), never the dead entries before it.
        gone, entries = _prune(conn, bound)
        assert gone == 640 and entries <= 500 + 640, entries
        finished = conn.execute(FINISHED).fetchone()
        oldest = conn.execute("SELECT min(id) FROM jobsched_jobs WHERE finished_at IS NOT NULL")
        assert (finished, oldest.fetchone()) == ((500,), (2_000_140,))


async def test_a_prune_reads_from_the_oldest_end_for_rows_its_bound_passed(
    store: PostgresStore, url: str
) -> None:
    """A finished row below the bound (an outcome that committed after the
    prune passed its finish time): the next prune whose bound is younger
    than FRONT_EVERY passes it, and takes a newer row; one whose bound is
    older reads from the oldest end and takes it; and one that needs more
    rows than lie past the bound does too (keep 0: every row goes)."""
    await _churn(store, 1_000, 1_280)
    bound = Bound()

    async def straggler(job_id: int, finished_at: float = NOW) -> None:
        await store.add([_new(job_id)], NOW)
        (claim,) = await store.claim("m", 1, {"async": 1}, NOW, 30)
        outcome = Outcome(claim.id, claim.attempt, js.JobStatus.COMPLETED, finished_at)
        await store.record("m", [outcome])

    def oldest(conn: psycopg.Connection) -> int:
        row = conn.execute("SELECT min(id) FROM jobsched_jobs WHERE finished_at IS NOT NULL")
        return int(row.fetchone()[0])  # type: ignore[index]

    with psycopg.connect(url) as conn:
        assert _prune(conn, bound)[0] == 780
        await straggler(1)  # finished at NOW, before every row past the bound (NOW + 1)
        assert _prune(conn, bound)[0] == 1
        assert oldest(conn) == 1  # passed: row 1,780 went
        await straggler(2)
        bound._count._front_at -= bound._count._front_wait  # FRONT_EVERY, or its cost's
        assert _prune(conn, bound)[0] == 1
        assert oldest(conn) == 2  # row 1 went: the oldest end was read
        await straggler(3, NOW - 1)  # below the bound the oldest end left, (NOW, 1)
        assert _prune(conn, bound, keep=0)[0] == 501
        assert conn.execute(FINISHED).fetchone() == (0,)


def _oldest(conn: psycopg.Connection) -> int:
    row = conn.execute("SELECT min(id) FROM jobsched_jobs WHERE finished_at IS NOT NULL")
    return int(row.fetchone()[0])  # type: ignore[index]


async def _ended(store: PostgresStore, job: NewJob, at: float) -> None:
    """``job`` added, claimed and completed at ``at``."""
    await store.add([job], NOW)
    (claim,) = await store.claim("m", 1, {job.executor: 1}, NOW, 30)
    await store.record("m", [Outcome(claim.id, claim.attempt, DONE, at)])


async def test_with_an_xid_held_a_prune_by_age_reads_from_past_the_rows_it_deleted(
    store: PostgresStore, url: str, held: None
) -> None:
    """3,008 completions a millisecond apart, 2,508 of them pruned by age
    under a held xid: their entries in jobsched_jobs_ended cannot be marked
    dead. A prune by age from the oldest end walks them all (the control: a
    store's first prune); the next prune of the store that deleted them
    reads from past the last row it picked: the rows it deletes, twice (its
    read and PASSED's count of the rows it passed), and no dead entry."""
    await _churn(store, 1, CHURN, step=MS)  # at NOW + 1, ..., NOW + 4.007
    bound = Bound()
    with psycopg.connect(url) as conn:
        # The third prune finds fewer than it may delete: its lane's normal end.
        first = {DONE: NOW + 1 + 2.5075}
        assert [_prune(conn, bound, before=first)[0] for _ in range(3)] == [1000, 1000, 508]
        await _churn(store, 2_000_000, 320, at=NOW + 10, step=MS)
        every = {DONE: NOW + 20}
        gone, walked = _prune(conn, Bound(), before=every, commit=False)
        assert gone == 820 and walked >= 2_508 + 820, walked
        gone, entries = _prune(conn, bound, before=every)
        # Its read and PASSED's count each read the 820 rows, and again the one
        # entry at the bound's instant (its row deleted).
        assert gone == 820 and gone <= entries <= 2 * (820 + 1), entries
        # And so on, past psycopg's prepare threshold (5): the server's
        # generic plan reads from the bound too.
        for n in range(8):
            await _churn(store, 3_000_000 + n * BATCH, BATCH, at=NOW + 30 + n, step=MS)
            gone, entries = _prune(conn, bound, before={DONE: NOW + 40})
            assert gone == BATCH and entries <= 2 * (BATCH + 1), (n, entries)
        assert conn.execute(FINISHED).fetchone() == (0,)


async def test_a_prune_by_age_sets_no_bound_past_an_upstream_the_guard_held(
    store: PostgresStore, url: str
) -> None:
    """An aged upstream of a waiting job is passed over and the 640 rows
    after it go; once its dependent has run, the next prune by age takes it
    (its lane set no bound past it, and read from the oldest end), not only
    the rows newer than the last it picked."""
    await _ended(store, _new(1), NOW + 1)
    waits = NewJob(2, "j2", "other", (0.0, 2.0, 0.0), run_at=NOW, submitted_at=NOW,
                   payload=b"P", depends_on=(1,))  # fmt: skip
    await store.add([waits], NOW)
    await _churn(store, 1_000, 640, at=NOW + 2, step=MS)
    bound = Bound()
    aged = {DONE: NOW + 100}
    with psycopg.connect(url) as conn:
        assert _prune(conn, bound, before=aged)[0] == 640
        assert _oldest(conn) == 1
        (claim,) = await store.claim("m", 1, {"other": 1}, NOW, 30)
        await store.record("m", [Outcome(claim.id, claim.attempt, DONE, NOW + 50)])
        await _churn(store, 2_000, BATCH, at=NOW + 60, step=MS)
        assert _prune(conn, bound, before=aged)[0] == 1 + 1 + BATCH
        assert conn.execute(FINISHED).fetchone() == (0,)


async def test_a_prune_by_age_reads_from_the_oldest_end_for_a_row_its_bound_passed(
    store: PostgresStore, url: str
) -> None:
    """A row that finished before the bound, its outcome recorded after the
    prune passed that time (another member's clock): prunes by age whose
    bound is younger than FRONT_EVERY pass it and take the newer rows; the
    first whose bound is older reads from the oldest end and takes it."""
    await _churn(store, 1_000, 640, at=NOW + 2, step=MS)
    bound = Bound()
    aged = {DONE: NOW + 100}
    with psycopg.connect(url) as conn:
        assert _prune(conn, bound, before=aged)[0] == 640
        await _ended(store, _new(1), NOW + 1)
        await _churn(store, 2_000, BATCH, at=NOW + 10, step=MS)
        assert _prune(conn, bound, before=aged)[0] == BATCH
        assert _prune(conn, bound, before=aged)[0] == 0
        assert _oldest(conn) == 1  # passed
        bound._aged[DONE]._front_at -= bound._aged[DONE]._front_wait
        assert _prune(conn, bound, before=aged)[0] == 1
        assert conn.execute(FINISHED).fetchone() == (0,)


def test_a_lane_whose_prune_left_a_row_reads_from_the_oldest_end_next() -> None:
    """A read that ends at a key moves the lane there once the prune
    commits, not before; one whose rows the DELETE left (the guard, asked
    again after the locks) sets no key: the next read is from the oldest end."""
    lane: Lane[float] = Lane()
    assert lane.start() is None
    lane.reach(5.0)
    assert lane.start() is None  # not committed: the prune rolled back
    lane.reach(5.0)
    lane.commit()
    assert lane.start() == 5.0
    lane.reach(7.0)
    lane.left(1)
    lane.commit()
    assert lane.start() is None


def test_a_slow_read_from_the_oldest_end_puts_the_next_off_by_its_cost(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The committer waits for its prune: a read from the oldest end that
    took c seconds (a held xmin's dead entries) puts the next one c /
    FRONT_SHARE off, past FRONT_EVERY; a cheap one keeps FRONT_EVERY."""
    now = [1000.0]
    monkeypatch.setattr(prunes.time, "monotonic", lambda: now[0])
    lane: Lane[float] = Lane()

    def front_read(cost: float) -> None:
        assert lane.start() is None
        now[0] += cost
        lane.fronted()
        lane.reach(now[0])
        lane.commit()

    front_read(0.01)  # cheap: the next front read FRONT_EVERY on
    now[0] += FRONT_EVERY - 1
    assert lane.start() is not None
    now[0] += 1
    front_read(1.0)
    slow = 1.0 / FRONT_SHARE
    assert slow > FRONT_EVERY
    now[0] += slow - 2
    assert lane.start() is not None  # a bound read, not the oldest end
    lane.commit()
    now[0] += 1
    assert lane.start() is None


def _delete_plan(conn: psycopg.Connection, ids: list[int]) -> list[str]:
    """The indexes of jobsched_jobs the plan of the prune's DELETE of ``ids``
    reads, the guard's included (EXPLAIN of the statement the store sends,
    with its parameter)."""
    ((plan,),) = conn.execute("EXPLAIN (FORMAT JSON) " + prunes.DELETE, {"ids": ids}).fetchall()
    nodes = pg_store.plan_nodes(plan[0]["Plan"])
    return [n["Index Name"] for n in nodes if n.get("Index Name", "").startswith("jobsched_jobs_")]


async def test_a_prune_deletes_its_rows_by_primary_key_whatever_the_statistics_say(
    store: PostgresStore, url: str
) -> None:
    """Statistics that say no row is finished (autovacuum's ANALYZE under a
    held xid sees only the few finished rows retention keeps, W20) and
    20,000 finished rows the indexes of finished rows hold entries for: the
    DELETE's re-check of finished_at proved the partial indexes' predicate,
    and the planner read every entry of jobsched_jobs_ended and tested each
    against the ids (0.3-0.9 s a prune in W20). It probes the primary key."""
    with psycopg.connect(url, autocommit=True) as conn:
        # No ANALYZE but the test's (a benchmark may switch autovacuum on).
        conn.execute("ALTER TABLE jobsched_jobs SET (autovacuum_enabled = false)")
        insert = (
            "INSERT INTO jobsched_jobs (id, name, executor, status, queue, k0, k1, k2, run_at, "
            "submitted_at, finished_at, payload) SELECT i, 'j', 'async', %(status)s, "
            "%(queue)s, 0, i, 0, %(now)s, %(now)s, %(now)s + i * 0.001 * %(ended)s, "
            "'\\x50'::bytea FROM generate_series(%(first)s, %(last)s) AS i"
        )
        unfinished = {"status": "pending", "queue": 0, "ended": None}
        finished = {"status": "completed", "queue": None, "ended": 1}
        conn.execute(insert, {**unfinished, "now": NOW, "first": 1, "last": 200_000})
        conn.execute("ANALYZE jobsched_jobs")
        conn.execute(insert, {**finished, "now": NOW, "first": 300_001, "last": 320_000})
    with psycopg.connect(url) as conn:
        # The plan of a DELETE of the newest finished rows, as the store sends it.
        plan = _delete_plan(conn, list(range(320_001 - BATCH, 320_001)))
        before = dict(conn.execute(_ENTRIES).fetchall())
        gone, _ = prune(conn, None, {DONE: NOW + 1_000}, BATCH, Bound())
        after = dict(conn.execute(_ENTRIES).fetchall())
        conn.commit()
    entries = {k: n - before.get(k, 0) for k, n in after.items() if n > before.get(k, 0)}
    assert gone == BATCH
    # AGED's read of the oldest rows and PASSED's count of them, then the
    # DELETE's probes of the primary key (20,000 entries of a partial index before).
    partial = entries.get("jobsched_jobs_ended", 0) + entries.get("jobsched_jobs_finished", 0)
    assert partial <= 4 * BATCH, entries
    assert set(plan) == {"jobsched_jobs_pkey"}, plan


async def test_a_takeover_and_a_hand_back_read_their_rows_by_primary_key(
    store: PostgresStore, url: str
) -> None:
    """Statistics that say no row is running, and 20,000 running rows whose
    leases lapsed: a takeover of 64 of them (and the hand-backs around it)
    read the rows by primary key. Their `status = 'running'` let the planner
    read every entry of jobsched_jobs_running (which a held xid fills with
    an entry for every job run since) and test each against the ids."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ALTER TABLE jobsched_jobs SET (autovacuum_enabled = false)")
        conn.execute(
            "INSERT INTO jobsched_jobs (id, name, executor, status, queue, k0, k1, k2, run_at, "
            "submitted_at, payload) SELECT i, 'j', 'async', 'pending', 0, 0, i, 0, %(now)s, "
            "%(now)s, '\\x50'::bytea FROM generate_series(1, 200000) AS i",
            {"now": NOW},
        )
        conn.execute("ANALYZE jobsched_jobs")
        conn.execute(
            "UPDATE jobsched_jobs SET status = 'running', queue = NULL, owner = 'gone', "
            "ran_by = 'gone', lease_until = 0, started_at = %s, attempts = 1 WHERE id > 180000",
            (NOW,),
        )
    ids = list(range(200_001 - BATCH, 200_001))
    with psycopg.connect(url) as conn:
        before = dict(conn.execute(_ENTRIES).fetchall())
        _takeover.hand_back(conn, "m", BATCH, [], NOW, ids, mine=ids)
        taken = _takeover.take_over(conn, "m", BATCH, ["async"], [], 30.0, ids=ids)
        _handback.hand_back(conn, "m", [(c.id, c.attempt, NOW) for c in taken])
        after = dict(conn.execute(_ENTRIES).fetchall())
        conn.commit()
    entries = {k: n - before.get(k, 0) for k, n in after.items() if n > before.get(k, 0)}
    assert sorted(c.id for c in taken) == ids
    assert entries.get("jobsched_jobs_running", 0) + entries.get("jobsched_jobs_status", 0) <= (
        4 * BATCH
    ), entries
