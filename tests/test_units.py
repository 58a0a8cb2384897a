"""Pure pieces of the core, tested without an event loop: plain numbers in, numbers out."""

from __future__ import annotations

import dataclasses
import math
import random
import re
from fractions import Fraction

import pytest
from sample_jobs import Ok

import jobsched as js
from jobsched._enums import TRANSITIONS
from jobsched._ordering._queue import JobQueue
from jobsched._time._recurring import RecurringSchedule

S = js.JobStatus


def test_transition_table_is_the_seeds() -> None:
    """Legal edges are exactly the seed's table; terminal statuses have none."""
    assert {
        S.PENDING: {S.RUNNING, S.CANCELLED},
        S.RUNNING: {S.COMPLETED, S.FAILED, S.TIMED_OUT, S.CANCELLED, S.RETRY_WAIT},
        S.RETRY_WAIT: {S.RUNNING, S.CANCELLED},
    } == TRANSITIONS
    assert {s for s in S if s.is_terminal} == {S.COMPLETED, S.FAILED, S.TIMED_OUT, S.CANCELLED}
    for old in S:
        for new in S:
            assert bool(old._allowed & new._bit) == (new in TRANSITIONS.get(old, ()))


def test_illegal_transition_raises() -> None:
    """The scheduler's single transition point refuses an edge outside the table."""
    s = js.JobScheduler()
    job = Ok()
    with pytest.raises(js.InvalidTransitionError, match="pending -> completed"):
        s._transition(job, S.COMPLETED)
    assert job.status is S.PENDING


def test_priority_values() -> None:
    """JobPriority is an IntEnum LOW=0..CRITICAL=3."""
    assert [int(p) for p in js.JobPriority] == [0, 1, 2, 3]
    assert js.JobPriority.CRITICAL > js.JobPriority.LOW


def test_retry_delay_is_capped_exponential() -> None:
    """Without jitter the delay is min(max_delay, base * 2**(attempt-1))."""
    policy = js.RetryPolicy(base_delay=1.0, max_delay=10.0, jitter=False)
    rng = random.Random(1)
    assert [policy.delay(a, rng) for a in range(1, 7)] == [1, 2, 4, 8, 10, 10]


def test_retry_full_jitter_stays_within_cap() -> None:
    """With jitter the delay is uniform in [0, cap] and actually varies."""
    policy = js.RetryPolicy(base_delay=0.5, max_delay=3.0)
    rng = random.Random(42)
    draws = [policy.delay(4, rng) for _ in range(500)]
    assert all(0 <= d <= 3.0 for d in draws)
    assert max(draws) > 2.5 and min(draws) < 0.5
    # Repeatable from the seed.
    again = random.Random(42)
    assert draws == [policy.delay(4, again) for _ in range(500)]


def test_retry_policy_is_frozen_and_validated() -> None:
    """RetryPolicy is immutable, and nonsense values are refused with the value named."""
    policy = js.RetryPolicy()
    with pytest.raises(dataclasses.FrozenInstanceError):
        policy.max_retries = 5  # type: ignore[misc]
    with pytest.raises(ValueError, match=r"max_retries must be >= 0 \(0: never retry\), got -1"):
        js.RetryPolicy(max_retries=-1)
    with pytest.raises(ValueError, match="base_delay must be a finite number of seconds >= 0"):
        js.RetryPolicy(base_delay=-1)


