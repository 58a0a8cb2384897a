"""Jobs for the CLI tests, imported by a `jobsched worker --import cli_jobs`
subprocess. Each says on the worker's stderr when it starts, so a test can
wait for that line instead of sleeping."""

from __future__ import annotations

import os
import sys
from typing import Any

import anyio

import jobsched as js


def say(line: str) -> None:
    """One line on stderr, which the test reads from the worker's pipe."""
    print(f"cli-test: {line}", file=sys.stderr, flush=True)


class Waits(js.AsyncJob):
    """Says ``start <id>``, sleeps ``seconds``, returns ``value``."""

    def __init__(self, seconds: float, value: Any = None, **kw: Any) -> None:
        super().__init__(kw.pop("name", f"waits {seconds}s"), **kw)
        self.seconds = seconds
        self.value = value

    async def run(self) -> Any:
        say(f"start {self.job_id}")
        await anyio.sleep(self.seconds)
        return self.value


def boom(message: str) -> None:
    """Fails with ``message``."""
    raise ValueError(message)


def tick() -> None:
    say("tick")


def tick_job() -> js.FunctionJob[None]:
    """The stored schedule's factory (importable, as a stored one must be)."""
    return js.FunctionJob(tick, name="tick")


def jobsched_setup(scheduler: js.JobScheduler) -> None:
    """The worker's hook: a stored schedule, or a failure, when the test asks."""
    if "CLI_TEST_SCHEDULE" in os.environ:
        scheduler.schedule_recurring(tick_job, 0.2, id="ticker")
    if "CLI_TEST_SETUP_FAILS" in os.environ:
        raise RuntimeError("setup went wrong")


class Shouts:
    """A result whose repr carries raw control characters, and is long."""

    def __repr__(self) -> str:
        return "\x1b[2J\u202e" + "x" * 5_000
