"""The ``async`` executor: runs a job's ``async def run()`` on the event loop."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

import jobsched

__all__ = ["AsyncExecutor"]


class AsyncExecutor(jobsched.Executor):
    """Awaits ``job.run()`` in the scheduler's own worker task.

    Cancellation and timeouts reach the job at its next ``await``. A job that
    catches the cancellation is cancelled again at each following await, and
    its attempt is recorded as CANCELLED or TIMED_OUT whatever it returns. The
    bound: a job still running one second (``jobsched._engine._resume.CANCEL_GRACE``)
    after its cancellation is closed at its next await and abandoned, with a
    warning, so its worker serves the next job (unless it catches
    ``GeneratorExit`` too: then it keeps its worker until it returns). Code
    that blocks the loop without awaiting cannot be interrupted at all; put it
    in a thread or process job.
    """

    name = "async"

    # A plain function returning the job's awaitable, not an `async def`: the
    # scheduler awaits what it returns, and one coroutine frame fewer per
    # attempt is measurable on the hot path.
    def run(self, job: jobsched.Job) -> Awaitable[Any]:  # type: ignore[override]
        try:
            run = job.run  # type: ignore[attr-defined]
        except AttributeError:
            raise TypeError(
                f"{type(job).__qualname__} has no `async def run(self)`; the async executor "
                "runs AsyncJob subclasses and FunctionJobs of coroutine functions"
            ) from None
        return run()  # type: ignore[no-any-return]
