"""The ``process`` executor: results, errors, killing, deaths, pickling, the pool's life."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
import threading
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import proc_jobs
import pytest

import jobsched as js
from jobsched._engine._resume import CANCEL_GRACE
from jobsched_process import ProcessExecutor, WorkerDiedError

pytestmark = pytest.mark.anyio

# Processes live on the real clock. Most tests run on asyncio only, to keep
# worker start-ups few; the ones that exercise waiting on pipes and killing
# run on trio too.
WATCHDOG = 20
BOTH = pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
NO_RETRY = js.RetryPolicy(max_retries=0)
FAST_RETRY = js.RetryPolicy(max_retries=3, base_delay=0.0, jitter=False)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def process_job(func: Any, *args: Any, **kw: Any) -> js.FunctionJob:
    return js.FunctionJob(func, args, executor="process", **kw)


async def run_all(executor: ProcessExecutor, *jobs: js.Job, num_workers: int = 4) -> None:
    """Run ``jobs`` to the end on a scheduler, then shut it (and ``executor``) down."""
    async with js.JobScheduler(num_workers=num_workers, executors={"process": executor}) as s:
        for job in jobs:
            s.submit(job)
        with anyio.fail_after(WATCHDOG):
            await s.join()


async def wait_until(predicate: Callable[[], bool]) -> None:
    """Poll state that another process changes; the watchdog fails a hung test."""
    with anyio.fail_after(WATCHDOG):
        while not predicate():  # noqa: ASYNC110 - no event crosses the process boundary
            await anyio.sleep(0.005)


def pid_in(path: Path) -> int:
    return int(path.read_text())


async def read_pid(path: Path) -> int:
    """The pid a job wrote to ``path``, once it is running."""
    await wait_until(path.exists)
    return pid_in(path)


def is_gone(pid: int) -> bool:
    """True once no process has this pid (it was reaped, not just a zombie)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def is_dead(pid: int) -> bool:
    """True once the process has exited, even if nobody has reaped it yet."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rpartition(")")[2].split()[0] == "Z"


def worker_children() -> list[int]:
    """The pids of this process's children that are process-executor workers (Linux)."""
    pids: list[int] = []
    for children in Path("/proc/self/task").glob("*/children"):
        for pid in children.read_text().split():
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:  # ended meanwhile
                continue
            if b"jobsched_process._worker" in cmdline:
                pids.append(int(pid))
    return pids


# ── Results and errors ───────────────────────────────────────────────────


@BOTH
async def test_result_and_error_through_the_scheduler() -> None:
    """A return value comes back as the result; an exception as "Type: message"."""
    ok = proc_jobs.Square(7)
    bad = process_job(proc_jobs.raise_value_error, retry=NO_RETRY)
    await run_all(ProcessExecutor(max_processes=1), ok, bad)
    assert ok.status is js.JobStatus.COMPLETED
    assert ok.result == 49
    assert bad.status is js.JobStatus.FAILED
    assert bad.last_error == "ValueError: boom"


async def test_job_runs_in_another_process() -> None:
    """The work happens in a worker process, not in the scheduler's."""
    job = process_job(proc_jobs.getpid)
    await run_all(ProcessExecutor(max_processes=1), job)
    assert job.result != os.getpid()


async def test_remote_traceback_is_kept(caplog: pytest.LogCaptureFixture) -> None:
    """The worker's traceback rides along as the exception's cause, and is logged at debug."""
    caplog.set_level(logging.DEBUG, logger="jobsched.process")
    executor = ProcessExecutor(max_processes=1)
    with pytest.raises(ValueError, match="boom") as info:
        await executor.run(process_job(proc_jobs.raise_value_error))
    await executor.shutdown()
    cause = str(info.value.__cause__)
    assert "in raise_value_error" in cause
    assert 'raise ValueError("boom")' in cause
    assert "in raise_value_error" in caplog.text


async def test_functions_and_classes_travel_by_value() -> None:
    """A closure, a lambda and a job class defined in a function all run (cloudpickle)."""
    factor = 3

    class Local(js.CpuBoundJob):
        def run_sync(self) -> str:
            return f"local class, factor {factor}"

    def closure(x: int) -> int:
        return x * factor

    jobs = [
        Local("local"),
        process_job(closure, 5),
        process_job(lambda: "lambda"),
    ]
    await run_all(ProcessExecutor(max_processes=2), *jobs)
    assert [job.result for job in jobs] == ["local class, factor 3", 15, "lambda"]


