"""A dict store's dependency edges: jobs added with their upstreams, and
what an upstream's end does downstream (a completion releases the jobs
waiting for it; any other end cancels them, transitively, except the jobs
whose edge to it has the "run" policy, which it releases too)."""

from __future__ import annotations

from collections.abc import Sequence

from jobsched import JobStatus
from jobsched.store import Change, NewJob

from ._rows import Row, State

S = JobStatus


def add(state: State, jobs: Sequence[NewJob], now: float) -> list[Change]:
    """Insert ``jobs``: one whose upstream ended other than COMPLETED on a
    "cancel" edge (or is not in the store) ends CANCELLED at once, and comes
    back as a change; one on a "run" edge does not wait for it."""
    changes = []
    for job in jobs:
        job.existed = job.own_id and job.id in state.jobs
        if job.existed:
            continue  # an id of the submitter's own that the store holds: that job stands
        row = Row.of(job)
        row.delayed = job.run_at > now
        state.jobs[row.id] = row
        for upstream_id in row.depends_on:
            upstream = state.jobs.get(upstream_id)
            if upstream is not None and upstream.status is S.COMPLETED:
                continue
            if upstream is not None and upstream.status.is_terminal and upstream_id in row.lenient:
                continue
            if upstream is None or upstream.status.is_terminal:
                # Not in the store: no one can tell how it ended, whatever the policy.
                how = "is not in the store" if upstream is None else upstream.status.value
                error = f"upstream job-{upstream_id} {how}"
                finish(row, S.CANCELLED, now, error)
                changes.append(Change(row.id, S.CANCELLED, error))
                break
            row.unmet.add(upstream_id)
        if row.status is S.CANCELLED:
            row.unmet.clear()
            continue
        for upstream_id in row.unmet:
            state.dependents.setdefault(upstream_id, set()).add(row.id)
    return changes


def finish(row: Row, status: JobStatus, now: float, error: str | None) -> None:
    """End a job that is not running (a cancel, a cascade)."""
    row.status, row.finished_at, row.owner, row.lease_until = status, now, None, None
    row.last_error = error if error is not None else row.last_error


def release(state: State, upstream: int, now: float) -> None:
    """``upstream`` completed: its dependents stop waiting for it."""
    for job_id in state.dependents.pop(upstream, ()):
        _count_off(state, job_id, upstream, now)


def _count_off(state: State, job_id: int, upstream: int, now: float) -> None:
    row = state.jobs.get(job_id)
    if row is None or not row.waiting:
        return
    row.unmet.discard(upstream)
    if not row.unmet:
        # Free: it runs at its run_at, never before the upstream ended.
        row.delayed = row.run_at > now


def cascade(state: State, root: int, status: JobStatus, now: float) -> list[Change]:
    """``root`` did not complete: cancel everything downstream of it."""
    changes = []
    todo = [(root, status.value)]
    while todo:
        upstream, how = todo.pop()
        for job_id in sorted(state.dependents.pop(upstream, ())):
            row = state.jobs.get(job_id)
            if row is not None and upstream in row.lenient:
                _count_off(state, job_id, upstream, now)
                continue
            if row is None or not row.waiting:
                continue
            error = f"upstream job-{upstream} {how}"
            finish(row, S.CANCELLED, now, error)
            changes.append(Change(job_id, S.CANCELLED, error))
            todo.append((job_id, S.CANCELLED.value))
    return changes