@pytest.mark.parametrize(
    ("kwargs", "error", "field"),
    [
        ({"max_retries": 2.5}, TypeError, "max_retries"),
        ({"max_retries": 3.0}, TypeError, "max_retries"),
        ({"max_retries": "3"}, TypeError, "max_retries"),
        ({"max_retries": True}, TypeError, "max_retries"),
        ({"max_retries": None}, TypeError, "max_retries"),
        ({"base_delay": math.nan}, ValueError, "base_delay"),
        ({"base_delay": math.inf}, ValueError, "base_delay"),
        ({"base_delay": "1"}, TypeError, "base_delay"),
        ({"base_delay": True}, TypeError, "base_delay"),
        ({"base_delay": None}, TypeError, "base_delay"),
        ({"max_delay": math.nan}, ValueError, "max_delay"),
        ({"max_delay": math.inf}, ValueError, "max_delay"),
        ({"max_delay": -0.5}, ValueError, "max_delay"),
        ({"max_delay": "60"}, TypeError, "max_delay"),
        ({"jitter": 1}, TypeError, "jitter"),
        ({"jitter": "yes"}, TypeError, "jitter"),
    ],
)
def test_retry_policy_refuses_each_bad_field_by_name(
    kwargs: dict[str, object], error: type[Exception], field: str
) -> None:
    """Every RetryPolicy field is checked at construction; the message names the field and value."""
    with pytest.raises(error, match=rf"^{field} must .*got {re.escape(repr(kwargs[field]))}"):
        js.RetryPolicy(**kwargs)  # type: ignore[arg-type]


def test_retry_policy_takes_other_number_types() -> None:
    """Ints and Fractions are accepted; the delays are stored as floats."""
    policy = js.RetryPolicy(max_retries=2, base_delay=Fraction(1, 4), max_delay=2)
    assert (policy.max_retries, policy.base_delay, policy.max_delay) == (2, 0.25, 2.0)
    assert type(policy.base_delay) is float and type(policy.max_delay) is float


@pytest.mark.parametrize("base", [0.0, 5e-324, 1e-300, 0.001, 1.0, 60.0, 1e300])
@pytest.mark.parametrize("attempt", [1, 2, 11, 1023, 1024, 1025, 1026, 1100, 2200, 5000])
def test_retry_delay_never_overflows(base: float, attempt: int) -> None:
    """delay() equals the exact capped formula for any attempt; big attempts don't overflow."""
    rng = random.Random(0)
    for max_delay in (0.0, 1e-300, 60.0, 1.7e308):
        policy = js.RetryPolicy(base_delay=base, max_delay=max_delay, jitter=False)
        exact = min(Fraction(max_delay), Fraction(base) * 2 ** (attempt - 1))
        assert Fraction(policy.delay(attempt, rng)) == exact
        jittered = dataclasses.replace(policy, jitter=True).delay(attempt, rng)
        assert 0 <= jittered <= exact


def test_retry_delay_for_astronomical_attempts() -> None:
    """Attempt numbers far past any float exponent give the cap (or 0 with base_delay=0)."""
    rng = random.Random(0)
    for attempt in (10**6, 10**100):
        assert js.RetryPolicy(max_delay=60.0, jitter=False).delay(attempt, rng) == 60
        assert js.RetryPolicy(base_delay=0.0, jitter=False).delay(attempt, rng) == 0
    with pytest.raises(ValueError, match="attempt is 1-based, got 0"):
        js.RetryPolicy().delay(0, rng)


def _submitted(job: js.Job, seq: int, submitted_at: float = 0.0) -> js.Job:
    job.seq = seq
    job.submitted_at = submitted_at
    return job


def test_strategy_keys() -> None:
    """Each strategy's key matches the seed; seq breaks every tie."""
    low = _submitted(Ok(priority=js.JobPriority.LOW), 1)
    high = _submitted(Ok(priority=js.JobPriority.HIGH), 2)
    assert js.FIFOStrategy().key(low) < js.FIFOStrategy().key(high)
    assert js.PriorityStrategy().key(high) < js.PriorityStrategy().key(low)
    assert js.PriorityStrategy().key(high) == (-2, 2)
    edf = js.EarliestDeadlineFirstStrategy()
    soon = _submitted(Ok(deadline=5.0, priority=js.JobPriority.LOW), 3)
    later = _submitted(Ok(deadline=9.0, priority=js.JobPriority.CRITICAL), 4)
    none = _submitted(Ok(priority=js.JobPriority.CRITICAL), 5)
    assert sorted([none, later, soon], key=edf.key) == [soon, later, none]
    assert edf.key(none)[0] == math.inf


