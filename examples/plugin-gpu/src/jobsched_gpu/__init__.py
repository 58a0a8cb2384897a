"""An example executor plugin: runs the jobs that say ``executor = "gpu"``.

A stand-in for an executor that hands work to accelerators: it runs the
job's ``run_sync()`` in a worker thread, at most ``devices`` attempts at once.
"""

from __future__ import annotations

from typing import Any

import anyio

import jobsched

__all__ = ["GpuExecutor"]


class GpuExecutor(jobsched.Executor):
    """Runs ``job.run_sync()`` in a thread, at most ``devices`` at once."""

    # Must match the entry-point name: jobsched checks it when it loads the plugin.
    name = "gpu"

    def __init__(self, devices: int = 1) -> None:
        if not isinstance(devices, int) or devices < 1:
            raise ValueError(f"devices must be an int >= 1, got {devices!r}")
        # The scheduler starts no more attempts than this at once.
        self.capacity = devices
        self._limiter: anyio.CapacityLimiter | None = None

    async def run(self, job: jobsched.Job) -> Any:
        run_sync = getattr(job, "run_sync", None)
        if run_sync is None:
            raise jobsched.NonRetryableError(
                f"{type(job).__qualname__} has no `def run_sync(self)`, which the gpu executor runs"
            )
        if self._limiter is None:  # made on first use, inside the event loop
            self._limiter = anyio.CapacityLimiter(self.capacity)
        token = jobsched.CancelToken()
        async with self._limiter:
            try:
                return await anyio.to_thread.run_sync(token.run, run_sync, abandon_on_cancel=True)
            except anyio.get_cancelled_exc_class():
                # The job sees jobsched.cancel_requested() turn True; its
                # thread is abandoned and whatever it returns is dropped.
                token.cancel()
                raise
