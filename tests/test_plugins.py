"""Executor plugins: discovery through entry points, lazy loading, and every failure."""

from __future__ import annotations

import sys
from importlib.metadata import EntryPoint

import anyio
import jobsched_testplugin
import pytest
from fake_plugins import entry_point
from sample_jobs import Ok

import jobsched as js
from jobsched._jobs import _plugins

S = js.JobStatus


def _ep(name: str, value: str, dist: str) -> EntryPoint:
    return entry_point(_plugins.GROUP, name, value, dist)


def test_first_party_executors_are_registered() -> None:
    """The installed workspace registers async, thread, process and the test plugin."""
    names = set(_plugins.registered())
    assert {"async", "thread", "process", "recording"} <= names


def test_third_party_plugin_loads_through_a_real_entry_point() -> None:
    """A job naming a third-party executor runs on it, found via importlib.metadata."""

    class Recorded(js.AsyncJob):
        executor = "recording"

        async def run(self) -> None:  # pragma: no cover - the plugin calls run_sync
            raise AssertionError

        def run_sync(self) -> str:
            return "ran on the plugin"

    async def main() -> js.JobScheduler:
        async with js.JobScheduler() as s:
            before = len(jobsched_testplugin.instances)
            s.submit(Recorded("r"))
            assert len(jobsched_testplugin.instances) == before + 1
            await s.join()
        return s

    s = anyio.run(main)
    job = s.jobs()[0]
    plugin = jobsched_testplugin.instances[-1]
    assert (job.status, job.result) == (S.COMPLETED, "ran on the plugin")
    assert plugin.ran == [job.job_id] and plugin.shut_down


def test_plugins_load_lazily() -> None:
    """Creating a scheduler and running async jobs never imports the process executor."""
    code = (
        "import sys, anyio, jobsched as js\n"
        "async def f(): return 1\n"
        "async def main():\n"
        "    async with js.JobScheduler() as s:\n"
        "        s.submit(js.FunctionJob(f)); await s.join()\n"
        "anyio.run(main)\n"
        "assert 'jobsched_process' not in sys.modules, 'process executor imported'\n"
        "assert 'jobsched_thread' not in sys.modules, 'thread executor imported'\n"
        "assert 'jobsched_async' in sys.modules\n"
        "print('lazy ok')\n"
    )
    import subprocess

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "lazy ok" in out.stdout


def test_unknown_first_party_executor_says_which_extra(fake_entry_points: list[EntryPoint]) -> None:
    """A missing first-party executor names the extra to install."""
    fake_entry_points.append(_ep("async", "jobsched_async:AsyncExecutor", "jobsched-exec-async"))
    s = js.JobScheduler()

    class Cpu(js.CpuBoundJob):
        def run_sync(self) -> None:
            return None

    job = Cpu("cpu")
    with pytest.raises(js.ExecutorNotFoundError) as info:
        s.submit(job)
    message = str(info.value)
    assert "no executor named 'process'" in message
    assert 'pip install "jobsched-core[process]"' in message
    assert "installed: async" in message
    assert s.jobs() == [] and job.status is S.PENDING and job.seq == 0


def test_unknown_third_party_executor(fake_entry_points: list[EntryPoint]) -> None:
    """An unknown name says how to publish or pass one."""
    job = js.FunctionJob(len, ("x",), executor="gpu")
    with pytest.raises(js.ExecutorNotFoundError, match="no executor named 'gpu'.*executors="):
        js.JobScheduler().submit(job)


def test_executors_mapping_overrides_plugins(fake_entry_points: list[EntryPoint]) -> None:
    """executors= adds an executor no distribution registers, and wins over plugins."""
    from fake_plugins import EchoExecutor

    async def main() -> str:
        async with js.JobScheduler(executors={"gpu": EchoExecutor()}) as s:
            job_id = s.submit(js.FunctionJob(len, ("x",), executor="gpu", name="echoed"))
            await s.join()
        return s.get(job_id).result

    assert anyio.run(main) == "echoed"


def test_duplicate_registration_is_an_error(fake_entry_points: list[EntryPoint]) -> None:
    """Two distributions registering one name: an error that names both and the fix."""
    fake_entry_points += [
        _ep("echo", "fake_plugins:EchoExecutor", "dist-a"),
        _ep("echo", "fake_plugins:OtherEchoExecutor", "dist-b"),
    ]
    job = js.FunctionJob(len, ("x",), executor="echo")
    with pytest.raises(js.SchedulerError, match=r"several distributions \(dist-a, dist-b\)"):
        js.JobScheduler().submit(job)


