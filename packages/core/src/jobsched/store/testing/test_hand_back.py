"""A stop's hand-back (``JobStore.hand_back``, issue 38): an attempt cut
short past the stop's grace goes back uncounted, as ``release`` hands back a
claim, and stays in the job's history with its member, start and end.

A hand-back does not use up a retry, so the next claim runs an attempt of
the same number; the history keeps both, each its own row.
"""

from __future__ import annotations

import pytest

import jobsched as js
from jobsched.store import HANDED_BACK_AT_STOP, Attempt, JobStore, NewJob, Outcome

pytestmark = pytest.mark.anyio

S = js.JobStatus
NOW = 1_700_000_000.0
ROOM = {"async": 99}


def new(job_id: int) -> NewJob:
    return NewJob(job_id, f"j{job_id}", "async", (0.0,), NOW, NOW, b"P" + bytes([job_id]))


def history(attempts: list[Attempt]) -> list[tuple[object, ...]]:
    return [
        (a.attempt, a.owner, a.started_at, a.finished_at, a.status, a.error, a.handed_back)
        for a in attempts
    ]


async def test_a_cut_attempt_is_in_the_history_and_not_counted(store: JobStore) -> None:
    """Handed back at NOW + 5: the job waits again with attempts 0, and its
    history has the cut attempt 1 (member, start, end); a second member runs
    attempt 1 again, and the history lists both, then attempt 2."""
    await store.add([new(1)], NOW)
    (claim,) = await store.claim("stopping", 1, ROOM, NOW, 30)
    assert claim.attempt == 1
    await store.hand_back("stopping", [(1, 1, NOW + 5)])
    job = await store.fetch(1)
    assert job is not None and (job.status, job.attempts, job.owner) == (S.PENDING, 0, None)
    cut = (1, "stopping", NOW, NOW + 5, S.RETRY_WAIT, HANDED_BACK_AT_STOP, True)
    assert history(await store.attempts(job_id=1)) == [cut]
    # The next member runs the same attempt number: a retry is not used up.
    (again,) = await store.claim("next", 1, ROOM, NOW + 6, 30)
    assert again.attempt == 1
    running = await store.attempts(job_id=1)
    assert [(a.attempt, a.owner, a.status, a.handed_back) for a in running] == [
        (1, "stopping", S.RETRY_WAIT, True),
        (1, "next", S.RUNNING, False),
    ]
    failed = Outcome(1, 1, S.RETRY_WAIT, NOW + 7, run_at=NOW + 8, error="E: once")
    assert (await store.record("next", [failed])).refused == []
    (last,) = await store.claim("next", 1, ROOM, NOW + 8, 30)
    assert last.attempt == 2
    assert (await store.record("next", [Outcome(1, 2, S.COMPLETED, NOW + 9)])).refused == []
    assert history(await store.attempts(job_id=1)) == [
        cut,
        (1, "next", NOW + 6, NOW + 7, S.RETRY_WAIT, "E: once", False),
        (2, "next", NOW + 8, NOW + 9, S.COMPLETED, None, False),
    ]
    # The timeline reads them too.
    assert [(a.attempt, a.handed_back) for a in await store.attempts(since=NOW)] == [
        (1, True),
        (1, False),
        (2, False),
    ]


async def test_the_same_attempt_handed_back_twice_keeps_both(store: JobStore) -> None:
    """Two deploys in a row cut attempt 1 twice: two rows, both attempt 1."""
    await store.add([new(1)], NOW)
    await store.claim("first", 1, ROOM, NOW, 30)
    await store.hand_back("first", [(1, 1, NOW + 1)])
    (again,) = await store.claim("second", 1, ROOM, NOW + 2, 30)
    assert again.attempt == 1
    await store.hand_back("second", [(1, 1, NOW + 3)])
    assert [(a.attempt, a.owner, a.finished_at, a.handed_back) for a in
            await store.attempts(job_id=1)] == [
        (1, "first", NOW + 1, True),
        (1, "second", NOW + 3, True),
    ]  # fmt: skip
    job = await store.fetch(1)
    assert job is not None and (job.status, job.attempts) == (S.PENDING, 0)


async def test_a_retried_job_handed_back_waits_to_retry(store: JobStore) -> None:
    """Attempt 2 cut short: the job is retry-waiting with attempts 1 again."""
    await store.add([new(1)], NOW)
    await store.claim("m", 1, ROOM, NOW, 30)
    await store.record("m", [Outcome(1, 1, S.RETRY_WAIT, NOW + 1, run_at=NOW + 1, error="E")])
    (second,) = await store.claim("m", 1, ROOM, NOW + 1, 30)
    assert second.attempt == 2
    await store.hand_back("m", [(1, 2, NOW + 4)])
    job = await store.fetch(1)
    assert job is not None and (job.status, job.attempts) == (S.RETRY_WAIT, 1)
    assert [(a.attempt, a.error, a.handed_back) for a in await store.attempts(job_id=1)] == [
        (1, "E", False),
        (2, HANDED_BACK_AT_STOP, True),
    ]


async def test_a_hand_back_is_fenced(store: JobStore) -> None:
    """Another member's row, or another attempt's, is left alone: no history row."""
    await store.add([new(1), new(2)], NOW)
    await store.claim("owner", 2, ROOM, NOW, 30)
    await store.hand_back("stranger", [(1, 1, NOW + 1)])
    await store.hand_back("owner", [(2, 7, NOW + 1)])
    one = await store.fetch(1)
    assert one is not None and (one.status, one.owner) == (S.RUNNING, "owner")
    assert [a.handed_back for a in await store.attempts(job_id=1)] == [False]
    assert not any(a.handed_back for a in await store.attempts(job_id=2))


async def test_a_cancelled_job_handed_back_ends_cancelled_with_its_attempt(
    store: JobStore,
) -> None:
    """Someone asked to cancel it while it ran: it ends CANCELLED, and the
    cut attempt stays in its history."""
    await store.add([new(1)], NOW)
    await store.claim("m", 1, ROOM, NOW, 30)
    await store.cancel([1], NOW + 1)
    await store.hand_back("m", [(1, 1, NOW + 2)])
    job = await store.fetch(1)
    assert job is not None and job.status is S.CANCELLED
    assert [(a.attempt, a.owner, a.handed_back) for a in await store.attempts(job_id=1)] == [
        (1, "m", True)
    ]
