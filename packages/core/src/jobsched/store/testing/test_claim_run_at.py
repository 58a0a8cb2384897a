"""A claim carries the job's stored ``run_at`` (``Claimed.run_at``, issue 38):
the member that runs a job submitted elsewhere measures its queue wait from
it. Every way a claim takes jobs carries it: key order, a rate limit, fair
share, named queues, claims ahead of the workers, and a retry's new time.
"""

from __future__ import annotations

from typing import Any

import pytest

import jobsched as js
from jobsched.store import Claimed, JobStore, NewJob, Outcome

pytestmark = pytest.mark.anyio

S = js.JobStatus
NOW = 1_700_000_000.0
ALL = {"async": 99}


def new(job_id: int, run_at: float = NOW, **kw: Any) -> NewJob:
    return NewJob(
        job_id, f"j{job_id}", "async", (float(job_id),), run_at, NOW, b"P" + bytes([job_id]), **kw
    )


def run_ats(claims: list[Claimed]) -> list[tuple[int, float | None]]:
    return [(c.id, c.run_at) for c in claims]


async def test_a_claim_carries_each_jobs_stored_run_at(store: JobStore) -> None:
    """Due at once, or after a delay: each claimed job with its own run_at."""
    await store.add([new(1), new(2, NOW - 7.5), new(3, NOW + 20.0)], NOW)
    assert run_ats(await store.claim("m", 5, ALL, NOW, 30)) == [(1, NOW), (2, NOW - 7.5)]
    # Claimed once due (promoted from the waiting jobs by the claim).
    assert run_ats(await store.claim("m", 5, ALL, NOW + 25, 30)) == [(3, NOW + 20.0)]


async def test_a_retry_is_claimed_with_its_retry_time(store: JobStore) -> None:
    await store.add([new(1)], NOW)
    (first,) = await store.claim("m", 1, ALL, NOW, 30)
    failed = Outcome(1, first.attempt, S.RETRY_WAIT, NOW + 1, run_at=NOW + 4, error="E: once")
    assert (await store.record("m", [failed])).refused == []
    assert run_ats(await store.claim("m", 1, ALL, NOW + 5, 30)) == [(1, NOW + 4)]


@pytest.mark.parametrize(
    "limits",
    [
        {"rates": {"k": js.RateLimit(10, per=1.0, burst=10)}},
        {"tenants": {"a": 1, None: 1}},
        {"queues": {"emails", "default"}},
        {"starting": 0},
    ],
    ids=["rate-limit", "fair-share", "queues", "ahead"],
)
async def test_every_claim_path_carries_it(store: JobStore, limits: dict[str, Any]) -> None:
    """The claims that choose job by job, by queue, or ahead of the workers."""
    await store.add(
        [
            new(1, NOW - 1.0, rate_key="k", tenant="a", queue="emails"),
            new(2, NOW - 2.0, rate_key="k"),
        ],
        NOW,
    )
    got = await store.claim("m", 5, ALL, NOW, 30, **limits)
    assert sorted(run_ats(got)) == [(1, NOW - 1.0), (2, NOW - 2.0)]
