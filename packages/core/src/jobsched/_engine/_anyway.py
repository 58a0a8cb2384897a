"""Ending a job FAILED when our own bookkeeping raised while recording its outcome."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from .._enums import JobStatus
from .._jobs._text import storable
from .._log import logger
from ._state import _describe, _extra, _format

if TYPE_CHECKING:
    from collections.abc import Callable

    from .._jobs._job import Job
    from ._backing import Backing
    from ._outcomes import Outcomes
    from ._state import JobTable

_FAILED = JobStatus.FAILED
_CANCELLED = JobStatus.CANCELLED


def end_failed(
    outcomes: Outcomes,
    table: JobTable,
    backing: Backing,
    clock: Callable[[], float],
    job: Job,
    exc: Exception,
) -> None:
    """See ``Outcomes.recording_failed``: ``job`` ends FAILED with the internal
    error, its dependents follow their edges, and join() is not left waiting."""
    reason = storable(
        f"jobsched internal error while recording the outcome: {type(exc).__name__}: {exc}"
    )
    logger.error("%s: %s", _describe(job), reason, exc_info=exc, extra=_extra(job))
    old = job.status
    if old._terminal:  # type: ignore[attr-defined]
        return  # recorded before the error; finish_one counts a job once terminal
    # Set by hand, not through the table's transition: RETRY_WAIT -> FAILED is no
    # legal edge, and the regular path is what just failed.
    job.status = _FAILED
    job.last_error = reason
    job.last_traceback = _format(exc)
    try:
        job.finished_at = clock()
    except Exception:
        job.finished_at = time.monotonic()
    number = job._jobsched_id
    backing.failed_anyway(job)
    table.unfinished -= 1
    if table.outcome_waiters:
        # wait() on the memory store sleeps until the job ends here.
        for event in table.outcome_waiters.pop(number, ()):
            event.set()
    outcomes.blocked.pop(number, None)
    table.remember(number)
    if len(table.finished) > table.history_limit:
        outcomes.evict(table.finished.popleft())
    if table.listeners:
        table.notify(job, old, _FAILED)
    for dep in outcomes.dependents.get(number) or ():
        dependent = table.jobs.get(dep)
        if dependent is not None and not outcomes.graph().settled(dependent, job, number):
            outcomes.finish(dependent, _CANCELLED, f"upstream job-{number} failed")
    if not table.unfinished and table.join_waiters:
        table.wake_joiners()
