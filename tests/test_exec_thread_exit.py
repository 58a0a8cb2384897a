"""The thread executor's threads never hold the process open, whatever a job does."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from typing import Any

import anyio
import pytest

import jobsched as js
from jobsched_thread import ThreadExecutor

# A bound far below the 60 s the stuck jobs sleep, and far above the ~1 s a
# child takes to start, run and exit on a loaded machine.
EXIT_BOUND = 20
WATCHDOG = 10

STUCK_JOBS = """
import sys, threading, time
import anyio
import jobsched as js
from jobsched_thread import ThreadExecutor

def stuck(started):
    started.set()
    time.sleep(60)  # never polls cancel_requested()

async def through_a_scheduler():
    started = [threading.Event(), threading.Event()]
    async with js.JobScheduler(executors={"thread": ThreadExecutor()}) as s:
        timed_out = s.submit(js.FunctionJob(
            stuck, (started[0],), timeout=0.1, retry=js.RetryPolicy(max_retries=0)))
        cancelled = s.submit(js.FunctionJob(stuck, (started[1],), timeout=None))
        for event in started:
            assert await anyio.to_thread.run_sync(event.wait, 10)
        s.cancel(cancelled)
        with anyio.fail_after(10):
            await s.join()
    print(s.get(timed_out).status.name, s.get(cancelled).status.name)

async def directly():
    # No scheduler and no shutdown(): the awaiting task is just cancelled.
    started = threading.Event()
    executor = ThreadExecutor()
    with anyio.move_on_after(10) as scope:
        async with anyio.create_task_group() as tg:
            tg.start_soon(executor.run, js.FunctionJob(stuck, (started,)))
            assert await anyio.to_thread.run_sync(started.wait, 10)
            tg.cancel_scope.cancel()
    assert not scope.cancelled_caught
    print("abandoned", executor.abandoned_threads)

backend, how = sys.argv[1:]
anyio.run(through_a_scheduler if how == "scheduler" else directly, backend=backend)
print("main returned", flush=True)
"""


@pytest.mark.parametrize(
    ("how", "printed"),
    [("scheduler", "TIMED_OUT CANCELLED"), ("directly", "abandoned 1")],
)
@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_abandoned_thread_does_not_hold_the_process_open(
    backend: str, how: str, printed: str
) -> None:
    """A script whose thread jobs sleep 60 s without polling, cancelled and timed out,
    exits as soon as its main returns."""
    start = time.monotonic()
    try:
        out = subprocess.run(
            [sys.executable, "-c", STUCK_JOBS, backend, how],
            capture_output=True,
            text=True,
            timeout=EXIT_BOUND,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"the script still ran {EXIT_BOUND} s on (output: {exc.stdout!r})")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [printed, "main returned"], out.stderr
    assert time.monotonic() - start < EXIT_BOUND


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_thread_outliving_its_event_loop_is_harmless(backend: str) -> None:
    """An abandoned job that returns after its event loop closed is dropped quietly,
    and the executor serves the next loop."""
    release = threading.Event()
    started = threading.Event()
    finished = threading.Event()

    def stubborn() -> str:
        started.set()
        try:
            assert release.wait(WATCHDOG), "the test never released the job"
            return "late"
        finally:
            finished.set()

    executor = ThreadExecutor()

    async def abandon() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(executor.run, js.FunctionJob(stubborn))
            assert await anyio.to_thread.run_sync(started.wait, WATCHDOG)
            tg.cancel_scope.cancel()

    async def run_next() -> Any:
        with anyio.fail_after(WATCHDOG):
            return await executor.run(js.FunctionJob(lambda: "next"))

    anyio.run(abandon, backend=backend)
    assert executor.abandoned_threads == 1
    release.set()  # the job returns to a closed loop
    assert finished.wait(WATCHDOG)
    deadline = time.monotonic() + WATCHDOG
    while executor.abandoned_threads and time.monotonic() < deadline:
        time.sleep(0.005)
    assert executor.abandoned_threads == 0
    assert anyio.run(run_next, backend=backend) == "next"
