"""Jobs claimed ahead of the workers (``claim(starting=...)``) are not attempts.

A member claims more jobs than it has idle workers, so that its workers do
not wait a round trip between jobs. The ones beyond ``starting`` are held
claimed but not started; the member reports each start (``start()``). A
member that dies holding such a job must not cost it an attempt: the
takeover hands it back with its ``attempts`` unchanged. A job handed back so
starts at its next claim, so a job that kills its member as it starts (before
the start is written) still runs out of attempts.

``starting`` is optional: a store whose ``claim`` does not take it starts
every job it claims, and these tests are skipped for it.
"""

from __future__ import annotations

import inspect

import pytest

import jobsched as js
from jobsched.store import JobStore, NewJob, Outcome

from . import Lapse

pytestmark = pytest.mark.anyio

S = js.JobStatus
NOW = 1_700_000_000.0
ROOM = {"async": 99}


def new(job_id: int) -> NewJob:
    return NewJob(job_id, f"j{job_id}", "async", (float(job_id),), NOW, NOW, b"P" + bytes([job_id]))


@pytest.fixture(autouse=True)
def _claims_ahead(store: JobStore) -> None:
    if "starting" not in inspect.signature(store.claim).parameters:
        pytest.skip(f"{type(store).__name__}.claim() does not take `starting`")


async def started_at(store: JobStore, job_id: int) -> float | None:
    job = await store.fetch(job_id)
    assert job is not None
    return job.started_at


async def test_only_the_first_starting_jobs_start(store: JobStore) -> None:
    await store.add([new(1), new(2), new(3)], NOW)
    claims = await store.claim("m1", 3, ROOM, NOW, 30, starting=1)
    assert [(c.id, c.attempt, c.started) for c in claims] == [
        (1, 1, True),
        (2, 1, False),
        (3, 1, False),
    ]
    assert await started_at(store, 1) == NOW
    held = await store.fetch(2)
    assert held is not None
    assert (held.status, held.owner, held.started_at) == (S.RUNNING, "m1", None)
    # Not an attempt yet: the attempts list shows the started one only.
    assert [a.job_id for a in await store.attempts()] == [1]
    # None (the default): every job claimed starts.
    await store.add([new(4)], NOW)
    (four,) = await store.claim("m1", 1, ROOM, NOW + 1, 30)
    assert four.started and await started_at(store, 4) == NOW + 1


async def test_a_start_is_written_fenced_on_owner_and_attempt(store: JobStore) -> None:
    await store.add([new(1), new(2)], NOW)
    await store.claim("m1", 2, ROOM, NOW, 30, starting=0)
    await store.start("m2", [(1, 1, NOW + 1)])  # not its job
    await store.start("m1", [(2, 2, NOW + 1)])  # not this attempt
    assert (await started_at(store, 1), await started_at(store, 2)) == (None, None)
    await store.start("m1", [(1, 1, NOW + 2), (2, 1, NOW + 3)])
    assert (await started_at(store, 1), await started_at(store, 2)) == (NOW + 2, NOW + 3)
    # Its outcome is recorded as any other's.
    done = Outcome(2, 1, S.COMPLETED, NOW + 4)
    assert (await store.record("m1", [done])).refused == []


async def test_an_outcome_carries_the_start_of_a_job_claimed_ahead(store: JobStore) -> None:
    """A job that started and ended within one group commit: its start comes
    with its outcome (plain, or not), one write instead of two."""
    await store.add([new(1), new(2), new(3)], NOW)
    await store.claim("m1", 3, ROOM, NOW, 30, starting=0)
    await store.start("m1", [(3, 1, NOW + 1)])
    outcomes = [
        Outcome(1, 1, S.COMPLETED, NOW + 3, started_at=NOW + 2),
        Outcome(2, 1, S.FAILED, NOW + 3, error="E: no", started_at=NOW + 2.5),
        Outcome(3, 1, S.COMPLETED, NOW + 3),  # its start was written before
    ]
    assert (await store.record("m1", outcomes)).refused == []
    starts = [await started_at(store, i) for i in (1, 2, 3)]
    assert starts == [NOW + 2, NOW + 2.5, NOW + 1]
    failed = [a for a in await store.attempts(job_id=2)]
    assert [(a.started_at, a.status) for a in failed] == [(NOW + 2.5, S.FAILED)]


