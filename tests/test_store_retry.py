"""The operator's retry on SQLite and PostgreSQL alike: a requeued job waits
for what it waited for before it was cancelled."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

import jobsched as js
from jobsched._store import JobStore, NewJob, Outcome

pytestmark = pytest.mark.anyio

NOW = 1_700_000_000.0


@pytest.fixture
def anyio_backend() -> str:
    # The stores' logic does not depend on the backend; their threads do not
    # run on trio's mock clock.
    return "asyncio"


@pytest.fixture
async def store(member: Callable[[], Awaitable[JobStore]]) -> JobStore:
    return await member()


def new(job_id: int, *, run_at: float = NOW, depends_on: tuple[int, ...] = ()) -> NewJob:
    return NewJob(job_id, f"j{job_id}", "async", (0.0, float(job_id)), run_at, NOW, b"P",
                  depends_on=depends_on)  # fmt: skip


async def test_a_retried_dependent_waits_again_for_its_unfinished_upstream(
    store: JobStore,
) -> None:
    """Cancelled while it waited, then retried: it must not run before its upstream."""
    await store.add([new(1, run_at=NOW + 10), new(2, depends_on=(1,))], NOW)
    await store.cancel([2], NOW)
    assert await store.retry([2, 2], NOW) == [2]  # once, however often named
    job = await store.fetch(2)
    assert job is not None and job.status is js.JobStatus.PENDING and job.depends_on == (1,)
    assert await store.claim("m", 5, {"async": 99}, NOW, 30) == []
    # Its upstream runs and completes: then, and only then, it is claimed.
    (up,) = await store.claim("m", 5, {"async": 99}, NOW + 10, 30)
    assert up.id == 1
    await store.record("m", [Outcome(1, 1, js.JobStatus.COMPLETED, NOW + 11)])
    assert [c.id for c in await store.claim("m", 5, {"async": 99}, NOW + 11, 30)] == [2]


async def test_the_requeued_ids_come_back_in_the_callers_order_each_once(
    store: JobStore,
) -> None:
    await store.add([new(i) for i in (1, 2, 3, 4)], NOW)
    claimed = await store.claim("m", 4, {"async": 99}, NOW, 30)
    assert sorted(c.id for c in claimed) == [1, 2, 3, 4]
    await store.record(
        "m", [Outcome(i, 1, js.JobStatus.FAILED, NOW + 1, error="E: x") for i in (1, 2, 3)]
    )
    # 4 is still running: it is left alone; 9 is no job at all.
    assert await store.retry([3, 9, 1, 4, 3, 2], NOW + 2) == [3, 1, 2]
