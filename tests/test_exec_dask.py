"""The ``dask`` executor: results, errors, retries, cancellation, a dying worker, its cluster.

Most tests share one in-process LocalCluster (``processes=False``) given by
address, so the executor leaves it running; one test starts a cluster with a
worker process and kills that worker mid-task.
"""

from __future__ import annotations

import importlib.metadata
import logging
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import anyio
import anyio.to_thread
import distributed
import pytest

import jobsched as js
import jobsched_dask._task
from jobsched_dask import DaskExecutor, TaskLostError
from jobsched_dask._task import EventCancelToken

pytestmark = pytest.mark.anyio

# Dask runs on the real clock: no MockClock here (it would jump past the
# timeouts while a task is busy on a worker).
WATCHDOG = 30


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def cluster() -> Iterator[distributed.LocalCluster]:
    """One in-process cluster for the module: four task threads."""
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=4, processes=False, dashboard_address=":0"
    ) as cluster:
        yield cluster


@pytest.fixture
def executor(cluster: distributed.LocalCluster) -> DaskExecutor:
    return DaskExecutor(cluster.scheduler_address)


# In-process workers share this module with the test, so jobs report through
# module-level events (a job's own threading.Event cannot be pickled).
_signals: dict[str, threading.Event] = {}
_calls: dict[str, int] = {}
_lock = threading.Lock()


def signal(name: str) -> threading.Event:
    with _lock:
        return _signals.setdefault(name, threading.Event())


async def wait_for(name: str) -> None:
    """Wait for a job's signal without blocking the loop."""
    assert await anyio.to_thread.run_sync(signal(name).wait, WATCHDOG), f"{name} never came"


def count_call(name: str) -> int:
    with _lock:
        _calls[name] = _calls.get(name, 0) + 1
        return _calls[name]


def square(x: int) -> int:
    return x * x


def boom() -> None:
    raise ValueError("boom")


class Poller(js.BlockingJob):
    """Polls cancel_requested() until the attempt ends; says when it started and saw it."""

    executor = "dask"

    def run_sync(self) -> str:
        signal(f"{self.name}-started").set()
        stop = threading.Event()  # never set: wait() is the poll interval
        while not js.cancel_requested():
            if stop.wait(0.01) or signal(f"{self.name}-give-up").is_set():
                return "gave up"
        signal(f"{self.name}-saw-cancel").set()
        return "stopped early"


class FailsFirst(js.BlockingJob):
    executor = "dask"

    def run_sync(self) -> str:
        if count_call(self.name) == 1:
            raise ConnectionError("first try fails")
        return "second try"


def counted(name: str) -> int:
    return count_call(name)


# ── Results and errors ───────────────────────────────────────────────────


async def test_results_errors_and_function_jobs(executor: DaskExecutor) -> None:
    """A job's return value becomes its result; its exception its last_error."""
    async with js.JobScheduler(executors={"dask": executor}) as s:
        ok = s.submit(js.FunctionJob(square, (7,), executor="dask"))
        bad = s.submit(js.FunctionJob(boom, executor="dask", retry=js.RetryPolicy(max_retries=0)))
        with anyio.fail_after(WATCHDOG):
            await s.join()
    assert s.get(ok).status is js.JobStatus.COMPLETED
    assert s.get(ok).result == 49
    assert s.get(bad).status is js.JobStatus.FAILED
    assert s.get(bad).last_error == "ValueError: boom"


def reports() -> tuple[str, int, str]:
    """Reports progress, then tries complete_in: what the job saw of its handle."""
    handle = js.current_job()
    handle.progress(0.5, "half way")
    try:
        handle.complete_in(object(), "done")
    except js.SchedulerError as exc:
        refused = str(exc)
    else:
        refused = "not refused"
    return handle.job_id, handle.attempt, refused


async def test_progress_in_a_dask_job_is_taken_and_goes_nowhere(executor: DaskExecutor) -> None:
    """js.current_job() names the attempt on a Dask worker; its progress()
    raises nothing and reaches nothing (the task has no way back but its
    result); complete_in() is refused saying why."""
    async with js.JobScheduler(executors={"dask": executor}) as s:
        job_id = s.submit(js.FunctionJob(reports, executor="dask"))
        with anyio.fail_after(WATCHDOG):
            await s.join()
    job = s.get(job_id)
    assert job.status is js.JobStatus.COMPLETED, job.last_error
    seen_id, attempt, refused = job.result
    assert (seen_id, attempt) == (job_id, 1)
    assert "cannot complete_in(): it runs on a Dask worker" in refused
    assert (job.progress, job.progress_message) == (None, None)


