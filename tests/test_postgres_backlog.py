"""The PostgreSQL store with a queue that is behind (issue 34): the claim's
plan at 100,000 ready rows after churn, and the schema it relies on.

A claim takes the best ready rows from the front of ``jobsched_jobs_ready``;
with a backlog, the front is where every claimed row left an index entry
that points at a dead row version. The plan must read the rows it takes
and a small multiple more, not the backlog and not every dead entry.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest
from pg import SECRET, schema_url

import jobsched as js
from jobsched.store import NewJob, Outcome
from jobsched.store._codec import key_id
from jobsched_postgres import PostgresStore
from jobsched_postgres._claim import CLAIM

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]

NOW = 1_700_000_000.0
BATCH = 64


@pytest.fixture
def anyio_backend() -> str:
    # The store's logic does not depend on the backend (its own tests say why).
    return "asyncio"


@pytest.fixture
def url(pg_session_database: str) -> str:
    return schema_url(pg_session_database)


@pytest.fixture
async def store(url: str) -> AsyncIterator[PostgresStore]:
    s = PostgresStore(url, secret=SECRET)
    await s.open()
    yield s
    await s.close()


def _new(job_id: int) -> NewJob:
    return NewJob(job_id, f"j{job_id}", "async", (0.0, float(job_id), 0.0), run_at=NOW,
                  submitted_at=NOW, payload=b"P")  # fmt: skip


def _nodes(plan: dict[str, Any]) -> list[dict[str, Any]]:
    nodes = [plan]
    for child in plan.get("Plans", ()):
        nodes += _nodes(child)
    return nodes


def _explain(url: str, params: dict[str, Any]) -> dict[str, Any]:
    """The claim's plan as it ran (ANALYZE, BUFFERS), rolled back."""
    with psycopg.connect(url) as conn:
        ((plan,),) = conn.execute("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + CLAIM, params)
        conn.rollback()
    return plan[0]["Plan"]  # type: ignore[no-any-return]


async def test_the_claim_reads_a_small_multiple_of_what_it_takes_at_100k_ready(
    store: PostgresStore, url: str
) -> None:
    """100,000 ready rows, the first 5,000 of them claimed and completed by
    the store (their dead entries at the front of the ready index, not
    vacuumed): a claim of 64 reads the ready index in key order, keeps every
    row it reads, and touches a small multiple of 64 pages, not the backlog."""
    total, churned = 100_000, 5_000
    for start in range(1, total + 1, 10_000):
        await store.add([_new(i) for i in range(start, start + 10_000)], NOW)
    while churned > 0:
        claims = await store.claim("m", BATCH, {"async": BATCH}, NOW, 30)
        await store.record(
            "m", [Outcome(c.id, c.attempt, js.JobStatus.COMPLETED, NOW + 1) for c in claims]
        )
        churned -= len(claims)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ANALYZE jobsched_jobs")
    params = {
        "names": ["async"], "rooms": [BATCH], "limit": BATCH, "owner": "m2", "lease": 30.0,
        "now": NOW, "keys": [key_id(SECRET.encode())], "known": [], "starting": BATCH,
    }  # fmt: skip
    # The store's own claims walked past the dead entries before this one
    # and marked them dead for every later scan (no snapshot needs them):
    # the state of a busy queue.
    plan = _explain(url, params)
    nodes = _nodes(plan)
    picked = next(n for n in nodes if n.get("Subplan Name") == "CTE picked")
    (scan,) = [n for n in _nodes(picked) if n.get("Relation Name") == "jobsched_jobs"]
    assert scan["Node Type"] == "Index Scan" and scan["Index Name"] == "jobsched_jobs_ready", scan
    # The rows it took, no more: every row read passes the claim's filter.
    assert scan["Actual Rows"] == BATCH, scan
    assert scan.get("Rows Removed by Filter", 0) == 0, scan
    # Pages: the index's front and the 64 rows' heap pages, each row's page
    # counted once per visit; the backlog's 1,700 heap pages stay unread.
    read = picked["Shared Hit Blocks"] + picked["Shared Read Blocks"]
    assert read <= 4 * BATCH, picked
    assert not any(n["Node Type"] == "Seq Scan" for n in nodes), plan


async def test_the_ready_index_the_claim_reads_is_pinned(store: PostgresStore, url: str) -> None:
    """The claim's order is the ready index's: executor, then the key, then
    id, over the ready rows alone (a partial index, so a backlog of waiting
    or finished rows is never in it)."""
    with psycopg.connect(url) as conn:
        (definition,) = conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'jobsched_jobs_ready' "
            "AND schemaname = current_schema()"
        ).fetchone()  # type: ignore[misc]
    assert definition.endswith("USING btree (executor, k0, k1, k2, id) WHERE (queue = 0)"), (
        definition
    )


def _indexes(url: str) -> set[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'jobsched_jobs' "
            "AND schemaname = current_schema()"
        ).fetchall()
    return {name for (name,) in rows}


#: Every index of the jobs table: each one is written at every change of a
#: row it covers, so one added is a cost on the claim (W19) to measure first.
JOBS_INDEXES = {
    "jobsched_jobs_pkey",
    "jobsched_jobs_ready",
    "jobsched_jobs_tenant_ready",
    "jobsched_jobs_waiting",
    "jobsched_jobs_blocked",
    "jobsched_jobs_finished",
    "jobsched_jobs_status",
    "jobsched_jobs_fires",
    "jobsched_jobs_leases",
}


async def test_the_jobs_tables_indexes_are_pinned(store: PostgresStore, url: str) -> None:
    """An index added to the jobs table is a cost on every claim: measure it (W19) first."""
    assert _indexes(url) == JOBS_INDEXES
