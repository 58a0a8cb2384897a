"""The process executor's worker start is not the job's: neither its timeout nor its started_at.

A worker's start is made slow at will by a ``sitecustomize`` module the test
puts on ``PYTHONPATH``: every worker interpreter started while the variables
are set runs it before anything else, marks that it is waiting, and waits
for the test to open a gate (so the start takes as long as the test wants,
with no sleep deciding it), then writes the monotonic time it was let go,
which the scheduler's default clock shares.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import proc_jobs
import proc_plain
import pytest
from test_exec_process import NO_RETRY, WATCHDOG, process_job, wait_until, worker_children

import jobsched as js
from jobsched_process import ProcessExecutor, WorkerDiedError, _worker

pytestmark = pytest.mark.anyio

# Long enough for a job's own round trip on a loaded machine, short against the
# time the gate is held closed past it.
TIMEOUT = 2.0

SITECUSTOMIZE = """
import os
import time
from pathlib import Path

_gate = os.environ.get("JOBSCHED_TEST_START_GATE")
if _gate:
    _dir = Path(_gate)
    (_dir / f"waiting-{os.getpid()}").touch()
    if os.environ.get("JOBSCHED_TEST_START_EXIT"):
        os._exit(7)
    while not (_dir / "open").exists():
        time.sleep(0.005)
    (_dir / f"released-{os.getpid()}").write_text(repr(time.monotonic()))
"""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Gate:
    """Holds every worker started after :meth:`close` at its start, until :meth:`open`."""

    def __init__(self, path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.path = path
        self._monkeypatch = monkeypatch
        (path / "sitecustomize.py").write_text(SITECUSTOMIZE)

    def close(self, *, exit_instead: bool = False) -> None:
        paths = [str(self.path), *filter(None, [os.environ.get("PYTHONPATH")])]
        self._monkeypatch.setenv("PYTHONPATH", os.pathsep.join(paths))
        self._monkeypatch.setenv("JOBSCHED_TEST_START_GATE", str(self.path))
        if exit_instead:
            self._monkeypatch.setenv("JOBSCHED_TEST_START_EXIT", "1")

    def waiting(self) -> list[Path]:
        return list(self.path.glob("waiting-*"))

    def open(self) -> None:
        (self.path / "open").touch()

    def released_at(self) -> float:
        (released,) = self.path.glob("released-*")
        return float(released.read_text())


@pytest.fixture
def gate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Gate]:
    yield Gate(tmp_path, monkeypatch)
    (tmp_path / "open").touch()  # no worker stays held if a test failed midway


async def hold_past_the_timeout(gate: Gate, job: js.Job) -> None:
    """Wait until a worker is held at its start, then longer than ``job``'s timeout."""
    await wait_until(lambda: len(gate.waiting()) == 1)
    await anyio.sleep(TIMEOUT * 1.5)
    # Its start has now taken longer than its timeout, and it was not counted.
    assert job.status is js.JobStatus.RUNNING
    gate.open()


async def test_a_cold_pools_start_counts_neither_in_the_timeout_nor_in_started_at(
    gate: Gate,
) -> None:
    """A job whose timeout is shorter than its worker's start, but not than its work, succeeds."""
    gate.close()
    job = process_job(proc_jobs.getpid, timeout=TIMEOUT, retry=NO_RETRY)
    async with js.JobScheduler(
        num_workers=1, executors={"process": ProcessExecutor(max_processes=1)}
    ) as s:
        s.submit(job)
        await hold_past_the_timeout(gate, job)
        with anyio.fail_after(WATCHDOG):
            await s.join()
    assert job.status is js.JobStatus.COMPLETED, job.last_error
    assert job.attempts == 1
    assert job.started_at is not None and job.finished_at is not None
    assert job.started_at > gate.released_at(), "started_at counts the worker's start"
    assert job.finished_at - job.started_at < TIMEOUT


async def test_a_replacement_workers_start_does_not_count_against_the_next_job(
    gate: Gate, tmp_path: Path
) -> None:
    """After a timeout kills a worker, its successor's start is not the next job's time."""
    executor = ProcessExecutor(max_processes=1)
    assert await executor.run(proc_jobs.Square(2)) == 4  # a warm worker, started ungated
    gate.close()
    spin = proc_jobs.SpinForever(tmp_path / "pid", timeout=1.0, retry=NO_RETRY)
    after = process_job(proc_jobs.getpid, timeout=TIMEOUT, retry=NO_RETRY)
    async with js.JobScheduler(num_workers=1, executors={"process": executor}) as s:
        s.submit(spin)
        s.submit(after)
        await hold_past_the_timeout(gate, after)
        with anyio.fail_after(WATCHDOG):
            await s.join()
    assert spin.status is js.JobStatus.TIMED_OUT
    assert after.status is js.JobStatus.COMPLETED, after.last_error
    assert after.started_at is not None
    assert after.started_at > gate.released_at()