async def test_run_directly_returns_and_raises_the_original_type(executor: DaskExecutor) -> None:
    """The executor itself gives the result, or raises the task's exception as it was."""
    assert await executor.run(js.FunctionJob(square, (3,), executor="dask")) == 9
    with pytest.raises(ValueError, match="^boom$"):
        await executor.run(js.FunctionJob(boom, executor="dask"))
    await executor.shutdown()


def exits() -> None:
    raise SystemExit(3)


def stops() -> None:
    raise StopIteration("from the job")


async def test_base_exceptions_come_back_as_themselves(executor: DaskExecutor) -> None:
    """A job's SystemExit reaches the core as SystemExit; StopIteration as a RuntimeError."""
    with pytest.raises(SystemExit) as exited:
        await executor.run(js.FunctionJob(exits, executor="dask"))
    assert exited.value.code == 3
    with pytest.raises(RuntimeError, match=r"run_sync\(\) raised StopIteration"):
        await executor.run(js.FunctionJob(stops, executor="dask"))
    # The worker survived both.
    assert await executor.run(js.FunctionJob(square, (2,), executor="dask")) == 4
    await executor.shutdown()


async def test_equal_jobs_are_two_runs(executor: DaskExecutor) -> None:
    """Two jobs with equal arguments run twice: keys are per job and attempt, never pure."""
    name = f"equal-{os.urandom(4).hex()}"
    async with js.JobScheduler(executors={"dask": executor}) as s:
        a = s.submit(js.FunctionJob(counted, (name,), executor="dask"))
        b = s.submit(js.FunctionJob(counted, (name,), executor="dask"))
        with anyio.fail_after(WATCHDOG):
            await s.join()
    assert sorted([s.get(a).result, s.get(b).result]) == [1, 2]


async def test_failed_attempt_is_retried_on_the_cluster(executor: DaskExecutor) -> None:
    """A failing first attempt is retried as a new task, and the second one's result kept."""
    job = FailsFirst(
        f"fails-first-{os.urandom(4).hex()}", retry=js.RetryPolicy(max_retries=2, base_delay=0.01)
    )
    async with js.JobScheduler(executors={"dask": executor}) as s:
        job_id = s.submit(job)
        with anyio.fail_after(WATCHDOG):
            await s.join()
    assert s.get(job_id).status is js.JobStatus.COMPLETED
    assert s.get(job_id).result == "second try"
    assert s.get(job_id).attempts == 2


async def test_job_that_cannot_be_sent_fails_without_retry(executor: DaskExecutor) -> None:
    """A job holding a lock cannot be pickled: NonRetryableError naming the job and the
    cause; a job submitted beside it (in the same batch to Dask) runs all the same."""

    class Locked(js.BlockingJob):
        executor = "dask"

        def __init__(self) -> None:
            super().__init__("locked", retry=js.RetryPolicy(max_retries=3))
            self.lock = threading.Lock()

        def run_sync(self) -> None:
            pass

    async with js.JobScheduler(executors={"dask": executor}) as s:
        job_id = s.submit(Locked())
        neighbours = [s.submit(js.FunctionJob(square, (i,), executor="dask")) for i in range(5)]
        with anyio.fail_after(WATCHDOG):
            await s.join()
    assert [s.get(n).result for n in neighbours] == [0, 1, 4, 9, 16]
    job = s.get(job_id)
    assert job.status is js.JobStatus.FAILED
    assert job.attempts == 1
    assert job.last_error is not None
    assert job.last_error.startswith(f"NonRetryableError: {job_id} ('locked') cannot be sent")
    assert "cannot pickle '_thread.lock' object" in job.last_error


async def test_async_job_is_a_clear_type_error(executor: DaskExecutor) -> None:
    """An async job names what the dask executor runs, and nothing is submitted."""

    class Async(js.AsyncJob):
        async def run(self) -> None:
            pass

    with pytest.raises(TypeError, match=r"Async has no `def run_sync\(self\)`"):
        await executor.run(Async("async"))
    assert executor.client is None


# ── Timeouts and cancel ──────────────────────────────────────────────────


async def test_timeout_ends_the_attempt_and_the_task_sees_cancel(executor: DaskExecutor) -> None:
    """A timed-out attempt ends TIMED_OUT at once; the task sees cancel_requested() turn True."""
    name = f"timeout-{os.urandom(4).hex()}"
    async with js.JobScheduler(executors={"dask": executor}) as s:
        # Long enough for the task to start on a loaded machine: a task
        # cancelled before it starts never runs, so it could see nothing.
        job_id = s.submit(Poller(name, timeout=3.0, retry=js.RetryPolicy(max_retries=0)))
        await wait_for(f"{name}-started")
        with anyio.fail_after(WATCHDOG):
            await s.join()
        assert s.get(job_id).status is js.JobStatus.TIMED_OUT
        await wait_for(f"{name}-saw-cancel")


