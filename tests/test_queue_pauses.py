"""Queues for the operator: ``s.queues()``, ``pause_queue`` and ``resume_queue``
on every store (the store's side: jobsched.store.testing.test_queue_pauses)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest
from sample_jobs import Ok

import jobsched as js
from jobsched._jobs import _plugins

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


class Capped(js.Executor):
    """An async executor with a capacity: loaded on first use, it puts
    admission in front of the memory take-next (as the thread pool does)."""

    name = "capped"
    capacity = 2

    def __init__(self) -> None:
        self.ran: list[str] = []

    async def run(self, job: js.Job) -> Any:
        self.ran.append(job.queue)
        await anyio.sleep(0.01)
        return job.name


@pytest.mark.memory_only("the take-next's filter and admission are the memory store's")
@pytest.mark.parametrize("queue_limits", [None, {"video": 1}])
async def test_a_pause_holds_behind_admission_put_in_front_while_paused(
    make_scheduler: Make, monkeypatch: pytest.MonkeyPatch, queue_limits: Any
) -> None:
    """Admission from the start (queue_limits) or put in front of the
    take-next while the queue is paused (an executor with a capacity loaded
    then): the pause's filter stays in front, and the resume runs each job once."""
    executor = Capped()
    monkeypatch.setattr(_plugins, "create", lambda name: executor)
    async with make_scheduler(num_workers=2, queue_limits=queue_limits) as s:
        await s.pause_queue("video")
        video = [s.submit(js.FunctionJob(int, executor="capped", queue="video"))
                 for _ in range(3)]  # fmt: skip
        other = s.submit(js.FunctionJob(int, executor="capped"))
        await s.wait(other, timeout=10)
        await anyio.sleep(0.3)  # a take-next that lost the filter would have run one
        assert {s.get(j).status for j in video} == {S.PENDING}
        assert executor.ran == ["default"]
        s.cancel(video[0])  # set aside while paused: the resume skips it
        await s.resume_queue("video")
        for j in video[1:]:
            assert (await s.wait(j, timeout=10)).status is S.COMPLETED
        assert s.get(video[0]).status is S.CANCELLED
        assert executor.ran == ["default", "video", "video"]


async def test_a_store_that_cannot_pause_says_so(
    make_scheduler: Make, durable: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store with the seam's defaults: nothing paused to list, and a pause
    raises NotImplementedError naming the store's class."""
    if not durable:
        return  # the memory store pauses in the scheduler
    from jobsched.store import JobStore

    async with make_scheduler(num_workers=1) as s:
        store = s._link.store  # type: ignore[union-attr]
        monkeypatch.setattr(type(store), "pause_queue", JobStore.pause_queue)
        monkeypatch.setattr(type(store), "paused_queues", JobStore.paused_queues)
        with pytest.raises(NotImplementedError, match="cannot pause queues"):
            await s.pause_queue("video")
        assert not any(q.paused for q in await s.queues())
