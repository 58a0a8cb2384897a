"""One job's outcome: ``wait`` for it to end, ``result`` to get what it
returned, ``fetch`` to read it as the store has it.

``ResultCalls`` is a stateless base of ``JobScheduler`` holding those three
public methods (so that ``_scheduler.py`` stays short); each asks the backing
only. On the memory store the backing's wait is woken by the job's end here;
on a durable one by this member's commits and the store's notifications of
other members' outcomes, with polling as the fallback.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._enums import JobStatus
from .._exceptions import (
    JobFailedError,
    SchedulerError,
)
from ._state import _describe
from ._stored import UnloadableJob

if TYPE_CHECKING:
    from .._jobs._job import Job
    from ._backing import Backing, Reader

_COMPLETED = JobStatus.COMPLETED


class ResultCalls:
    """A finished job, its result, a stored job: the backing's reads."""

    __slots__ = ()

    _backing: Backing

    # timeout= as the contract names it (asyncio.wait_for's and Celery's
    # get(timeout=) too), rather than a cancel scope around the call.
    async def wait(self, job_id: str, *, timeout: float | None = None) -> Job:
        """Wait until the job is finished and return it as the store has it.

        Finished means COMPLETED, FAILED, TIMED_OUT or CANCELLED, wherever
        (whichever member) it ran.

        :param timeout: the most seconds to wait; None waits as long as it takes.
        :raises TimeoutError: ``timeout`` seconds passed first.
        :raises UnknownJobError: the store does not hold the job.
        :raises SchedulerStoppedError: the scheduler stopped before the job ended.

        On a durable store it rides an outage (the job cannot end in the store
        meanwhile): ``timeout`` bounds that wait too.
        """
        return await wait_for(self._backing, job_id, timeout)

    async def result(self, job_id: str, *, timeout: float | None = None) -> Any:
        """Wait for the job (see :meth:`wait`) and return its result.

        :raises JobFailedError: it ended other than COMPLETED; its ``job``
            attribute is the finished job.
        :raises TimeoutError: ``timeout`` seconds passed first.
        :raises UnknownJobError: the store does not hold the job.
        :raises SchedulerError: it completed, but its stored job or result
            does not load here (another key signed it, its module is missing,
            or the row was altered).
        """
        return result_of(await self.wait(job_id, timeout=timeout))

    async def fetch(self, job_id: str) -> Job:
        """The job as the store has it, whichever process ran it.

        :raises UnknownJobError: the store does not hold it.
        :raises StoreUnavailableError: the store is unavailable (a one-off
            read: the caller decides whether to try again; what this process
            submitted is waited for as ``flush()`` does).
        """
        return await self._backing.fetch(job_id)


async def wait_for(backing: Reader, job_id: str, timeout: float | None) -> Job:
    """The job once finished, as the backing has it (``JobScheduler.wait``)."""
    _check_timeout(timeout)
    try:
        return await backing.wait(job_id, timeout)
    except TimeoutError as exc:
        # The cause, when the store was unavailable all the while.
        raise TimeoutError(
            f"job {job_id!r} did not finish within {timeout} s; it goes on running "
            "(wait again, or cancel() it)"
        ) from exc.__cause__


def result_of(job: Job) -> Any:
    """A finished job's result (``JobScheduler.result``).

    :raises JobFailedError: it ended other than COMPLETED.
    :raises SchedulerError: it completed, but does not load here.
    """
    if job.status is _COMPLETED:
        if isinstance(job, UnloadableJob):
            # Its None is no result: the caller must not take it for one.
            raise SchedulerError(
                f"{_describe(job)} completed, but its result cannot be read here: " + job.load_error
            )
        return job.result
    raise JobFailedError(failed_message(job), job)


def failed_message(job: Job) -> str:
    """What JobFailedError says: the job, its status and its last error."""
    error = f": {job.last_error}" if job.last_error else " (no error recorded)"
    return f"{_describe(job)} ended {job.status.value} after {job.attempts} attempt(s){error}"


def _check_timeout(timeout: object) -> None:
    if timeout is None:
        return
    try:
        if not timeout >= 0:  # type: ignore[operator]  # NaN too
            raise ValueError(f"timeout must be a number of seconds >= 0, got {timeout!r}")
    except TypeError:
        raise TypeError(f"timeout must be a number of seconds or None, got {timeout!r}") from None
