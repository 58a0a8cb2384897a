"""misfire=: what becomes of fires missed while no scheduler ran.

The policy is a pure function of the due fire time and now
(``jobsched._time._misfire.plan``), tested with plain numbers first; then
schedulers in memory on a clock the test moves by hand, on asyncio and trio,
stopped (not yet started) for some intervals and then started. Stored
schedules are in test_misfire_stored.py.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

import anyio
import pytest

import jobsched as js
from jobsched._time._misfire import CATCH_UP, GRACE, plan

# ── the policy, on plain numbers ─────────────────────────────────────────


def _walk(misfire: str, due: float, now: float, **cadence: Any) -> tuple[list[float], float]:
    """Step a schedule until it is no longer due: the fire times made and the next fire."""
    made = []
    for _ in range(10_000):
        if due > now:
            return made, due
        step = plan(misfire, due, now, **cadence)
        if step.make:
            made.append(due)
        assert step.next > due  # every step moves the schedule on
        due = step.next
    raise AssertionError("the schedule never stopped being due")


def test_an_on_time_fire_is_made_by_every_policy() -> None:
    """A fire made within the grace is no misfire: each policy makes it and moves on."""
    for misfire in ("coalesce", "skip", "all"):
        assert _walk(misfire, 100.0, 100.0, interval=10.0) == ([100.0], 110.0)
        assert _walk(misfire, 100.0, 100.0 + GRACE * 0.9, interval=10.0) == ([100.0], 110.0)


def test_coalesce_makes_one_job_for_the_missed_fires() -> None:
    """Ten missed fires: one job, for the oldest, and the next fire after now."""
    assert _walk("coalesce", 100.0, 195.0, interval=10.0) == ([100.0], 200.0)


def test_skip_makes_none_for_missed_fires_and_moves_to_the_next() -> None:
    """Ten missed fires make no job; the next fire is the first after now."""
    assert _walk("skip", 100.0, 195.0, interval=10.0) == ([], 200.0)


def test_skip_makes_a_fire_that_is_still_within_the_grace() -> None:
    """Missed fires are passed over, but one due just now is on time and made."""
    assert _walk("skip", 100.0, 190.0 + GRACE / 2, interval=10.0) == ([190.0], 200.0)


def test_all_makes_each_missed_fire_oldest_first() -> None:
    """Ten missed fires make ten jobs, in fire-time order, each its own step."""
    made, following = _walk("all", 100.0, 195.0, interval=10.0)
    assert made == [100.0 + 10 * k for k in range(10)]
    assert following == 200.0
    step = plan("all", 100.0, 195.0, interval=10.0)
    assert step.make and step.catch_up  # made even while the previous job runs


def test_all_keeps_the_latest_100_of_a_longer_backlog() -> None:
    """150 missed fires: the oldest 50 are dropped in one step that says so."""
    first = plan("all", 0.0, 1495.0, interval=10.0)
    assert (first.make, first.next, first.dropped, first.estimated) == (False, 500.0, 50, False)
    made, following = _walk("all", 0.0, 1495.0, interval=10.0)
    assert made == [500.0 + 10 * k for k in range(CATCH_UP)]
    assert following == 1500.0


def test_all_on_a_cron_schedule_keeps_the_latest_100() -> None:
    """150 missed cron fires: the schedule moves on to the 51st, and the 100
    from there are made, oldest first."""
    after = _cron(js.CronTrigger("*/10 * * * *", "UTC"))
    due = datetime(2030, 1, 1, tzinfo=timezone.utc).timestamp()
    now = due + 149 * 600 + 30  # the 150th fire was 30 s ago
    step = plan("all", due, now, after=after)
    assert (step.make, step.next, step.dropped) == (False, due + 50 * 600, 50)
    made, following = _walk("all", due, now, after=after)
    assert made == [due + 600 * k for k in range(50, 150)]
    assert following == due + 150 * 600


def test_all_on_a_cron_schedule_estimates_a_long_backlog() -> None:
    """A year of minutely fires is not walked: the latest 100 are found, the rest estimated."""
    after = _cron(js.CronTrigger("* * * * *", "UTC"))
    due = datetime(2030, 1, 1, tzinfo=timezone.utc).timestamp()
    now = due + 365 * 86400 + 30
    started = time.perf_counter()
    step = plan("all", due, now, after=after)
    assert time.perf_counter() - started < 5  # tens of steps of the trigger, not 525,600
    assert step.estimated and not step.make
    assert step.next == due + (365 * 1440 + 1 - CATCH_UP) * 60
    assert abs(step.dropped - (365 * 1440 + 1 - CATCH_UP)) <= 2


def test_an_unknown_policy_names_the_three() -> None:
    """A misspelt policy is a ValueError naming every valid one."""
    from jobsched._time._misfire import check_misfire

    for bad in ("Skip", "coalesced", None, 1):
        with pytest.raises(ValueError, match="'coalesce'.*'skip'.*'all'"):
            check_misfire(bad)


def _cron(trigger: js.CronTrigger) -> Callable[[float], float]:
    from jobsched._time._recurring import _next_fire

    return lambda t: _next_fire(trigger, t)


# ── schedulers in memory, on a clock the test moves ──────────────────────


class HandClock:
    """A scheduler clock that moves only when the test says."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Tick(js.AsyncJob):
    def __init__(self, log: list[int], n: int) -> None:
        super().__init__(f"tick {n}")
        self.log = log
        self.n = n

    async def run(self) -> None:
        self.log.append(self.n)


