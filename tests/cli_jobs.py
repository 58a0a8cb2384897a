"""Jobs for the CLI tests, imported by a `jobsched worker --import cli_jobs`
subprocess: each writes what it does to a file the test reads."""

from __future__ import annotations

import os
from typing import Any

import anyio
from durable_jobs import log_line

import jobsched as js


class Waits(js.AsyncJob):
    """Logs ``start``, sleeps ``seconds``, logs ``end``; returns ``value``."""

    def __init__(self, log: str, seconds: float, value: Any = None, **kw: Any) -> None:
        super().__init__(kw.pop("name", f"waits {seconds}s"), **kw)
        self.log = log
        self.seconds = seconds
        self.value = value

    async def run(self) -> Any:
        log_line(self.log, f"start {self.job_id} {self.attempts}")
        await anyio.sleep(self.seconds)
        log_line(self.log, f"end {self.job_id} {self.attempts}")
        return self.value


def boom(message: str) -> None:
    """Fails with ``message``."""
    raise ValueError(message)


def tick() -> js.FunctionJob[None]:
    """The stored schedule's job (its factory must be importable)."""
    return js.FunctionJob(log_line, (os.environ["CLI_TEST_TICKS"], "tick"), name="tick")


def jobsched_setup(scheduler: js.JobScheduler) -> None:
    """The worker's hook: a stored schedule, when the test asks for one."""
    if "CLI_TEST_TICKS" in os.environ:
        scheduler.schedule_recurring(tick, 0.2, id="ticker")
    if "CLI_TEST_SETUP_FAILS" in os.environ:
        raise RuntimeError("setup went wrong")