async def test_non_retryable_error_from_the_worker_is_not_retried() -> None:
    """NonRetryableError raised in the worker keeps its type, so retries are skipped."""
    job = process_job(proc_jobs.raise_non_retryable, retry=FAST_RETRY)
    await run_all(ProcessExecutor(max_processes=1), job)
    assert job.status is js.JobStatus.FAILED
    assert job.attempts == 1
    assert job.last_error == "NonRetryableError: give up"


async def test_exception_that_cannot_be_unpickled_keeps_name_and_message() -> None:
    """An exception class that does not survive pickling still reads "Name: message"."""
    job = process_job(proc_jobs.raise_two_arg_error, retry=NO_RETRY)
    await run_all(ProcessExecutor(max_processes=1), job)
    assert job.last_error == "TwoArgError: 1 and 2"


@pytest.mark.parametrize(
    ("func", "kind"),
    [
        (proc_jobs.call_sys_exit, SystemExit),
        (proc_jobs.raise_keyboard_interrupt, KeyboardInterrupt),
        (proc_jobs.raise_generator_exit, GeneratorExit),
    ],
    ids=["SystemExit", "KeyboardInterrupt", "GeneratorExit"],
)
async def test_jobs_own_base_exception_is_reraised_and_spares_the_worker(
    func: Any, kind: type[BaseException]
) -> None:
    """sys.exit() and the like in a job reach the caller as themselves; the worker serves on."""
    executor = ProcessExecutor(max_processes=1)
    try:
        before = await executor.run(process_job(proc_jobs.getpid))
        with pytest.raises(kind) as info:
            await executor.run(process_job(func))
        assert type(info.value) is kind
        assert str(info.value) == "3"
        assert func.__name__ in "".join(traceback.format_exception(info.value))
        assert await executor.run(process_job(proc_jobs.getpid)) == before
    finally:
        await executor.shutdown()


async def test_other_base_exception_comes_back_as_a_plain_exception() -> None:
    """A CancelledError raised by a job's own code must not pass for a cancellation here."""
    executor = ProcessExecutor(max_processes=1)
    try:
        with pytest.raises(Exception, match="not ours") as info:
            await executor.run(process_job(proc_jobs.raise_cancelled_error))
        assert type(info.value).__name__ == "CancelledError"
        assert not isinstance(info.value, asyncio.CancelledError)
    finally:
        await executor.shutdown()


async def test_formatted_exception_shows_the_workers_frames() -> None:
    """format_exception of a rebuilt exception includes the job function's frame in the worker."""
    executor = ProcessExecutor(max_processes=1)
    try:
        for func, message in [
            (proc_jobs.raise_value_error, "boom"),
            (proc_jobs.raise_two_arg_error, "1 and 2"),
        ]:
            with pytest.raises(Exception, match=message) as info:
                await executor.run(process_job(func))
            text = "".join(traceback.format_exception(info.value))
            assert f", in {func.__name__}" in text
            assert "The above exception was the direct cause" in text
    finally:
        await executor.shutdown()


async def test_a_failed_process_jobs_last_traceback_is_the_workers() -> None:
    """Through the scheduler, last_traceback shows where the job failed in its worker."""
    job = process_job(proc_jobs.raise_value_error)
    job.retry = js.RetryPolicy(max_retries=0)
    async with js.JobScheduler(executors={"process": ProcessExecutor(max_processes=1)}) as s:
        s.submit(job)
        with anyio.fail_after(60):
            await s.join()
    assert job.status is js.JobStatus.FAILED and job.last_error == "ValueError: boom"
    assert job.last_traceback is not None
    assert ", in raise_value_error" in job.last_traceback  # the worker's frame


async def test_async_job_is_a_clear_type_error() -> None:
    """An AsyncJob sent to the process executor names what the executor runs."""

    class Async(js.AsyncJob):
        async def run(self) -> None:
            pass

    with pytest.raises(TypeError, match=r"Async has no `def run_sync\(self\)`"):
        await ProcessExecutor(max_processes=1).run(Async("async"))


# ── Pickling failures ────────────────────────────────────────────────────


