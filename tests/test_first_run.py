"""What a new user meets first: mistakes refused with a clear message, no hangs.

Issue 8 (first run) and two hangs of issue 9: retry, join, submit_threadsafe,
job construction mistakes, ``last_traceback``, internal errors that must not
strand a job, and ``stop()`` called from inside a job.
"""

from __future__ import annotations

import math
import random
import threading
from collections.abc import Callable
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from sample_jobs import FailTimes, Ok, Recorder

import jobsched as js

S = js.JobStatus
Make = Callable[..., js.JobScheduler]


def send(to: str) -> str:
    return f"sent to {to}"


class _Forgot(js.AsyncJob):
    """A subclass whose __init__ never calls super().__init__()."""

    def __init__(self, to: str) -> None:
        self.to = to

    async def run(self) -> str:
        return self.to


# ── Job construction ──────────────────────────────────────────────────────


@pytest.mark.parametrize("retry", [3, 0, None, "3", {"max_retries": 3}])
def test_retry_must_be_a_retry_policy(retry: Any) -> None:
    """retry=3 (or anything but a RetryPolicy) is refused when the job is made."""
    with pytest.raises(TypeError, match=r"retry must be a jobsched.RetryPolicy, got"):
        Ok(retry=retry)
    with pytest.raises(TypeError, match=r"retry must be a jobsched.RetryPolicy"):
        js.FunctionJob(send, ("ann@x.org",), retry=retry)


def test_retry_int_message_gives_the_fix() -> None:
    """An int retry count is answered with the RetryPolicy that means it."""
    with pytest.raises(TypeError, match=r"retry=jobsched.RetryPolicy\(max_retries=3\)"):
        Ok(retry=3)


@pytest.mark.parametrize(
    ("args", "hint"),
    [("ann@x.org", r"\('ann@x.org',\)"), (5, r"\(5,\)"), (None, r"\(None,\)")],
)
def test_function_job_args_must_be_a_tuple_or_list(args: Any, hint: str) -> None:
    """A str or a bare value as args is refused with `did you mean (x,)?`."""
    with pytest.raises(TypeError, match=rf"args must be a tuple or list .*did you mean {hint}\?"):
        js.FunctionJob(send, args)


def test_function_job_args_refuses_iterators_and_takes_lists() -> None:
    """Only tuples and lists are args; a generator would be used up silently."""
    with pytest.raises(TypeError, match="args must be a tuple or list"):
        js.FunctionJob(send, (x for x in ["ann@x.org"]))  # type: ignore[arg-type]
    assert js.FunctionJob(send, ["ann@x.org"]).args == ("ann@x.org",)


@pytest.mark.parametrize("kwargs", [[("to", "ann@x.org")], "to=ann", 5])
def test_function_job_kwargs_must_be_a_mapping(kwargs: Any) -> None:
    """kwargs is a mapping or None; anything else names the parameter."""
    with pytest.raises(TypeError, match="kwargs must be a mapping of keyword arguments"):
        js.FunctionJob(send, (), kwargs)


def test_async_job_with_a_plain_run_is_refused_at_construction() -> None:
    """An AsyncJob whose run is a plain def is refused when made, naming the class."""

    class PlainRun(js.AsyncJob):
        def run(self) -> str:  # type: ignore[override]
            return "never awaited"

    with pytest.raises(TypeError, match=r"PlainRun.run is a plain `def`.*async def run\(self\)"):
        PlainRun("plain")


def test_blocking_job_with_an_async_run_sync_is_refused_at_construction() -> None:
    """A BlockingJob or CpuBoundJob whose run_sync is async def is refused when made."""

    class AsyncRunSync(js.BlockingJob):
        async def run_sync(self) -> str:  # type: ignore[override]
            return "never awaited"

    class AsyncCpu(js.CpuBoundJob):
        async def run_sync(self) -> str:  # type: ignore[override]
            return "never awaited"

    with pytest.raises(TypeError, match=r"AsyncRunSync.run_sync is an `async def`"):
        AsyncRunSync("a")
    with pytest.raises(TypeError, match=r"AsyncCpu.run_sync is an `async def`.*def run_sync"):
        AsyncCpu("a")


def test_forgotten_super_init_is_named_at_submit() -> None:
    """A subclass that never called super().__init__() is refused at submit with the fix."""
    s = js.JobScheduler()
    with pytest.raises(TypeError, match=r"_Forgot was never initialised.*super\(\).__init__"):
        s.submit(_Forgot("ann@x.org"))
    assert s.jobs() == []


