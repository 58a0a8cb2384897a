"""Dependency edges kept (issue 37, S2/S3) in the SQLite and PostgreSQL
stores: an edge is settled when its upstream ends, not deleted; ``fetch``
gives every edge with its policy and state (``StoredJob.deps``) while
``depends_on`` stays the upstreams still waited for; a retry recounts the
waiting edges only; a job added after its upstream ended keeps that edge,
settled. The behaviour every store shares is the conformance suite's
(jobsched.store.testing: test_edge_policies.py).

Runs on asyncio only: the stores work in threads (see test_durable.py).
"""

from __future__ import annotations

import sqlite3

import both_stores
import pytest

import jobsched as js
from jobsched.store import (
    EDGE_FAILED,
    EDGE_MET,
    EDGE_WAITING,
    ON_FAILURE_CANCEL,
    ON_FAILURE_RUN,
    JobStore,
    NewJob,
    Outcome,
)

pytestmark = pytest.mark.anyio

S = js.JobStatus
NOW = 1_700_000_000.0
EXECUTORS = {"async": 99}
CANCEL, RUN = ON_FAILURE_CANCEL, ON_FAILURE_RUN


# A store open on a fresh SQLite file or PostgreSQL schema (tests/both_stores.py).
anyio_backend, store = both_stores.anyio_backend, both_stores.store


def new(job_id: int, after: tuple[int, ...] = (), run: tuple[int, ...] = ()) -> NewJob:
    return NewJob(job_id, f"j{job_id}", "async", (float(job_id),), NOW, NOW,
                  b"P" + bytes([job_id]), depends_on=after, run_on_failure=run)  # fmt: skip


async def end(store: JobStore, job_id: int, how: S) -> None:
    """Claim ``job_id`` (the others claimed with it handed back) and end it ``how``."""
    claims = await store.claim("m1", 50, EXECUTORS, NOW, 30)
    (claim,) = [c for c in claims if c.id == job_id]
    if others := [c.id for c in claims if c.id != job_id]:
        await store.release("m1", others)
    error = None if how is S.COMPLETED else "E: x"
    out = Outcome(job_id, claim.attempt, how, NOW + 1, error=error)
    assert (await store.record("m1", [out])).refused == []


async def edges(store: JobStore, job_id: int) -> tuple[tuple[int, ...], list[tuple[int, int, int]]]:
    job = await store.fetch(job_id)
    assert job is not None
    return job.depends_on, list(job.deps)


async def test_a_completion_settles_its_edges_and_keeps_them(store: JobStore) -> None:
    await store.add([new(1), new(2), new(3, after=(1, 2), run=(2,))], NOW)
    assert await edges(store, 3) == ((1, 2), [(1, CANCEL, EDGE_WAITING), (2, RUN, EDGE_WAITING)])
    await end(store, 1, S.COMPLETED)
    assert await edges(store, 3) == ((2,), [(1, CANCEL, EDGE_MET), (2, RUN, EDGE_WAITING)])
    await end(store, 2, S.FAILED)
    assert await edges(store, 3) == ((), [(1, CANCEL, EDGE_MET), (2, RUN, EDGE_FAILED)])
    job = await store.fetch(3)
    assert job is not None and job.status is S.PENDING


async def test_a_cascade_settles_the_edges_it_walks(store: JobStore) -> None:
    await store.add([new(1), new(2, after=(1,)), new(3, after=(2,))], NOW)
    await end(store, 1, S.FAILED)
    assert await edges(store, 2) == ((), [(1, CANCEL, EDGE_FAILED)])
    assert await edges(store, 3) == ((), [(2, CANCEL, EDGE_FAILED)])


async def test_a_job_added_after_its_upstreams_ended_keeps_their_edges(store: JobStore) -> None:
    await store.add([new(1), new(2)], NOW)
    await end(store, 1, S.COMPLETED)
    await end(store, 2, S.FAILED)
    await store.add([new(3, after=(1, 2), run=(2,))], NOW)
    assert await edges(store, 3) == ((), [(1, CANCEL, EDGE_MET), (2, RUN, EDGE_FAILED)])
    # A job the add cancels (a "cancel" edge to a failed upstream) keeps none.
    await store.add([new(4, after=(1, 2))], NOW)
    assert await edges(store, 4) == ((), [])


async def test_the_lists_show_only_the_upstreams_waited_for(store: JobStore) -> None:
    await store.add([new(1), new(2), new(3, after=(1, 2))], NOW)
    await end(store, 1, S.COMPLETED)
    listed = {j.id: j for j in await store.jobs(statuses=[S.PENDING])}
    assert listed[3].depends_on == (2,)


async def test_a_retry_waits_again_only_for_the_waiting_edges(store: JobStore) -> None:
    """3 waits for 1 and 2; 1 completes; 3 is cancelled by the operator;
    its retry waits for 2 only (1's edge is met, and stays)."""
    await store.add([new(1), new(2), new(3, after=(1, 2))], NOW)
    await end(store, 1, S.COMPLETED)
    await store.cancel([3], NOW)
    assert await store.retry([3], NOW) == [3]
    assert await edges(store, 3) == ((2,), [(1, CANCEL, EDGE_MET), (2, CANCEL, EDGE_WAITING)])
    claims = await store.claim("m1", 50, EXECUTORS, NOW + 5, 30)
    assert [c.id for c in claims] == [2]
    await store.record("m1", [Outcome(2, claims[0].attempt, S.COMPLETED, NOW + 6)])
    assert [c.id for c in await store.claim("m1", 50, EXECUTORS, NOW + 7, 30)] == [3]


async def test_a_batch_of_outcomes_without_waiting_edges_releases_nothing(
    store: JobStore,
) -> None:
    """Kept edges do not make every later completion look for dependents:
    on SQLite the probe is of the waiting edges (deps_waiting)."""
    await store.add([new(1), new(2, after=(1,))], NOW)
    await end(store, 1, S.COMPLETED)
    await end(store, 2, S.COMPLETED)
    if store.url.startswith("sqlite:///"):
        conn = sqlite3.connect(store.url.removeprefix("sqlite:///"))
        plan = conn.execute(
            "EXPLAIN QUERY PLAN SELECT 1 FROM deps WHERE settled = 0 LIMIT 1"
        ).fetchall()
        conn.close()
        assert "deps_waiting" in str(plan), plan
    assert await edges(store, 2) == ((), [(1, CANCEL, EDGE_MET)])
