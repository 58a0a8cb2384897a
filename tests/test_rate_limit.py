"""Rate limits: the token bucket on plain numbers, and the scheduler's starts on a virtual clock."""

from __future__ import annotations

import math
import random
from typing import Any

import anyio
import pytest
from trio.testing import MockClock

import jobsched as js


@pytest.fixture
def anyio_backend() -> tuple[str, dict[str, Any]]:
    """Exact start times need virtual time: trio's mock clock."""
    return "trio", {"clock": MockClock(autojump_threshold=0)}


def max_in_window(times: list[float], window: float) -> int:
    """The most of ``times`` inside any closed window of length ``window``."""
    times = sorted(times)
    best = j = 0
    for i, t in enumerate(times):
        while times[j] < t - window - 1e-9:
            j += 1
        best = max(best, i - j + 1)
    return best


# ── The bucket ─────────────────────────────────────────────────────────────


def test_bucket_starts_full_then_refills_at_the_rate() -> None:
    """Burst tokens at once, then one per per/rate seconds."""
    limit = js.RateLimit(10, per=1.0)
    assert limit.burst == 10
    assert [limit.try_acquire(0.0) for _ in range(11)] == [True] * 10 + [False]
    assert limit.take(0.0) == pytest.approx(0.1)  # when the next token is due
    assert limit.try_acquire(0.05) is False
    assert limit.try_acquire(0.1) is True
    assert limit.tokens(0.6) == pytest.approx(5.0)
    assert limit.tokens(100.0) == 10  # capped at burst


def test_per_and_burst() -> None:
    """Three a minute with a burst of one: one start, then one every 20 s."""
    limit = js.RateLimit(3, per=60.0, burst=1)
    assert limit.try_acquire(0.0) is True
    assert limit.take(0.0) == pytest.approx(20.0)
    assert limit.try_acquire(19.9) is False
    assert limit.try_acquire(20.0) is True


def test_rate_below_one_still_admits_a_job() -> None:
    """The default burst is at least one token, or a slow rate would never admit anything."""
    limit = js.RateLimit(0.5)
    assert limit.burst == 1
    assert limit.try_acquire(0.0) is True
    assert limit.available_at(0.0) == pytest.approx(2.0)


def test_available_at_takes_nothing_and_time_going_back_mints_nothing() -> None:
    """available_at only looks; a clock read that goes back adds no tokens."""
    limit = js.RateLimit(1, burst=1)
    assert limit.available_at(5.0) == 5.0
    assert limit.available_at(5.0) == 5.0
    assert limit.try_acquire(5.0) is True
    assert limit.try_acquire(4.0) is False
    assert limit.available_at(4.0) == pytest.approx(5.0)


def test_token_due_exactly_now_is_granted_despite_float_error() -> None:
    """A token due at `now` is granted, so a waiting job is not put back by a zero delay."""
    limit = js.RateLimit(3, per=0.7, burst=1)
    now = 1234.5678
    limit.try_acquire(now)
    due = limit.take(now)
    assert due is not None
    assert limit.try_acquire(due) is True


def test_greedy_consumer_never_exceeds_the_limit_in_any_window() -> None:
    """Taking whenever possible at random times stays within burst + w * rate / per."""
    rng = random.Random(5)
    limit = js.RateLimit(7, per=2.0, burst=4)
    now, taken = 0.0, []
    for _ in range(20_000):
        now += rng.expovariate(20.0)
        if limit.try_acquire(now):
            taken.append(now)
    for window in [0.0, 0.1, 0.5, 1.0, 3.3, 10.0]:
        assert max_in_window(taken, window) <= math.floor(4 + window * 7 / 2.0 + 1e-6)
    # And it is not over-strict: the long-run rate is the limit's.
    assert len(taken) / now == pytest.approx(3.5, rel=0.05)


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        ((0,), {}, "rate must be a positive finite number, got 0"),
        ((-1,), {}, "rate must be a positive"),
        ((math.nan,), {}, "rate must be"),
        ((math.inf,), {}, "rate must be"),
        (("10",), {}, "rate must be"),
        ((True,), {}, "rate must be"),
        ((10,), {"per": 0}, "per must be a positive finite number, got 0"),
        ((10,), {"per": -2.0}, "per must be"),
        ((10,), {"burst": 0}, "burst must be a finite number >= 1"),
        ((10,), {"burst": 0.5}, "burst must be"),
        ((10,), {"burst": -3}, "burst must be"),
        ((10,), {"burst": math.inf}, "burst must be"),
    ],
)
def test_bad_rate_limits(args: tuple[Any, ...], kwargs: dict[str, Any], match: str) -> None:
    """Non-positive or non-finite values are refused with the parameter named."""
    with pytest.raises(ValueError, match=match):
        js.RateLimit(*args, **kwargs)