@pytest.mark.parametrize(
    ("delay", "error", "message"),
    [
        ("5", TypeError, "delay must be a number of seconds >= 0, got '5'"),
        (None, TypeError, "delay must be a number of seconds >= 0, got None"),
        (-1, ValueError, "delay must be a finite number of seconds >= 0, got -1"),
        (math.nan, ValueError, "delay must be a finite number of seconds >= 0, got nan"),
    ],
)
def test_bad_delay_is_refused_by_name(delay: Any, error: type[Exception], message: str) -> None:
    """A delay that is not a number of seconds says so, and nothing is queued."""
    s = js.JobScheduler()
    job = Ok()
    with pytest.raises(error, match=f"^{message}$"):
        s.submit(job, delay=delay)
    assert s.jobs() == [] and job.status is S.PENDING
    s.submit(job)  # the refused job can still be submitted


def test_priority_is_any_int_and_higher_runs_first() -> None:
    """Priorities beyond the four named levels are accepted and ordered as ints."""
    strategy = js.PriorityStrategy()
    jobs = [Ok(priority=p) for p in (99, js.JobPriority.CRITICAL, -5, js.JobPriority.LOW)]
    for seq, job in enumerate(jobs, 1):
        job.seq = seq
    ranked = sorted(jobs, key=strategy.key)
    assert [j.priority for j in ranked] == [99, 3, 0, -5]
    with pytest.raises(TypeError) as refused:
        Ok(priority=2.5)  # type: ignore[arg-type]
    assert "CRITICAL=3" not in str(refused.value) and "any int" in str(refused.value)


def test_last_traceback_is_a_job_slot() -> None:
    """Every job has last_traceback (None until an attempt fails), in its slots."""
    assert "last_traceback" in js.Job.__slots__
    assert Ok().last_traceback is None
    assert js.FunctionJob(send, ("ann@x.org",)).last_traceback is None


# ── Jobs that must not be stranded ────────────────────────────────────────


class _RaisingDelay(js.RetryPolicy):
    def delay(self, attempt: int, rng: random.Random) -> float:
        raise RuntimeError("delay bug")


class _NanDelay(js.RetryPolicy):
    def delay(self, attempt: int, rng: random.Random) -> float:
        return math.nan


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        (_RaisingDelay(), "RuntimeError: delay bug"),
        (_NanDelay(), "_NanDelay.delay(1) returned nan"),
    ],
)
async def test_an_internal_error_ends_the_job_failed(
    make_scheduler: Make, policy: js.RetryPolicy, expected: str, caplog: pytest.LogCaptureFixture
) -> None:
    """If recording a failure raises, the job still ends FAILED and join() returns."""
    recorder = Recorder()
    s = make_scheduler()
    s.add_listener(recorder)
    async with s:
        job_id = s.submit(FailTimes(1, retry=policy))
        child = s.submit(Ok("child"), depends_on=[job_id])
        with anyio.fail_after(10):
            await s.join()
    job = s.get(job_id)
    assert job.status is S.FAILED and job.attempts == 1
    assert job.last_error is not None
    assert job.last_error.startswith("jobsched internal error while recording the outcome")
    assert expected in job.last_error
    assert job.last_traceback is not None and expected.split(":")[0] in job.last_traceback
    assert recorder.of(job_id)[-1] == (S.RUNNING, S.FAILED)
    assert s.get(child).status is S.CANCELLED
    assert s.get(child).last_error == f"upstream {job_id} failed"
    assert any(
        r.levelname == "ERROR" and getattr(r, "job_id", None) == job_id and "internal" in r.message
        for r in caplog.records
    )


