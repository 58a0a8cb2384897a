"""Per-executor concurrency limits: a cap per executor, with no head-of-line blocking."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from typing import Any

import anyio
import pytest

import jobsched as js

pytestmark = pytest.mark.anyio


def nothing() -> None:
    """A job's function: module-level, so a durable store can pickle it by reference."""


async def nothing_async() -> None:
    """The same on the async executor (a thread would run on the real clock, not trio's mock)."""


class GateExecutor(js.Executor):
    """Runs a job by waiting until the test opens its gate; counts attempts in flight."""

    name = "gated"

    def __init__(self) -> None:
        self.gates: dict[str, anyio.Event] = {}
        self.entered: dict[str, anyio.Event] = {}
        self.in_flight = 0
        self.peak = 0
        self.started: list[str] = []

    def gate(self, name: str) -> anyio.Event:
        return self.gates.setdefault(name, anyio.Event())

    def entered_event(self, name: str) -> anyio.Event:
        return self.entered.setdefault(name, anyio.Event())

    async def run(self, job: js.Job) -> Any:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        self.started.append(job.name)
        self.entered_event(job.name).set()
        try:
            await self.gate(job.name).wait()
        finally:
            self.in_flight -= 1
        return job.name


def gated_job(name: str, **kwargs: Any) -> js.FunctionJob:
    return js.FunctionJob(nothing, executor="gated", name=name, **kwargs)


async def wait_for(event: anyio.Event) -> None:
    with anyio.fail_after(30):
        await event.wait()


class _FreeAsync(js.Executor):
    """An unlimited executor for the ordering test's ordinary jobs."""

    name = "async-free"

    async def run(self, job: js.Job) -> Any:
        return job.run_sync()  # type: ignore[attr-defined]


async def test_at_most_n_attempts_at_once(make_scheduler: Callable[..., js.JobScheduler]) -> None:
    """With a limit of 2 and 6 workers, exactly 2 gated jobs run at a time until all are done."""
    gated = GateExecutor()
    names = [f"g{i}" for i in range(10)]
    async with make_scheduler(
        num_workers=6, executors={"gated": gated}, executor_limits={"gated": 2}
    ) as s:
        for name in names:
            s.submit(gated_job(name))
        for name in names:
            await wait_for(gated.entered_event(name))
            assert gated.in_flight <= 2
            gated.gate(name).set()
        with anyio.fail_after(30):
            await s.join()
        assert all(j.status is js.JobStatus.COMPLETED for j in s.jobs())
        assert s.peak_running <= 6
    assert gated.peak == 2
    assert gated.started == names  # FIFO within one priority


async def test_no_head_of_line_blocking(make_scheduler: Callable[..., js.JobScheduler]) -> None:
    """Held-back jobs of a full executor don't occupy workers; every other job runs meanwhile."""
    gated = GateExecutor()
    done = anyio.Event()
    finished = 0

    def count(job: js.Job, old: js.JobStatus, new: js.JobStatus) -> None:
        nonlocal finished
        if job.name == "fast" and new is js.JobStatus.COMPLETED:
            finished += 1
            if finished == 20:
                done.set()

    async with make_scheduler(
        num_workers=2, executors={"gated": gated}, executor_limits={"gated": 1}
    ) as s:
        s.add_listener(count)
        held = [s.submit(gated_job(f"g{i}", priority=js.JobPriority.HIGH)) for i in range(5)]
        for _ in range(20):
            s.submit(js.FunctionJob(nothing_async, name="fast", priority=js.JobPriority.LOW))
        await wait_for(gated.entered_event("g0"))
        await wait_for(done)  # all 20 ran on the one free worker
        assert gated.in_flight == 1
        assert [s.get(i).status for i in held[1:]] == [js.JobStatus.PENDING] * 4
        for i in range(5):
            gated.gate(f"g{i}").set()
        with anyio.fail_after(30):
            await s.join()
    assert gated.peak == 1
    assert gated.started == [f"g{i}" for i in range(5)]


async def test_strategy_order_is_kept_among_jobs_that_may_run(
    make_scheduler: Callable[..., js.JobScheduler],
) -> None:
    """Jobs start in priority order, skipping only those whose executor is full."""
    gated = GateExecutor()
    order: list[str] = []
    d_started = anyio.Event()

    def listener(job: js.Job, old: js.JobStatus, new: js.JobStatus) -> None:
        if new is js.JobStatus.RUNNING:
            order.append(job.name)
            if job.name == "D":
                d_started.set()

    async with make_scheduler(
        num_workers=2,
        executors={"gated": gated, "async-free": _FreeAsync()},
        executor_limits={"gated": 1},
    ) as s:
        s.add_listener(listener)
        s.submit(gated_job("A", priority=js.JobPriority.CRITICAL))
        await wait_for(gated.entered_event("A"))
        s.submit(gated_job("B", priority=js.JobPriority.HIGH))
        s.submit(js.FunctionJob(nothing, executor="async-free", name="C"))
        s.submit(js.FunctionJob(nothing, executor="async-free", name="D", priority=0))
        s.submit(gated_job("E", priority=js.JobPriority.CRITICAL))
        await wait_for(d_started)
        gated.gate("A").set()
        await wait_for(gated.entered_event("E"))
        gated.gate("E").set()
        gated.gate("B").set()
        with anyio.fail_after(30):
            await s.join()
    # E outranks B, so E goes first once A's slot frees; C and D never waited.
    assert order == ["A", "C", "D", "E", "B"]


