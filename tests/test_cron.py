"""Cron triggers (pure functions of time) and cron schedules in the scheduler."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any
from zoneinfo import ZoneInfo

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trio.testing import MockClock

import jobsched as js
from jobsched._time._recurring import CronSchedule

UTC = dt.timezone.utc
NY = ZoneInfo("America/New_York")
BERLIN = ZoneInfo("Europe/Berlin")


@pytest.fixture
def anyio_backend() -> tuple[str, dict[str, Any]]:
    """Scheduler tests here run on trio's mock clock: minutes pass instantly."""
    return "trio", {"clock": MockClock(autojump_threshold=0)}


def fires(trigger: js.CronTrigger, start: dt.datetime, until: dt.datetime) -> Iterator[dt.datetime]:
    """Every fire time in (start, until)."""
    t = trigger.next_after(start)
    while t < until:
        yield t
        t = trigger.next_after(t)


def utc(*args: int) -> dt.datetime:
    return dt.datetime(*args, tzinfo=UTC)


# ── Parsing ────────────────────────────────────────────────────────────────


def test_five_fields_in_utc() -> None:
    """Minute steps fire on the quarter hours, strictly after the given time."""
    trigger = js.CronTrigger("*/15 * * * *", "UTC")
    assert trigger.next_after(utc(2026, 5, 1, 10, 7)) == utc(2026, 5, 1, 10, 15)
    # Strictly after: a fire time itself is not returned again.
    assert trigger.next_after(utc(2026, 5, 1, 10, 15)) == utc(2026, 5, 1, 10, 30)
    assert trigger.next_after(utc(2026, 5, 1, 10, 14, 59, 999999)) == utc(2026, 5, 1, 10, 15)


@pytest.mark.parametrize(
    ("alias", "expected"),
    [
        ("@hourly", utc(2026, 5, 1, 11)),
        ("@daily", utc(2026, 5, 2)),
        ("@midnight", utc(2026, 5, 2)),
        ("@weekly", utc(2026, 5, 3)),  # the next Sunday
        ("@monthly", utc(2026, 6, 1)),
        ("@yearly", utc(2027, 1, 1)),
        ("@annually", utc(2027, 1, 1)),
        ("@DAILY", utc(2026, 5, 2)),
    ],
)
def test_aliases(alias: str, expected: dt.datetime) -> None:
    """Each alias fires where its five-field form would."""
    assert js.CronTrigger(alias, "UTC").next_after(utc(2026, 5, 1, 10, 7)) == expected


def test_names_and_day_or_semantics() -> None:
    """Day and month names work, and a restricted day-of-month OR day-of-week matches either."""
    trigger = js.CronTrigger("0 9 13 * FRI", "UTC")
    got = list(fires(trigger, utc(2026, 2, 1), utc(2026, 2, 28)))
    # Fridays 6, 13, 20, 27 February 2026; the 13th is both and fires once.
    assert [t.day for t in got] == [6, 13, 20, 27]
    assert js.CronTrigger("0 0 1 JAN *", "UTC").next_after(utc(2026, 5, 1)) == utc(2027, 1, 1)


@pytest.mark.parametrize(
    ("expression", "problem"),
    [
        ("", "it is empty"),
        ("   ", "it is empty"),
        ("* * *", "it has 3 field(s), expected exactly five"),
        ("* * * * * *", "it has 6 field(s), expected exactly five"),
        ("61 * * * *", "the minute field '61' is not valid"),
        ("0 24 * * *", "the hour field '24' is not valid"),
        ("0 0 0 * *", "the day-of-month field '0' is not valid"),
        ("0 0 * 13 *", "the month field '13' is not valid"),
        ("0 0 * * 8", "the day-of-week field '8' is not valid"),
        ("a * * * *", "the minute field 'a' is not valid"),
        ("*/0 * * * *", "the minute field '*/0' is not valid"),
        ("1,,2 * * * *", "the minute field '1,,2' is not valid"),
        ("0 0 31 2 *", "it never fires"),
        ("@reboot", "unknown alias '@reboot'"),
        ("R * * * *", "random or hashed"),
        ("H/5 * * * *", "random or hashed"),
    ],
)
def test_bad_expression_is_quoted_and_explained(expression: str, problem: str) -> None:
    """A bad expression raises ValueError quoting it and saying what is wrong."""
    with pytest.raises(ValueError, match="invalid cron expression") as info:
        js.CronTrigger(expression, "UTC")
    message = str(info.value)
    assert repr(expression) in message
    assert problem in message


def test_expression_must_be_a_string() -> None:
    """A non-string expression is a TypeError."""
    with pytest.raises(TypeError, match="must be a string"):
        js.CronTrigger(5, "UTC")  # type: ignore[arg-type]


# ── Time zones ─────────────────────────────────────────────────────────────