def test_aging_orders_like_effective_priority_at_any_time() -> None:
    """Aging keys order jobs exactly as priority + rate * (now - submitted_at) does."""
    rate = 0.1
    strategy = js.AgingPriorityStrategy(age_rate=rate)
    rng = random.Random(3)
    jobs = [
        _submitted(Ok(priority=rng.randrange(4)), seq, submitted_at=rng.uniform(0, 100))
        for seq in range(1, 200)
    ]
    by_key = sorted(jobs, key=strategy.key)
    for now in (100.0, 500.0, 10_000.0):
        by_effective = sorted(
            jobs, key=lambda j: (-(j.priority + rate * (now - j.submitted_at)), j.seq)
        )
        assert [j.seq for j in by_key] == [j.seq for j in by_effective]
    # The seed's rule of thumb: LOW overtakes a fresh HIGH after 20 s at rate 0.1.
    old_low = _submitted(Ok(priority=js.JobPriority.LOW), 1, submitted_at=0.0)
    new_high = _submitted(Ok(priority=js.JobPriority.HIGH), 2, submitted_at=20.5)
    assert strategy.key(old_low) < strategy.key(new_high)


@pytest.mark.parametrize("rate", [0, -0.5])
def test_aging_rejects_non_positive_rate(rate: float) -> None:
    """age_rate <= 0 raises ValueError naming the value."""
    with pytest.raises(ValueError, match=f"age_rate must be positive, got {rate}"):
        js.AgingPriorityStrategy(age_rate=rate)


def test_queue_pops_by_key_and_skips_cancelled() -> None:
    """The ready heap pops smallest key first and lazily drops terminal jobs."""
    queue = JobQueue(js.PriorityStrategy().key)
    jobs = [_submitted(Ok(priority=p), seq) for seq, p in enumerate([0, 3, 1, 3], start=1)]
    for job in jobs:
        queue.push_ready(job)
    jobs[1].status = S.CANCELLED
    assert [queue.pop_next() for _ in range(4)] == [jobs[3], jobs[2], jobs[0], None]


def test_queue_promotes_only_due_jobs() -> None:
    """Delayed jobs move to the ready heap once their run_at has come."""
    queue = JobQueue(js.FIFOStrategy().key)
    early, late, gone = (_submitted(Ok(), seq) for seq in (1, 2, 3))
    early.run_at, late.run_at, gone.run_at = 5.0, 9.0, 4.0
    assert queue.push_delayed(late) is True
    assert queue.push_delayed(early) is True
    assert queue.push_delayed(gone) is True
    assert queue.next_due() == 4.0
    gone.status = S.CANCELLED
    assert queue.promote_due(4.9) == 0
    assert queue.pop_next() is None
    assert queue.promote_due(5.0) == 1
    assert queue.pop_next() is early
    assert queue.next_due() == 9.0


def test_recurring_advance_is_fixed_rate_and_coalesces() -> None:
    """Next fire comes from the previous scheduled time; missed slots fire once."""
    sched = RecurringSchedule(Ok, interval=10.0, first_run=100.0)
    sched.advance(100.3)  # a little late: no drift
    assert sched.next_run == 110.0
    sched.advance(145.0)  # three slots missed: one fire, next slot in the future
    assert sched.next_run == 150.0


def test_recurring_rejects_bad_arguments() -> None:
    """Intervals must be positive and factories callable."""
    with pytest.raises(ValueError, match="interval must be a positive number"):
        RecurringSchedule(Ok, interval=0, first_run=0)
    with pytest.raises(TypeError, match="factory must be a callable"):
        RecurringSchedule("not callable", interval=1, first_run=0)  # type: ignore[arg-type]