def _factory(log: list[int]) -> Callable[[], js.Job]:
    made = iter(range(1, 1_000_000))
    return lambda: Tick(log, next(made))


async def _stepped(s: js.JobScheduler, clock: HandClock, before: float | None) -> float:
    """Wait until the ticker has moved the one schedule on from ``before``; its
    next fire on the scheduler's clock."""
    with anyio.fail_after(30):
        while True:
            (info,) = await s.schedules()
            assert info.next_fire is not None
            # Wall time = the scheduler's clock + the offset schedules() used.
            fire = info.next_fire.timestamp() - (time.time() - clock())
            if before is None or abs(fire - before) > 1:
                return fire
            await anyio.sleep(0.01)


@pytest.mark.anyio
@pytest.mark.parametrize(("misfire", "jobs"), [("coalesce", 1), ("skip", 0), ("all", 10)])
async def test_a_scheduler_started_after_ten_missed_fires(misfire: str, jobs: int) -> None:
    """Registered, then ten intervals pass before the scheduler starts: coalesce
    makes one job, skip none, all ten; each then waits for the next slot."""
    clock, log = HandClock(), []  # type: ignore[var-annotated]
    s = js.JobScheduler(clock=clock)
    s.schedule_recurring(_factory(log), 60, start_in=60, id="beat", misfire=misfire)
    clock.now += 60 * 10 + 30  # fires at +60 ... +600 are missed
    async with s:
        assert await _stepped(s, clock, 1060.0) == pytest.approx(1660.0, abs=0.01)
        await s.join()
        (info,) = await s.schedules()
    assert log == list(range(1, jobs + 1))  # oldest first
    assert info.misfire == misfire


@pytest.mark.anyio
async def test_more_than_100_missed_fires_make_100_and_warn_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """150 missed fires with misfire="all": 100 jobs and one WARNING naming the 50 dropped."""
    clock, log = HandClock(), []  # type: ignore[var-annotated]
    s = js.JobScheduler(clock=clock)
    s.schedule_recurring(_factory(log), 60, start_in=60, id="billing", misfire="all")
    clock.now += 60 * 150 + 30
    with caplog.at_level(logging.WARNING, logger="jobsched"):
        async with s:
            assert await _stepped(s, clock, 1060.0) == pytest.approx(1000 + 60 * 151, abs=0.01)
            await s.join()
    assert log == list(range(1, 101))
    warned = [r.getMessage() for r in caplog.records if "misfire='all'" in r.getMessage()]
    assert len(warned) == 1
    assert "'billing'" in warned[0] and "latest 100" in warned[0]
    assert "drops the 50 older" in warned[0]


async def _wall_fire(s: js.JobScheduler) -> float:
    (info,) = await s.schedules()
    assert info.next_fire is not None
    return info.next_fire.timestamp()


@pytest.mark.anyio
@pytest.mark.parametrize(("misfire", "jobs"), [("coalesce", 1), ("skip", 0), ("all", 10)])
async def test_a_cron_schedule_started_after_ten_missed_hours(misfire: str, jobs: int) -> None:
    """The same for a cron schedule: ten hourly fires missed."""
    clock, log = HandClock(), []  # type: ignore[var-annotated]
    s = js.JobScheduler(clock=clock)
    s.schedule_cron(_factory(log), "@hourly", timezone="UTC", id="hourly", misfire=misfire)
    (info,) = await s.schedules()
    assert info.next_fire is not None
    # A custom clock's cron schedule maps to wall time by an offset fixed at
    # its registration: wall time moves with the test's clock.
    first = info.next_fire.timestamp()
    clock.now += first - time.time() + 9 * 3600 + 60  # ten fire times passed, none made
    async with s:
        with anyio.fail_after(30):
            while (following := await _wall_fire(s)) == first:  # noqa: ASYNC110 - the ticker steps it
                await anyio.sleep(0.01)
        await s.join()
    assert following == first + 10 * 3600
    assert log == list(range(1, jobs + 1))


@pytest.mark.anyio
async def test_skip_still_makes_every_fire_on_time(
    clock: Callable[[], float], virtual_time: bool
) -> None:
    """While the scheduler runs, skip changes nothing: each fire is made."""
    log: list[int] = []
    interval = 60.0 if virtual_time else 0.05
    async with js.JobScheduler(clock=clock) as s:
        s.schedule_recurring(_factory(log), interval, id="beat", misfire="skip")
        with anyio.fail_after(30 if not virtual_time else 3600):
            while len(log) < 3:  # noqa: ASYNC110 - the ticker fires in its own task
                await anyio.sleep(interval / 5)
        s.cancel_recurring("beat")
        await s.join()
    assert log[:3] == [1, 2, 3]


@pytest.mark.anyio
async def test_an_unknown_misfire_is_refused_before_anything_is_registered() -> None:
    """misfire="sometimes": a ValueError naming the three, and no schedule."""
    async with js.JobScheduler() as s:
        with pytest.raises(ValueError, match="'coalesce'.*'skip'.*'all'.*'sometimes'"):
            s.schedule_recurring(_factory([]), 60, misfire="sometimes")
        with pytest.raises(ValueError, match="'coalesce'.*'skip'.*'all'.*'Skip'"):
            s.schedule_cron(_factory([]), "@daily", misfire="Skip")
        assert await s.schedules() == []
