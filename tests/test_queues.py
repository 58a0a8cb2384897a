"""The queues' structure: cancelled entries are freed, priority levels stay O(log L)."""

from __future__ import annotations

import gc
import random
import tracemalloc
from collections.abc import Callable
from heapq import heapify, heappop, heappush

import anyio
import pytest
from sample_jobs import FailTimes, Ok

import jobsched as js
from jobsched._ordering._queue import _KEPT_LEVELS, JobQueue, queue_for

S = js.JobStatus
Make = Callable[..., js.JobScheduler]


def _job(seq: int, priority: int = 1, run_at: float = 0.0) -> js.Job:
    job = Ok(priority=priority)
    job.seq = seq
    job.run_at = run_at
    return job


# ── Cancelled delayed jobs ────────────────────────────────────────────────


def test_cancelling_delayed_jobs_frees_their_entries_and_memory() -> None:
    """20k cancelled delay=3600 jobs leave the delayed heap (and memory) at once, not in an hour."""
    n = 20_000
    s = js.JobScheduler(history_limit=0)
    s.submit(Ok(), delay=3600)  # loads the executor plugin outside the count
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(n):
            s.submit(Ok(), delay=3600)
        queued = tracemalloc.get_traced_memory()[0] - before
        for job in s.jobs():
            assert s.cancel(job.job_id)
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(s._queue) == 0
    assert s._queue.next_due() is None
    # Every cancelled job is forgotten (history_limit=0), so only the heap could
    # keep them; what stays is the job index's table (a dict does not shrink).
    assert kept < queued / 10, (queued, kept)


def test_delayed_heap_dead_entries_stay_under_half() -> None:
    """However cancels interleave with pushes, dead entries are at most half the delayed heap."""
    rng = random.Random(7)
    queue = JobQueue(js.FIFOStrategy().key)
    live: list[js.Job] = []
    for seq in range(1, 5_000):
        if live and rng.random() < 0.45:
            job = live.pop(rng.randrange(len(live)))
            job.status = S.CANCELLED
            queue.discard(job)
        else:
            job = _job(seq, run_at=rng.uniform(10, 20))
            queue.push_delayed(job)
            live.append(job)
        assert len(queue._delayed) <= 2 * len(live) + 1
    for job in live:
        job.status = S.CANCELLED
        queue.discard(job)
    assert len(queue) == 0


@pytest.mark.parametrize(
    "strategy",
    [js.PriorityStrategy(), js.FIFOStrategy(), js.AgingPriorityStrategy()],
    ids=["priority-levels", "fifo-level", "plain-heap"],
)
def test_cancelled_ready_jobs_are_purged(strategy: js.SchedulingStrategy) -> None:
    """Cancelled queued jobs behind busy workers do not pile up on the ready side either."""
    rng = random.Random(5)
    queue = queue_for(strategy)
    live: list[js.Job] = []
    for seq in range(1, 20_000):
        if live and rng.random() < 0.45:
            job = live.pop(rng.randrange(len(live)))
            job.status = S.CANCELLED
            queue.discard(job)
        else:
            job = _job(seq, priority=rng.choice([*js.JobPriority, 10**9, -7]))
            queue.push_ready(job)
            live.append(job)
        # A level queue counts its entries every L + 1 discards (L levels), so
        # its dead may pass its live by up to 2 (L + 1) in between.
        slack = 2 * (len(getattr(queue, "_active", ())) + 1)
        assert len(queue) - len(live) <= len(live) + slack
    for job in live:
        job.status = S.CANCELLED
        queue.discard(job)
    assert len(queue) <= 8
    assert queue.pop_next() is None


def test_cancelling_queued_jobs_before_start_frees_them() -> None:
    """20k queued jobs cancelled before any worker ran are gone from the queue."""
    s = js.JobScheduler()
    ids = [s.submit(Ok(priority=i % 4)) for i in range(20_000)]
    for job_id in ids:
        assert s.cancel(job_id)
    assert len(s._queue) <= 8


def test_next_due_skips_cancelled_heads() -> None:
    """The ticker's next wake-up is the earliest live job's time, never a cancelled one's."""
    queue = JobQueue(js.FIFOStrategy().key)
    jobs = [_job(seq, run_at=float(seq)) for seq in range(1, 11)]
    for job in jobs:
        queue.push_delayed(job)
    for job in jobs[:3]:
        job.status = S.CANCELLED  # no discard: the head check alone must see it
    assert queue.next_due() == 4.0
    for job in jobs[3:]:
        job.status = S.CANCELLED
    assert queue.next_due() is None


