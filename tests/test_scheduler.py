"""The scheduler's behaviour, on asyncio (real clock) and trio (mock clock)."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable

import anyio
import anyio.lowlevel
import pytest
from sample_jobs import (
    FailAfterGate,
    FailNow,
    FailTimes,
    Gate,
    InFlight,
    Ok,
    Recorder,
    Stubborn,
    Track,
)

import jobsched as js

pytestmark = pytest.mark.anyio

S = js.JobStatus
Make = Callable[..., js.JobScheduler]
FAST = js.RetryPolicy(max_retries=3, base_delay=0.01, jitter=False)


async def test_one_shot_job_completes_with_result(make_scheduler: Make) -> None:
    """A submitted job runs once and records its result and timestamps."""
    async with make_scheduler() as s:
        job_id = s.submit(Ok(41, seconds=0.01))
        with anyio.fail_after(10):
            await s.join()
    job = s.get(job_id)
    assert (job.status, job.result, job.attempts, job.last_error) == (S.COMPLETED, 41, 1, None)
    assert job.submitted_at <= job.started_at <= job.finished_at  # type: ignore[operator]


async def test_submit_before_start_runs_after_start(make_scheduler: Make) -> None:
    """Jobs queued before start() run once the scheduler starts."""
    s = make_scheduler()
    ids = [s.submit(Ok(i)) for i in range(5)]
    assert all(s.get(i).status is S.PENDING for i in ids)
    async with s:
        with anyio.fail_after(10):
            await s.join()
    assert [s.get(i).result for i in ids] == [0, 1, 2, 3, 4]


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [
        (js.FIFOStrategy(), ["low", "high", "crit", "med"]),
        (js.PriorityStrategy(), ["crit", "high", "med", "low"]),
    ],
)
async def test_strategy_decides_the_order(
    make_scheduler: Make, strategy: js.SchedulingStrategy, expected: list[str]
) -> None:
    """With one worker, jobs queued before start run in the strategy's order."""
    s = make_scheduler(strategy, num_workers=1)
    recorder = Recorder()
    s.add_listener(recorder)
    names = {}
    for name, prio in [("low", 0), ("high", 2), ("crit", 3), ("med", 1)]:
        names[s.submit(Ok(name=name, priority=prio))] = name
    async with s:
        await s.join()
    assert [names[i] for i in recorder.started_order()] == expected


async def test_edf_runs_earliest_deadline_first(make_scheduler: Make) -> None:
    """EDF starts jobs by deadline; jobs without one go last."""
    s = make_scheduler(js.EarliestDeadlineFirstStrategy(), num_workers=1)
    recorder = Recorder()
    s.add_listener(recorder)
    a = s.submit(Ok(deadline=300.0))
    b = s.submit(Ok())
    c = s.submit(Ok(deadline=100.0))
    async with s:
        await s.join()
    assert recorder.started_order() == [c, a, b]


async def test_delay_holds_a_job_back(make_scheduler: Make, virtual_time: bool) -> None:
    """A delayed job does not start before its delay is up; others run meanwhile."""
    async with make_scheduler(num_workers=1) as s:
        t0 = s._clock()
        late = s.submit(Ok("late"), delay=0.3)
        now = s.submit(Ok("now"))
        with anyio.fail_after(10):
            await s.join()
    late_job, now_job = s.get(late), s.get(now)
    assert late_job.started_at is not None and now_job.started_at is not None
    assert late_job.started_at - t0 >= 0.3
    assert now_job.started_at < late_job.started_at
    if virtual_time:
        assert late_job.started_at - t0 == pytest.approx(0.3)


async def test_retries_until_success(make_scheduler: Make) -> None:
    """A job that fails twice then succeeds completes on attempt 3 via RETRY_WAIT."""
    recorder = Recorder()
    async with make_scheduler() as s:
        s.add_listener(recorder)
        job_id = s.submit(FailTimes(2, retry=FAST))
        with anyio.fail_after(10):
            await s.join()
    job = s.get(job_id)
    assert (job.status, job.attempts, job.result) == (S.COMPLETED, 3, "ok")
    assert recorder.of(job_id) == [
        (S.PENDING, S.RUNNING),
        (S.RUNNING, S.RETRY_WAIT),
        (S.RETRY_WAIT, S.RUNNING),
        (S.RUNNING, S.RETRY_WAIT),
        (S.RETRY_WAIT, S.RUNNING),
        (S.RUNNING, S.COMPLETED),
    ]