# ── In the scheduler ───────────────────────────────────────────────────────


def record_starts(s: js.JobScheduler) -> list[tuple[str | None, float]]:
    starts: list[tuple[str | None, float]] = []

    def listener(job: js.Job, old: js.JobStatus, new: js.JobStatus) -> None:
        if new is js.JobStatus.RUNNING:
            starts.append((job.rate_key, anyio.current_time()))

    s.add_listener(listener)
    return starts


async def noop() -> None:
    pass


@pytest.mark.anyio
async def test_starts_per_key_never_exceed_the_limit() -> None:
    """Hundreds of limited jobs start within the bucket's bound in every window, at its rate."""
    limits = {"email": js.RateLimit(10, per=1.0), "sms": js.RateLimit(2, per=1.0, burst=1)}
    async with js.JobScheduler(clock=anyio.current_time, num_workers=4, rate_limits=limits) as s:
        starts = record_starts(s)
        t0 = anyio.current_time()
        for i in range(300):
            s.submit(js.FunctionJob(noop, rate_key="email", name=f"e{i}"))
            if i % 10 == 0:
                s.submit(js.FunctionJob(noop, rate_key="sms"))
            s.submit(js.FunctionJob(noop))  # unlimited
        with anyio.fail_after(3600):
            await s.join()
    by_key: dict[str | None, list[float]] = {}
    for key, t in starts:
        by_key.setdefault(key, []).append(t - t0)
    assert len(by_key["email"]) == 300 and len(by_key["sms"]) == 30
    for window in [0.0, 0.05, 0.1, 0.25, 1.0, 2.5, 10.0]:
        assert max_in_window(by_key["email"], window) <= math.floor(10 + window * 10 + 1e-6)
        assert max_in_window(by_key["sms"], window) <= math.floor(1 + window * 2 + 1e-6)
    # Not over-strict: 290 tokens after the burst take 29 s at 10/s.
    assert max(by_key["email"]) == pytest.approx(29.0, abs=0.01)
    assert max(by_key["sms"]) == pytest.approx(14.5, abs=0.01)
    # Unlimited jobs were never held behind the limited ones.
    assert max(by_key[None]) == 0.0


@pytest.mark.anyio
async def test_a_limited_job_does_not_hold_a_worker() -> None:
    """With one worker, unlimited jobs run while limited ones wait for tokens."""
    async with js.JobScheduler(
        clock=anyio.current_time,
        num_workers=1,
        rate_limits={"api": js.RateLimit(1, per=10.0)},
    ) as s:
        starts = record_starts(s)
        t0 = anyio.current_time()
        for _ in range(3):
            s.submit(js.FunctionJob(noop, rate_key="api"))
        for _ in range(3):
            s.submit(js.FunctionJob(noop, rate_key="not-limited"))
        with anyio.fail_after(3600):
            await s.join()
    api = [t - t0 for key, t in starts if key == "api"]
    other = [t - t0 for key, t in starts if key == "not-limited"]
    assert api == pytest.approx([0.0, 10.0, 20.0])
    assert other == [0.0, 0.0, 0.0]


@pytest.mark.anyio
async def test_waiting_jobs_keep_priority_order() -> None:
    """Jobs waiting for a key's tokens start in the strategy's order."""
    async with js.JobScheduler(
        clock=anyio.current_time, rate_limits={"k": js.RateLimit(1, burst=1)}
    ) as s:
        names: list[str] = []
        s.add_listener(
            lambda job, old, new: names.append(job.name) if new is js.JobStatus.RUNNING else None
        )
        s.submit(js.FunctionJob(noop, rate_key="k", name="first"))
        await anyio.sleep(0.1)  # "first" took the only token; the rest must wait
        for name, priority in [("low", js.JobPriority.LOW), ("high", js.JobPriority.HIGH)]:
            s.submit(js.FunctionJob(noop, rate_key="k", name=name, priority=priority))
        s.submit(js.FunctionJob(noop, rate_key="k", name="critical", priority=3))
        with anyio.fail_after(3600):
            await s.join()
    assert names == ["first", "critical", "high", "low"]


