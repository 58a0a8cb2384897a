"""Why a pending job has not started, from its own fields: what ``jobsched
jobs`` and the dashboard's job list show in place of "pending"."""

from __future__ import annotations

from .._enums import JobStatus
from ._rows import StoredJob

_PENDING = JobStatus.PENDING


def waiting(job: StoredJob, now: float) -> str | None:
    """``blocked`` (an upstream has not completed: a store keeps a
    dependency until it is met, and drops it then), ``delayed`` (due after
    ``now``) or ``ready``, for a PENDING job; None for any other status.
    No read beyond the row, so a list costs nothing more."""
    if job.status is not _PENDING:
        return None
    if job.depends_on:
        return "blocked"
    return "delayed" if job.run_at > now else "ready"
