"""A third-party executor as a user would publish one: it records what it ran."""

from __future__ import annotations

from typing import Any

import anyio

import jobsched

__all__ = ["RecordingExecutor", "instances"]

#: Every executor the plugin created, so tests can see it was loaded lazily.
instances: list[RecordingExecutor] = []


class RecordingExecutor(jobsched.Executor):
    """Runs ``job.run_sync()`` on the loop after a checkpoint, and records it."""

    name = "recording"

    def __init__(self) -> None:
        self.ran: list[str] = []
        self.shut_down = False
        instances.append(self)

    async def run(self, job: jobsched.Job) -> Any:
        await anyio.lowlevel.checkpoint()
        self.ran.append(job.job_id)
        return job.run_sync()  # type: ignore[attr-defined]

    async def shutdown(self, *, cancel_running: bool = False) -> None:
        self.shut_down = True