async def test_retries_exhausted_fail(make_scheduler: Make) -> None:
    """After max_retries + 1 attempts the job FAILS with the last error."""
    async with make_scheduler() as s:
        job_id = s.submit(FailTimes(99, retry=FAST))
        await s.join()
    job = s.get(job_id)
    assert (job.status, job.attempts) == (S.FAILED, 4)
    assert job.last_error == "ConnectionError: attempt 4"


async def test_backoff_waits_the_policy_delay(make_scheduler: Make, virtual_time: bool) -> None:
    """Each retry starts no earlier than the policy's delay after the failure."""
    policy = js.RetryPolicy(max_retries=2, base_delay=1.0, jitter=False)
    starts: list[float] = []
    s = make_scheduler()

    def on_change(job: js.Job, old: S, new: S) -> None:
        if new is S.RUNNING:
            starts.append(s._clock())

    s.add_listener(on_change)
    async with s:
        s.submit(FailTimes(99, retry=policy))
        with anyio.fail_after(20):
            await s.join()
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    assert len(gaps) == 2
    assert gaps[0] >= 1.0 and gaps[1] >= 2.0
    if virtual_time:
        assert gaps == pytest.approx([1.0, 2.0])


async def test_non_retryable_error_fails_at_once(make_scheduler: Make) -> None:
    """NonRetryableError skips the remaining retries."""
    async with make_scheduler() as s:
        job_id = s.submit(FailTimes(99, exc=js.NonRetryableError, retry=FAST))
        await s.join()
    job = s.get(job_id)
    assert (job.status, job.attempts) == (S.FAILED, 1)
    assert job.last_error == "NonRetryableError: attempt 1"


async def test_timeout_is_timed_out(make_scheduler: Make) -> None:
    """An attempt that runs past its timeout ends TIMED_OUT (no retries left)."""
    async with make_scheduler() as s:
        job_id = s.submit(Ok(seconds=60, timeout=0.05, retry=js.RetryPolicy(max_retries=0)))
        with anyio.fail_after(10):
            await s.join()
    job = s.get(job_id)
    assert (job.status, job.attempts) == (S.TIMED_OUT, 1)
    assert job.last_error == "timed out after 0.05s"


async def test_timeout_retries_then_times_out(make_scheduler: Make) -> None:
    """A timed-out attempt is retried like a failure; the last one decides the status."""
    async with make_scheduler() as s:
        job_id = s.submit(Ok(seconds=60, timeout=0.05, retry=js.RetryPolicy(2, 0.01)))
        with anyio.fail_after(10):
            await s.join()
    assert (s.get(job_id).status, s.get(job_id).attempts) == (S.TIMED_OUT, 3)


async def test_a_jobs_own_timeout_error_is_a_failure(make_scheduler: Make) -> None:
    """TimeoutError raised by the job itself is an ordinary failure, not a timeout."""
    async with make_scheduler() as s:
        job_id = s.submit(FailTimes(99, exc=TimeoutError, retry=js.RetryPolicy(max_retries=0)))
        await s.join()
    job = s.get(job_id)
    assert job.status is S.FAILED
    assert job.last_error == "TimeoutError: attempt 1"


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_timeout_applies_after_a_slow_first_step(backend: str) -> None:
    """The timeout counts from the attempt's start, including the code before its first await.

    Real clock: the first step blocks (no await) for 0.2 s, then awaits 0.2 s,
    against a 0.3 s timeout. Counted from the first await, it would complete.
    """

    class SlowStart(js.AsyncJob):
        async def run(self) -> None:
            time.sleep(0.2)  # noqa: ASYNC251 - the slow first step is the subject
            await anyio.sleep(0.2)

    async def main() -> js.Job:
        job = SlowStart("x", timeout=0.3, retry=js.RetryPolicy(max_retries=0))
        async with js.JobScheduler() as s:
            s.submit(job)
            with anyio.fail_after(10):
                await s.join()
        return job

    assert anyio.run(main, backend=backend).status is S.TIMED_OUT


async def test_cancel_queued_job(make_scheduler: Make) -> None:
    """A queued job is CANCELLED at once and never runs."""
    s = make_scheduler()
    job_id = s.submit(Ok())
    assert s.cancel(job_id) is True
    assert s.get(job_id).status is S.CANCELLED
    assert s.cancel(job_id) is False  # already finished
    assert s.cancel("job-does-not-exist") is False
    async with s:
        await s.join()
    assert s.get(job_id).attempts == 0


