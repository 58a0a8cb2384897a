"""Managing schedules in memory: list, pause, resume, trigger, cancel.

On trio the scheduler reads the mock clock, so the fire times below are
exact; on asyncio the same tests run on the real clock with short intervals
and only order-of-events assertions.
"""

from __future__ import annotations

import importlib
import math
import secrets
import sys
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import anyio
import pytest

import jobsched as js

pytestmark = pytest.mark.anyio


class Tick(js.AsyncJob):
    def __init__(self, log: list[float], clock: Callable[[], float]) -> None:
        super().__init__("tick")
        self.log = log
        self.clock = clock

    async def run(self) -> None:
        self.log.append(self.clock())


def _ticks(log: list[float], clock: Callable[[], float]) -> Callable[[], js.Job]:
    return lambda: Tick(log, clock)


async def _until(condition: Callable[[], bool]) -> None:
    # Virtual hours on the mock clock; 30 s of the real one on asyncio.
    real = _backend() == "asyncio"
    with anyio.fail_after(30 if real else 86400):
        while not condition():  # noqa: ASYNC110 - the ticker fires in its own task
            await anyio.sleep(0.001 if real else 1.0)


def _backend() -> str:
    import sniffio

    return sniffio.current_async_library()


@pytest.fixture
def virtual(anyio_backend: tuple[str, dict[str, Any]]) -> bool:
    return "clock" in anyio_backend[1]


async def test_schedules_lists_interval_and_cron_schedules(clock: Callable[[], float]) -> None:
    log: list[float] = []
    async with js.JobScheduler(clock=clock) as s:
        assert await s.schedules() == []
        every = s.schedule_recurring(_ticks(log, clock), 3600, start_in=60, id="every")
        nightly = s.schedule_cron(_ticks(log, clock), "0 3 * * *", timezone="Europe/Berlin")
        before = datetime.now(timezone.utc)
        infos = {i.id: i for i in await s.schedules()}
        assert set(infos) == {every, nightly}
        interval = infos["every"]
        assert (interval.kind, interval.spec, interval.timezone) == ("interval", 3600, None)
        assert interval.paused is False and interval.last_job_id is None
        assert interval.next_fire is not None and interval.next_fire.tzinfo is not None
        # Sixty seconds from registration (wall time advances with a virtual clock).
        assert abs(interval.next_fire - before - timedelta(seconds=60)) < timedelta(seconds=5)
        cron = infos[nightly]
        assert (cron.kind, cron.spec, cron.timezone) == ("cron", "0 3 * * *", "Europe/Berlin")
        assert cron.next_fire is not None and cron.next_fire.utcoffset() is not None
        local = cron.next_fire.astimezone(cron.next_fire.tzinfo)
        assert (local.hour, local.minute) == (3, 0)
        assert cron.next_fire > before
        # Soonest first.
        assert [i.id for i in await s.schedules()] == ["every", nightly]
        assert isinstance(interval, js.ScheduleInfo)
        s.cancel_recurring(every)
        s.cancel_recurring(nightly)


async def test_pause_stops_fires_and_resume_skips_the_missed_ones(
    clock: Callable[[], float], virtual: bool
) -> None:
    log: list[float] = []
    interval = 60.0 if virtual else 0.05
    async with js.JobScheduler(clock=clock) as s:
        start = clock()
        s.schedule_recurring(_ticks(log, clock), interval, id="beat")
        await _until(lambda: len(log) >= 2)
        await s.pause_schedule("beat")
        await s.pause_schedule("beat")  # again: nothing changes
        (info,) = await s.schedules()
        assert info.paused is True and info.next_fire is None
        fired = len(log)
        paused_at = clock()
        await anyio.sleep(interval * 10)  # ten fires would have come
        assert len(log) == fired
        resumed_at = clock()
        await s.resume_schedule("beat")
        (info,) = await s.schedules()
        assert info.paused is False and info.next_fire is not None
        await _until(lambda: len(log) >= fired + 2)
        await s.resume_schedule("beat")  # not paused: nothing changes
        s.cancel_recurring("beat")
        await s.join()
    after = log[fired:]
    # Nothing caught up: the first fire after the resume is one interval on.
    assert after[0] >= resumed_at + interval * 0.99
    if virtual:
        assert log[:2] == [start, start + 60]
        assert paused_at < resumed_at == paused_at + 600
        assert after[:2] == [resumed_at + 60, resumed_at + 120]


async def test_a_cron_schedule_resumes_at_its_next_fire_after_now(
    clock: Callable[[], float], virtual: bool
) -> None:
    if not virtual:
        pytest.skip("hours of cron fires need the mock clock")
    log: list[float] = []
    async with js.JobScheduler(clock=clock) as s:
        s.schedule_cron(_ticks(log, clock), "@hourly", timezone="UTC", id="hourly")
        # Wall time advances with the virtual clock from here.
        wall = datetime.now(timezone.utc) + timedelta(hours=3)
        await s.pause_schedule("hourly")
        await anyio.sleep(3 * 3600)
        assert log == []
        await s.resume_schedule("hourly")
        (info,) = await s.schedules()
        assert info.next_fire is not None
        assert (info.next_fire.minute, info.next_fire.second) == (0, 0)
        assert wall < info.next_fire <= wall + timedelta(hours=1, seconds=1)
        await _until(lambda: len(log) == 1)  # one fire, not the three missed
        await anyio.sleep(1)
        assert len(log) == 1
        s.cancel_recurring("hourly")


