"""``JobStore.defer``: a claimed job this member cannot load goes back, uncounted, for later.

A member whose code lacks a job's module (a deploy under way) hands the
job back for ``load_grace``: it must not use up an attempt, must not come
straight back to the same member, and must say why it waits.
"""

from __future__ import annotations

import pytest

import jobsched as js
from jobsched.store import JobStore, NewJob, Outcome

pytestmark = pytest.mark.anyio

S = js.JobStatus
NOW = 1_700_000_000.0
WHY = "cannot load the job: No module named 'shopjobs'"


def new(job_id: int) -> NewJob:
    return NewJob(job_id, f"j{job_id}", "async", (0.0,), NOW, NOW, b"P" + bytes([job_id]))


async def test_a_deferred_job_waits_uncounted_until_its_time_with_its_error(
    store: JobStore,
) -> None:
    """Deferred to NOW + 5: not claimable before, its attempts as before the
    claim, its last_error the load error; claimable at NOW + 5 by anyone,
    as attempt 1; the store's next due time knows it."""
    await store.add([new(1), new(2)], NOW)
    claims = await store.claim("m1", 5, {"async": 99}, NOW, 30)
    assert sorted(c.id for c in claims) == [1, 2]
    await store.defer("m1", [(1, NOW + 5, WHY)])
    one = await store.fetch(1)
    assert one is not None
    assert (one.status, one.attempts, one.owner, one.last_error) == (S.PENDING, 0, None, WHY)
    assert one.run_at == NOW + 5
    assert await store.claim("m1", 5, {"async": 99}, NOW + 1, 30) == []
    assert await store.next_due() == NOW + 5
    (again,) = await store.claim("m2", 5, {"async": 99}, NOW + 5, 30)
    assert (again.id, again.attempt) == (1, 1)
    two = await store.fetch(2)
    assert two is not None and (two.status, two.owner) == (S.RUNNING, "m1")


async def test_a_deferred_retry_keeps_its_earlier_attempts(store: JobStore) -> None:
    """A job on its second attempt that this member cannot load waits
    RETRY_WAIT with one attempt counted, not two."""
    await store.add([new(1)], NOW)
    await store.claim("m1", 1, {"async": 99}, NOW, 30)
    again = Outcome(1, 1, S.RETRY_WAIT, NOW + 1, run_at=NOW + 1, error="E: once")
    await store.record("m1", [again])
    (claim,) = await store.claim("m2", 1, {"async": 99}, NOW + 2, 30)
    assert claim.attempt == 2
    await store.defer("m2", [(1, NOW + 10, WHY)])
    one = await store.fetch(1)
    assert one is not None and (one.status, one.attempts, one.last_error) == (
        S.RETRY_WAIT,
        1,
        WHY,
    )
    (claim,) = await store.claim("m1", 1, {"async": 99}, NOW + 10, 30)
    assert claim.attempt == 2


async def test_defer_leaves_a_job_another_member_holds_alone(store: JobStore) -> None:
    """Fenced on the owner: a member that no longer holds the job (taken
    over after its lease) changes nothing."""
    await store.add([new(1), new(2)], NOW)
    await store.claim("m1", 1, {"async": 99}, NOW, 30)
    await store.defer("m2", [(1, NOW + 5, WHY), (2, NOW + 5, WHY)])
    one, two = await store.fetch(1), await store.fetch(2)
    assert one is not None and (one.status, one.owner, one.last_error) == (S.RUNNING, "m1", None)
    assert two is not None and (two.status, two.run_at, two.last_error) == (S.PENDING, NOW, None)


async def test_a_deferred_job_someone_cancelled_ends_cancelled(store: JobStore) -> None:
    """As for a release: the cancel asked while it was claimed wins."""
    await store.add([new(1)], NOW)
    await store.claim("m1", 1, {"async": 99}, NOW, 30)
    assert await store.cancel([1], NOW) == []
    await store.defer("m1", [(1, NOW + 5, WHY)])
    one = await store.fetch(1)
    assert one is not None and (one.status, one.attempts) == (S.CANCELLED, 0)
