"""``JobStore.prune`` by age per status and by count (``js.Retention``,
issue 38): failures can outlive successes, the oldest go first, and no
unfinished job is ever deleted.

The store reads no clock here: every time is the ``now`` the test passes
(outcomes' ``finished_at``, the prune's cutoffs), so a week passes at once.
"""

from __future__ import annotations

import pytest

import jobsched as js
from jobsched.store import JobStore, NewJob, Outcome

pytestmark = pytest.mark.anyio

S = js.JobStatus
NOW = 1_700_000_000.0
HOUR = 3600.0
DAY = 24 * HOUR
ROOM = {"async": 999}


def new(job_id: int) -> NewJob:
    return NewJob(job_id, f"j{job_id}", "async", (0.0,), NOW, NOW, b"P" + bytes([job_id % 256]))


def cutoffs(now: float, completed: float, failed: float) -> dict[js.JobStatus, float]:
    """Cutoffs as a scheduler passes them under Retention(completed=, failed=)."""
    return {S.COMPLETED: now - completed, S.FAILED: now - failed, S.TIMED_OUT: now - failed}


async def end(store: JobStore, ends: dict[int, tuple[js.JobStatus, float]]) -> None:
    """Add, claim and end jobs: id -> (terminal status, finished_at)."""
    await store.add([new(i) for i in sorted(ends)], NOW)
    claims = await store.claim("m", len(ends), ROOM, NOW, 10 * DAY)
    assert sorted(c.id for c in claims) == sorted(ends)
    outcomes = [
        Outcome(c.id, c.attempt, ends[c.id][0], ends[c.id][1], error=None)
        if ends[c.id][0] is S.COMPLETED
        else Outcome(c.id, c.attempt, ends[c.id][0], ends[c.id][1], error="E: boom")
        for c in claims
    ]
    assert (await store.record("m", outcomes)).refused == []


async def kept(store: JobStore, ids: range) -> list[int]:
    return [i for i in ids if await store.fetch(i) is not None]


async def test_a_days_completions_do_not_push_out_a_failure_kept_a_week(store: JobStore) -> None:
    """A failure at NOW, then a completion every half hour for two days:
    kept a day, the completions older than a day go; the failure, kept a
    week, stays through them all and goes only once a week has passed."""
    ends = {1: (S.FAILED, NOW)}
    ends.update({i: (S.COMPLETED, NOW + (i - 1) * HOUR / 2) for i in range(2, 98)})
    await end(store, ends)
    now = NOW + 2 * DAY
    gone = await store.prune(None, cutoffs(now, completed=DAY, failed=7 * DAY))
    # finished_at < now - DAY: NOW + (i - 1) / 2 h < NOW + 24 h, i.e. i < 49.
    assert gone == 47
    assert await kept(store, range(1, 98)) == [1, *range(49, 98)]
    assert await store.prune(None, cutoffs(NOW + 7 * DAY + 1, DAY, 7 * DAY)) == 50
    assert await kept(store, range(1, 98)) == []


async def test_a_timed_out_job_is_kept_as_long_as_a_failure(store: JobStore) -> None:
    """``failed`` covers TIMED_OUT; a status without a cutoff is kept."""
    await end(store, {1: (S.TIMED_OUT, NOW), 2: (S.COMPLETED, NOW), 3: (S.FAILED, NOW + DAY)})
    assert await store.prune(None, cutoffs(NOW + 2 * DAY, DAY, 1.5 * DAY)) == 2
    assert await kept(store, range(1, 4)) == [3]
    await end(store, {4: (S.CANCELLED, NOW)})
    assert await store.prune(None, {S.COMPLETED: NOW + 9 * DAY}) == 0
    assert await kept(store, range(1, 5)) == [3, 4]


async def test_the_count_bound_keeps_the_newest_whatever_their_outcome(store: JobStore) -> None:
    """Beyond ``keep``, the oldest finished jobs go first, of any status;
    the age rule applies before the count."""
    await end(
        store,
        {
            1: (S.FAILED, NOW + 1),
            2: (S.COMPLETED, NOW + 2),
            3: (S.COMPLETED, NOW + 3),
            4: (S.FAILED, NOW + 4),
            5: (S.COMPLETED, NOW + 5),
        },
    )
    assert await store.prune(3) == 2
    assert await kept(store, range(1, 6)) == [3, 4, 5]
    # Completions older than NOW + 4 go by age (3); then 2 remain, within keep=2.
    assert await store.prune(2, {S.COMPLETED: NOW + 4}) == 1
    assert await kept(store, range(1, 6)) == [4, 5]
    assert await store.prune(0) == 2
    assert await kept(store, range(1, 6)) == []


async def test_a_prune_never_deletes_an_unfinished_job(store: JobStore) -> None:
    """Cutoffs in the future for every terminal status and ``keep=0``:
    every finished job goes, and the pending, running, retry-waiting and
    retried (failed, then sent back to the queue) ones all stay."""
    await end(store, {1: (S.COMPLETED, NOW), 2: (S.FAILED, NOW)})
    await store.add([new(3), new(4), new(5)], NOW)
    (running, waiting) = await store.claim("m", 2, ROOM, NOW, 10 * DAY)
    again = Outcome(waiting.id, waiting.attempt, S.RETRY_WAIT, NOW + 1, run_at=NOW + DAY, error="E")
    assert (await store.record("m", [again])).refused == []
    assert await store.retry([2], NOW + 2) == [2]  # failed, now pending again
    everything = {s: NOW + 99 * DAY for s in (S.COMPLETED, S.FAILED, S.TIMED_OUT, S.CANCELLED)}
    assert await store.prune(0, everything) == 1
    assert await kept(store, range(1, 6)) == [2, 3, 4, 5]
    for job_id, status in ((2, S.PENDING), (running.id, S.RUNNING), (waiting.id, S.RETRY_WAIT)):
        job = await store.fetch(job_id)
        assert job is not None and job.status is status, (job_id, job)


async def test_a_pruned_job_takes_its_attempts(store: JobStore) -> None:
    """A failure's attempt row goes with it by age."""
    await end(store, {1: (S.FAILED, NOW + 1), 2: (S.FAILED, NOW + 5)})
    assert {a.job_id for a in await store.attempts()} == {1, 2}
    assert await store.prune(None, {S.FAILED: NOW + 2}) == 1
    assert {a.job_id for a in await store.attempts()} == {2}


async def test_prune_refuses_a_cutoff_for_an_unfinished_status(store: JobStore) -> None:
    """A prune deletes finished jobs only: a cutoff for PENDING is a bug in
    the caller, refused before anything is deleted, and so is keep < 0."""
    await store.add([new(1)], NOW)
    with pytest.raises(ValueError, match="pending, which is not terminal"):
        await store.prune(None, {S.PENDING: NOW + DAY})
    with pytest.raises(ValueError, match="keep must be >= 0"):
        await store.prune(-1)
    assert await kept(store, range(1, 2)) == [1]