@pytest.mark.anyio
async def test_cancelling_waiting_jobs_does_not_stall_the_key() -> None:
    """Cancelling the job at the head of a key's wait, or one behind it, lets the rest go on."""
    async with js.JobScheduler(
        clock=anyio.current_time, rate_limits={"k": js.RateLimit(1, burst=1)}
    ) as s:
        starts = record_starts(s)
        t0 = anyio.current_time()
        ids = [s.submit(js.FunctionJob(noop, rate_key="k", name=str(i))) for i in range(5)]
        await anyio.sleep(0.5)  # job 0 ran; job 1 heads the wait, 2..4 behind it
        assert s.cancel(ids[1]) is True
        assert s.cancel(ids[3]) is True
        with anyio.fail_after(3600):
            await s.join()
        statuses = [s.get(i).status for i in ids]
    assert statuses == [
        js.JobStatus.COMPLETED,
        js.JobStatus.CANCELLED,
        js.JobStatus.COMPLETED,
        js.JobStatus.CANCELLED,
        js.JobStatus.COMPLETED,
    ]
    assert [t - t0 for _, t in starts] == pytest.approx([0.0, 1.0, 2.0])


@pytest.mark.anyio
async def test_retries_count_as_starts() -> None:
    """Each attempt is a start: a retried job takes a token per attempt."""
    attempts: list[float] = []

    async def flaky() -> None:
        attempts.append(anyio.current_time())
        if len(attempts) < 3:
            raise RuntimeError("try again")

    policy = js.RetryPolicy(max_retries=5, base_delay=0.01, jitter=False)
    async with js.JobScheduler(
        clock=anyio.current_time, rate_limits={"k": js.RateLimit(1, per=5.0)}
    ) as s:
        t0 = anyio.current_time()
        job_id = s.submit(js.FunctionJob(flaky, rate_key="k", retry=policy))
        with anyio.fail_after(3600):
            await s.join()
        assert s.get(job_id).status is js.JobStatus.COMPLETED
    assert [t - t0 for t in attempts] == pytest.approx([0.0, 5.0, 10.0])


def test_rate_limits_are_validated() -> None:
    """Bad rate_limits mappings are refused with the problem named."""
    with pytest.raises(TypeError, match="rate_limits must map"):
        js.JobScheduler(rate_limits=[("a", js.RateLimit(1))])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="keys must be non-empty strings"):
        js.JobScheduler(rate_limits={"": js.RateLimit(1)})
    with pytest.raises(TypeError, match=r"rate_limits\['email'\] must be a jobsched.RateLimit"):
        js.JobScheduler(rate_limits={"email": 10})  # type: ignore[dict-item]


def test_job_rate_key_and_tenant_are_validated() -> None:
    """Empty or non-string rate keys and tenants are refused when the job is made."""
    with pytest.raises(ValueError, match="rate_key must be a non-empty name or None"):
        js.FunctionJob(noop, rate_key="")
    with pytest.raises(TypeError, match="rate_key must be a string or None"):
        js.FunctionJob(noop, rate_key=5)  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_waiting_jobs_are_not_woken_for_every_token() -> None:
    """A key's backlog waits in line: one job in the delayed queue, not all of them per token."""
    async with js.JobScheduler(
        clock=anyio.current_time, rate_limits={"k": js.RateLimit(10, per=1.0)}
    ) as s:
        for _ in range(400):
            s.submit(js.FunctionJob(noop, rate_key="k"))
        await anyio.sleep(5.05)
        # 340 jobs still wait; only the head is in the delayed queue, so each
        # token wakes one job instead of every waiter (quadratic in the backlog).
        assert sum(1 for j in s.jobs() if j.status is js.JobStatus.PENDING) == 340
        assert len(s._queue._delayed) == 1
        with anyio.fail_after(3600):
            await s.join()