async def test_cancel_running_async_job(make_scheduler: Make) -> None:
    """A running async job is cancelled at its next await and recorded CANCELLED."""
    async with make_scheduler() as s:
        gate = Gate()
        job_id = s.submit(gate)
        with anyio.fail_after(10):
            await gate.started.wait()
            assert s.cancel(job_id) is True
            await s.join()
        # The worker is free again afterwards.
        after = s.submit(Ok("after", seconds=0.01))
        with anyio.fail_after(10):
            await s.join()
    assert gate.cancelled_seen
    assert (gate.status, gate.last_error, gate.attempts) == (S.CANCELLED, "cancelled", 1)
    assert s.get(after).status is S.COMPLETED


async def test_cancel_retry_waiting_job(make_scheduler: Make) -> None:
    """A job waiting out its backoff is CANCELLED and not retried."""
    waiting = anyio.Event()
    s = make_scheduler()

    def on_change(job: js.Job, old: S, new: S) -> None:
        if new is S.RETRY_WAIT:
            waiting.set()

    s.add_listener(on_change)
    async with s:
        job_id = s.submit(FailTimes(99, retry=js.RetryPolicy(3, base_delay=30, jitter=False)))
        with anyio.fail_after(10):
            await waiting.wait()
        assert s.cancel(job_id)
        with anyio.fail_after(10):
            await s.join()
    assert (s.get(job_id).status, s.get(job_id).attempts) == (S.CANCELLED, 1)


async def test_swallowed_cancellation_is_still_cancelled(make_scheduler: Make) -> None:
    """A job that catches the cancellation and returns is still recorded CANCELLED."""

    async with make_scheduler() as s:
        job = Stubborn()
        s.submit(job)
        with anyio.fail_after(10):
            await job.started.wait()
            s.cancel(job.job_id)
            await s.join()
        follow = s.submit(Ok(1, seconds=0.01))
        with anyio.fail_after(10):
            await s.join()
    assert (job.status, job.result) == (S.CANCELLED, None)
    assert s.get(follow).status is S.COMPLETED


async def test_swallowed_timeout_is_still_timed_out(make_scheduler: Make) -> None:
    """A job that catches its timeout's cancellation is still recorded TIMED_OUT."""

    async with make_scheduler() as s:
        job_id = s.submit(Stubborn("x", timeout=0.05, retry=js.RetryPolicy(max_retries=0)))
        with anyio.fail_after(10):
            await s.join()
    assert s.get(job_id).status is S.TIMED_OUT


async def test_dependencies_wait_for_upstreams(make_scheduler: Make) -> None:
    """A job starts only after every dependency completed."""
    recorder = Recorder()
    async with make_scheduler(num_workers=4) as s:
        s.add_listener(recorder)
        a = s.submit(Ok("a", seconds=0.05))
        b = s.submit(Ok("b", seconds=0.02))
        c = s.submit(Ok("c"), depends_on=[a, b])
        with anyio.fail_after(10):
            await s.join()
    finished = {jid: i for i, (jid, _, new) in enumerate(recorder.events) if new is S.COMPLETED}
    started_c = next(
        i for i, (jid, _, new) in enumerate(recorder.events) if jid == c and new is S.RUNNING
    )
    assert finished[a] < started_c and finished[b] < started_c
    assert s.get(c).status is S.COMPLETED


async def test_dependency_on_completed_job_runs_at_once(make_scheduler: Make) -> None:
    """Depending on an already-completed job does not block."""
    async with make_scheduler() as s:
        a = s.submit(Ok("a"))
        await s.join()
        b = s.submit(Ok("b"), depends_on=[a])
        with anyio.fail_after(10):
            await s.join()
    assert s.get(b).status is S.COMPLETED


