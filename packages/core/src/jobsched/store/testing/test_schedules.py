"""Stored schedules in a store: a pause fences out a fire under way and
survives a registration, a resume and a trigger, whichever member asks.

A paused schedule has ``next_fire = inf``: never due, and not a time to wake
a claimer for. The scheduler's side (list, pause, resume, trigger through
``JobScheduler``) is in test_scheduler_schedules.py.
"""

from __future__ import annotations

import math

import pytest

import jobsched as js
from jobsched.store import NewJob

from . import Opener

pytestmark = pytest.mark.anyio

NOW = 1_700_000_000.0


def _job(number: int) -> NewJob:
    return NewJob(number, "fire", "async", (0.0,), NOW, NOW, b"P" + bytes([number]))


async def test_a_pause_fences_out_a_fire_under_way(member: Opener) -> None:
    one, other = await member(), await member()
    await one.put_schedules([("s", b"P-payload", NOW)])
    (due,) = await one.claim_schedules("m1", NOW + 1, 30)
    assert await other.pause_schedule("s") is True
    job = _job(1)
    job.schedule, job.fire_time = "s", due.fire_time
    assert await one.fire("m1", "s", due.fire_time, NOW + 60, job) is False
    assert await one.fetch(1) is None  # the fire made no job
    (row,) = await other.schedules()
    assert (row.next_fire, row.owner, row.payload) == (math.inf, None, b"P-payload")
    # Never due again, and not a due time to wake a claimer for.
    assert await one.claim_schedules("m1", 1e300, 30) == []
    assert await one.next_due() is None
    # Registered again: still paused, with the new payload.
    await one.put_schedules([("s", b"P-new", NOW)])
    (row,) = await one.schedules()
    assert (row.next_fire, row.payload) == (math.inf, b"P-new")
    assert await one.resume_schedule("s", NOW + 5) is True
    assert await one.resume_schedule("s", NOW + 99) is True  # not paused: unchanged
    (row,) = await one.schedules()
    assert row.next_fire == NOW + 5
    assert await one.next_due() == NOW + 5
    (due,) = await other.claim_schedules("m2", NOW + 10, 30)
    assert due.id == "s"
    assert await one.pause_schedule("nope") is False
    assert await one.resume_schedule("nope", NOW) is False


async def test_a_trigger_adds_its_job_and_records_it_as_the_last(member: Opener) -> None:
    store = await member()
    await store.put_schedules([("s", b"P-payload", NOW + 3600)])
    assert await store.trigger_schedule("s", _job(7)) is True
    (row,) = await store.schedules()
    assert (row.last_job, row.next_fire) == (7, NOW + 3600)
    stored = await store.fetch(7)
    assert stored is not None and stored.status is js.JobStatus.PENDING
    assert await store.trigger_schedule("nope", _job(8)) is False
    assert await store.fetch(8) is None


async def test_the_same_schedule_registered_again_keeps_its_timing(member: Opener) -> None:
    """Every worker of an app registers its schedules at its start: the same
    payload again changes nothing; a changed one replaces the schedule."""
    one, other = await member(), await member()
    await one.put_schedules([("s", b"P-payload", NOW + 60)])
    (due,) = await one.claim_schedules("m1", NOW + 61, 30)
    await other.put_schedules([("s", b"P-payload", NOW + 3600)])
    (row,) = await other.schedules()
    assert row.next_fire == NOW + 60
    # The fire under way is still m1's (a replaced schedule fences it out).
    assert await one.fire("m1", "s", due.fire_time, NOW + 120, None) is True
    await other.put_schedules([("s", b"P-changed", NOW + 3600)])
    (row,) = await other.schedules()
    assert (row.next_fire, row.payload) == (NOW + 3600, b"P-changed")