def test_same_entry_point_seen_twice_is_not_a_conflict(
    fake_entry_points: list[EntryPoint],
) -> None:
    """One distribution visible twice on sys.path registers once."""
    fake_entry_points += [
        _ep("echo", "fake_plugins:EchoExecutor", "dist-a"),
        _ep("echo", "fake_plugins:EchoExecutor", "dist-a"),
    ]
    assert isinstance(_plugins.create("echo"), js.Executor)


@pytest.mark.parametrize(
    ("value", "match"),
    [
        ("fake_plugins_missing_module:X", "failed to load: ModuleNotFoundError"),
        ("fake_plugins:NOT_CALLABLE", "is not callable"),
        ("fake_plugins:failing_factory", "failed to start: RuntimeError: cannot start"),
        ("fake_plugins:not_an_executor", "which is not a jobsched.Executor"),
    ],
)
def test_broken_plugins_give_clear_errors(
    fake_entry_points: list[EntryPoint], value: str, match: str
) -> None:
    """A plugin that fails to import, isn't callable or returns junk is named in the error."""
    fake_entry_points.append(_ep("bad", value, "dist-bad"))
    fake_entry_points.append(_ep("async", "jobsched_async:AsyncExecutor", "jobsched-exec-async"))
    s = js.JobScheduler()
    job = js.FunctionJob(len, ("x",), executor="bad")
    with pytest.raises(js.SchedulerError, match=match) as info:
        s.submit(job)
    assert f"({value}, from the distribution dist-bad)" in str(info.value)
    assert s.jobs() == []
    # The failure is not cached as a success: a valid job still submits.
    s.submit(Ok())


def test_plugin_whose_name_differs_from_its_entry_point_is_refused(
    fake_entry_points: list[EntryPoint],
) -> None:
    """An executor named "echo" under the entry point "gpu": an error naming its distribution."""
    fake_entry_points.append(_ep("gpu", "fake_plugins:EchoExecutor", "jobsched-exec-gpu"))
    s = js.JobScheduler()
    job = js.FunctionJob(len, ("x",), executor="gpu")
    with pytest.raises(js.SchedulerError) as info:
        s.submit(job)
    message = str(info.value)
    assert "from the distribution jobsched-exec-gpu" in message
    assert "declares name='echo', but its entry point is named 'gpu'" in message
    assert s.jobs() == [] and job.status is S.PENDING


def test_plugin_without_a_name_takes_its_entry_point_name(
    fake_entry_points: list[EntryPoint],
) -> None:
    """`name` is optional: an executor that sets none loads under its entry-point name."""
    fake_entry_points.append(_ep("anon", "fake_plugins:NamelessExecutor", "dist-anon"))

    async def main() -> str:
        async with js.JobScheduler() as s:
            job_id = s.submit(js.FunctionJob(len, ("x",), executor="anon", name="ran"))
            await s.join()
        return s.get(job_id).result

    assert anyio.run(main) == "ran"


def test_executors_mapping_ignores_name(fake_entry_points: list[EntryPoint]) -> None:
    """An instance passed in executors= serves its key whatever its `name` says."""
    from fake_plugins import EchoExecutor

    s = js.JobScheduler(executors={"gpu": EchoExecutor()})
    s.submit(js.FunctionJob(len, ("x",), executor="gpu"))
    assert len(s.jobs()) == 1


def test_the_guide_example_plugin_runs_through_its_entry_point() -> None:
    """examples/plugin-gpu, installed in the dev environment, runs a job on `gpu`."""
    import jobsched_gpu

    class Render(js.BlockingJob):
        executor = "gpu"

        def run_sync(self) -> str:
            assert js.cancel_requested() is False  # it runs under a CancelToken
            return "rendered"

    async def main() -> js.JobScheduler:
        async with js.JobScheduler() as s:
            s.submit(Render("frame"))
            assert isinstance(s._executors["gpu"], jobsched_gpu.GpuExecutor)
            await s.join()
        return s

    job = anyio.run(main).jobs()[0]
    assert (job.status, job.result) == (S.COMPLETED, "rendered")


def test_executor_base_shutdown_is_a_no_op() -> None:
    """Executor.shutdown has a default, so a minimal plugin implements only run()."""
    from fake_plugins import EchoExecutor

    anyio.run(EchoExecutor().shutdown)