async def test_unpicklable_job_fails_without_retry() -> None:
    """A job holding a lock fails at once with NonRetryableError naming the type."""
    executor = ProcessExecutor(max_processes=1)
    bad = process_job(len, threading.Lock(), retry=FAST_RETRY)
    good = proc_jobs.Square(3)
    await run_all(executor, bad, good, num_workers=1)
    assert bad.status is js.JobStatus.FAILED
    assert bad.attempts == 1
    assert bad.last_error is not None
    assert bad.last_error.startswith("NonRetryableError: ")
    assert "cannot be sent to a worker process" in bad.last_error
    assert "_thread.lock" in bad.last_error
    assert good.result == 9


async def test_unpicklable_result_fails_without_retry_and_keeps_the_worker() -> None:
    """A result that cannot be pickled fails the attempt; the same worker serves on."""
    executor = ProcessExecutor(max_processes=1)
    before = process_job(proc_jobs.getpid)
    bad = process_job(proc_jobs.return_lock, retry=FAST_RETRY)
    after = process_job(proc_jobs.getpid)
    await run_all(executor, before, bad, after, num_workers=1)
    assert bad.status is js.JobStatus.FAILED
    assert bad.attempts == 1
    assert bad.last_error is not None
    assert bad.last_error.startswith("NonRetryableError: ")
    assert "returned a _thread.lock, which cannot be sent back" in bad.last_error
    assert before.result == after.result


async def test_job_that_cannot_be_loaded_in_the_worker() -> None:
    """Unpickling failing in the worker is a NonRetryableError that says so."""
    executor = ProcessExecutor(max_processes=1)
    bad = process_job(len, proc_jobs.LoadsBadly(), retry=FAST_RETRY)
    good = proc_jobs.Square(4)
    await run_all(executor, bad, good, num_workers=1)
    assert bad.status is js.JobStatus.FAILED
    assert bad.attempts == 1
    assert bad.last_error is not None
    assert "could not load" in bad.last_error
    assert "RuntimeError: this object cannot be loaded" in bad.last_error
    assert good.result == 16


# ── Timeouts and cancellation end the process ────────────────────────────


@BOTH
async def test_timeout_kills_the_worker_and_the_slot_serves_on(tmp_path: Path) -> None:
    """An endless job that times out has its process ended; the next job still runs."""
    executor = ProcessExecutor(max_processes=1)
    # A warm worker: the timeout should not be spent starting the pool.
    assert await executor.run(proc_jobs.Square(1)) == 1
    spin = proc_jobs.SpinForever(tmp_path / "pid", timeout=1.0, retry=NO_RETRY)
    after = process_job(proc_jobs.getpid)
    await run_all(executor, spin, after, num_workers=1)
    pid = pid_in(tmp_path / "pid")
    assert spin.status is js.JobStatus.TIMED_OUT
    assert spin.last_error == "timed out after 1.0s"
    assert is_gone(pid), "the spinning process outlived its timeout"
    assert after.status is js.JobStatus.COMPLETED
    assert after.result != pid


async def cancel_once_running(executor: ProcessExecutor, job: proc_jobs.SpinForever) -> int:
    """Run ``job`` on a scheduler, cancel it once it runs; returns its pid."""
    async with js.JobScheduler(executors={"process": executor}) as s:
        s.submit(job)
        pid = await read_pid(job.pid_file)
        assert s.cancel(job.job_id)
        with anyio.fail_after(WATCHDOG):
            await s.join()
    assert job.status is js.JobStatus.CANCELLED
    return pid


@BOTH
async def test_cancel_kills_the_worker(tmp_path: Path) -> None:
    """cancel() on a running process job ends its process before the job is CANCELLED."""
    executor = ProcessExecutor(max_processes=1)
    async with js.JobScheduler(executors={"process": executor}) as s:
        spin = proc_jobs.SpinForever(tmp_path / "pid", timeout=None)
        s.submit(spin)
        pid = await read_pid(tmp_path / "pid")
        assert s.cancel(spin.job_id)
        with anyio.fail_after(WATCHDOG):
            await s.join()
        assert spin.status is js.JobStatus.CANCELLED
        assert is_gone(pid)
        after = s.submit(proc_jobs.Square(5))
        with anyio.fail_after(WATCHDOG):
            await s.join()
        assert s.get(after).result == 25


