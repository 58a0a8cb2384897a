"""Ending one job through the store as a member would: the suite's tests of
edges, cascades and workflows share it."""

from __future__ import annotations

from jobsched import JobStatus
from jobsched.store import Change, JobStore, Outcome

NOW = 1_700_000_000.0


async def end(
    store: JobStore, job_id: int, how: JobStatus, executors: dict[str, int]
) -> list[Change]:
    """Claim ``job_id`` (the others claimed with it handed back) and end it
    ``how`` at NOW + 1; the changes the store reports."""
    claims = await store.claim("m1", 999, executors, NOW, 30)
    (claim,) = [c for c in claims if c.id == job_id]
    others = [c.id for c in claims if c.id != job_id]
    if others:
        await store.release("m1", others)
    error = None if how is JobStatus.COMPLETED else "E: x"
    recorded = await store.record("m1", [Outcome(job_id, claim.attempt, how, NOW + 1, error=error)])
    assert recorded.refused == []
    return recorded.changes