async def test_cancel_ends_the_attempt_and_the_task_sees_it(executor: DaskExecutor) -> None:
    """cancel() on a running job: CANCELLED at once, the task stops through cancel_requested()."""
    name = f"cancel-{os.urandom(4).hex()}"
    async with js.JobScheduler(executors={"dask": executor}) as s:
        job_id = s.submit(Poller(name))
        await wait_for(f"{name}-started")
        assert not signal(f"{name}-saw-cancel").is_set()
        s.cancel(job_id)
        with anyio.fail_after(WATCHDOG):
            await s.join()
        assert s.get(job_id).status is js.JobStatus.CANCELLED
        await wait_for(f"{name}-saw-cancel")


async def test_cancel_reaches_only_its_own_attempt(executor: DaskExecutor) -> None:
    """Cancelling one running job leaves cancel_requested() False in its neighbour."""
    first, second = (f"pair-{i}-{os.urandom(4).hex()}" for i in range(2))
    async with js.JobScheduler(executors={"dask": executor}) as s:
        cancelled = s.submit(Poller(first))
        kept = s.submit(Poller(second))
        await wait_for(f"{first}-started")
        await wait_for(f"{second}-started")
        s.cancel(cancelled)
        await wait_for(f"{first}-saw-cancel")
        # The neighbour polls several times more without seeing anything.
        await anyio.sleep(0.5)
        assert not signal(f"{second}-saw-cancel").is_set()
        signal(f"{second}-give-up").set()
        with anyio.fail_after(WATCHDOG):
            await s.join()
    assert s.get(kept).status is js.JobStatus.COMPLETED
    assert s.get(kept).result == "gave up"


async def test_task_cancelled_outside_jobsched_fails_the_attempt(executor: DaskExecutor) -> None:
    """A task cancelled by another Dask client fails its attempt with TaskLostError (retryable)."""
    name = f"lost-{os.urandom(4).hex()}"
    async with js.JobScheduler(executors={"dask": executor}) as s:
        job_id = s.submit(Poller(name, retry=js.RetryPolicy(max_retries=0)))
        await wait_for(f"{name}-started")
        assert executor.client is not None
        (key,) = [k for k in list(executor.client.futures) if k.startswith(f"jobsched-{job_id}-")]
        await anyio.to_thread.run_sync(
            lambda: distributed.Future(key, executor.client).cancel()  # type: ignore[arg-type]
        )
        with anyio.fail_after(WATCHDOG):
            await s.join()
        signal(f"{name}-give-up").set()
    job = s.get(job_id)
    assert job.status is js.JobStatus.FAILED
    assert job.last_error is not None
    assert job.last_error.startswith(f"TaskLostError: the Dask task of {job_id}")
    assert issubclass(TaskLostError, ConnectionError)


def read_flag_three_times(name: str) -> list[bool]:
    token = EventCancelToken(name)
    return [token.cancelled for _ in range(3)]