async def test_job_ignoring_sigterm_gets_sigkill(tmp_path: Path) -> None:
    """A job that ignores SIGTERM is SIGKILLed after the grace period."""
    executor = ProcessExecutor(max_processes=1, grace_period=0.1)
    spin = proc_jobs.SpinForever(tmp_path / "pid", ignore_sigterm=True, timeout=None)
    pid = await cancel_once_running(executor, spin)
    assert is_gone(pid)


async def test_grace_period_longer_than_the_cancel_grace_is_honoured(tmp_path: Path) -> None:
    """The scheduler stops waiting for the attempt after its cancel grace (the job is
    CANCELLED, the worker moves on) but never cuts the executor's clean-up short:
    the process gets its whole grace period, then SIGKILL, before stop() returns."""
    executor = ProcessExecutor(max_processes=1, grace_period=5 * CANCEL_GRACE)
    spin = proc_jobs.SpinForever(tmp_path / "pid", ignore_sigterm=True, timeout=None)
    async with js.JobScheduler(executors={"process": executor}) as s:
        s.submit(spin)
        pid = await read_pid(spin.pid_file)
        assert s.cancel(spin.job_id)
        with anyio.fail_after(WATCHDOG):
            await s.join()
        assert spin.status is js.JobStatus.CANCELLED
        assert not is_gone(pid)  # still in its grace period
    await wait_until(lambda: is_gone(pid))


async def test_cancel_from_outside_the_scheduler(tmp_path: Path) -> None:
    """Cancelling the task awaiting run() ends the worker process too."""
    executor = ProcessExecutor(max_processes=1)
    async with anyio.create_task_group() as tg:
        tg.start_soon(executor.run, proc_jobs.SpinForever(tmp_path / "pid"))
        pid = await read_pid(tmp_path / "pid")
        tg.cancel_scope.cancel()
    assert is_gone(pid)
    assert await executor.run(proc_jobs.Square(6)) == 36
    await executor.shutdown()


# ── Worker deaths ────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("func", "how"),
    [
        (proc_jobs.exit_with_3, "exited with code 3"),
        (proc_jobs.sigkill_self, "killed by signal SIGKILL"),
        (proc_jobs.segfault, "killed by signal SIGSEGV"),
    ],
    ids=["os._exit", "sigkill", "segfault"],
)
async def test_worker_death_fails_only_that_attempt(func: Any, how: str) -> None:
    """A worker dying mid-job fails that job, says how it died, and the pool serves on."""
    executor = ProcessExecutor(max_processes=2)
    dies = process_job(func, retry=NO_RETRY, name="dies")
    others = [proc_jobs.Square(i) for i in range(6)]
    await run_all(executor, dies, *others)
    assert dies.status is js.JobStatus.FAILED
    assert dies.last_error is not None
    assert dies.last_error.startswith("WorkerDiedError: the worker process (pid "), dies.last_error
    assert dies.last_error.endswith(f"running {dies.job_id} ('dies') died: {how}")
    assert [job.result for job in others] == [i * i for i in range(6)]


async def test_worker_death_is_retried() -> None:
    """Deaths are ordinary failures: with retries the job succeeds on a fresh worker."""
    job = proc_jobs.ExitUntilAttempt(3, retry=FAST_RETRY)
    await run_all(ProcessExecutor(max_processes=1), job)
    assert job.status is js.JobStatus.COMPLETED
    assert job.result == "ok on attempt 3"


async def test_death_error_from_run_directly() -> None:
    """Awaiting run() itself raises WorkerDiedError when the worker dies."""
    executor = ProcessExecutor(max_processes=1)
    with pytest.raises(WorkerDiedError, match="died: exited with code 3"):
        await executor.run(process_job(proc_jobs.exit_with_3))
    await executor.shutdown()


async def test_idle_worker_killed_from_outside_is_replaced() -> None:
    """A worker that died while idle is not handed a job: a new one is started."""
    executor = ProcessExecutor(max_processes=1)
    first = await executor.run(process_job(proc_jobs.getpid))
    os.kill(first, signal.SIGKILL)
    await wait_until(lambda: is_dead(first))
    # A retry covers the instant between the pid vanishing and its exit
    # status reaching us; the pool must not stay broken either way.
    job = process_job(proc_jobs.getpid, retry=FAST_RETRY)
    await run_all(executor, job)
    assert job.status is js.JobStatus.COMPLETED
    assert job.result != first