async def test_a_job_cancelled_while_its_worker_starts_ends_that_worker(gate: Gate) -> None:
    """cancel() during the start: CANCELLED at once, and the half-started worker is ended."""
    gate.close()
    job = process_job(proc_jobs.getpid, timeout=TIMEOUT)
    async with js.JobScheduler(
        num_workers=1, executors={"process": ProcessExecutor(max_processes=1)}
    ) as s:
        s.submit(job)
        await wait_until(lambda: len(gate.waiting()) == 1)
        assert s.cancel(job.job_id)
        with anyio.fail_after(WATCHDOG):
            await s.join()
        assert job.status is js.JobStatus.CANCELLED
        assert worker_children() == []


async def test_a_worker_that_dies_before_it_is_ready_fails_the_attempt(
    gate: Gate, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A start that fails is a WorkerDiedError saying so (retryable); the pool serves on."""
    executor = ProcessExecutor(max_processes=1)
    gate.close(exit_instead=True)
    with pytest.raises(WorkerDiedError, match=r"died before it was ready: exited with code 7"):
        await executor.run(proc_jobs.Square(3))
    monkeypatch.delenv("JOBSCHED_TEST_START_GATE")
    job = proc_jobs.Square(3, retry=NO_RETRY)
    async with js.JobScheduler(executors={"process": executor}) as s:
        s.submit(job)
        with anyio.fail_after(WATCHDOG):
            await s.join()
    assert job.result == 9
    assert worker_children() == []


async def test_a_start_refused_by_shutdown_cancel_running(gate: Gate) -> None:
    """shutdown(cancel_running=True) during a start stops the job with the shutdown's error."""
    executor = ProcessExecutor(max_processes=1)
    gate.close()
    async with anyio.create_task_group() as tg:
        errors: list[BaseException] = []

        async def run() -> None:
            try:
                await executor.run(proc_jobs.Square(3))
            except Exception as exc:
                errors.append(exc)

        tg.start_soon(run)
        await wait_until(lambda: len(gate.waiting()) == 1)
        with anyio.fail_after(WATCHDOG):
            await executor.shutdown(cancel_running=True)
    (error,) = errors
    assert isinstance(error, js.NonRetryableError)
    assert "shut down with cancel_running=True" in str(error)
    assert worker_children() == []


# ── What a start costs ───────────────────────────────────────────────────


async def test_a_worker_running_only_functions_never_imports_jobsched() -> None:
    """A plain FunctionJob travels as its call: its worker loads neither jobsched nor anyio."""
    job = process_job(proc_plain.loaded, "jobsched", "anyio", "jobsched_process._executor")
    async with js.JobScheduler(executors={"process": ProcessExecutor(max_processes=1)}) as s:
        s.submit(job)
        with anyio.fail_after(WATCHDOG):
            await s.join()
    assert job.status is js.JobStatus.COMPLETED, job.last_error
    assert job.result == [False, False, False]


async def test_a_worker_starts_without_cloudpickle_and_loads_it_when_a_reply_needs_it() -> None:
    """Replies go with plain pickle until one needs cloudpickle: a lambda, a local class."""
    first = process_job(proc_plain.loaded, "cloudpickle")
    by_value = process_job(proc_plain.adder, 40)
    local_error = process_job(proc_plain.raise_local_error, "made here", retry=NO_RETRY)
    then = process_job(proc_plain.loaded, "cloudpickle")
    executor = ProcessExecutor(max_processes=1)
    async with js.JobScheduler(num_workers=1, executors={"process": executor}) as s:
        for job in (first, by_value, local_error, then):
            s.submit(job)
        with anyio.fail_after(WATCHDOG):
            await s.join()
    assert first.result == [False]
    assert by_value.result(2) == 42
    assert local_error.last_error == "LocalError: made here"
    assert then.result == [True]


class Doubled(js.FunctionJob):
    """A FunctionJob subclass with a run_sync of its own: it must travel whole."""

    def run_sync(self) -> Any:
        return 2 * super().run_sync()


async def test_a_function_job_subclass_runs_its_own_run_sync() -> None:
    job = Doubled(abs, (-21,), executor="process")
    async with js.JobScheduler(executors={"process": ProcessExecutor(max_processes=1)}) as s:
        s.submit(job)
        with anyio.fail_after(WATCHDOG):
            await s.join()
    assert job.result == 42


def test_importing_the_package_loads_no_parent_side() -> None:
    """What each worker imports first: the package, without anyio, jobsched or cloudpickle."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, jobsched_process._worker; print(sorted({'anyio', 'jobsched', "
            "'cloudpickle'} & set(sys.modules)))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == "[]"


def test_a_preload_that_fails_is_left_to_the_jobs_own_load() -> None:
    """A module that cannot be imported does not stop the start, nor the modules after it."""
    sys.modules.pop("colorsys", None)
    _worker._preload("no_such_module_for_jobsched_tests,colorsys")
    assert "colorsys" in sys.modules