async def test_upstream_failure_cascades(make_scheduler: Make) -> None:
    """A failed upstream cancels its transitive dependents, and nothing else."""
    async with make_scheduler() as s:
        bad = s.submit(FailTimes(99, retry=js.RetryPolicy(max_retries=0)))
        good = s.submit(Ok("good"))
        child = s.submit(Ok("child"), depends_on=[bad, good])
        grandchild = s.submit(Ok("grandchild"), depends_on=[child])
        sibling = s.submit(Ok("sibling"), depends_on=[good])
        with anyio.fail_after(10):
            await s.join()
    assert s.get(bad).status is S.FAILED
    assert s.get(child).status is S.CANCELLED
    assert s.get(child).last_error == f"upstream {bad} failed"
    assert s.get(grandchild).status is S.CANCELLED
    assert s.get(grandchild).last_error == f"upstream {child} cancelled"
    assert s.get(sibling).status is S.COMPLETED
    assert s.get(child).attempts == 0


async def test_depending_on_a_failed_job_cancels_at_submit(make_scheduler: Make) -> None:
    """A job submitted after its upstream already failed is CANCELLED at once."""
    async with make_scheduler() as s:
        bad = s.submit(FailTimes(99, retry=js.RetryPolicy(max_retries=0)))
        await s.join()
        late = s.submit(Ok(), depends_on=[bad])
    assert s.get(late).status is S.CANCELLED


async def test_long_chain_cascade_is_not_recursive(make_scheduler: Make, durable: bool) -> None:
    """Cancelling the head of a 5,000-job chain cancels all of it (no recursion limit)."""
    s = make_scheduler()
    head = s.submit(Ok())
    upstream = prev = head
    for _ in range(5_000):
        upstream, prev = prev, s.submit(Ok(), depends_on=[prev])
    assert s.cancel(head)
    if not durable:  # at once; a durable store cascades when it commits, after start
        assert s.get(prev).status is S.CANCELLED
    async with s:
        await s.join()
    assert s.get(prev).status is S.CANCELLED
    assert s.get(prev).last_error == f"upstream {upstream} cancelled"


async def test_cancelling_a_blocked_job_cascades(make_scheduler: Make, durable: bool) -> None:
    """Cancelling a job that waits on dependencies cancels its own dependents."""
    async with make_scheduler() as s:
        gate = Gate()
        a = s.submit(gate)
        b = s.submit(Ok(), depends_on=[a])
        c = s.submit(Ok(), depends_on=[b])
        assert s.cancel(b)
        if durable:  # the store cascades; this process's view follows its commit
            await s.flush()
        assert s.get(c).status is S.CANCELLED
        gate.release.set()
        with anyio.fail_after(10):
            await s.join()
    assert s.get(a).status is S.COMPLETED


async def test_workers_bound_concurrency(make_scheduler: Make) -> None:
    """No more than num_workers attempts are ever in flight; peak_running proves it."""
    counter = InFlight()
    async with make_scheduler(num_workers=3) as s:
        for i in range(30):
            s.submit(Track(f"t{i}", counter))
        with anyio.fail_after(20):
            await s.join()
    assert counter.most == 3
    assert s.peak_running == 3


async def test_peak_running_can_be_reset(make_scheduler: Make) -> None:
    """peak_running may be set (to measure a later batch alone): the count goes on from there."""
    counter = InFlight()
    async with make_scheduler(num_workers=3) as s:
        for i in range(30):
            s.submit(Track(f"t{i}", counter))
        with anyio.fail_after(20):
            await s.join()
        assert s.peak_running == 3
        s.peak_running = 0
        s.submit(Track("alone", counter))
        with anyio.fail_after(20):
            await s.join()
        assert s.peak_running == 1


async def test_listener_errors_are_ignored(make_scheduler: Make, caplog) -> None:  # type: ignore[no-untyped-def]
    """A listener that raises is logged; other listeners and the job carry on."""
    recorder = Recorder()

    def broken(job: js.Job, old: S, new: S) -> None:
        raise RuntimeError("listener bug")

    async with make_scheduler() as s:
        s.add_listener(broken)
        s.add_listener(recorder)
        job_id = s.submit(Ok(1))
        await s.join()
    assert s.get(job_id).status is S.COMPLETED
    assert recorder.of(job_id)[-1] == (S.RUNNING, S.COMPLETED)
    assert "listener" in caplog.text and "listener bug" in caplog.text
    with pytest.raises(TypeError, match="listener must be callable"):
        s.add_listener("nope")  # type: ignore[arg-type]


