"""One job's outcome: ``wait`` for it to end, ``result`` to get what it returned.

``JobScheduler.wait`` and ``result`` (where their docstrings are) call these:
on the memory store the backing's wait is woken by the job's end here; on a
durable one by this member's commits and the store's notifications of other
members' outcomes, with polling as the fallback.
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
    from ._backing import Reader

_COMPLETED = JobStatus.COMPLETED


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