# ── The pool ─────────────────────────────────────────────────────────────


async def test_workers_are_reused_and_bounded() -> None:
    """Eight jobs on four scheduler workers use at most max_processes=2 processes."""
    executor = ProcessExecutor(max_processes=2)
    jobs = [process_job(proc_jobs.getpid) for _ in range(8)]
    await run_all(executor, *jobs, num_workers=4)
    pids = {job.result for job in jobs}
    assert 1 <= len(pids) <= 2
    assert os.getpid() not in pids


async def test_nothing_starts_before_the_first_job() -> None:
    """Constructing the executor, or a scheduler with it, starts no process."""
    before = worker_children()
    executor = ProcessExecutor(max_processes=2)
    async with js.JobScheduler(executors={"process": executor}):
        assert worker_children() == before
    assert worker_children() == before


async def test_shutdown_leaves_no_child_processes() -> None:
    """After the scheduler stops, every worker process it used is gone."""
    jobs = [process_job(proc_jobs.getpid) for _ in range(4)]
    await run_all(ProcessExecutor(max_processes=2), *jobs)
    assert worker_children() == []
    assert all(is_gone(job.result) for job in jobs)


@BOTH
async def test_stop_cancel_running_kills_running_jobs(tmp_path: Path) -> None:
    """stop(cancel_running=True) cancels a running process job and ends its process."""
    executor = ProcessExecutor(max_processes=1)
    async with js.JobScheduler(executors={"process": executor}) as s:
        spin = proc_jobs.SpinForever(tmp_path / "pid", timeout=None)
        s.submit(spin)
        pid = await read_pid(tmp_path / "pid")
        with anyio.fail_after(WATCHDOG):
            await s.stop(cancel_running=True)
    assert spin.status is js.JobStatus.CANCELLED
    assert is_gone(pid)
    assert worker_children() == []


async def test_executor_shutdown_cancel_running(tmp_path: Path) -> None:
    """shutdown(cancel_running=True) kills the running job and refuses the waiting one."""
    executor = ProcessExecutor(max_processes=1, grace_period=0.1)
    errors: list[BaseException] = []

    async def run(job: js.Job) -> None:
        try:
            await executor.run(job)
        except js.NonRetryableError as exc:
            errors.append(exc)

    async with anyio.create_task_group() as tg:
        tg.start_soon(run, proc_jobs.SpinForever(tmp_path / "pid", ignore_sigterm=True))
        pid = await read_pid(tmp_path / "pid")
        tg.start_soon(run, proc_jobs.Square(2))
        await wait_until(lambda: executor._in_flight == 2)  # peeking: it waits for the slot
        with anyio.fail_after(WATCHDOG):
            await executor.shutdown(cancel_running=True)
    assert len(errors) == 2
    assert all("shut down with cancel_running=True" in str(e) for e in errors)
    assert is_gone(pid)
    assert worker_children() == []


async def test_shutdown_waits_for_running_jobs_and_refuses_new_ones(tmp_path: Path) -> None:
    """shutdown() lets a running job finish, and refuses run() calls made meanwhile."""
    executor = ProcessExecutor(max_processes=1)
    release = tmp_path / "release"
    results: list[Any] = []

    async def run() -> None:
        results.append(await executor.run(proc_jobs.WaitForFile(tmp_path / "pid", release)))

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        pid = await read_pid(tmp_path / "pid")
        tg.start_soon(executor.shutdown)
        await wait_until(lambda: executor._closing)  # peeking: has shutdown() begun?
        with pytest.raises(js.NonRetryableError, match="the process executor is shutting down"):
            await executor.run(proc_jobs.Square(2))
        assert results == []
        release.write_text("go")
    assert results == [pid]
    assert is_gone(pid)
    assert worker_children() == []