async def test_history_is_bounded(make_scheduler: Make) -> None:
    """Only the newest history_limit finished jobs are kept; older ids are unknown."""
    async with make_scheduler(history_limit=10) as s:
        ids = [s.submit(Ok(i)) for i in range(50)]
        await s.join()
    assert len(s.jobs()) == 10
    assert [j.job_id for j in s.jobs()] == ids[-10:]
    with pytest.raises(js.UnknownJobError, match="history_limit=10"):
        s.get(ids[0])
    with pytest.raises(KeyError):
        s.get(ids[0])


@pytest.mark.memory_only(
    "local closure factories: a stored schedule's factory must be importable "
    "(test_durable_schedules.py)"
)
async def test_recurring_fires_at_fixed_rate(make_scheduler: Make, virtual_time: bool) -> None:
    """A recurring schedule fires every interval until cancelled."""
    fired: list[float] = []
    done = anyio.Event()
    s = make_scheduler()

    def factory() -> js.Job:
        fired.append(s._clock())
        if len(fired) == 4:
            done.set()
        return Ok()

    async with s:
        t0 = s._clock()
        sid = s.schedule_recurring(factory, interval=0.1)
        with anyio.fail_after(10):
            await done.wait()
        assert s.cancel_recurring(sid) is True
        assert s.cancel_recurring(sid) is False
        await s.join()
    assert len(fired) == 4
    offsets = [f - t0 for f in fired]
    for i, off in enumerate(offsets):
        assert off >= 0.1 * i - 1e-9
    if virtual_time:
        assert offsets == pytest.approx([0, 0.1, 0.2, 0.3])


@pytest.mark.memory_only(
    "local closure factories: a stored schedule's factory must be importable "
    "(test_durable_schedules.py)"
)
async def test_recurring_overlap_guard(make_scheduler: Make) -> None:
    """Without allow_overlap a fire is skipped while the previous job is unfinished."""
    made: list[Gate] = []

    def factory() -> js.Job:
        made.append(Gate())
        return made[-1]

    first_made = anyio.Event()

    def factory_signalling() -> js.Job:
        job = factory()
        first_made.set()
        return job

    async with make_scheduler(num_workers=4) as s:
        sid = s.schedule_recurring(factory_signalling, interval=0.05)
        with anyio.fail_after(10):
            await first_made.wait()
            await made[0].started.wait()
        sched = s._recurring[sid]
        # Time passing is what is tested here: six intervals while the first
        # job still runs must fire nothing new.
        await anyio.sleep(0.3)
        assert sched.skipped >= 3
        assert len(made) == 1
        s.cancel_recurring(sid)
        made[0].release.set()
        await s.join()


@pytest.mark.memory_only(
    "local closure factories: a stored schedule's factory must be importable "
    "(test_durable_schedules.py)"
)
async def test_recurring_allow_overlap(make_scheduler: Make) -> None:
    """With allow_overlap a new job is submitted even while the previous one runs."""
    made: list[Gate] = []
    three = anyio.Event()

    def factory() -> js.Job:
        made.append(Gate())
        if len(made) == 3:
            three.set()
        return made[-1]

    async with make_scheduler(num_workers=4) as s:
        sid = s.schedule_recurring(factory, interval=0.05, allow_overlap=True)
        with anyio.fail_after(10):
            await three.wait()
        s.cancel_recurring(sid)
        for gate in made:
            gate.release.set()
        await s.join()
    assert len(made) == 3


@pytest.mark.memory_only(
    "local closure factories: a stored schedule's factory must be importable "
    "(test_durable_schedules.py)"
)
async def test_recurring_factory_errors_are_logged(make_scheduler: Make, caplog) -> None:  # type: ignore[no-untyped-def]
    """A factory that raises is logged and the schedule keeps firing."""
    calls = 0
    again = anyio.Event()

    def factory() -> js.Job:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("factory bug")
        again.set()
        return Ok()

    async with make_scheduler() as s:
        sid = s.schedule_recurring(factory, interval=0.05)
        with anyio.fail_after(10):
            await again.wait()
        s.cancel_recurring(sid)
        await s.join()
    assert "factory bug" in caplog.text


@pytest.mark.memory_only(
    "local closure factories: a stored schedule's factory must be importable "
    "(test_durable_schedules.py)"
)
async def test_recurring_bad_arguments(make_scheduler: Make) -> None:
    """interval <= 0 and negative start_in raise ValueError; nothing is scheduled."""
    s = make_scheduler()
    with pytest.raises(ValueError, match="interval must be a positive number of seconds, got 0"):
        s.schedule_recurring(Ok, 0)
    with pytest.raises(ValueError, match="start_in must be"):
        s.schedule_recurring(Ok, 1, start_in=-1)
    assert s._recurring == {}
    assert s.cancel_recurring("sched-unknown") is False


