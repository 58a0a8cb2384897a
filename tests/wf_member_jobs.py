"""Jobs for tests/test_workflow_members.py, run by tests/wf_member.py members
(importable by name there: ``tests`` is on their path). No pytest here.

Each job says which process ran it (its pid), so the test can tell which
member ran what; a job that must stay running touches a file and waits to be
cancelled, one that reports progress waits for a file the test creates.
"""

from __future__ import annotations

import os
from fractions import Fraction
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

import jobsched as js

#: The queue the upstreams go to, and the fan-ins' queue: each member serves one.
UP = "up"
FAN = "fan"


async def shard(n: int) -> dict[str, int]:
    """An upstream: its number and the pid of the member that ran it."""
    return {"n": n, "pid": os.getpid()}


async def third() -> Fraction:
    """A result that pickles but has no JSON form."""
    return Fraction(1, 3)


async def fail(message: str) -> None:
    raise ValueError(message)


async def fan_in(values: list[Any]) -> dict[str, Any]:
    """A fan-in of pickled function jobs: what it received, and where it ran."""
    return {"pid": os.getpid(), "values": values}


def fan_in_in_process(values: list[Any]) -> dict[str, Any]:
    """fan_in as a process job: run in a worker process of its member."""
    return {"pid": os.getpid(), "parent": os.getppid(), "values": values}


async def report(values: list[Any]) -> dict[str, Any]:
    """A "run"-edge dependent: each slot as text (a failed upstream's by its
    error's upstream, status and error), and where it ran."""
    slots = [
        f"failed {v.job_id} {v.status.value} {v.last_error}"
        if isinstance(v, js.UpstreamFailedError)
        else repr(v)
        for v in values
    ]
    return {"pid": os.getpid(), "slots": slots}


async def hold(folder: str, name: str) -> None:
    """Writes its member's pid to ``folder/name.started``, then runs until it
    is cancelled."""
    (Path(folder) / f"{name}.started").write_text(str(os.getpid()))
    await anyio.sleep_forever()


def _read_line(fifo: str) -> str:
    with open(fifo) as gate:
        return gate.readline()


async def progress_then_gate(fifo: str) -> str:
    """Reports half-way, then blocks reading ``fifo`` until the test writes a
    line to it, then reports the end."""
    handle = js.current_job()
    handle.progress(0.5, f"half-way on {os.getpid()}")
    await anyio.to_thread.run_sync(_read_line, fifo)
    handle.progress(1.0, "done")
    return "done"


app = js.App()


@app.job(queue=FAN)
async def gather(values: list[Any]) -> dict[str, Any]:
    """A registered fan-in: its upstreams' results arrive as JSON values."""
    return {"pid": os.getpid(), "values": values}