_ORPHAN_SCRIPT = """
import os, sys, pathlib, anyio
sys.path.insert(0, {tests!r})
import jobsched as js, proc_jobs
from jobsched_process import ProcessExecutor

async def main():
    executor = ProcessExecutor(max_processes=2)
    print(await executor.run(js.FunctionJob(proc_jobs.getpid, executor="process")), flush=True)
    if {crash!r}:
        async with anyio.create_task_group() as tg:
            pid_file = pathlib.Path({pid_file!r})
            tg.start_soon(executor.run, {job})
            while not pid_file.exists():
                await anyio.sleep(0.01)
            print(pid_file.read_text(), flush=True)
            os._exit(0)  # no clean-up at all

anyio.run(main)  # without crash: exits with an idle worker and no shutdown()
"""


_SPIN = "proc_jobs.SpinForever(pid_file, ignore_sigterm=True)"
_SPAWN = 'js.FunctionJob(proc_jobs.spawn_sleep_then_spin, (pid_file,), executor="process")'


@pytest.mark.parametrize(
    ("crash", "job"),
    [(False, _SPIN), (True, _SPIN), (True, _SPAWN)],
    ids=["exit-without-shutdown", "parent-crash", "parent-crash-with-grandchild"],
)
async def test_workers_never_outlive_the_parent(tmp_path: Path, crash: bool, job: str) -> None:
    """A program that exits without shutdown(), or dies mid-job, leaves no process behind.

    With a grandchild, the pid checked is the job's `sleep 60`: the worker's
    process group goes with it.
    """
    script = _ORPHAN_SCRIPT.format(
        tests=str(Path(__file__).parent), crash=crash, pid_file=str(tmp_path / "pid"), job=job
    )
    with anyio.fail_after(WATCHDOG):
        done = await anyio.run_process([sys.executable, "-c", script])
    pids = [int(line) for line in done.stdout.split()]
    assert len(pids) == (2 if crash else 1)
    try:
        await wait_until(lambda: all(is_dead(pid) for pid in pids))
    finally:
        for pid in pids:  # if the test fails, don't leave a spinner behind
            if not is_dead(pid):
                os.kill(pid, signal.SIGKILL)


async def test_executor_is_reusable_after_shutdown() -> None:
    """A shut-down executor starts new workers when used again."""
    executor = ProcessExecutor(max_processes=1)
    first = process_job(proc_jobs.getpid)
    await run_all(executor, first)
    second = process_job(proc_jobs.getpid)
    await run_all(executor, second)
    assert second.status is js.JobStatus.COMPLETED
    assert second.result != first.result


async def test_workers_see_sys_path_added_after_they_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A module on a path added after the pool started still imports in the worker."""
    executor = ProcessExecutor(max_processes=1)
    assert await executor.run(proc_jobs.Square(2)) == 4  # the worker is running
    (tmp_path / "late_module_for_workers.py").write_text("def answer():\n    return 42\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import late_module_for_workers  # type: ignore[import-not-found]

    try:
        assert await executor.run(process_job(late_module_for_workers.answer)) == 42
    finally:
        await executor.shutdown()
        sys.modules.pop("late_module_for_workers", None)


async def test_installed_plugin_runs_cpu_bound_jobs() -> None:
    """Without an executors= override, the entry point finds this executor."""
    job = process_job(proc_jobs.getpid)
    async with js.JobScheduler() as s:
        s.submit(job)
        with anyio.fail_after(WATCHDOG):
            await s.join()
    assert job.status is js.JobStatus.COMPLETED
    assert job.result != os.getpid()


# ── Configuration ────────────────────────────────────────────────────────


def test_defaults() -> None:
    """One worker per CPU."""
    assert ProcessExecutor().max_processes == (os.cpu_count() or 1)


def test_refused_off_posix(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where there are no process groups, construction says so and what to use instead."""
    monkeypatch.setattr(os, "name", "nt")
    with pytest.raises(RuntimeError, match="needs a POSIX system.*use the thread executor"):
        ProcessExecutor()


@pytest.mark.parametrize("bad", [0, -2, 1.5, "2", True])
def test_bad_max_processes(bad: Any) -> None:
    """max_processes must be a positive integer; the message names the value."""
    with pytest.raises(ValueError, match=rf"max_processes must be .* got {bad!r}"):
        ProcessExecutor(max_processes=bad)


@pytest.mark.parametrize("bad", [-1, float("inf"), float("nan"), "1"])
def test_bad_grace_period(bad: Any) -> None:
    """grace_period must be a finite number of seconds >= 0."""
    with pytest.raises(ValueError, match="grace_period must be a finite number"):
        ProcessExecutor(grace_period=bad)
