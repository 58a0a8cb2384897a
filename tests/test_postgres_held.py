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

import pg_store
import psycopg
import pytest

import jobsched as js
from jobsched.store import NewJob, Outcome
from jobsched_postgres import PostgresStore
from jobsched_postgres._prune import FINISHED, FRONT_EVERY, Bound, prune
from jobsched_postgres._running import Running
from jobsched_postgres._store import PRUNE_BATCH

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]

NOW = 1_700_000_000.0
BATCH = 64
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


async def _churn(store: PostgresStore, first: int, jobs: int) -> None:
    """``jobs`` jobs added, claimed and completed, BATCH a round, as a member runs them."""
    for start in range(first, first + jobs, BATCH):
        await store.add([_new(i) for i in range(start, start + BATCH)], NOW)
        claims = await store.claim("m", BATCH, {"async": BATCH}, NOW, 30)
        await store.record(
            "m", [Outcome(c.id, c.attempt, js.JobStatus.COMPLETED, NOW + 1) for c in claims]
        )


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
    conn: psycopg.Connection, bound: Bound, *, keep: int = 500, commit: bool = True
) -> tuple[int, int]:
    """The store's prune of one batch keeping ``keep``, by ``conn`` from
    ``bound``; how many went and the entries it read from the finished
    rows' index."""
    before = dict(conn.execute(_ENTRIES).fetchall())
    gone, _ = prune(conn, keep, {}, PRUNE_BATCH, bound)
    after = dict(conn.execute(_ENTRIES).fetchall())
    if commit:
        conn.commit()
        bound.commit()
    else:
        conn.rollback()
    name = "jobsched_jobs_finished"
    return gone, after.get(name, 0) - before.get(name, 0)


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
        bound._front_at -= FRONT_EVERY
        assert _prune(conn, bound)[0] == 1
        assert oldest(conn) == 2  # row 1 went: the oldest end was read
        await straggler(3, NOW - 1)  # below the bound the oldest end left, (NOW, 1)
        assert _prune(conn, bound, keep=0)[0] == 501
        assert conn.execute(FINISHED).fetchone() == (0,)