@pytest.mark.anyio
async def test_an_internal_error_storing_a_result_ends_the_stored_row_failed(
    make_scheduler: Make, durable: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If making the stored outcome raises (a bug), the row in the store ends
    FAILED too, not RUNNING under this member until its lease runs out."""
    from jobsched.store._codec import Codec

    dumps = Codec.dumps

    def broken(self: Codec, obj: Any, what: Any) -> bytes:
        if isinstance(obj, str):  # Ok's result; a payload is the job's stored form
            raise RuntimeError("result bug")
        return dumps(self, obj, what)

    monkeypatch.setattr(Codec, "dumps", broken)
    async with make_scheduler() as s:
        job_id = s.submit(Ok("value"))
        with anyio.fail_after(30):
            job = await s.wait(job_id)
            stored = await s.fetch(job_id)
    if not durable:  # the memory store keeps the result object: no codec to fail
        assert job.status is stored.status is S.COMPLETED
        return
    assert job.status is stored.status is S.FAILED
    assert "internal error while recording the outcome: RuntimeError: result bug" in str(
        stored.last_error
    )


@pytest.mark.anyio
async def test_wait_returns_a_job_whose_outcome_could_not_be_recorded(
    make_scheduler: Make,
) -> None:
    """wait() and result() see a job our bookkeeping ended FAILED: on the memory
    store that end must wake them as every other end does."""
    async with make_scheduler() as s:
        job_id = s.submit(FailTimes(1, retry=_NanDelay()))
        with anyio.fail_after(10):
            job = await s.wait(job_id)
            with pytest.raises(js.JobFailedError, match="internal error"):
                await s.result(job_id)
    assert job.status is S.FAILED


@pytest.mark.anyio
@pytest.mark.memory_only(
    "injects a fault into the memory store's queue (_push), which a durable store does not use"
)
async def test_a_failure_after_retry_wait_does_not_strand_the_job(
    make_scheduler: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A job already in RETRY_WAIT when our bookkeeping fails ends FAILED, not parked."""
    s = make_scheduler()
    push = s._push

    def broken_push(job: js.Job, now: float) -> None:
        if job.status is S.RETRY_WAIT:
            raise RuntimeError("push bug")
        push(job, now)

    monkeypatch.setattr(s, "_push", broken_push)
    async with s:
        job_id = s.submit(FailTimes(1, retry=js.RetryPolicy(base_delay=0.01)))
        with anyio.fail_after(10):
            await s.join()
    job = s.get(job_id)
    assert job.status is S.FAILED
    assert job.last_error == (
        "jobsched internal error while recording the outcome: RuntimeError: push bug"
    )


@pytest.mark.anyio
@pytest.mark.memory_only(
    "injects a fault into the memory store's queue (_push), which a durable store does not use"
)
async def test_a_dependent_that_cannot_be_released_ends_failed(
    make_scheduler: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Releasing a dependent that fails leaves neither it nor join() waiting."""
    s = make_scheduler()
    push = s._push
    child = Ok("child")

    def broken_push(job: js.Job, now: float) -> None:
        if job is child:
            raise RuntimeError("release bug")
        push(job, now)

    monkeypatch.setattr(s, "_push", broken_push)
    async with s:
        parent = s.submit(Ok("parent", seconds=0.01))
        s.submit(child, depends_on=[parent])
        grandchild = s.submit(Ok("grandchild"), depends_on=[child.job_id])
        with anyio.fail_after(10):
            await s.join()
    assert s.get(parent).status is S.COMPLETED
    assert child.status is S.FAILED and "release bug" in (child.last_error or "")
    assert s.get(grandchild).status is S.CANCELLED


@pytest.mark.anyio
@pytest.mark.memory_only(
    "1,100 attempts are 2,200 synced commits on SQLite (~7 s) for a check of the backoff "
    "arithmetic, which no store takes part in"
)
async def test_retries_past_attempt_1025_do_not_overflow(make_scheduler: Make) -> None:
    """A job retried more than 1024 times keeps going (the backoff used to overflow)."""
    policy = js.RetryPolicy(max_retries=1100, base_delay=0.0, jitter=False)
    async with make_scheduler() as s:
        job_id = s.submit(FailTimes(1050, retry=policy))
        with anyio.fail_after(30):
            await s.join()
    job = s.get(job_id)
    assert (job.status, job.attempts, job.result) == (S.COMPLETED, 1051, "ok")


# ── join() and submit_threadsafe() ─────────────────────────────────────────


@pytest.mark.anyio
async def test_join_before_start_says_to_start(make_scheduler: Make) -> None:
    """join() on a scheduler never started raises at once instead of hanging."""
    s = make_scheduler()
    with anyio.fail_after(5), pytest.raises(js.SchedulerError, match="never started.*async with"):
        await s.join()
    s.submit(Ok())
    with anyio.fail_after(5), pytest.raises(js.SchedulerError, match="never started"):
        await s.join()
    async with s:  # and the job is still there to run
        with anyio.fail_after(10):
            await s.join()
    assert [j.status for j in s.jobs()] == [S.COMPLETED]


@pytest.mark.anyio
async def test_submit_threadsafe_returns_once_the_job_is_accepted(make_scheduler: Make) -> None:
    """From a plain thread and an anyio worker thread, get() knows the id at once."""
    seen: list[tuple[str, js.Job]] = []

    def submit_and_get() -> None:
        job = Ok("from a thread")
        job_id = s.submit_threadsafe(job)
        seen.append((job_id, s.get(job_id)))  # would raise UnknownJobError if not yet accepted
        assert s.get(job_id) is job

    async with make_scheduler() as s:
        await anyio.to_thread.run_sync(submit_and_get)
        thread = threading.Thread(target=submit_and_get)
        thread.start()
        await anyio.to_thread.run_sync(thread.join)
        await s.join()
    assert len(seen) == 2
    assert all(job.status is S.COMPLETED and s.get(i) is job for i, job in seen)


@pytest.mark.anyio
async def test_submit_threadsafe_raises_what_submit_raises(make_scheduler: Make) -> None:
    """Every error submit raises reaches the calling thread as the same type; nothing is queued."""
    s = make_scheduler()

    class Nowhere(js.AsyncJob):
        executor = "no-such-executor"

        async def run(self) -> None: ...

    cases: list[tuple[Callable[[], str], type[Exception], str]] = [
        (
            # Not an id at all: "job-" and no number (any other text is an id
            # of your own, which on a durable store may be another process's
            # job: the store decides).
            lambda: s.submit_threadsafe(Ok(), depends_on=["job-nope"]),
            js.UnknownJobError,
            "depends on unknown job",
        ),
        (lambda: s.submit_threadsafe(Ok(), delay=-1), ValueError, "delay must be"),
        (lambda: s.submit_threadsafe(Ok(), delay="5"), TypeError, "delay must be"),  # type: ignore[arg-type]
        (lambda: s.submit_threadsafe("job"), TypeError, "takes a jobsched.Job"),  # type: ignore[arg-type]
        (lambda: s.submit_threadsafe(_Forgot("x")), TypeError, "never initialised"),
        (lambda: s.submit_threadsafe(Nowhere("n")), js.ExecutorNotFoundError, "no-such-executor"),
    ]
    async with s:
        done = s.get(s.submit(Ok("done")))
        cases.append((lambda: s.submit_threadsafe(done), js.SchedulerError, "already submitted"))
        await s.join()
        for call, error, message in cases:
            with pytest.raises(error, match=message):
                await anyio.to_thread.run_sync(call)
        assert s.jobs() == [done]


@pytest.mark.anyio
async def test_submit_threadsafe_on_the_loop_thread_is_refused(make_scheduler: Make) -> None:
    """On the event-loop thread it would wait for itself: it says to use submit()."""
    async with make_scheduler() as s:
        # Refused before it could block: no watchdog can help a blocked loop.
        with pytest.raises(js.SchedulerError, match=r"call submit\(\) there"):
            s.submit_threadsafe(Ok())
        assert s.jobs() == []


# ── stop() from inside a job ──────────────────────────────────────────────


class _Stopper(js.AsyncJob):
    """Calls stop() on ``target`` (its own scheduler by default) and reports how that went."""

    def __init__(self, cancel_running: bool, in_child_task: bool = False) -> None:
        super().__init__("stopper", retry=js.RetryPolicy(max_retries=0))
        self.cancel_running = cancel_running
        self.in_child_task = in_child_task
        self.target: js.JobScheduler | None = None
        self.outcome = ""

    async def _stop(self) -> None:
        assert self.target is not None
        try:
            await self.target.stop(cancel_running=self.cancel_running)
            self.outcome = "returned"
        except js.SchedulerError as exc:
            self.outcome = str(exc)

    async def run(self) -> str:
        if self.in_child_task:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._stop)
        else:
            await self._stop()
        return self.outcome


@pytest.mark.anyio
@pytest.mark.memory_only("the job holds a JobScheduler, which does not pickle")
@pytest.mark.parametrize("cancel_running", [False, True])
@pytest.mark.parametrize("in_child_task", [False, True])
async def test_stop_from_inside_a_job_is_refused_at_once(
    make_scheduler: Make, cancel_running: bool, in_child_task: bool
) -> None:
    """stop() from a job (or its child task) raises at once; the scheduler keeps running."""
    async with make_scheduler() as s:
        stopper = _Stopper(cancel_running, in_child_task)
        stopper.target = s
        s.submit(stopper)
        with anyio.fail_after(10):
            await s.join()
        assert stopper.status is S.COMPLETED
        assert stopper.outcome.startswith("stop() was called from inside a job of this scheduler")
        after = s.submit(Ok("after"))  # the scheduler still takes and runs work
        with anyio.fail_after(10):
            await s.join()
        assert s.get(after).status is S.COMPLETED
    with pytest.raises(js.SchedulerStoppedError):
        s.submit(Ok())


@pytest.mark.anyio
@pytest.mark.memory_only("the job holds a JobScheduler, which does not pickle")
async def test_a_job_may_stop_another_scheduler(make_scheduler: Make) -> None:
    """Only a scheduler's own jobs are refused: a job can run and stop a nested one."""
    inner = make_scheduler()
    async with make_scheduler() as outer, inner:
        stopper = _Stopper(cancel_running=False)
        stopper.target = inner
        outer.submit(stopper)
        with anyio.fail_after(10):
            await outer.join()
    assert stopper.outcome == "returned"
    with pytest.raises(js.SchedulerStoppedError):
        inner.submit(Ok())


# ── last_traceback ────────────────────────────────────────────────────────


class _Raises(js.AsyncJob):
    """Fails with ValueError on attempts listed in ``fail_on``, hangs on those in ``hang_on``."""

    def __init__(self, fail_on: tuple[int, ...] = (), hang_on: tuple[int, ...] = (), **kw: Any):
        super().__init__("raises", **kw)
        self.fail_on = fail_on
        self.hang_on = hang_on

    async def run(self) -> str:
        await anyio.lowlevel.checkpoint()
        if self.attempts in self.hang_on:
            await anyio.sleep_forever()
        if self.attempts in self.fail_on:
            self._deep(self.attempts)
        return "ok"

    def _deep(self, attempt: int) -> None:
        raise ValueError(f"bad input on attempt {attempt}")


class _ThreadRaises(js.BlockingJob):
    def run_sync(self) -> None:
        raise KeyError("missing row")


FAST = js.RetryPolicy(max_retries=3, base_delay=0.01, jitter=False)


@pytest.mark.anyio
async def test_last_traceback_keeps_the_failed_attempts_frames(make_scheduler: Make) -> None:
    """A failed job keeps the formatted traceback of its last failure, with the job's frames."""
    async with make_scheduler() as s:
        failed = s.submit(_Raises(fail_on=(1, 2), retry=js.RetryPolicy(max_retries=1)))
        recovered = s.submit(_Raises(fail_on=(1,), retry=FAST))
        with anyio.fail_after(10):
            await s.join()
    job = s.get(failed)
    assert job.status is S.FAILED and job.last_error == "ValueError: bad input on attempt 2"
    tb = job.last_traceback
    assert tb is not None and tb.startswith("Traceback (most recent call last):")
    assert "in _deep" in tb and tb.rstrip().endswith("ValueError: bad input on attempt 2")
    # A retry that then succeeded clears both: a completed job shows no error
    # (issue 22); the attempt history keeps the earlier one on a durable store.
    ok = s.get(recovered)
    assert ok.status is S.COMPLETED and ok.attempts == 2
    assert (ok.last_error, ok.last_traceback) == (None, None)


@pytest.mark.anyio
async def test_last_traceback_goes_with_last_error(make_scheduler: Make) -> None:
    """A timeout or a cancellation has no traceback: last_traceback is None with its last_error."""
    s = make_scheduler()
    waiting_job = _Raises(fail_on=(1,), retry=js.RetryPolicy(base_delay=3600))
    retry_wait = anyio.Event()

    def on_retry_wait(job: js.Job, old: S, new: S) -> None:
        if job is waiting_job and new is S.RETRY_WAIT:
            retry_wait.set()

    s.add_listener(on_retry_wait)
    async with s:
        once = js.RetryPolicy(max_retries=1, base_delay=0.01)
        timed_out = s.submit(_Raises(fail_on=(1,), hang_on=(2,), timeout=0.5, retry=once))
        waiting = s.submit(waiting_job)
        with anyio.fail_after(10):
            await retry_wait.wait()
        assert s.get(waiting).last_traceback is not None
        assert s.cancel(waiting)
        with anyio.fail_after(10):
            await s.join()
    job = s.get(timed_out)
    assert (job.status, job.last_error, job.last_traceback) == (
        S.TIMED_OUT,
        "timed out after 0.5s",
        None,
    )
    job = s.get(waiting)
    assert (job.status, job.last_error, job.last_traceback) == (S.CANCELLED, "cancelled", None)


@pytest.mark.anyio
async def test_last_traceback_of_a_thread_job(make_scheduler: Make) -> None:
    """A thread job's traceback shows its run_sync frame."""
    async with make_scheduler() as s:
        # No timeout: trio's mock clock would jump past it while the thread runs.
        job_id = s.submit(_ThreadRaises("rows", timeout=None, retry=js.RetryPolicy(max_retries=0)))
        await s.join()
    tb = s.get(job_id).last_traceback
    assert tb is not None and "in run_sync" in tb and "KeyError: 'missing row'" in tb
