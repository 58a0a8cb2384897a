"""Every exception jobsched raises."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._enums import JobStatus


class SchedulerError(Exception):
    """Base class of the scheduler's own errors."""


class InvalidTransitionError(SchedulerError):
    """A job was moved along an edge the state machine does not have."""


class UnknownJobError(SchedulerError, KeyError):
    """No job with that id is known (never submitted, or evicted from history)."""

    def __str__(self) -> str:
        # KeyError.__str__ would repr() the message and wrap it in quotes.
        return str(self.args[0]) if self.args else ""


class UnknownScheduleError(SchedulerError, KeyError):
    """No schedule with that id (never registered, or removed)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class SchedulerStoppedError(SchedulerError):
    """The scheduler is stopping or stopped and accepts no new work."""


class JobFailedError(SchedulerError):
    """``result()`` was asked for a job that ended other than COMPLETED.

    :attr:`job` is the finished job (its status, attempts and last_error).
    """

    def __init__(self, message: str, job: object) -> None:
        super().__init__(message)
        #: The finished job, as the store has it.
        self.job = job


class ExecutorNotFoundError(SchedulerError):
    """A job names an executor that is not installed."""


class NonRetryableError(Exception):
    """Raise from a job to fail it at once, skipping any remaining retries."""


class StoreNotFoundError(SchedulerError):
    """A store URL names a scheme no installed store serves."""


class StoreUnavailableError(SchedulerError):
    """A store cannot be reached or opened (the message masks any password)."""


class LeaseLostError(SchedulerError):
    """``complete_in`` found that this member no longer holds the attempt.

    Its lease ran out and another member took the job over, or the attempt
    already ended here (a timeout, a cancel) or elsewhere. Nothing was
    written: roll the caller's transaction back, so that its work and the
    job's completion stay one or none.
    """


class UpstreamFailedError(NonRetryableError):
    """A job's ``js.result_of(upstream)`` stands for an upstream that did not
    complete (possible only on an ``After(upstream, on_failure="run")`` edge).

    Raised inside the job before its body runs, so the attempt ends FAILED
    and is not retried (another attempt would find the same upstream). In a
    ``js.results_of([...])`` list the failed upstream's slot holds this error
    instead of a result, so a job can use whatever succeeded::

        ok = [r for r in results if not isinstance(r, js.UpstreamFailedError)]

    :attr:`job_id`, :attr:`status` and :attr:`last_error` describe the
    upstream as it ended. It pickles (a process job receives it too).
    """

    def __init__(self, job_id: str, status: JobStatus, last_error: str | None = None) -> None:
        ended = getattr(status, "value", status)
        why = f": {last_error}" if last_error else ""
        super().__init__(f"upstream {job_id} ended {ended}, not completed{why}")
        #: The upstream's id.
        self.job_id = job_id
        #: How the upstream ended: a :class:`JobStatus` other than COMPLETED.
        self.status = status
        #: The upstream's ``last_error``, or None.
        self.last_error = last_error

    def __reduce__(self) -> tuple[object, ...]:
        # BaseException pickles its args (the message) only; rebuild from the fields.
        return (type(self), (self.job_id, self.status, self.last_error))