async def test_stop_lets_running_jobs_finish(make_scheduler: Make) -> None:
    """stop() waits for running attempts; queued jobs stay PENDING."""
    s = make_scheduler(num_workers=1)
    await_started = Gate()
    async with s:
        running = s.submit(await_started)
        queued = s.submit(Ok())
        with anyio.fail_after(10):
            await await_started.started.wait()
        async with anyio.create_task_group() as tg:
            tg.start_soon(s.stop)
            await anyio.sleep(0.05)
            await_started.release.set()
    assert s.get(running).status is S.COMPLETED
    assert s.get(queued).status is S.PENDING
    with pytest.raises(js.SchedulerStoppedError, match="1 job"):
        await s.join()


async def test_stop_cancel_running(make_scheduler: Make, durable: bool) -> None:
    """stop(cancel_running=True) cancels running attempts in memory; a durable
    store gets them back instead, PENDING with the attempt not counted."""
    s = make_scheduler()
    gate = Gate()
    async with s:
        s.submit(gate)
        with anyio.fail_after(10):
            await gate.started.wait()
            await s.stop(cancel_running=True)
    if durable:
        assert (gate.status, gate.attempts) == (S.PENDING, 0)
    else:
        assert gate.status is S.CANCELLED
        assert gate.last_error == "scheduler shut down"


async def test_body_error_cancels_running_jobs(make_scheduler: Make, durable: bool) -> None:
    """If the `async with` body raises, running jobs are cut short at once (in
    memory CANCELLED, on a durable store handed back) and the error propagates."""
    gate = Gate()
    with pytest.raises(RuntimeError, match="body failed"):  # noqa: PT012 - the body is the subject
        async with make_scheduler() as s:
            s.submit(gate)
            with anyio.fail_after(10):
                await gate.started.wait()
            raise RuntimeError("body failed")
    if durable:
        assert (gate.status, gate.attempts) == (S.PENDING, 0)
    else:
        assert gate.status is S.CANCELLED


async def test_no_retry_during_stop(make_scheduler: Make, durable: bool) -> None:
    """A job that fails while the scheduler stops is FAILED in memory, not left
    waiting to retry; a durable store keeps its retry for any member."""
    gate = Gate()
    s = make_scheduler()
    async with s:
        job_id = s.submit(FailAfterGate("x", gate, retry=FAST))
        with anyio.fail_after(10):
            await gate.started.wait()
        async with anyio.create_task_group() as tg:
            tg.start_soon(s.stop)
            await anyio.sleep(0.01)
            gate.release.set()
    assert s.get(job_id).status is (S.RETRY_WAIT if durable else S.FAILED)


async def test_submit_errors_lose_nothing(make_scheduler: Make) -> None:
    """Bad submits raise clear errors and leave accepted jobs untouched."""
    s = make_scheduler()
    ok = Ok()
    s.submit(ok)
    with pytest.raises(js.SchedulerError, match="already submitted.*create a new job"):
        s.submit(ok)
    fresh = Ok()
    with pytest.raises(js.UnknownJobError, match=r"unknown job\(s\) \['job-nope'\]"):
        s.submit(fresh, depends_on=["job-nope"])
    with pytest.raises(ValueError, match="delay must be a finite number"):
        s.submit(fresh, delay=-1)
    with pytest.raises(ValueError, match="delay must be a finite number"):
        s.submit(fresh, delay=float("nan"))
    with pytest.raises(TypeError, match="takes a jobsched.Job"):
        s.submit("job")  # type: ignore[arg-type]
    assert fresh.status is S.PENDING and fresh.seq == 0
    assert [j.job_id for j in s.jobs()] == [ok.job_id]
    # The refused job can still be submitted properly.
    s.submit(fresh, depends_on=ok.job_id)
    async with s:
        await s.join()
    assert ok.status is fresh.status is S.COMPLETED


