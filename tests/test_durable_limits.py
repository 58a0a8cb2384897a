"""Rate limits on a durable store: one budget per key for every member of the
store (a SQLite file, a PostgreSQL database), and a member whose jobs wait
only for tokens claims again when one is due.

The scheduler tests of rate limits (test_rate_limit.py) need trio's mock clock
for exact start times; a store works in threads on the real clock, so these
run on asyncio with real time and bounds that leave room for a slow machine.
The stores' own bucket arithmetic is tested on exact numbers in the
conformance suite (jobsched/store/testing/test_limits.py).
"""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest
from pg import SECRET, schema_url

import jobsched as js
from jobsched._engine._link import _timing

pytestmark = pytest.mark.anyio

#: How much later than its claim an attempt may start on a loaded machine:
#: start times are measured after the claim that took the token.
SLACK = 0.5


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A store's URL: a SQLite file, or a schema of the session's PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'jobs.db'}"
    monkeypatch.setenv("JOBSCHED_SECRET", SECRET)
    return schema_url(request.getfixturevalue("pg_session_database"))


async def noop() -> None:
    pass


def max_in_window(times: list[float], window: float) -> int:
    """The most of ``times`` inside any closed window of length ``window``."""
    times = sorted(times)
    best = j = 0
    for i, t in enumerate(times):
        while times[j] < t - window:
            j += 1
        best = max(best, i - j + 1)
    return best


def record_starts(s: js.JobScheduler, into: list[tuple[str, float]], member: str) -> None:
    def listener(job: js.Job, old: js.JobStatus, new: js.JobStatus) -> None:
        if new is js.JobStatus.RUNNING and job.rate_key is not None:
            into.append((member, time.monotonic()))

    s.add_listener(listener)


async def test_two_members_of_one_file_share_each_keys_budget(db: str) -> None:
    """Two schedulers on one store, each given the same limit, start no more than one budget."""
    limits = {"api": js.RateLimit(10, per=1.0, burst=5)}
    starts: list[tuple[str, float]] = []
    a = js.JobScheduler(store=db, rate_limits=limits, num_workers=4)
    b = js.JobScheduler(store=db, rate_limits=limits, num_workers=4)
    record_starts(a, starts, "a")
    record_starts(b, starts, "b")
    async with a:
        for _ in range(35):
            a.submit(js.FunctionJob(noop, rate_key="api"))
        await a.flush()  # b finds them at its first claim
        async with b:
            with anyio.fail_after(60):
                await a.join()
    times = [t for _, t in starts]
    assert len(times) == 35
    assert {member for member, _ in starts} == {"a", "b"}
    # One budget: 30 tokens after the burst take 3 s at 10 a second (two
    # budgets would take 1.25 s), and no second holds more than burst + rate.
    assert max(times) - min(times) >= 3.0 - SLACK
    assert max_in_window(times, 1.0) <= 5 + (1.0 + SLACK) * 10


async def test_a_member_waiting_for_tokens_claims_when_one_is_due(
    db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With polling switched off, the claimer still comes back for each token in time."""
    # An hour between polls: only a precise wake-up can start the next job.
    monkeypatch.setattr(_timing, "POLL_INTERVAL", 3600.0)
    starts: list[tuple[str, float]] = []
    limits = {"k": js.RateLimit(10, per=1.0, burst=1)}
    async with js.JobScheduler(store=db, rate_limits=limits) as s:
        record_starts(s, starts, "s")
        ids = [s.submit(js.FunctionJob(noop, rate_key="k")) for _ in range(8)]
        with anyio.fail_after(60):
            await s.join()
        assert all(s.get(i).status is js.JobStatus.COMPLETED for i in ids)
    times = sorted(t for _, t in starts)
    assert times[-1] - times[0] >= 0.7 - SLACK  # seven tokens at 10 a second


async def test_a_limited_job_does_not_hold_a_worker_on_a_durable_store(db: str) -> None:
    """With one worker, unlimited jobs run while a limited one waits for its token."""
    limits = {"api": js.RateLimit(1, per=30.0)}
    order: list[str] = []
    free_done = anyio.Event()

    def listener(job: js.Job, old: js.JobStatus, new: js.JobStatus) -> None:
        if new is js.JobStatus.RUNNING:
            order.append(job.name)
        elif new is js.JobStatus.COMPLETED and job.name == "free 2":
            free_done.set()

    async with js.JobScheduler(store=db, num_workers=1, rate_limits=limits) as s:
        s.add_listener(listener)
        s.submit(js.FunctionJob(noop, rate_key="api", name="api 1"))
        late = s.submit(js.FunctionJob(noop, rate_key="api", name="api 2"))
        for i in range(3):
            s.submit(js.FunctionJob(noop, name=f"free {i}"))
        with anyio.fail_after(60):
            await free_done.wait()
        # Its token is 30 s away: it waits in the store, not on the worker.
        assert s.get(late).status is js.JobStatus.PENDING
    assert order == ["api 1", "free 0", "free 1", "free 2"]