@pytest.mark.anyio
@pytest.mark.memory_only("inspects the memory store's delayed heap")
async def test_cancelled_retry_wait_job_leaves_the_delayed_heap(make_scheduler: Make) -> None:
    """A job cancelled while waiting an hour for its retry is gone from the queue at once."""
    waiting = anyio.Event()

    def on_change(job: js.Job, old: js.JobStatus, new: js.JobStatus) -> None:
        if new is S.RETRY_WAIT:
            waiting.set()

    retry = js.RetryPolicy(max_retries=3, base_delay=3600, jitter=False)
    async with make_scheduler() as s:
        s.add_listener(on_change)
        job_id = s.submit(FailTimes(1, retry=retry))
        with anyio.fail_after(10):
            await waiting.wait()
        assert s._queue.next_due() is not None
        assert s.cancel(job_id)
        assert (len(s._queue), s._queue.next_due()) == (0, None)
    assert s.get(job_id).status is S.CANCELLED


# ── Priority levels ───────────────────────────────────────────────────────


@pytest.mark.parametrize("strategy", [js.PriorityStrategy(), js.FIFOStrategy()])
def test_level_queue_pops_in_key_order_under_random_use(strategy: js.SchedulingStrategy) -> None:
    """Interleaved pushes (some out of seq order), pops and cancels pop exactly in key order."""
    rng = random.Random(11)
    priorities = [-(10**30), -5, -1, 0, 1, 2, 3, 7, 10**30, *range(100, 400)]
    queue = queue_for(strategy)
    reference: list[tuple[tuple[int, ...], int, js.Job]] = []
    held: list[js.Job] = []  # popped but not yet pushed back (a retry in waiting)
    seq = 0
    for _ in range(20_000):
        roll = rng.random()
        if roll < 0.45:
            seq += 1
            job = _job(seq, rng.choice(priorities))
        elif roll < 0.5 and held:
            job = held.pop(rng.randrange(len(held)))  # back out of seq order
        elif roll < 0.55 and reference:
            entry = reference.pop(rng.randrange(len(reference)))
            heapify(reference)
            entry[2].status = S.CANCELLED
            queue.discard(entry[2])
            continue
        else:
            expected = heappop(reference)[2] if reference else None
            got = queue.pop_next()
            assert got is expected
            if got is not None and rng.random() < 0.2:
                held.append(got)
            continue
        heappush(reference, (tuple(strategy.key(job)), seq, job))
        queue.push_ready(job)
    while reference:
        assert queue.pop_next() is heappop(reference)[2]
    assert queue.pop_next() is None


def test_priority_levels_are_freed_when_emptied() -> None:
    """Draining 20k distinct priorities leaves no level per priority behind."""
    queue = queue_for(js.PriorityStrategy())
    priorities = list(range(-10_000, 10_000))
    random.Random(3).shuffle(priorities)
    for seq, priority in enumerate(priorities, start=1):
        queue.push_ready(_job(seq, priority))
    popped = [queue.pop_next() for _ in priorities]
    assert [job.priority for job in popped] == sorted(priorities, reverse=True)  # type: ignore[union-attr]
    assert queue.pop_next() is None
    assert len(queue._by_rank) <= _KEPT_LEVELS
    assert len(queue._active) <= 1


def test_pop_never_walks_empty_levels() -> None:
    """Only levels that hold jobs are in the level heap, so a pop looks at one level."""
    queue = queue_for(js.PriorityStrategy())
    for seq in range(1, 1_001):
        queue.push_ready(_job(seq, priority=seq))
    for _ in range(999):
        queue.pop_next()
    # The level emptied last may wait on top for the next pop; nothing else.
    empty = [level for _, level in queue._active if not level.fifo and not level.late]
    assert len(empty) <= 1
    assert len(queue._active) <= 2
    assert queue.pop_next().priority == 1  # type: ignore[union-attr]


def test_few_levels_are_kept_for_reuse() -> None:
    """A queue of the four standard priorities that runs dry keeps its levels for the refill."""
    queue = queue_for(js.PriorityStrategy())
    for seq, priority in enumerate(js.JobPriority, start=1):
        queue.push_ready(_job(seq, priority))
    levels = dict(queue._by_rank)
    while queue.pop_next() is not None:
        pass
    assert len(queue) == 0
    queue.push_ready(_job(10, js.JobPriority.HIGH))
    assert queue._by_rank == levels
    assert queue.pop_next().seq == 10  # type: ignore[union-attr]