async def test_submit_after_stop_is_refused(make_scheduler: Make) -> None:
    """submit, schedule_recurring and submit_threadsafe after stop raise SchedulerStoppedError."""
    s = make_scheduler()
    async with s:
        pass
    with pytest.raises(js.SchedulerStoppedError, match="stopping or stopped"):
        s.submit(Ok())
    with pytest.raises(js.SchedulerStoppedError):
        s.schedule_recurring(Ok, 1)
    with pytest.raises(js.SchedulerStoppedError):
        s.submit_threadsafe(Ok())


async def test_second_start_is_refused(make_scheduler: Make) -> None:
    """A scheduler starts once."""
    s = make_scheduler()
    async with s:
        with pytest.raises(js.SchedulerError, match="already started"):
            await s.__aenter__()
    with pytest.raises(js.SchedulerError, match="already started"):
        await s.start()


async def test_submit_threadsafe_from_threads(make_scheduler: Make) -> None:
    """Other threads submit through submit_threadsafe; a bad one raises in its thread."""
    s = make_scheduler()
    with pytest.raises(js.SchedulerError, match="needs a started scheduler"):
        s.submit_threadsafe(Ok())
    completed = 0
    all_done = anyio.Event()

    def count(job: js.Job, old: S, new: S) -> None:
        nonlocal completed
        if new is S.COMPLETED:
            completed += 1
            if completed == 60:
                all_done.set()

    s.add_listener(count)
    async with s:
        ids: list[str] = []

        def producer() -> None:
            for i in range(20):
                ids.append(s.submit_threadsafe(Ok(i)))

        threads = [threading.Thread(target=producer) for _ in range(3)]
        for t in threads:
            t.start()
        await anyio.to_thread.run_sync(lambda: [t.join() for t in threads])
        # Each submit was accepted by the loop; wait for all 60 to complete.
        with anyio.fail_after(10):
            await all_done.wait()
            await s.join()
        assert len(s.jobs()) == 60
        with pytest.raises(js.SchedulerError, match="already submitted"):
            await anyio.to_thread.run_sync(s.submit_threadsafe, s.get(ids[0]))
    assert sorted(s.get(i).result for i in ids) == sorted(list(range(20)) * 3)


async def test_constructor_validation() -> None:
    """Bad constructor arguments raise errors that name the value."""
    with pytest.raises(ValueError, match="num_workers=0 makes a producer.*memory store"):
        js.JobScheduler(num_workers=0)
    with pytest.raises(ValueError, match="num_workers must be an integer >= 1.*got -1"):
        js.JobScheduler(num_workers=-1)
    with pytest.raises(ValueError, match="history_limit"):
        js.JobScheduler(history_limit=-1)
    with pytest.raises(TypeError, match="strategy must be"):
        js.JobScheduler("fifo")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"executors\['async'\] must be"):
        js.JobScheduler(executors={"async": object()})  # type: ignore[dict-item]


async def test_join_with_nothing_submitted_returns(make_scheduler: Make) -> None:
    """join() on an idle scheduler returns at once."""
    async with make_scheduler() as s:
        with anyio.fail_after(5):
            await s.join()


async def test_seeded_rng_makes_jitter_repeatable(make_scheduler: Make) -> None:
    """Two schedulers with the same rng seed retry at the same offsets."""

    async def offsets() -> list[float]:
        s = make_scheduler(rng=random.Random(5))
        starts: list[float] = []
        s.add_listener(lambda j, o, n: starts.append(s._clock()) if n is S.RUNNING else None)
        async with s:
            s.submit(FailTimes(3, retry=js.RetryPolicy(3, base_delay=0.05)))
            await s.join()
        return [round(b - a, 2) for a, b in zip(starts, starts[1:])]

    first = await offsets()
    assert len(first) == 3


@pytest.mark.memory_only(
    "2,000 jobs one at a time are 4,000 synced commits on SQLite (~15 s); there every claim "
    "already awaits the store's thread, so the loop cannot starve"
)
@pytest.mark.parametrize("fails", [False, True])
async def test_jobs_that_never_suspend_do_not_starve_the_loop(
    make_scheduler: Make, fails: bool
) -> None:
    """Workers yield regularly even when every job completes, or fails, without awaiting."""
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await anyio.lowlevel.checkpoint()

    async with make_scheduler(num_workers=1) as s, anyio.create_task_group() as tg:
        tg.start_soon(ticker)
        for i in range(2_000):
            s.submit(FailNow("f") if fails else Ok(i))
        await s.join()
        tg.cancel_scope.cancel()
    assert ticks >= 2_000 // 64 - 1
    expected = S.FAILED if fails else S.COMPLETED
    assert all(job.status is expected for job in s.jobs())