async def test_a_timed_out_or_cancelled_attempt_frees_its_slot(
    make_scheduler: Callable[..., js.JobScheduler],
) -> None:
    """A timed-out or cancelled attempt frees its slot; a cancelled held job never runs."""
    gated = GateExecutor()
    async with make_scheduler(executors={"gated": gated}, executor_limits={"gated": 1}) as s:
        stuck = s.submit(gated_job("stuck", timeout=0.5, retry=js.RetryPolicy(max_retries=0)))
        skipped = s.submit(gated_job("skipped"))
        victim = s.submit(gated_job("victim"))
        last = s.submit(gated_job("last"))
        assert s.cancel(skipped) is True  # held, never runs
        await wait_for(gated.entered_event("victim"))  # after "stuck" timed out
        assert s.cancel(victim) is True
        await wait_for(gated.entered_event("last"))
        gated.gate("last").set()
        with anyio.fail_after(30):
            await s.join()
        assert s.get(stuck).status is js.JobStatus.TIMED_OUT
        assert s.get(skipped).status is js.JobStatus.CANCELLED
        assert s.get(victim).status is js.JobStatus.CANCELLED
        assert s.get(last).status is js.JobStatus.COMPLETED
    assert gated.started == ["stuck", "victim", "last"]
    assert gated.peak == 1


async def test_a_job_waiting_to_retry_holds_no_slot(
    make_scheduler: Callable[..., js.JobScheduler],
) -> None:
    """Between attempts a job is not running, so another job of its executor may run."""
    attempts: list[str] = []

    class Flaky(js.Executor):
        name = "flaky"

        async def run(self, job: js.Job) -> Any:
            attempts.append(job.name)
            if job.name == "retrying" and job.attempts == 1:
                raise RuntimeError("first attempt fails")
            return None

    policy = js.RetryPolicy(max_retries=1, base_delay=0.2, jitter=False)
    async with make_scheduler(executors={"flaky": Flaky()}, executor_limits={"flaky": 1}) as s:
        first = s.submit(js.FunctionJob(nothing, executor="flaky", name="retrying", retry=policy))
        second = s.submit(js.FunctionJob(nothing, executor="flaky", name="other"))
        with anyio.fail_after(30):
            await s.join()
        assert s.get(first).status is js.JobStatus.COMPLETED
        assert s.get(second).status is js.JobStatus.COMPLETED
    assert attempts == ["retrying", "other", "retrying"]


async def test_limits_combine_with_rate_limits(
    make_scheduler: Callable[..., js.JobScheduler], virtual_time: bool
) -> None:
    """A job both rate-limited and executor-limited waits for both; nothing is lost."""
    gated = GateExecutor()
    async with make_scheduler(
        num_workers=3,
        executors={"gated": gated},
        executor_limits={"gated": 1},
        rate_limits={"k": js.RateLimit(100, burst=1)},
    ) as s:
        names = [f"g{i}" for i in range(6)]
        for name in names:
            s.submit(gated_job(name, rate_key="k"))
        for name in names:
            await wait_for(gated.entered_event(name))
            gated.gate(name).set()
        with anyio.fail_after(30):
            await s.join()
    assert gated.started == names
    assert gated.peak == 1


@pytest.mark.parametrize(
    ("limits", "error", "match"),
    [
        ({"nope": 1}, ValueError, r"unknown executor 'nope' \(known: .*async.*\)"),
        ({"async": 0}, ValueError, r"executor_limits\['async'\] must be >= 1"),
        ({"async": -2}, ValueError, r"must be >= 1"),
        ({"async": 1.5}, TypeError, r"must be an integer >= 1, got 1.5"),
        ({"async": True}, TypeError, r"must be an integer"),
        ([("async", 1)], TypeError, r"executor_limits must map"),
    ],
)
def test_executor_limits_are_validated(limits: Any, error: type[Exception], match: str) -> None:
    """Unknown executors and limits below one are refused when the scheduler is made."""
    with pytest.raises(error, match=match):
        js.JobScheduler(executor_limits=limits)


def test_executor_given_in_executors_may_be_limited() -> None:
    """An executor passed in executors= counts as known; none is imported to check."""
    js.JobScheduler(executors={"gated": GateExecutor()}, executor_limits={"gated": 3})
    code = (
        "import sys, jobsched as js\n"
        "js.JobScheduler(executor_limits={'process': 2})\n"
        "assert 'jobsched_process' not in sys.modules, 'the process plugin was imported'\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
