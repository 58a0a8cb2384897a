"""The dask executor's default cluster in a script without a main guard (issue 22).

A ``LocalCluster`` with processes started its workers with multiprocessing's
main-module fix-up, so a script without ``if __name__ == "__main__":`` ran
again in every worker, whose own cluster start then failed ("...before the
current process has finished its bootstrapping phase"): the module-level
code ran four times and the job never ran. Real scripts, in subprocesses.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from jobsched_dask import _spawn

# A cluster of processes on a loaded machine takes seconds to start; a
# script that regressed would hang, not fail, without this bound.
TIMEOUT = 180

_SCRIPT = """\
import anyio
import jobsched as js
from jobsched_dask import DaskExecutor

print("module level ran", flush=True)


class Square(js.CpuBoundJob):
    executor = "dask"

    def __init__(self, value):
        super().__init__("square", retry=js.RetryPolicy(max_retries=0))
        self.value = value

    def run_sync(self):
        return self.value * self.value


def triple(value):
    return 3 * value


async def main():
    executor = DaskExecutor(n_workers=1, threads_per_worker=1)
    async with js.JobScheduler(executors={"dask": executor}) as s:
        a = s.submit(Square(7))
        b = s.submit(js.FunctionJob(triple, (5,), executor="dask"))
        with anyio.fail_after(120):
            await s.join()
        for job_id in (a, b):
            job = s.get(job_id)
            print(job.status.name, job.result, job.last_error, flush=True)


anyio.run(main)
"""
_EXPECTED = "module level ran\nCOMPLETED 49 None\nCOMPLETED 15 None\n"


def _run(args: list[str], cwd: Path, method: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DASK_DISTRIBUTED__WORKER__MULTIPROCESSING_METHOD": method}
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_an_unguarded_script_runs_once_on_the_default_cluster(tmp_path: Path, method: str) -> None:
    """`python script.py`, no main guard, workers started by spawn (Dask's
    default) or forkserver: one module-level run, and the jobs defined in the
    script run on the cluster's worker processes."""
    (tmp_path / "script.py").write_text(_SCRIPT)
    done = _run(["script.py"], tmp_path, method)
    assert done.returncode == 0, done.stderr
    assert done.stdout == _EXPECTED, done.stderr
    assert "bootstrapping phase" not in done.stderr


def test_an_unguarded_module_run_with_dash_m_runs_once(tmp_path: Path) -> None:
    """`python -m app.main` without a main guard: the same (the fix-up imports
    a module by name there, not a path)."""
    package = tmp_path / "app"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "main.py").write_text(_SCRIPT)
    done = _run(["-m", "app.main"], tmp_path, "spawn")
    assert done.returncode == 0, done.stderr
    assert done.stdout == _EXPECTED, done.stderr


def test_only_the_nannys_worker_processes_skip_the_main_module() -> None:
    """Any other process (the application's own multiprocessing) keeps the
    fix-up its pickles may need."""
    data = {"name": "x", "init_main_from_path": "/app/script.py", "sys_path": ["/app"]}
    prepared = _spawn.without_main(lambda name: {**data, "name": name})
    assert prepared("Process-1") == {**data, "name": "Process-1"}
    assert prepared(_spawn.NANNY_PROCESS) == {"name": _spawn.NANNY_PROCESS, "sys_path": ["/app"]}
    named = _spawn.without_main(lambda name: {"init_main_from_name": "app.main"})
    assert named(_spawn.NANNY_PROCESS) == {}


def test_install_wraps_once() -> None:
    """Installing twice (two executors, or one started again) wraps once."""
    import multiprocessing.spawn

    original = multiprocessing.spawn.get_preparation_data
    try:
        _spawn.install()
        first = multiprocessing.spawn.get_preparation_data
        _spawn.install()
        assert multiprocessing.spawn.get_preparation_data is first
        assert first is original or first.__wrapped__ is original  # type: ignore[attr-defined]
    finally:
        multiprocessing.spawn.get_preparation_data = original
