"""Managing stored schedules through the scheduler on a store: list, pause,
resume, trigger, whichever member fires them.

A paused stored schedule has next_fire = +inf (no new column, no schema
change): the due query never selects it, a fire already claimed is fenced
out, and resuming computes the next fire from now from the trigger in the
signed payload. Schedulers here read the real clock (stores may work in
threads), on both anyio backends. The store's own side of it is in
test_schedules.py.
"""

from __future__ import annotations

import functools
import importlib.util
import time
from collections.abc import Awaitable, Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import anyio
import pytest

import jobsched as js

from . import SECRET, Opener
from ._jobs import make_note, runs

pytestmark = pytest.mark.anyio

NOW = 1_700_000_000.0


# jobsched runs on both; trio is not a dependency, so a store package whose
# test environment lacks it runs these on asyncio alone (jobsched's CI has it).
BACKENDS = ["asyncio", "trio"] if importlib.util.find_spec("trio") else ["asyncio"]


@pytest.fixture(params=BACKENDS)
def anyio_backend(request: pytest.FixtureRequest) -> str:
    # The real clock: the stores' threads do not run on trio's mock clock.
    return str(request.param)


@pytest.fixture
def open_member(store_url: str) -> Callable[..., js.JobScheduler]:
    """A new scheduler on the test's store (one more member each call)."""

    def make(**kwargs: Any) -> js.JobScheduler:
        return js.JobScheduler(store=js.open_store(store_url, secret=SECRET), **kwargs)

    return make


async def _until(condition: Callable[[], Awaitable[bool] | bool]) -> None:
    with anyio.fail_after(60):
        while True:
            done = condition()
            if not isinstance(done, bool):
                done = await done
            if done:
                return
            await anyio.sleep(0.02)


def _jobs_of(log: str) -> int:
    return len(runs(log))


# ── through the scheduler ──────────────────────────────────────────────────


async def test_schedules_lists_the_stored_schedules(
    open_member: Callable[..., js.JobScheduler], tmp_path: Path
) -> None:
    log = str(tmp_path / "log")
    async with open_member() as s:
        before = time.time()
        s.schedule_recurring(functools.partial(make_note, log), 3600, start_in=600, id="every")
        s.schedule_cron(
            functools.partial(make_note, log), "30 2 * * *", timezone="Asia/Tokyo", id="cron"
        )
        listed = await s.schedules()
        # Soonest first: which of the two is sooner depends on the time of
        # day (the cron fires at 02:30 in Tokyo, the interval in 10 minutes).
        assert [i.next_fire for i in listed] == sorted(i.next_fire for i in listed)  # type: ignore[type-var]
        every, cron = sorted(listed, key=lambda i: i.id != "every")
        assert (every.id, every.kind, every.spec, every.timezone) == (
            "every",
            "interval",
            3600,
            None,
        )
        assert every.next_fire is not None
        assert before + 600 <= every.next_fire.timestamp() <= time.time() + 600
        assert (every.paused, every.last_job_id, every.problem) == (False, None, None)
        assert (cron.id, cron.kind, cron.spec, cron.timezone) == (
            "cron",
            "cron",
            "30 2 * * *",
            "Asia/Tokyo",
        )
        assert cron.next_fire is not None
        assert (cron.next_fire.hour, cron.next_fire.minute) == (2, 30)  # in its zone
        expected = js.CronTrigger("30 2 * * *", "Asia/Tokyo").next_after(
            datetime.fromtimestamp(before, timezone.utc)
        )
        assert cron.next_fire == expected
        s.cancel_recurring("every")
        s.cancel_recurring("cron")
        await s.flush()
        assert await s.schedules() == []


async def test_a_pause_on_one_member_stops_the_fires_another_makes(
    open_member: Callable[..., js.JobScheduler], member: Opener, tmp_path: Path
) -> None:
    log = str(tmp_path / "log")
    # A producer (no workers) pauses and resumes; the worker fires.
    async with open_member() as worker, open_member(num_workers=0) as operator:
        worker.schedule_recurring(functools.partial(make_note, log), 0.05, id="beat")
        await _until(lambda: _jobs_of(log) >= 2)
        await operator.pause_schedule("beat")
        (info,) = await operator.schedules()
        assert (info.paused, info.next_fire) == (True, None)
        assert info.last_job_id is not None
        # Whatever the worker claimed before the pause is fenced out: the
        # stored job count settles and stays put through many intervals.
        await worker.join()
        reader = await member()
        settled = len(await reader.jobs(limit=1000))
        await anyio.sleep(0.5)  # ten intervals
        await worker.join()
        assert len(await reader.jobs(limit=1000)) == settled
        # Registering it again (a worker's setup at its next start) keeps the pause.
        worker.schedule_recurring(functools.partial(make_note, log), 0.05, id="beat")
        (info,) = await worker.schedules()
        assert info.paused is True
        resumed = time.time()
        await operator.resume_schedule("beat")
        (info,) = await operator.schedules()
        assert info.paused is False and info.next_fire is not None
        # One interval from the resume: the fires missed while paused are skipped.
        assert info.next_fire.timestamp() >= resumed + 0.05
        assert info.next_fire.timestamp() <= time.time() + 0.05
        await _until(lambda: _jobs_of(log) >= settled + 2)
        worker.cancel_recurring("beat")
        await worker.flush()
        await worker.join()