def test_zone_by_name_or_tzinfo() -> None:
    """The zone is an IANA name or a tzinfo, and fire times come back in it."""
    by_name = js.CronTrigger("0 9 * * *", "America/New_York")
    by_object = js.CronTrigger("0 9 * * *", NY)
    start = utc(2026, 7, 1)
    assert by_name.next_after(start) == by_object.next_after(start) == utc(2026, 7, 1, 13)
    result = by_name.next_after(start)
    assert result.tzinfo is by_name.timezone
    assert (result.hour, result.utcoffset()) == (9, dt.timedelta(hours=-4))
    fixed = js.CronTrigger("0 9 * * *", dt.timezone(dt.timedelta(hours=5, minutes=30)))
    assert fixed.next_after(start) == utc(2026, 7, 1, 3, 30)


def test_default_zone_is_local(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a zone, the system's local zone (TZ, else /etc/localtime) is used."""
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    trigger = js.CronTrigger("0 9 * * *")
    assert trigger.next_after(utc(2026, 6, 30, 12)) == utc(2026, 7, 1, 0)
    assert "Asia/Tokyo" in repr(trigger)


def test_unknown_zone() -> None:
    """An unknown zone name is a ValueError naming it; a wrong type is a TypeError."""
    with pytest.raises(ValueError, match="unknown time zone 'Europe/Berln'.*IANA"):
        js.CronTrigger("@daily", "Europe/Berln")
    with pytest.raises(TypeError, match="timezone must be"):
        js.CronTrigger("@daily", 3)  # type: ignore[arg-type]


def test_naive_datetime_is_refused() -> None:
    """next_after needs an aware datetime; a naive one is ambiguous."""
    trigger = js.CronTrigger("@daily", "UTC")
    with pytest.raises(ValueError, match="needs an aware datetime"):
        trigger.next_after(dt.datetime(2026, 1, 1))
    with pytest.raises(TypeError, match="takes a datetime"):
        trigger.next_after("2026-01-01")  # type: ignore[arg-type]


def test_any_aware_input_zone() -> None:
    """The input's zone does not matter, only its instant."""
    trigger = js.CronTrigger("0 12 * * *", "Europe/Berlin")
    in_tokyo = dt.datetime(2026, 7, 1, 20, tzinfo=ZoneInfo("Asia/Tokyo"))  # 13:00 Berlin
    assert trigger.next_after(in_tokyo) == dt.datetime(2026, 7, 2, 12, tzinfo=BERLIN)


# ── Daylight saving, the Vixie cron way ────────────────────────────────────


def test_skipped_time_fires_right_after_the_jump() -> None:
    """02:30 daily on the spring-forward day fires at 03:00, the first instant after the jump."""
    trigger = js.CronTrigger("30 2 * * *", "America/New_York")
    got = list(fires(trigger, utc(2026, 3, 6), utc(2026, 3, 11)))
    assert [t.astimezone(NY).isoformat() for t in got] == [
        "2026-03-06T02:30:00-05:00",
        "2026-03-07T02:30:00-05:00",
        "2026-03-08T03:00:00-04:00",  # 02:30 did not exist
        "2026-03-09T02:30:00-04:00",
        "2026-03-10T02:30:00-04:00",
    ]
    berlin = js.CronTrigger("30 2 * * *", "Europe/Berlin")
    assert berlin.next_after(utc(2026, 3, 28, 12)) == dt.datetime(2026, 3, 29, 3, tzinfo=BERLIN)


def test_repeated_time_fires_once() -> None:
    """01:30 daily on the fall-back day fires once, on the first pass of 01:30."""
    trigger = js.CronTrigger("30 1 * * *", "America/New_York")
    got = list(fires(trigger, utc(2026, 10, 31), utc(2026, 11, 3)))
    assert [t.astimezone(NY).isoformat() for t in got] == [
        "2026-10-31T01:30:00-04:00",
        "2026-11-01T01:30:00-04:00",  # not again at 01:30-05:00
        "2026-11-02T01:30:00-05:00",
    ]
    # Asked from inside the second pass, it does not fire that 01:30 again.
    second_pass = dt.datetime(2026, 11, 1, 1, 15, fold=1, tzinfo=NY)
    assert trigger.next_after(second_pass) == dt.datetime(2026, 11, 2, 1, 30, tzinfo=NY)


def test_several_skipped_times_fire_once_after_the_jump() -> None:
    """Fire times a jump skips coalesce into one fire at the jump."""
    trigger = js.CronTrigger("0,30 2 * * *", "America/New_York")
    got = list(fires(trigger, utc(2026, 3, 8), utc(2026, 3, 9, 12)))
    assert [t.astimezone(NY).strftime("%d %H:%M%z") for t in got] == [
        "08 03:00-0400",
        "09 02:00-0400",
        "09 02:30-0400",
    ]


def test_half_hour_jump_lord_howe() -> None:
    """A 30-minute DST shift: 02:15 on the skip day fires at 02:30, when the clock resumes."""
    zone = ZoneInfo("Australia/Lord_Howe")  # 02:00 -> 02:30 on 2026-10-04
    trigger = js.CronTrigger("15 2 * * *", zone)
    start = dt.datetime(2026, 10, 3, 12, tzinfo=zone)
    assert trigger.next_after(start) == dt.datetime(2026, 10, 4, 2, 30, tzinfo=zone)


def test_wildcard_jobs_follow_the_new_clock() -> None:
    """Hourly (a wildcard hour) fires every real hour: 23 times on the short day, 25 on the long."""
    trigger = js.CronTrigger("@hourly", "America/New_York")
    for day, count in [(8, 23), (1, 25)]:
        month = 3 if day == 8 else 11
        start = dt.datetime(2026, month, day, tzinfo=NY) - dt.timedelta(microseconds=1)
        end = dt.datetime(2026, month, day + 1, tzinfo=NY)
        got = list(fires(trigger, start, end))
        assert len(got) == count
        # Subtracting two datetimes of one zone gives wall-clock time; compare instants.
        gaps = {b.timestamp() - a.timestamp() for a, b in zip(got, got[1:])}
        assert gaps == {3600.0}  # evenly spaced in real time across the change


def test_wildcard_in_the_repeated_hour_fires_on_both_passes() -> None:
    """'30 * * * *' fires at 01:30 EDT and then at 01:30 EST, even asked from inside the fold."""
    trigger = js.CronTrigger("30 * * * *", "America/New_York")
    first_pass = dt.datetime(2026, 11, 1, 1, 45, tzinfo=NY)
    got = trigger.next_after(first_pass)
    # PEP 495: a datetime in a fold never equals one of another zone; compare instants.
    assert got.timestamp() == utc(2026, 11, 1, 6, 30).timestamp()
    assert got.fold == 1 and got.utcoffset() == dt.timedelta(hours=-5)
    assert trigger.next_after(got).timestamp() == utc(2026, 11, 1, 7, 30).timestamp()


def test_wildcard_minutes_in_a_skipped_hour_do_not_fire() -> None:
    """Wildcard jobs run on the new clock: '*/15 2 * * *' has no 02:xx on the skip day (Vixie)."""
    trigger = js.CronTrigger("*/15 2 * * *", "America/New_York")
    got = list(fires(trigger, utc(2026, 3, 7, 12), utc(2026, 3, 9, 12)))
    assert sorted({t.astimezone(NY).day for t in got}) == [9]
    assert len(got) == 4


@pytest.mark.parametrize(
    "zone", ["Europe/Berlin", "America/New_York", "America/Santiago", "Australia/Lord_Howe"]
)
@pytest.mark.parametrize("at", ["0 0", "30 1", "30 2", "0 3", "59 23"])
def test_daily_job_fires_once_on_every_day_of_the_year(zone: str, at: str) -> None:
    """A daily job fires exactly once on every calendar day, across both DST changes."""
    tz = ZoneInfo(zone)
    trigger = js.CronTrigger(f"{at} * * *", tz)
    start = dt.datetime(2026, 1, 1, tzinfo=tz) - dt.timedelta(microseconds=1)
    end = dt.datetime(2027, 1, 1, tzinfo=tz)
    got = list(fires(trigger, start, end))
    days = [t.astimezone(tz).date() for t in got]
    assert len(days) == 365
    assert len(set(days)) == 365
    instants = [t.timestamp() for t in got]
    assert instants == sorted(instants)
    assert len(set(instants)) == 365


# ── The schedule: wall clock mapped onto the scheduler's clock ─────────────


def test_cron_schedule_maps_wall_time_onto_the_scheduler_clock() -> None:
    """next_run is the fire time less the wall offset; missed fires coalesce into one."""
    epoch = utc(2026, 5, 1, 10, 0, 20).timestamp()
    offset = epoch - 100.0  # wall clock minus scheduler clock
    schedule = CronSchedule(
        lambda: None,  # type: ignore[arg-type, return-value]
        js.CronTrigger("* * * * *", "UTC"),
        100.0,
        lambda: offset,
    )
    assert schedule.next_run == pytest.approx(140.0)  # 10:01:00 is 40 s away
    schedule.advance(140.0)
    assert schedule.next_run == pytest.approx(200.0)
    schedule.advance(200.0 + 3 * 60 + 5)  # the ticker woke 3 minutes late
    assert schedule.next_run == pytest.approx(200.0 + 4 * 60)  # one fire, then on the grid


def test_cron_schedule_never_fires_a_slot_twice_when_the_wall_clock_goes_back() -> None:
    """A wall clock stepped back does not bring a fire time that was just made back."""
    offsets = [utc(2026, 5, 1, 10, 0, 30).timestamp() - 0.0]
    schedule = CronSchedule(
        lambda: None,  # type: ignore[arg-type, return-value]
        js.CronTrigger("0 * * * *", "UTC"),
        0.0,
        lambda: offsets[0],
    )
    fire_wall = utc(2026, 5, 1, 11).timestamp()
    assert schedule.next_wall == fire_wall
    offsets[0] -= 1800  # the wall clock is set back half an hour
    schedule.advance(schedule.next_run + 1)
    assert schedule.next_wall == utc(2026, 5, 1, 12).timestamp()
    # A machine that slept (wall clock ahead of the scheduler's) catches up.
    offsets[0] += 5 * 3600
    schedule.advance(schedule.next_run)
    assert schedule.next_wall > utc(2026, 5, 1, 16).timestamp()


@pytest.mark.anyio
async def test_schedule_cron_fires_every_minute_until_cancelled() -> None:
    """A per-minute schedule fires 60 virtual seconds apart and stops on cancel_recurring."""
    starts: list[float] = []
    done = anyio.Event()

    async def tick() -> None:
        starts.append(anyio.current_time())
        if len(starts) == 5:
            done.set()

    async with js.JobScheduler(clock=anyio.current_time) as s:
        sid = s.schedule_cron(lambda: js.FunctionJob(tick), "* * * * *", timezone="UTC")
        with anyio.fail_after(3600):
            await done.wait()
        assert s.cancel_recurring(sid) is True
        assert s.cancel_recurring(sid) is False
        await anyio.sleep(600)
        await s.join()
    assert len(starts) == 5
    assert [round(b - a, 6) for a, b in zip(starts, starts[1:])] == [60.0] * 4
    assert starts[0] <= 60.0


@pytest.mark.anyio
@pytest.mark.parametrize(("allow_overlap", "expected"), [(False, 2), (True, 5)])
async def test_schedule_cron_overlap_guard(allow_overlap: bool, expected: int) -> None:
    """Without allow_overlap, fires are skipped while the previous job still runs."""
    started: list[float] = []

    async def slow() -> None:
        started.append(anyio.current_time())
        await anyio.sleep(150)  # spans two more fire times

    async with js.JobScheduler(clock=anyio.current_time, num_workers=8) as s:
        trigger = js.CronTrigger("* * * * *", "UTC")
        sid = s.schedule_cron(
            lambda: js.FunctionJob(slow, timeout=None), trigger, allow_overlap=allow_overlap
        )
        first = s._recurring[sid].next_run
        await anyio.sleep_until(first + 4 * 60 + 1)  # five fire times pass
        s.cancel_recurring(sid)
        await s.join()
    assert len(started) == expected


@pytest.mark.anyio
async def test_schedule_cron_validates() -> None:
    """Bad expressions, a zone given twice, a wrong type, and a stopping scheduler are refused."""
    async with js.JobScheduler(clock=anyio.current_time) as s:
        factory = lambda: js.FunctionJob(print)  # noqa: E731
        with pytest.raises(ValueError, match="invalid cron expression '61 \\* \\* \\* \\*'"):
            s.schedule_cron(factory, "61 * * * *")
        with pytest.raises(ValueError, match="has its own zone"):
            s.schedule_cron(factory, js.CronTrigger("@daily", "UTC"), timezone="UTC")
        with pytest.raises(TypeError, match="expression string or a CronTrigger"):
            s.schedule_cron(factory, 60)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="factory must be a callable"):
            s.schedule_cron("nope", "@daily", timezone="UTC")  # type: ignore[arg-type]
    with pytest.raises(js.SchedulerStoppedError):
        s.schedule_cron(factory, "@daily", timezone="UTC")


@settings(max_examples=300, deadline=None)
@given(
    expression=st.sampled_from(
        ["30 2 * * *", "30 1 * * *", "0 * * * *", "*/20 1-3 * * *", "15 2,3 * * 0", "@daily"]
    ),
    zone=st.sampled_from(["America/New_York", "Europe/Berlin", "Australia/Lord_Howe"]),
    seconds=st.integers(min_value=0, max_value=366 * 86400),
    fraction=st.floats(min_value=0.001, max_value=0.999),
)
def test_next_after_is_consistent(
    expression: str, zone: str, seconds: int, fraction: float
) -> None:
    """The result is later, and asking from any instant in between gives the same answer."""
    trigger = js.CronTrigger(expression, zone)
    start = utc(2026, 1, 1) + dt.timedelta(seconds=seconds)
    result = trigger.next_after(start)
    assert result.timestamp() > start.timestamp()
    middle = start + (result - start) * fraction  # aware minus aware: real elapsed time
    assert trigger.next_after(middle).timestamp() == result.timestamp()
    assert trigger.next_after(result).timestamp() > result.timestamp()
