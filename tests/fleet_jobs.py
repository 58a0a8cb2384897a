"""Jobs for the fleet tests: importable by reference in every member process,
each leaving lines in a log file (one O_APPEND write each) that say what ran
where: ``KIND JOB_ID ATTEMPT PID MONOTONIC``."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import anyio
from durable_jobs import log_line

import jobsched as js
from jobsched_async import AsyncExecutor

#: Retries for a lost attempt come quickly in these tests.
QUICK_RETRY = js.RetryPolicy(max_retries=3, base_delay=0.05, max_delay=0.2, jitter=False)


def note(log: str, kind: str, job: js.Job) -> None:
    log_line(log, f"{kind} {job.job_id} {job.attempts} {os.getpid()} {time.monotonic()}")


class Record(js.AsyncJob):
    """Logs ``run`` and returns at once."""

    def __init__(self, log: str, **kw: Any) -> None:
        super().__init__(kw.pop("name", "record"), **kw)
        self.log = log

    async def run(self) -> int:
        note(self.log, "run", self)
        return os.getpid()


class Hold(js.AsyncJob):
    """Logs ``start``, waits until the file ``release-ATTEMPT`` (or ``release``)
    exists in ``folder``, logs ``end``; returns ``"PID:ATTEMPT"``. Logs
    ``cancelled`` if cancelled while it waits."""

    def __init__(self, folder: str, **kw: Any) -> None:
        super().__init__(kw.pop("name", "hold"), **kw)
        self.folder = folder

    async def run(self) -> str:
        log = str(Path(self.folder) / "log")
        note(log, "start", self)
        release = (Path(self.folder) / "release", Path(self.folder) / f"release-{self.attempts}")
        try:
            # The test process makes the file: no event reaches across processes.
            while not any(path.exists() for path in release):  # noqa: ASYNC110
                await anyio.sleep(0.01)
        except anyio.get_cancelled_exc_class():
            note(log, "cancelled", self)
            raise
        note(log, "end", self)
        return f"{os.getpid()}:{self.attempts}"


class Special(js.AsyncJob):
    """A job on the ``special`` executor, which only some members have."""

    executor = "special"

    def __init__(self, log: str, **kw: Any) -> None:
        super().__init__(kw.pop("name", "special"), **kw)
        self.log = log

    async def run(self) -> None:
        note(self.log, "special", self)
        await anyio.sleep(0.02)  # long enough that an idle member would want it


class SpecialExecutor(AsyncExecutor):
    """The async executor under another name."""

    name = "special"


def tick(log: str) -> Record:
    """A stored schedule's factory (importable by reference)."""
    return Record(log, name="tick")


def parse(log: str | Path) -> list[tuple[str, str, int, int, float]]:
    """Every line of a log: (kind, job id, attempt, pid, monotonic)."""
    path = Path(log)
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        kind, job_id, attempt, pid, at = line.split()
        out.append((kind, job_id, int(attempt), int(pid), float(at)))
    return out
