"""The process executor keeps to itself: it never imports the user's ``__main__``,
and the processes a job starts end with the job's worker."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import anyio
import proc_jobs
import pytest
from test_exec_process import NO_RETRY, WATCHDOG, is_dead, process_job, read_pid, run_all

import jobsched as js
from jobsched_process import ProcessExecutor

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# ── Scripts without an `if __name__ == "__main__":` guard ────────────────

# Everything at module level, as a newcomer writes it: a print, a job class
# and a function defined in __main__ (shipped by value), one from an
# importable module of the application (shipped by name), and the run.
_SCRIPT = """\
import anyio
import jobsched as js
from {helpers} import add_one

print("module level ran", flush=True)


class Double(js.CpuBoundJob):
    def __init__(self, value):
        super().__init__("double")
        self.value = value

    def run_sync(self):
        return add_one(self.value * 2)


def triple(value):
    return value * 3


async def main():
    async with js.JobScheduler() as s:
        double = s.submit(Double(20))
        tripled = s.submit(js.FunctionJob(triple, (5,), executor="process"))
        await s.join()
        for job_id in (double, tripled):
            job = s.get(job_id)
            print(job.status.name, job.result, job.last_error, flush=True)


anyio.run(main)
"""

_HELPERS = "def add_one(value):\n    return value + 1\n"
_EXPECTED = "module level ran\nCOMPLETED 41 None\nCOMPLETED 15 None\n"


async def _run_script(args: list[str], cwd: Path) -> str:
    with anyio.fail_after(WATCHDOG * 3):
        done = await anyio.run_process([sys.executable, *args], cwd=cwd, check=False, stderr=None)
    assert done.returncode == 0
    return done.stdout.decode()


async def test_unguarded_script_runs_its_module_level_code_once(tmp_path: Path) -> None:
    """`python script.py` without a main guard: one module-level run, process jobs work."""
    (tmp_path / "helpers.py").write_text(_HELPERS)
    (tmp_path / "script.py").write_text(_SCRIPT.format(helpers="helpers"))
    assert await _run_script(["script.py"], tmp_path) == _EXPECTED


async def test_unguarded_module_run_with_dash_m_runs_once(tmp_path: Path) -> None:
    """`python -m app.main` without a main guard: the same, for a module of a package."""
    package = tmp_path / "app"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "helpers.py").write_text(_HELPERS)
    (package / "main.py").write_text(_SCRIPT.format(helpers="app.helpers"))
    assert await _run_script(["-m", "app.main"], tmp_path) == _EXPECTED


# ── A job's own processes end with its worker ────────────────────────────


async def test_cancel_ends_the_processes_a_job_started(tmp_path: Path) -> None:
    """A cancelled job's `sleep 60` child is ended with its worker."""
    pid_file = tmp_path / "pid"
    job = process_job(proc_jobs.spawn_sleep_then_spin, pid_file, timeout=None)
    async with js.JobScheduler(executors={"process": ProcessExecutor(max_processes=1)}) as s:
        s.submit(job)
        grandchild = await read_pid(pid_file)
        try:
            assert s.cancel(job.job_id)
            with anyio.fail_after(WATCHDOG):
                await s.join()
            assert job.status is js.JobStatus.CANCELLED
            await _wait_dead(grandchild)
        finally:
            _kill_if_alive(grandchild)


async def test_timeout_ends_the_processes_a_job_started(tmp_path: Path) -> None:
    """A timed-out job's `sleep 60` child is ended with its worker."""
    pid_file = tmp_path / "pid"
    job = process_job(proc_jobs.spawn_sleep_then_spin, pid_file, timeout=2.0, retry=NO_RETRY)
    try:
        await run_all(ProcessExecutor(max_processes=1), job)
        assert job.status is js.JobStatus.TIMED_OUT
        await _wait_dead(proc_jobs_pid(pid_file))
    finally:
        if pid_file.exists():
            _kill_if_alive(proc_jobs_pid(pid_file))


async def test_processes_left_behind_end_with_the_pool() -> None:
    """A background process a finished job left running ends when the executor shuts down."""
    job = process_job(proc_jobs.spawn_sleep)
    await run_all(ProcessExecutor(max_processes=1), job)
    assert job.status is js.JobStatus.COMPLETED
    try:
        await _wait_dead(job.result)
    finally:
        _kill_if_alive(job.result)


def proc_jobs_pid(path: Path) -> int:
    return int(path.read_text())


async def _wait_dead(pid: int) -> None:
    """Polls for the process's end: generous, for a loaded machine."""
    with anyio.fail_after(WATCHDOG):
        while not is_dead(pid):  # noqa: ASYNC110 - no event crosses the process boundary
            await anyio.sleep(0.01)


def _kill_if_alive(pid: int) -> None:
    """Don't leave a `sleep 60` behind if the test failed."""
    if not is_dead(pid):
        os.kill(pid, signal.SIGKILL)
