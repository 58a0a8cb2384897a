"""One job's outcome: ``wait`` for it to end, ``result`` to get what it returned."""

from __future__ import annotations

import math
from typing import Any

import anyio

from .._enums import JobStatus
from .._exceptions import (
    JobFailedError,
    SchedulerError,
    SchedulerStoppedError,
    StoreUnavailableError,
    UnknownJobError,
)
from .._jobs._ids import id_number
from .._jobs._job import Job
from ._state import POLL_INTERVAL, STOPPED, _describe
from ._stored import Stored, UnloadableJob

_COMPLETED = JobStatus.COMPLETED


class Results(Stored):
    """``wait`` and ``result``: on the memory store woken by the job's end
    here; on a durable one by this member's commits and the store's
    notifications of other members' outcomes, with polling as the fallback."""

    # timeout= as the contract names it (asyncio.wait_for's and Celery's
    # get(timeout=) too), rather than a cancel scope around the call.
    async def wait(self, job_id: str, *, timeout: float | None = None) -> Job:  # noqa: ASYNC109
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
        _check_timeout(timeout)
        try:
            return await self._backing.wait(job_id, timeout)
        except TimeoutError as exc:
            # The cause, when the store was unavailable all the while.
            raise TimeoutError(
                f"job {job_id!r} did not finish within {timeout} s; it goes on running "
                "(wait again, or cancel() it)"
            ) from exc.__cause__

    async def result(self, job_id: str, *, timeout: float | None = None) -> Any:  # noqa: ASYNC109
        """Wait for the job (see :meth:`wait`) and return its result.

        :raises JobFailedError: it ended other than COMPLETED; its ``job``
            attribute is the finished job.
        :raises TimeoutError: ``timeout`` seconds passed first.
        :raises UnknownJobError: the store does not hold the job.
        :raises SchedulerError: it completed, but its stored job or result
            does not load here (another key signed it, its module is missing,
            or the row was altered).
        """
        job = await self.wait(job_id, timeout=timeout)
        if job.status is _COMPLETED:
            if isinstance(job, UnloadableJob):
                # Its None is no result: the caller must not take it for one.
                raise SchedulerError(
                    f"{_describe(job)} completed, but its result cannot be read here: "
                    + job.load_error
                )
            return job.result
        raise JobFailedError(failed_message(job), job)

    async def _wait_stored(self, job_id: str, seconds: float | None) -> Job:
        link = self._link
        assert link is not None
        number = id_number(job_id)
        # The first look is not cut short by the timeout (it takes round
        # trips): wait(timeout=0) still answers for a job that has ended.
        # Only an outage longer than the timeout ends it.
        patience = math.inf if seconds is None else seconds
        try:
            await link.flush(patience)  # a job this process submitted is in the store
            # Taken before each read: an outcome committed while the read is on
            # its way wakes the next wait instead of being missed.
            settled = link.next_settled()
            job = await self._look(job_id, number, patience)
        except StoreUnavailableError as exc:
            self._stopped_under(exc)
            raise TimeoutError from exc
        if job is not None:
            return job
        try:
            with anyio.fail_after(seconds):
                while True:
                    with anyio.move_on_after(POLL_INTERVAL):
                        await settled.wait()
                    settled = link.next_settled()
                    job = await self._look(job_id, number)
                    if job is not None:
                        return job
        except StoreUnavailableError as exc:
            self._stopped_under(exc)
            raise

    def _stopped_under(self, exc: StoreUnavailableError) -> None:
        """A wait's read gave up because stop() closed the link under it:
        it is the stop that answers."""
        if self._run.stopping:
            raise SchedulerStoppedError(
                "cannot wait for the job: this scheduler is stopping, and the store is "
                "unavailable; the job runs on when a scheduler on the store runs"
            ) from exc

    async def _look(self, job_id: str, number: int, patience: float = math.inf) -> Job | None:
        """The job if the store holds it finished, None if it holds it unfinished
        (read through an outage of up to ``patience`` seconds)."""
        link = self._link
        assert link is not None
        if self._run.phase == STOPPED:
            raise SchedulerStoppedError(
                f"cannot wait for {job_id!r}: this scheduler stopped and closed its store; "
                "wait from a running scheduler (the job runs on when one runs)"
            )
        row = None
        if number:
            row = await link.read(
                "waiting for a job", lambda: link.store.fetch(number), patience=patience
            )
        if row is None:
            raise UnknownJobError(
                f"no job {job_id!r} in the store {link.store.url}: never submitted there, "
                "or pruned (history_limit)"
            )
        if row.status.is_terminal:
            return self._job_from_row(row, job_id)
        return None


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
