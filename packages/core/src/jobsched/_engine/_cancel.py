"""Cancelling: a queued job at once, a running one at its next await, a job
another member holds through the store."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._enums import JobStatus
from .._jobs._ids import id_number

if TYPE_CHECKING:
    from collections.abc import Callable

    from .._jobs._job import Job
    from ._backing import Backing
    from ._dispatch import Dispatcher
    from ._state import JobTable

_RUNNING = JobStatus.RUNNING
_CANCELLED = JobStatus.CANCELLED

#: How many cancels of jobs unknown here are remembered against a claim
#: already on its way: far more than a claim round trip sees.
CANCELS_KEPT = 10_000


class Canceller:
    """What ``cancel()`` reaches: the queues, running attempts, the store."""

    __slots__ = ("backing", "dispatcher", "finish", "table")

    def __init__(
        self,
        table: JobTable,
        backing: Backing,
        dispatcher: Dispatcher,
        finish: Callable[[Job, JobStatus, str | None], None],
    ) -> None:
        self.table = table
        self.backing = backing
        self.dispatcher = dispatcher
        #: Outcomes' finish: the job and the cascade to its dependents.
        self.finish = finish

    def cancel(self, job_id: str) -> bool:
        """See :meth:`JobScheduler.cancel`."""
        number = id_number(job_id)
        job = self.table.jobs.get(number)
        # The backing answers for a job it decides about (unknown, finished,
        # held elsewhere); a running job's cancel is stored there first.
        answer = self.backing.cancel_elsewhere(number, job)
        if answer is not None:
            return answer
        assert job is not None
        if job.status is _RUNNING:
            self.dispatcher.cancel_running(number)
        else:
            self.finish(job, _CANCELLED, "cancelled")
            self.backing.withdraw(job)  # from the queue and the limits' holds
        return True

    def cut_short_running(self) -> int:
        """Cut every running attempt short, for a stop past its grace; how many.

        On a durable store each such job goes back to the store, to run again
        in any member (its interrupted attempt not counted); in memory it
        ends CANCELLED.
        """
        backing = self.backing
        attempts = backing.attempts_to_cut(self.dispatcher.running())
        for attempt in attempts:
            attempt.cancel(backing.shutdown_reason)
        return len(attempts)