async def test_unreadable_flag_lets_the_job_go_on(
    executor: DaskExecutor, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A cancel flag the worker cannot read counts as not set, with one warning per attempt."""

    def unreachable(self: distributed.Event) -> bool:
        raise OSError("the scheduler is out of reach")

    monkeypatch.setattr(jobsched_dask._task, "POLL_INTERVAL", 0.0)
    monkeypatch.setattr(distributed.Event, "is_set", unreachable)
    with caplog.at_level(logging.WARNING, logger="jobsched.dask"):
        job = js.FunctionJob(read_flag_three_times, ("unreadable",), executor="dask")
        assert await executor.run(job) == [False, False, False]
    warnings = [r for r in caplog.records if "could not read the cancel flag" in r.message]
    assert len(warnings) == 1
    await executor.shutdown()


# ── The cluster's lifetime ───────────────────────────────────────────────


def test_nothing_starts_before_the_first_job() -> None:
    """Loading the plugin through its entry point and constructing it connects nothing."""
    (entry,) = importlib.metadata.entry_points(group="jobsched.executors", name="dask")
    assert entry.load() is DaskExecutor
    executor = entry.load()()
    assert executor.name == "dask"
    assert executor.client is None


async def test_installed_plugin_runs_a_job_on_its_own_local_cluster() -> None:
    """Found by name, with no address it starts a LocalCluster, and shutdown closes it."""
    async with js.JobScheduler() as s:
        job_id = s.submit(js.FunctionJob(square, (5,), executor="dask"))
        with anyio.fail_after(WATCHDOG):
            await s.join()
    assert s.get(job_id).result == 25, s.get(job_id).last_error


async def test_shutdown_closes_the_cluster_it_started() -> None:
    """A LocalCluster the executor started is closed by shutdown(); a later run starts anew."""
    executor = DaskExecutor(n_workers=1, processes=False)
    assert await executor.run(js.FunctionJob(square, (4,), executor="dask")) == 16
    client = executor.client
    assert client is not None and client.cluster is not None
    cluster = client.cluster
    await executor.shutdown()
    assert executor.client is None
    assert client.status == "closed"
    assert cluster.status.name == "closed"
    await executor.shutdown()  # idempotent


async def test_shutdown_leaves_a_given_cluster(cluster: distributed.LocalCluster) -> None:
    """A cluster given by address keeps running after shutdown(); the executor reconnects."""
    executor = DaskExecutor(cluster.scheduler_address)
    assert await executor.run(js.FunctionJob(square, (6,), executor="dask")) == 36
    await executor.shutdown()
    assert cluster.status.name == "running"
    assert await executor.run(js.FunctionJob(square, (8,), executor="dask")) == 64
    await executor.shutdown()


async def test_shutdown_cancel_running_stops_the_tasks(cluster: distributed.LocalCluster) -> None:
    """stop(cancel_running=True): the running job is CANCELLED and its task sees the flag."""
    name = f"stop-{os.urandom(4).hex()}"
    async with js.JobScheduler(executors={"dask": DaskExecutor(cluster.scheduler_address)}) as s:
        job_id = s.submit(Poller(name))
        await wait_for(f"{name}-started")
        with anyio.fail_after(WATCHDOG):
            await s.stop(cancel_running=True)
    assert s.get(job_id).status is js.JobStatus.CANCELLED
    await wait_for(f"{name}-saw-cancel")


async def test_unreachable_scheduler_fails_the_attempt_and_is_retried_later() -> None:
    """No scheduler at the address: the attempt fails with the connection error, retryably."""
    executor = DaskExecutor("tcp://127.0.0.1:9", timeout=0.5)
    with anyio.fail_after(WATCHDOG):
        with pytest.raises(OSError, match="127.0.0.1:9"):
            await executor.run(js.FunctionJob(square, (1,), executor="dask"))
    assert executor.client is None


def test_bad_address_is_refused_with_the_forms_it_takes() -> None:
    """An address that is neither a string, a Cluster nor None is refused at construction."""
    with pytest.raises(TypeError, match=r"'tcp://scheduler:8786'.*got 8786"):
        DaskExecutor(8786)


def test_asynchronous_option_is_refused() -> None:
    """The executor owns its client's loop: asynchronous=... is refused with the reason."""
    with pytest.raises(ValueError, match="drop the 'asynchronous' option"):
        DaskExecutor(asynchronous=True)


# ── A worker process dies mid-task ───────────────────────────────────────


def dies_once(marker: str) -> int:
    """Kills its worker process the first time, returns its pid the second."""
    path = Path(marker)
    if not path.exists():
        path.write_text("died")
        os._exit(1)
    return os.getpid()


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_worker_killed_mid_task_fails_the_attempt_and_the_retry_runs(
    tmp_path: Path,
) -> None:
    """A worker process that dies mid-task fails the attempt (KilledWorker); the retry runs."""
    executor = DaskExecutor(n_workers=1, threads_per_worker=1, processes=True)
    async with js.JobScheduler(executors={"dask": executor}) as s:
        # One at a time: a worker's death fails every task Dask had sent it,
        # and the single worker may hold the second job queued behind the first.
        once = s.submit(
            js.FunctionJob(
                dies_once, (str(tmp_path / "a"),), executor="dask",
                retry=js.RetryPolicy(max_retries=1, base_delay=0.01),
            )
        )  # fmt: skip
        with anyio.fail_after(2 * WATCHDOG):
            await s.join()
        never = s.submit(
            js.FunctionJob(
                dies_once, (str(tmp_path / "b"),), executor="dask",
                retry=js.RetryPolicy(max_retries=0),
            )
        )  # fmt: skip
        with anyio.fail_after(2 * WATCHDOG):
            await s.join()
    assert s.get(once).status is js.JobStatus.COMPLETED
    assert s.get(once).attempts == 2
    assert s.get(once).result != os.getpid()  # it ran in a worker process
    failed = s.get(never)
    assert failed.status is js.JobStatus.FAILED
    assert failed.last_error is not None
    assert failed.last_error.startswith("KilledWorker:")
