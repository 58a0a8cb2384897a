"""Cancelling: a queued job at once, a running one at its next await, a job
another member holds through the store."""

from __future__ import annotations

from .._enums import JobStatus
from .._jobs._ids import id_number
from ._stored import Stored

_RUNNING = JobStatus.RUNNING
_CANCELLED = JobStatus.CANCELLED

#: How many cancels of jobs unknown here are remembered against a claim
#: already on its way: far more than a claim round trip sees.
CANCELS_KEPT = 10_000


class Cancelling(Stored):
    """What ``cancel()`` reaches: the queues, running attempts, the store."""

    def cancel(self, job_id: str) -> bool:
        """Cancel a job; False if it is unknown or already finished.

        A queued or retry-waiting job is CANCELLED at once. A running async
        job is cancelled at its next await; a running thread or process job is
        CANCELLED and its executor stops the work where it can.
        """
        number = id_number(job_id)
        job = self._table.jobs.get(number)
        # The backing answers for a job it decides about (unknown, finished,
        # held elsewhere); a running job's cancel is stored there first.
        answer = self._backing.cancel_elsewhere(number, job)
        if answer is not None:
            return answer
        assert job is not None
        if job.status is _RUNNING:
            self._dispatcher.cancel_running(number)
        else:
            self._finish(job, _CANCELLED, "cancelled")
            self._backing.withdraw(job)
            if self._admission is not None:
                self._admission.cancelled(job)
        return True

    def _hand_back_running(self) -> int:
        """Cut every running attempt short, for a stop past its grace; how many.

        On a durable store each such job goes back to the store, to run again
        in any member (its interrupted attempt not counted); in memory it
        ends CANCELLED.
        """
        backing = self._backing
        attempts = backing.attempts_to_cut(self._dispatcher.running())
        for attempt in attempts:
            attempt.cancel(backing.shutdown_reason)
        return len(attempts)