async def test_trigger_submits_one_job_now_and_keeps_the_regular_fires(
    clock: Callable[[], float], virtual: bool
) -> None:
    log: list[float] = []
    async with js.JobScheduler(clock=clock) as s:
        s.schedule_recurring(_ticks(log, clock), 3600, start_in=3600, id="hourly")
        (before,) = await s.schedules()
        job_id = await s.trigger_schedule("hourly")
        assert (await s.wait(job_id)).status is js.JobStatus.COMPLETED
        assert len(log) == 1
        (after,) = await s.schedules()
        # The regular fire stays where it was (up to the wall clock's reading).
        assert after.next_fire is not None and before.next_fire is not None
        assert abs(after.next_fire - before.next_fire) < timedelta(seconds=1)
        assert after.last_job_id == job_id
        # A paused schedule can be triggered too, and stays paused.
        await s.pause_schedule("hourly")
        second = await s.trigger_schedule("hourly")
        await s.wait(second)
        (paused,) = await s.schedules()
        assert paused.paused and paused.last_job_id == second
        assert len(log) == 2
        s.cancel_recurring("hourly")


async def test_registering_a_paused_id_again_keeps_it_paused(clock: Callable[[], float]) -> None:
    log: list[float] = []
    async with js.JobScheduler(clock=clock) as s:
        s.schedule_recurring(_ticks(log, clock), 60, id="beat")
        await s.pause_schedule("beat")
        s.schedule_cron(_ticks(log, clock), "@daily", id="beat")
        (info,) = await s.schedules()
        assert (info.kind, info.paused, info.next_fire) == ("cron", True, None)
        await s.resume_schedule("beat")
        (info,) = await s.schedules()
        assert info.paused is False and info.next_fire is not None
        s.cancel_recurring("beat")


async def test_unknown_ids_raise_unknown_schedule_error(clock: Callable[[], float]) -> None:
    async with js.JobScheduler(clock=clock) as s:
        s.schedule_recurring(_ticks([], clock), 60, id="gone")
        assert s.cancel_recurring("gone") is True
        assert s.cancel_recurring("gone") is False
        assert s.cancel_recurring("never") is False
        for action in (s.pause_schedule, s.resume_schedule, s.trigger_schedule):
            with pytest.raises(js.UnknownScheduleError, match="no schedule 'gone'") as caught:
                await action("gone")
            assert isinstance(caught.value, js.SchedulerError)
            assert isinstance(caught.value, KeyError)
            assert "never registered, or removed" in str(caught.value)
        with pytest.raises(js.UnknownScheduleError, match="no schedule 42"):
            await s.pause_schedule(42)  # type: ignore[arg-type]
        assert await s.schedules() == []


async def test_a_paused_schedule_does_not_keep_the_ticker_busy(
    clock: Callable[[], float], virtual: bool
) -> None:
    if not virtual:
        pytest.skip("needs the mock clock")
    log: list[float] = []
    async with js.JobScheduler(clock=clock) as s:
        s.schedule_recurring(_ticks(log, clock), 1, id="beat")
        await s.pause_schedule("beat")
        await anyio.sleep(86400)  # a day of virtual time: the ticker sleeps through
        assert log == []
        assert s._ticker_sleeps_until == float("inf")
        s.cancel_recurring("beat")


async def test_listing_a_stored_schedule_never_imports_its_factory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CLI and the dashboard read a payload's trigger without running the
    jobs' code: the factory's module is never imported."""
    from jobsched._time._recurring import StoredSchedule
    from jobsched._time._scheduleinfo import from_store
    from jobsched.store._codec import Codec

    marker = tmp_path / "imported"
    name = f"sched_factory_{secrets.token_hex(4)}"  # a module no run imported before
    (tmp_path / f"{name}.py").write_text(
        f"with open({str(marker)!r}, 'a') as f:\n    f.write('x')\n"
        "def make():\n    raise AssertionError\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module(name)

    codec = Codec([b"k" * 32])
    trigger = js.CronTrigger("*/15 * * * *", "America/New_York")
    payload = codec.dumps(StoredSchedule(module.make, None, trigger, False), "s")
    del sys.modules[name]
    marker.unlink()
    info = from_store(codec, "s", payload, 1_800_000_000.0, 12)
    assert (info.kind, info.spec, info.timezone, info.last_job_id) == (
        "cron",
        "*/15 * * * *",
        "America/New_York",
        "job-12",
    )
    assert info.next_fire is not None and info.next_fire.timestamp() == 1_800_000_000.0
    assert not marker.exists() and name not in sys.modules
    # A payload another key signed is listed, with the reason, and still not loaded.
    other = from_store(Codec([b"o" * 32]), "s", payload, math.inf, None)
    assert (other.kind, other.paused, other.next_fire) == ("unknown", True, None)
    assert other.problem is not None and "key id" in other.problem
    # A payload that is no schedule says so.
    bogus = from_store(codec, "b", codec.dumps({"not": "a schedule"}, "b"), 0.0, None)
    assert bogus.kind == "unknown" and "not a schedule but a dict" in str(bogus.problem)


def test_a_background_scheduler_manages_schedules_blocking() -> None:
    ran: list[float] = []
    with js.BackgroundScheduler() as s:
        s.schedule_recurring(_ticks(ran, time.monotonic), 3600, start_in=3600, id="hourly")
        s.pause_schedule("hourly")
        (info,) = s.schedules()
        assert (info.id, info.paused) == ("hourly", True)
        s.resume_schedule("hourly")
        job_id = s.trigger_schedule("hourly")
        assert s.join(timeout=30)
        assert s.get(job_id).status is js.JobStatus.COMPLETED and len(ran) == 1
        with pytest.raises(js.UnknownScheduleError):
            s.pause_schedule("nope")
