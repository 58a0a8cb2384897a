"""The executor plugin contract, and cooperative cancellation for work off the loop."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, TypeVar

from ._current import current_token, snapshot
from ._job import Job

T = TypeVar("T")


class Executor(ABC):
    """Runs jobs of one kind. Published through the ``jobsched.executors``
    entry-point group, under the name jobs use in their ``executor`` attribute.

    The scheduler owns timeouts, retries and statuses; an executor only runs
    one attempt. Cancelling the task that awaits :meth:`run` must stop the
    work where the executor can and return control promptly.
    """

    #: The name jobs use to pick this executor.
    name: str

    #: The most attempts this executor instance runs at once, or None for no
    #: bound of its own. The scheduler holds jobs beyond it off its workers
    #: (as it does for ``executor_limits``; the smaller of the two wins), so a
    #: job's timeout counts its own run, never a wait for a free slot here.
    capacity: int | None = None

    @abstractmethod
    async def run(self, job: Job) -> Any:
        """Run one attempt of ``job``; return its result or raise its error."""

    async def shutdown(self, *, cancel_running: bool = False) -> None:  # noqa: B027
        """Release what the executor holds (pools, processes). Idempotent."""


class CancelToken:
    """Tells work running off the event loop that its attempt is over.

    An executor creates one per attempt, runs the job's code through
    :meth:`run` (in the worker thread), and calls :meth:`cancel` when the
    attempt is cancelled or times out. The job sees it through
    :func:`cancel_requested`. Made in the executor's ``run()``, it remembers
    the attempt, so :func:`jobsched.current_job` in the thread names that
    attempt even once the scheduler is done with it.
    """

    # A bool, not a threading.Event: the token is only set and read, never
    # waited on, and one attribute store is atomic, so no lock is needed (and
    # `import jobsched` does not pay for threading).
    __slots__ = ("_attempt", "_cancelled")

    def __init__(self) -> None:
        self._cancelled = False
        self._attempt = snapshot()

    def cancel(self) -> None:
        """Mark the attempt as cancelled; safe from any thread."""
        self._cancelled = True

    @property
    def cancelled(self) -> bool:
        """True once :meth:`cancel` was called."""
        return self._cancelled

    def run(self, func: Callable[..., T], /, *args: Any) -> T:
        """Call ``func(*args)`` with this token as the current one."""
        reset = current_token.set(self)
        try:
            return func(*args)
        finally:
            current_token.reset(reset)


def cancel_requested() -> bool:
    """True inside a running thread job once its attempt was cancelled or timed out.

    Poll it in long loops to stop early; whatever the job then returns or
    raises, the attempt keeps the status the scheduler gave it. Outside a job
    it returns False.
    """
    token = current_token.get()
    return token is not None and token.cancelled
