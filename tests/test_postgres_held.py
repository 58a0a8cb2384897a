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

from collections.abc import Iterator

import pg_store
import psycopg
import pytest

import jobsched as js
from jobsched.store import NewJob, Outcome
from jobsched_postgres import PostgresStore
from jobsched_postgres._running import Running

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]

NOW = 1_700_000_000.0
BATCH = 64
CHURN = 3_008  # 47 rounds of BATCH


# The schema and the open store every test here uses (tests/pg_store.py).
anyio_backend, url, store = pg_store.anyio_backend, pg_store.url, pg_store.store

#: Index entries each index of the jobs table gave this session's
#: transaction (dead ones too), not yet sent to the statistics.
_ENTRIES = (
    "SELECT c.relname, pg_stat_get_xact_tuples_returned(c.oid) FROM pg_index i "
    "JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = 'jobsched_jobs'::regclass"
)


@pytest.fixture
def held(url: str) -> Iterator[None]:
    """An idle-in-transaction session that took an xid: no index entry dead
    since can be marked dead, no row version removed."""
    conn = psycopg.connect(url)
    conn.execute("SELECT txid_current()")
    yield
    conn.rollback()
    conn.close()


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