async def test_listeners_see_the_attempt_being_started(make_scheduler: Make) -> None:
    """A listener told of RUNNING sees that attempt's number and start time."""
    seen: list[tuple[int, float | None]] = []

    def on_change(job: js.Job, old: S, new: S) -> None:
        if new is S.RUNNING:
            seen.append((job.attempts, job.started_at))

    async with make_scheduler() as s:
        s.add_listener(on_change)
        s.submit(FailTimes(2, retry=FAST))
        with anyio.fail_after(10):
            await s.join()
    assert [n for n, _ in seen] == [1, 2, 3]
    assert all(started is not None for _, started in seen)
    assert [t for _, t in seen] == sorted(t for _, t in seen)  # type: ignore[type-var]


async def test_timeout_still_fires_while_stopping(make_scheduler: Make, durable: bool) -> None:
    """A running attempt's timeout holds during a graceful stop() (after the ticker
    exits); a durable store keeps the retry, the memory store ends it TIMED_OUT."""
    s = make_scheduler()
    gate = Gate(timeout=0.2)
    async with s:
        s.submit(gate)
        with anyio.fail_after(10):
            await gate.started.wait()
            await s.stop()  # graceful: waits for the attempt, which must time out
    assert gate.status is (S.RETRY_WAIT if durable else S.TIMED_OUT)
    assert gate.last_error == "timed out after 0.2s"
    assert gate.cancelled_seen


def test_bad_priority_is_refused_at_construction() -> None:
    """A priority that is not an int is refused where it is written, with the fix."""
    with pytest.raises(TypeError, match=r"priority must be an int \(higher runs first; any int"):
        Ok(priority="high")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="priority must be"):
        Ok(priority=None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="priority must be"):
        Ok(priority=True)


class _BrokenKey(js.SchedulingStrategy):
    """A strategy whose key fails on jobs named "bad"."""

    def key(self, job: js.Job) -> tuple[int, ...]:
        if job.name == "bad":
            raise ValueError("no key for bad jobs")
        return (job.seq,)


@pytest.mark.parametrize("how", ["ready", "delayed", "blocked"])
async def test_strategy_failure_at_submit_loses_nothing(make_scheduler: Make, how: str) -> None:
    """If the strategy cannot order a job, submit raises and the scheduler is as before.

    Delayed and blocked jobs are checked at submit too, where the error can
    still reach the caller, not later in the ticker or a worker.
    """
    s = make_scheduler(_BrokenKey())
    good = s.submit(Ok("good", name="good"))
    bad = Ok(name="bad")
    kwargs: dict[str, object] = {}
    if how == "delayed":
        kwargs["delay"] = 0.5
    elif how == "blocked":
        kwargs["depends_on"] = [good]
    with pytest.raises(
        TypeError,
        match=r"_BrokenKey (failed on it|must give a key of numbers for a durable store) "
        r"\(ValueError: no key",
    ):
        s.submit(bad, **kwargs)  # type: ignore[arg-type]
    assert [j.job_id for j in s.jobs()] == [good]
    assert bad.seq == 0 and bad.status is S.PENDING
    async with s:
        with anyio.fail_after(10):
            await s.join()
    assert s.get(good).status is S.COMPLETED


async def test_second_stop_waits_for_the_first(make_scheduler: Make) -> None:
    """A stop() called while another runs returns only once executors are shut down."""
    from jobsched_async import AsyncExecutor

    shut_down = anyio.Event()
    release = anyio.Event()

    class SlowShutdown(AsyncExecutor):
        async def shutdown(self, *, cancel_running: bool = False) -> None:
            await release.wait()
            shut_down.set()

    s = make_scheduler(executors={"async": SlowShutdown()})
    returned: list[str] = []
    async with s:
        s.submit(Ok())
        await s.join()

        async def stopper(name: str) -> None:
            await s.stop()
            returned.append(name)

        async with anyio.create_task_group() as tg:
            tg.start_soon(stopper, "first")
            await anyio.lowlevel.checkpoint()
            tg.start_soon(stopper, "second")
            await anyio.sleep(0.05)
            assert returned == []  # both wait for the executor's shutdown
            release.set()
    assert shut_down.is_set()
    assert sorted(returned) == ["first", "second"]
