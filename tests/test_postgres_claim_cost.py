"""What the PostgreSQL store's frontier claim costs a queue that is not
behind (issue 34's "W10c8 no slower"): counts, not timings.

The claim that reads from the member's bound (``_frontier``) is a larger
statement than the claim from the front it replaced, and it also reads the
rows made ready since the member's last claim. These tests pin the two
costs that were cut: the statement is prepared at its first run on a
connection (psycopg's default is its fifth: five parses and ten plans per
pooled connection), and the rows made ready since the last claim that are
behind every bound (a bulk add, in a queue whose keys grow with time) are
dropped before the look-ups of their own executor's bound.
"""

from __future__ import annotations

import pg_store
import psycopg
import pytest

from jobsched.store import NewJob
from jobsched_postgres import PostgresStore
from jobsched_postgres._claim import CLAIM, claim_by_key
from jobsched_postgres._frontier import Frontier
from jobsched_postgres._gate import Gate

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]

NOW = 1_700_000_000.0
BATCH = 64


# The schema and the open store every test here uses (tests/pg_store.py).
anyio_backend, url, store = pg_store.anyio_backend, pg_store.url, pg_store.store


def _new(job_id: int) -> NewJob:
    return NewJob(job_id, f"j{job_id}", "async", (0.0, float(job_id), 0.0), run_at=NOW,
                  submitted_at=NOW, payload=b"P")  # fmt: skip


async def test_rows_added_behind_every_bound_cost_no_look_up_of_their_bound(
    store: PostgresStore, url: str
) -> None:
    """5,000 jobs added behind the queue after the member's last claim (keys
    above its bound): the next claim reads them as made ready since, and
    drops them by the highest bound, read once; the look-ups of each row's
    own executor's floor and bound (correlated subqueries, once per row
    read: 10,000 here before) never run. It still takes the best rows."""
    await store.add([_new(i) for i in range(1, 1_001)], NOW)
    first = await store.claim("m", BATCH, {"async": BATCH}, NOW, 30)
    assert [c.id for c in first] == list(range(1, BATCH + 1))
    await store.add([_new(i) for i in range(10_001, 15_001)], NOW)
    gate = Gate(store.key_ids, [])
    params = {
        "names": ["async"], "rooms": [BATCH], "limit": BATCH, "owner": "m2", "lease": 30.0,
        "now": NOW, "starting": BATCH, **gate.params(), **store._frontier.params(gate, ["async"]),
    }  # fmt: skip
    with psycopg.connect(url) as conn:
        ((plan,),) = conn.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + CLAIM, params)
        conn.rollback()
    top = plan[0]["Plan"]
    fresh = next(n for n in pg_store.plan_nodes(top) if n.get("Subplan Name") == "CTE fresh")
    (scan,) = [n for n in pg_store.plan_nodes(fresh) if n.get("Relation Name") == "jobsched_jobs"]
    # It read the 5,000 new rows (the control: the test sees them) and kept none.
    # More when another session on the server (another test) holds a
    # transaction open: the index range starts at the snapshot's xmin, so
    # the first add's rows are read too, and dropped by the visibility test.
    assert 5_000 <= scan.get("Rows Removed by Filter", 0) <= 5_000 + 1_000 - BATCH, scan
    assert fresh["Actual Rows"] == 0, fresh
    correlated = [n for n in pg_store.plan_nodes(scan) if n.get("Parent Relationship") == "SubPlan"]
    assert len(correlated) == 2, scan
    assert sum(n["Actual Loops"] for n in correlated) == 0, correlated
    claimed = next(n for n in pg_store.plan_nodes(top) if n.get("Subplan Name") == "CTE claimed")
    assert claimed["Actual Rows"] == BATCH


async def test_a_claim_is_prepared_at_its_first_run_on_a_connection(
    store: PostgresStore, url: str
) -> None:
    """One claim on a new connection leaves the claim statement prepared
    there (psycopg prepares a statement at its fifth run by default)."""
    await store.add([_new(i) for i in range(1, 101)], NOW)
    with psycopg.connect(url, autocommit=True) as conn:
        got, _ = claim_by_key(conn, "m", 10, {"async": 10}, NOW, 30.0, Gate(store.key_ids, []),
                              frontier=Frontier())  # fmt: skip
        assert len(got) == 10
        prepared = conn.execute(
            "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE '%raw_bounds%'"
        ).fetchone()
    assert prepared == (1,)


async def test_a_claim_locks_only_the_rows_it_may_take(store: PostgresStore, url: str) -> None:
    """A claim of 1 after 500 rows were made ready below the member's bound
    locks at most one row of each read (from the bound, and of the rows
    made ready since), not every row made ready since: each lock is a WAL
    record and a dirtied page, and other members' claims skip the locked
    rows, the best ones. Counted by another session while the claim's
    transaction is open: the ready rows it sees, less those it can lock."""
    gate, frontier = Gate(store.key_ids, []), Frontier()
    await store.add([_new(i) for i in range(1001, 1011)], NOW)
    with psycopg.connect(url, autocommit=True) as conn, psycopg.connect(url) as other:
        got, _ = claim_by_key(conn, "m", 1, {"async": 1}, NOW, 30.0, gate, frontier=frontier)
        assert [c.id for c in got] == [1001]
        await store.add([_new(i) for i in range(1, 501)], NOW)  # below the bound
        with conn.transaction():
            got, _ = claim_by_key(conn, "m", 1, {"async": 1}, NOW, 30.0, gate, frontier=frontier)
            assert [c.id for c in got] == [1]
            ready = other.execute("SELECT count(*) FROM jobsched_jobs WHERE queue = 0").fetchone()
            free = other.execute(
                "SELECT count(*) FROM (SELECT id FROM jobsched_jobs WHERE queue = 0 "
                "FOR UPDATE SKIP LOCKED) AS f"
            ).fetchone()
            other.rollback()
    assert ready == (509,)
    assert free is not None and 509 - free[0] <= 2
