"""``js.current_job()``: inside a running job, its id and attempt, for async,
thread and process jobs, registered and ``FunctionJob`` alike, on every
store; outside one, ``RuntimeError``. ``complete_in`` where the store cannot
write in the caller's transaction (memory, SQLite) says so. (PostgreSQL's
``complete_in``: tests/test_complete_in.py.)"""

from __future__ import annotations

import pickle
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
import txn_jobs
import txn_plain

import jobsched as js

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("function", "executor"),
    [
        (txn_jobs.handle_async, "async"),
        (txn_jobs.handle, "thread"),
        (txn_jobs.handle, "process"),
    ],
    ids=["async", "thread", "process"],
)
async def test_a_job_sees_its_own_id_and_attempt(
    function: Any, executor: str, make_scheduler: Callable[..., js.JobScheduler]
) -> None:
    """The handle names the job and its attempt: after an await and in a
    child task (async), in the job's thread, in a worker process."""
    async with make_scheduler() as s:
        ids = [s.submit(js.FunctionJob(function, executor=executor, timeout=None)) for _ in "ab"]
        await s.join()
        assert [s.get(i).result for i in ids] == [(i, 1) for i in ids]


@pytest.mark.parametrize("executor", ["thread", "process"])
async def test_a_retry_is_the_next_attempt(
    executor: str, make_scheduler: Callable[..., js.JobScheduler]
) -> None:
    """A job whose first attempt failed sees attempt 2 on its retry."""
    retry = js.RetryPolicy(max_retries=1, base_delay=0.0, jitter=False)
    async with make_scheduler() as s:
        job_id = s.submit(
            js.FunctionJob(
                txn_jobs.fail_first, ("m",), executor=executor, retry=retry, timeout=None
            )
        )
        await s.join()
        assert s.get(job_id).result == (job_id, 2)


async def test_a_registered_job_sees_its_attempt(
    make_scheduler: Callable[..., js.JobScheduler],
) -> None:
    """A registered (``@app.job``) job has the handle too."""
    app = js.App()

    @app.job(name="probe")
    async def probe() -> list[Any]:
        current = js.current_job()
        return [current.job_id, current.attempt]

    s = make_scheduler()
    app._adopt(s)
    async with s:
        job_id = await probe.enqueue()
        await s.join()
        assert (await s.fetch(job_id)).result == [job_id, 1]


def test_outside_a_job_it_raises() -> None:
    """Outside a running job, js.current_job() raises RuntimeError saying so,
    and so does a listener the scheduler calls between attempts."""
    with pytest.raises(RuntimeError, match=r"called outside a running job: call it from"):
        js.current_job()
    said: list[str] = []

    def listener(job: js.Job, old: js.JobStatus, new: js.JobStatus) -> None:
        if new.is_terminal:
            try:
                js.current_job()
            except RuntimeError as exc:
                said.append(str(exc))

    async def main() -> None:
        async with js.JobScheduler() as s:
            s.add_listener(listener)
            s.submit(js.FunctionJob(txn_jobs.handle_async))
            await s.join()

    anyio.run(main)
    assert len(said) == 1 and said[0].startswith("js.current_job() was called outside")


async def test_the_memory_and_sqlite_stores_cannot_complete_in(tmp_path: Path) -> None:
    """complete_in on a store that cannot write in the caller's transaction
    raises SchedulerError naming the store and what can."""
    for store, said in [
        ("memory", "its scheduler keeps jobs in memory"),
        (f"sqlite:///{tmp_path / 'jobs.db'}", "its store sqlite:///"),
    ]:
        async with js.JobScheduler(store=store) as s:
            job_id = s.submit(js.FunctionJob(txn_jobs.misuse, ("", "not a connection")))
            await s.join()
            answer = s.get(job_id).result
        assert answer.startswith(f"SchedulerError: {job_id} ('misuse') cannot complete_in(): ")
        assert said in answer and "complete_in() needs the PostgreSQL store" in answer


def test_the_handle_pickles_without_its_scheduler() -> None:
    """What the process executor ships: the id, the attempt and a ticket,
    not the scheduler; a copy reports a completion back to the original."""
    copies: list[Any] = []

    async def capture() -> None:
        copies.append(pickle.loads(pickle.dumps(js.current_job())))

    async def main() -> None:
        async with js.JobScheduler() as s:
            s.submit(js.FunctionJob(capture))
            await s.join()

    anyio.run(main)
    (copy,) = copies
    assert isinstance(copy, js.CurrentJob) and copy.attempt == 1
    assert copy.completed is None and copy._job is None
    assert repr(copy) == f"CurrentJob({copy.job_id!r}, attempt=1)"
    with pytest.raises(js.SchedulerError, match="keeps jobs in memory"):
        copy.complete_in(object())


def test_a_thread_an_attempt_left_behind_keeps_naming_that_attempt() -> None:
    """An async job's thread, abandoned when the job timed out, asks for the
    current job while its worker runs another job: it gets its own job's
    attempt, never the other job's (whose complete_in it could otherwise make)."""
    gate, tag = "left-behind", "left-behind"
    txn_jobs.GATES[gate] = threading.Event()
    txn_jobs.NOTED[tag] = threading.Event()

    async def main() -> tuple[str, str]:
        async with js.JobScheduler(num_workers=1) as s:
            once = js.RetryPolicy(max_retries=0)
            first = s.submit(
                js.FunctionJob(txn_jobs.outlived, (tag, gate), timeout=0.2, retry=once)
            )
            await s.wait(first)
            other = s.submit(js.FunctionJob(txn_jobs.blocked, (gate,), timeout=None))
            await s.join()
        return first, other

    first, other = anyio.run(main)
    assert other != first
    assert txn_jobs.FOUND[tag] == [(first, 1)]


def test_an_abandoned_attempt_keeps_naming_itself_after_the_retry() -> None:
    """An attempt that ignores its cancellation past the grace is abandoned
    and the job retried; when the abandoned attempt asks, it is attempt 1
    still, though the job has moved on to attempt 2."""
    tag = "stubborn"
    txn_jobs.NOTED[tag] = threading.Event()
    retry = js.RetryPolicy(max_retries=1, base_delay=0.0, jitter=False)

    async def main() -> str:
        async with js.JobScheduler(num_workers=2) as s:
            job_id = s.submit(js.FunctionJob(txn_jobs.stubborn, (tag,), timeout=0.2, retry=retry))
            assert (await s.wait(job_id)).result == "retried"
            await anyio.to_thread.run_sync(txn_jobs.NOTED[tag].wait, 30)
        return job_id

    job_id = anyio.run(main)
    assert txn_jobs.FOUND[tag] == [(job_id, 1)]


async def test_a_process_job_whose_module_lacks_jobsched_is_told_why(
    make_scheduler: Callable[..., js.JobScheduler],
) -> None:
    """A process worker loads the handle only if the job brought jobsched in
    (so one that runs plain functions never imports it): a job that imports
    it only as it runs is outside a job there, and the error says what to do."""
    async with make_scheduler() as s:
        job_id = s.submit(js.FunctionJob(txn_plain.lazy, executor="process", timeout=None))
        await s.join()
        said = s.get(job_id).result
    assert said.startswith("js.current_job() was called outside a running job")
    assert said.endswith("(in a process job, the job's module must import jobsched when it loads)")
