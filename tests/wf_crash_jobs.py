"""Jobs for tests/test_workflow_crash.py, importable by name in its worker
processes (tests/wf_crash_member.py): a fan-out step that logs its id when it
has done its work, and the fan-in that logs its one line in a log of its own."""

from __future__ import annotations

import anyio
from durable_jobs import log_line

import jobsched as js

#: How long a step works. Eight workers then take about two seconds from
#: half the fan-out to all of it: the room the test has, after it sees half
#: logged, to kill the worker mid-fan-out even when the machine is loaded.
STEP_SECONDS = 0.03


def value(n: int) -> int:
    """Step ``n``'s result: distinct per step and not increasing with ``n``,
    so a fan-in that got them in another order, or another step's, is seen."""
    return n * 7919 % 10007


async def step(log: str, n: int) -> int:
    await anyio.sleep(STEP_SECONDS)
    me = js.current_job()
    log_line(log, f"{me.job_id} {me.attempt}")
    return value(n)


async def fan_in(log: str, results: list[int]) -> list[int]:
    me = js.current_job()
    log_line(log, f"{me.job_id} {me.attempt} {len(results)}")
    return results
