"""Jobs that report progress (``js.current_job().progress``), for
tests/test_progress.py: importable by reference, so that they run in a
process worker and come back from a durable store.

A job in the test's own process waits on a gate (``GATES``, a
``threading.Event`` by name) after its first report; a process job blocks
reading a FIFO the test writes to instead. Run as a script, it prints what
another process reads of a job: ``python progress_jobs.py URL JOB_ID``.
"""

from __future__ import annotations

import json
import math
import sys
import threading
from fractions import Fraction
from typing import Any

import anyio

import jobsched as js

#: Gates a job in this process waits on, by name (set by the test).
GATES: dict[str, threading.Event] = {}
#: Set by a job of this process once it made its first report, by name.
REPORTED: dict[str, threading.Event] = {}

FIRST = (0.4, "reading page 4 of 10")
LAST = (0.9, "finishing")


def _burst(handle: js.CurrentJob, n: int, last: tuple[float, str]) -> None:
    for i in range(n - 1):
        handle.progress(i / n, f"step {i}")
    handle.progress(*last)


async def report_async(gate: str, n: int = 1) -> str:
    """Reports FIRST (after n-1 other values), waits for its gate, reports LAST."""
    handle = js.current_job()
    _burst(handle, n, FIRST)
    REPORTED[gate].set()
    await anyio.to_thread.run_sync(GATES[gate].wait)
    _burst(handle, n, LAST)
    return "done"


def report_thread(gate: str, n: int = 1) -> str:
    """report_async in a thread job."""
    handle = js.current_job()
    _burst(handle, n, FIRST)
    REPORTED[gate].set()
    GATES[gate].wait()
    _burst(handle, n, LAST)
    return "done"


def report_process(fifo: str, n: int = 1) -> str:
    """report_async in a process job: its gate is a line written to ``fifo``."""
    handle = js.current_job()
    _burst(handle, n, FIRST)
    if fifo:
        with open(fifo) as gate:
            gate.readline()
    _burst(handle, n, LAST)
    return "done"


async def burst_twice(gate: str) -> str:
    """A thousand reports, a wait for its gate (the store's first write), a
    thousand more: none of them yields to the loop but the wait."""
    handle = js.current_job()
    for i in range(1_000):
        handle.progress(i / 1_000, f"first {i}")
    REPORTED[gate].set()
    await anyio.to_thread.run_sync(GATES[gate].wait)
    for i in range(1_000):
        handle.progress(i / 1_000, f"second {i}")
    return "done"


#: Values progress() refuses, each with a word its message must hold.
BAD = [
    ({"fraction": True}, "real number"),
    ({"fraction": -0.1}, "from 0 to 1"),
    ({"fraction": 1.5}, "from 0 to 1"),
    ({"fraction": math.nan}, "from 0 to 1"),
    ({"fraction": math.inf}, "from 0 to 1"),
    ({"fraction": 10**400}, "from 0 to 1"),
    ({"fraction": "0.5"}, "real number"),
    ({"fraction": None, "message": b"bytes"}, "must be a str"),
    ({"message": 7}, "must be a str"),
]


async def check_values() -> list[Any]:
    """What progress() made of good values, and said of bad ones."""
    handle = js.current_job()
    seen: list[Any] = []
    for kwargs, _ in BAD:
        try:
            handle.progress(**kwargs)
        except ValueError as exc:
            seen.append(str(exc))
        else:
            seen.append(None)
    job = js.current_job()._job  # type: ignore[attr-defined]
    # Refused values changed nothing.
    seen.append((job.progress, job.progress_message))
    handle.progress(Fraction(1, 2), "a\x00b")
    seen.append((job.progress, job.progress_message))
    handle.progress(message="x" * 5_000)  # None leaves the fraction
    seen.append((job.progress, len(job.progress_message)))
    handle.progress(1)  # None leaves the message
    seen.append((job.progress, job.progress_message[:3]))
    handle.progress(0)
    seen.append(job.progress)
    return seen


async def _read(url: str, job_id: str) -> dict[str, Any]:
    store = js.open_store(url, secret="test-secret") if url.startswith("postgres") else url
    async with js.JobScheduler(store=store, num_workers=0) as s:
        job = await s.fetch(job_id)
        return {
            "status": job.status.value,
            "progress": job.progress,
            "message": job.progress_message,
        }


if __name__ == "__main__":
    print(json.dumps(anyio.run(_read, sys.argv[1], sys.argv[2])))


async def report_late(gate: str) -> str:
    """Attempt 1 waits in a thread it abandons at its timeout; attempt 2
    reports, opens the gate for that thread, which then reports (too late),
    and returns once it has."""
    handle = js.current_job()
    if handle.attempt == 1:

        def in_thread() -> None:
            GATES[gate].wait()
            handle.progress(0.8, "too late")
            REPORTED[gate].set()

        await anyio.to_thread.run_sync(in_thread, abandon_on_cancel=True)
        return "not reached"
    handle.progress(0.2, "attempt 2")
    GATES[gate].set()
    await anyio.to_thread.run_sync(REPORTED[gate].wait, 30)
    return "second"


async def fail_then_wait(gate: str) -> str:
    """Attempt 1 reports FIRST and fails; attempt 2 reports nothing until its
    gate opens (REPORTED says it runs), then reports LAST."""
    handle = js.current_job()
    if handle.attempt == 1:
        handle.progress(*FIRST)
        raise RuntimeError("attempt 1 fails after its report")
    REPORTED[gate].set()
    await anyio.to_thread.run_sync(GATES[gate].wait)
    handle.progress(*LAST)
    return "second"