async def test_resume_of_a_stored_cron_schedule_fires_next_after_now(
    open_member: Callable[..., js.JobScheduler], tmp_path: Path
) -> None:
    factory = functools.partial(make_note, str(tmp_path / "log"))
    async with open_member(num_workers=0) as s:
        s.schedule_cron(factory, "*/5 * * * *", timezone="UTC", id="five")
        await s.pause_schedule("five")
        await s.resume_schedule("five")
        await s.resume_schedule("five")  # not paused: left alone
        (info,) = await s.schedules()
        assert info.next_fire is not None
        assert info.next_fire.minute % 5 == 0 and info.next_fire.second == 0
        assert 0 < info.next_fire.timestamp() - time.time() <= 300
        await s.pause_schedule("five")
        await s.pause_schedule("five")  # paused already: still paused
        (info,) = await s.schedules()
        assert info.paused is True


async def test_trigger_makes_one_job_that_a_worker_runs(
    open_member: Callable[..., js.JobScheduler], tmp_path: Path
) -> None:
    log = str(tmp_path / "log")
    async with open_member() as worker, open_member(num_workers=0) as operator:
        worker.schedule_recurring(functools.partial(make_note, log), 3600, start_in=3600, id="h")
        await worker.flush()
        (before,) = await operator.schedules()
        job_id = await operator.trigger_schedule("h")
        assert await operator.result(job_id, timeout=60) == "beat"
        (after,) = await operator.schedules()
        assert after.next_fire == before.next_fire  # the regular fires are unchanged
        assert after.last_job_id == job_id
        await operator.pause_schedule("h")
        again = await operator.trigger_schedule("h")  # paused: still triggers
        assert (await operator.wait(again, timeout=60)).status is js.JobStatus.COMPLETED
        assert _jobs_of(log) == 2
        worker.cancel_recurring("h")


async def test_unknown_stored_schedules_raise(
    open_member: Callable[..., js.JobScheduler],
) -> None:
    async with open_member(num_workers=0) as s:
        for action in (s.pause_schedule, s.resume_schedule, s.trigger_schedule):
            with pytest.raises(js.UnknownScheduleError, match="no schedule 'nope' in the store"):
                await action("nope")
        assert s.jobs() == []  # the failed trigger left no job behind
        assert await s.schedules() == []


async def test_stored_schedules_need_a_running_scheduler(
    open_member: Callable[..., js.JobScheduler],
) -> None:
    s = open_member(num_workers=0)
    calls = (s.schedules(), s.pause_schedule("x"), s.resume_schedule("x"), s.trigger_schedule("x"))
    for call in calls:
        with pytest.raises(js.SchedulerError, match="through a running scheduler"):
            await call
    async with s:
        assert await s.schedules() == []
    with pytest.raises(js.SchedulerError, match="through a running scheduler"):
        await s.pause_schedule("x")


async def test_a_schedule_whose_payload_cannot_be_read_is_listed_with_the_problem(
    open_member: Callable[..., js.JobScheduler], member: Opener
) -> None:
    async with open_member(num_workers=0) as s:
        store = await member()
        await store.put_schedules([("forged", b"K" + b"\0" * 40 + b"junk", NOW)])
        (info,) = await s.schedules()
        assert (info.id, info.kind, info.spec, info.paused) == ("forged", "unknown", None, False)
        assert info.problem is not None and "key id" in info.problem
        with pytest.raises(js.SchedulerError, match=r"'forged' cannot be loaded here.*key id"):
            await s.trigger_schedule("forged")
        await s.pause_schedule("forged")  # needs no payload
        with pytest.raises(js.SchedulerError, match=r"'forged' cannot be loaded here.*key id"):
            await s.resume_schedule("forged")
        assert s.jobs() == []