async def test_a_dead_members_unstarted_jobs_are_handed_back_uncounted(
    store: JobStore, lapse: Lapse
) -> None:
    """The started job is lost (its attempt counted); the unstarted ones go
    back PENDING (RETRY_WAIT after an earlier attempt) with attempts as they
    were, and any member may claim them again."""
    await store.add([new(1), new(2), new(3), new(4)], NOW)
    await store.claim("dead", 4, ROOM, NOW, 10, starting=1)
    await store.start("dead", [(2, 1, NOW + 1)])  # a held job a worker took
    lapse(store, 11)
    # No room: the claim only takes over (and hands back).
    lost = await store.claim("alive", 10, {"async": 0}, NOW + 11, 10)
    assert sorted((c.id, c.attempt, c.lost) for c in lost) == [(1, 1, True), (2, 1, True)]
    for job_id in (3, 4):
        job = await store.fetch(job_id)
        assert job is not None
        assert (job.status, job.attempts, job.owner) == (S.PENDING, 0, None), job_id
    # An earlier attempt's job goes back to RETRY_WAIT with its count.
    retry = Outcome(1, 1, S.RETRY_WAIT, NOW + 11, run_at=NOW + 11, error="worker lost")
    assert (await store.record("alive", [retry])).refused == []
    again = await store.claim("alive", 3, ROOM, NOW + 12, 10, starting=3)
    assert sorted((c.id, c.attempt) for c in again) == [(1, 2), (3, 1), (4, 1)]
    # The one of them with an earlier attempt, claimed ahead and handed back again:
    await store.release("alive", [1, 3, 4])
    (first,) = await store.claim("dead2", 1, ROOM, NOW + 13, 10, starting=0)
    assert (first.id, first.attempt, first.started) == (1, 2, False)
    lapse(store, 11)
    assert await store.claim("alive", 1, {"async": 0}, NOW + 24, 10) == []
    job = await store.fetch(1)
    assert job is not None and (job.status, job.attempts) == (S.RETRY_WAIT, 1)


async def test_a_job_handed_back_by_a_takeover_starts_at_its_next_claim(
    store: JobStore, lapse: Lapse
) -> None:
    """The poison bound: a job that killed its member before its start was
    written is handed back once uncounted; its next claim starts it (its
    attempt counted) even as a claim ahead, so a second death counts."""
    await store.add([new(1)], NOW)
    (held,) = await store.claim("dead", 1, ROOM, NOW, 10, starting=0)
    assert not held.started
    lapse(store, 11)
    (again,) = await store.claim("next", 1, ROOM, NOW + 11, 10, starting=0)
    assert (again.id, again.attempt, again.lost, again.started) == (1, 1, False, True)
    assert await started_at(store, 1) == NOW + 11
    lapse(store, 11)
    (lost,) = await store.claim("third", 1, ROOM, NOW + 22, 10, starting=0)
    assert (lost.id, lost.attempt, lost.lost) == (1, 1, True)


async def test_an_unstarted_job_asked_to_cancel_ends_cancelled_uncounted(
    store: JobStore, lapse: Lapse
) -> None:
    await store.add([new(1)], NOW)
    blocked = NewJob(2, "j2", "async", (0.0,), NOW, NOW, b"P2", depends_on=(1,))
    await store.add([blocked], NOW)
    await store.claim("dead", 1, ROOM, NOW, 10, starting=0)
    await store.cancel([1], NOW + 1)
    lapse(store, 11)
    assert await store.claim("alive", 5, ROOM, NOW + 11, 10) == []
    job, dependent = await store.fetch(1), await store.fetch(2)
    assert job is not None and (job.status, job.attempts) == (S.CANCELLED, 0)
    assert dependent is not None and dependent.status is S.CANCELLED
