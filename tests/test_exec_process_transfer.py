"""Big arguments and results move off the event loop; small ones stay on it.

No test here times anything: each proves *where* the work happens (a thread,
not the loop), or that the loop goes on while a transfer cannot progress.
The stall itself is measured by the benchmark suite (W4stall).
"""

from __future__ import annotations

import os
import signal
import threading
from typing import Any

import anyio
import proc_jobs
import pytest
from test_exec_process import WATCHDOG, is_dead, process_job, wait_until

import jobsched as js
from jobsched_process import ProcessExecutor

pytestmark = pytest.mark.anyio

BIG = 16 * 1024 * 1024  # far above the inline limit, and above any pipe buffer


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def executor() -> Any:
    executor = ProcessExecutor(max_processes=1)
    yield executor
    await executor.shutdown()


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_big_argument_and_result_arrive_whole(executor: ProcessExecutor) -> None:
    """A 16 MB argument reaches the worker, and a 16 MB result comes back, byte for byte."""
    data = os.urandom(BIG)
    assert await executor.run(process_job(proc_jobs.echo, data)) == data
    result, _ = await executor.run(process_job(proc_jobs.big_result, BIG))
    assert result == b"r" * BIG


async def test_loop_ticks_while_a_big_argument_waits_for_the_worker(
    executor: ProcessExecutor,
) -> None:
    """With the worker stopped mid-transfer, the loop still runs other tasks; the job completes."""
    pid = await executor.run(process_job(proc_jobs.getpid))
    state = {"stopped": True, "ticks": 0}
    results: list[int] = []

    def resume() -> None:
        state["stopped"] = False
        os.kill(pid, signal.SIGCONT)

    async def heartbeat() -> None:
        while True:
            await anyio.sleep(0.001)
            if state["stopped"]:
                state["ticks"] += 1

    async def run() -> None:
        results.append(await executor.run(process_job(proc_jobs.length, b"a" * BIG)))

    os.kill(pid, signal.SIGSTOP)
    # Were the send made on the loop, the loop would hang in it until the
    # worker reads again: this resumes the worker, and the test then fails.
    safety_net = threading.Timer(WATCHDOG / 2, resume)
    safety_net.start()
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(heartbeat)
            tg.start_soon(run)
            await wait_until(lambda: state["ticks"] >= 50)
            resume()
            await wait_until(lambda: bool(results))
            tg.cancel_scope.cancel()
    finally:
        safety_net.cancel()
        resume()
    assert results == [BIG]


async def test_big_result_is_loaded_in_a_thread(executor: ProcessExecutor) -> None:
    """A big reply is received and unpickled off the event loop's thread."""
    proc_jobs.LOADED_IN.clear()
    _, loaded = await executor.run(process_job(proc_jobs.big_result, BIG))
    assert loaded == "loaded"
    assert len(proc_jobs.LOADED_IN) == 1
    assert proc_jobs.LOADED_IN[0] != threading.current_thread().name


async def test_small_result_is_loaded_on_the_loop(executor: ProcessExecutor) -> None:
    """A small reply costs no thread hop."""
    proc_jobs.LOADED_IN.clear()
    _, loaded = await executor.run(process_job(proc_jobs.big_result, 10))
    assert loaded == "loaded"
    loaded_in = proc_jobs.LOADED_IN
    assert loaded_in == [threading.current_thread().name]


async def test_slow_pickling_starts_over_in_a_thread(executor: ProcessExecutor) -> None:
    """Pickling that outlasts its budget on the loop is redone in a thread."""
    proc_jobs.PICKLED_IN.clear()
    assert await executor.run(process_job(proc_jobs.echo, proc_jobs.SlowToPickle())) == "slow"
    loop_thread = threading.current_thread().name
    assert proc_jobs.PICKLED_IN[0] == loop_thread
    assert proc_jobs.PICKLED_IN[-1] != loop_thread
    assert len(proc_jobs.PICKLED_IN) == 2


@pytest.mark.parametrize("size", [10, BIG], ids=["small", "big"])
async def test_result_that_cannot_be_loaded_here(executor: ProcessExecutor, size: int) -> None:
    """A reply that fails to unpickle in the parent is a NonRetryableError saying so."""
    job = process_job(proc_jobs.big_unloadable_result, size)
    with pytest.raises(js.NonRetryableError, match="cannot be loaded in this process: Runtime"):
        await executor.run(job)
    # The worker was not at fault: it serves on.
    assert await executor.run(process_job(proc_jobs.length, b"abc")) == 3


async def test_big_job_that_cannot_be_loaded_in_the_worker(executor: ProcessExecutor) -> None:
    """A big job failing to unpickle midway is a NonRetryableError; the worker reads on in step."""
    pid = await executor.run(process_job(proc_jobs.getpid))
    job = process_job(proc_jobs.echo, (b"a" * BIG, proc_jobs.LoadsBadly(), b"b" * BIG))
    with pytest.raises(js.NonRetryableError, match="could not load .*this object cannot be"):
        await executor.run(job)
    assert await executor.run(process_job(proc_jobs.getpid)) == pid


async def test_cancel_during_a_big_send_ends_the_worker(executor: ProcessExecutor) -> None:
    """Cancelled while its argument is stuck in the pipe, the worker ends; the pool serves on."""
    pid = await executor.run(process_job(proc_jobs.getpid))
    os.kill(pid, signal.SIGSTOP)
    try:
        with anyio.move_on_after(0.2):
            await executor.run(process_job(proc_jobs.length, b"a" * BIG))
        with anyio.fail_after(WATCHDOG):
            assert await executor.run(process_job(proc_jobs.getpid)) != pid
    finally:
        if not is_dead(pid):
            os.kill(pid, signal.SIGKILL)
