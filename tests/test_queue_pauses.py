"""Queues for the operator: ``s.queues()``, ``pause_queue`` and ``resume_queue``
on every store (the store's side: jobsched.store.testing.test_queue_pauses)."""

from __future__ import annotations

from collections.abc import Callable

import anyio
import pytest
from sample_jobs import Ok

import jobsched as js

pytestmark = pytest.mark.anyio

S = js.JobStatus
Make = Callable[..., js.JobScheduler]


async def info(s: js.JobScheduler, name: str) -> js.QueueInfo | None:
    return next((q for q in await s.queues() if q.name == name), None)


async def test_a_paused_queue_waits_and_runs_at_its_resume(make_scheduler: Make) -> None:
    """Its jobs stay PENDING while the other queues run; the resume runs them."""
    async with make_scheduler(num_workers=2) as s:
        await s.pause_queue("video")
        video = s.submit(Ok(queue="video"))
        plain = s.submit(Ok())
        await s.wait(plain, timeout=10)
        await anyio.sleep(0.3)  # a claim that ignored the pause would have run it by now
        got = await info(s, "video")
        assert got is not None and got.paused and got.counts == {S.PENDING: 1}
        await s.resume_queue("video")
        assert (await s.wait(video, timeout=10)).status is S.COMPLETED
        got = await info(s, "video")  # no job, not paused, no member names it: gone
        assert got is None or (not got.paused and got.counts == {})


async def test_pausing_twice_or_a_queue_no_job_used_is_allowed(make_scheduler: Make) -> None:
    """Like pause_schedule: idempotent; a queue is a name, paused ahead of its jobs."""
    async with make_scheduler(num_workers=1) as s:
        await s.resume_queue("never-used")  # not paused: left alone
        await s.pause_queue("never-used")
        await s.pause_queue("never-used")
        got = await info(s, "never-used")
        assert got is not None and got.paused and got.counts == {}
        await s.resume_queue("never-used")
        got = await info(s, "never-used")
        assert got is None or not got.paused


@pytest.mark.parametrize("name", ["", "has space", "x" * 65, 5, None])
async def test_a_name_that_is_no_queue_name_is_refused(make_scheduler: Make, name: object) -> None:
    async with make_scheduler(num_workers=1) as s:
        with pytest.raises(ValueError, match="queue must be a name"):
            await s.pause_queue(name)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="queue must be a name"):
            await s.resume_queue(name)  # type: ignore[arg-type]


async def test_served_by_names_the_members_that_serve_each_queue(
    make_scheduler: Make, durable: bool
) -> None:
    """A queue of unfinished jobs that no live member serves has an empty served_by."""
    async with make_scheduler(num_workers=1, queues=["emails"]) as s:
        if durable:
            s.submit(Ok(queue="video"))  # a durable store keeps it for another member
        with anyio.fail_after(15):  # the member's first report
            while not (got := await info(s, "emails")) or not got.served_by:  # noqa: ASYNC110 - the store is the only sign
                await anyio.sleep(0.05)
        assert len(got.served_by) == 1
        if durable:
            video = await info(s, "video")
            assert video is not None and video.served_by == () and video.counts == {S.PENDING: 1}
        assert await info(s, "default") is None


async def test_a_stopped_durable_scheduler_refuses_with_the_reason(
    make_scheduler: Make, durable: bool
) -> None:
    """On a durable store before start(); a memory scheduler pauses at once."""
    s = make_scheduler(num_workers=1)
    if not durable:
        await s.pause_queue("video")
        assert [q.name for q in await s.queues() if q.paused] == ["video"]
        return
    with pytest.raises(js.SchedulerError, match="running scheduler"):
        await s.pause_queue("video")
