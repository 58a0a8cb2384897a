"""Recurring and cron schedules kept in a durable store (SQLite).

A stored schedule is fired by whichever scheduler on the store claims it when
it is due; one fire time makes one job (a unique index on schedule and fire
time), missed fires coalesce into one when a scheduler starts, and
registering an id again replaces the schedule.
"""

from __future__ import annotations

import functools
import sqlite3
import time
from pathlib import Path

import anyio
import pytest
from durable_jobs import make_note, runs

import jobsched as js

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "jobs.db"


def _rows(path: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


async def test_a_stored_schedule_fires_until_cancelled(path: Path, tmp_path: Path) -> None:
    log = str(tmp_path / "log")
    async with js.JobScheduler(store=f"sqlite:///{path}") as s:
        sid = s.schedule_recurring(functools.partial(make_note, log), 0.05, id="beat")
        assert sid == "beat"
        with anyio.fail_after(30):
            while len(runs(log)) < 3:  # noqa: ASYNC110 - jobs run in the store's claims
                await anyio.sleep(0.02)
        assert s.cancel_recurring("beat") is True
        await s.flush()
        await s.join()
    fires = _rows(path, "SELECT fire_time FROM jobs WHERE schedule = 'beat' ORDER BY fire_time")
    assert len(fires) >= 3
    gaps = [b[0] - a[0] for a, b in zip(fires, fires[1:])]  # type: ignore[operator]
    assert all(g == pytest.approx(0.05, abs=1e-6) or g > 0.05 for g in gaps)  # fixed rate
    assert _rows(path, "SELECT id FROM schedules") == []


async def test_a_stored_schedule_needs_an_id_and_an_importable_factory(path: Path) -> None:
    async with js.JobScheduler(store=f"sqlite:///{path}") as s:
        with pytest.raises(ValueError, match="needs id="):
            s.schedule_recurring(functools.partial(make_note, "x"), 1)
        with pytest.raises(TypeError, match="schedule 'local'.*module level"):
            s.schedule_cron(lambda: make_note("x"), "@hourly", id="local")
        with pytest.raises(ValueError, match="non-empty string"):
            s.schedule_recurring(functools.partial(make_note, "x"), 1, id="")
        await s.flush()
    assert _rows(path, "SELECT id FROM schedules") == []  # nothing was stored


async def test_registering_an_id_again_replaces_the_schedule(path: Path) -> None:
    async with js.JobScheduler(store=f"sqlite:///{path}") as s:
        s.schedule_recurring(functools.partial(make_note, "x"), 3600, start_in=3600, id="nightly")
        s.schedule_cron(functools.partial(make_note, "x"), "0 3 * * *", id="nightly")
        await s.flush()
    (row,) = _rows(path, "SELECT id, next_fire FROM schedules")
    assert row[0] == "nightly"
    assert time.gmtime(row[1]).tm_min == 0  # the cron one: on the hour, not now + 3600 s


async def test_fires_missed_while_no_scheduler_ran_coalesce(path: Path, tmp_path: Path) -> None:
    log = str(tmp_path / "log")
    async with js.JobScheduler(store=f"sqlite:///{path}") as s:
        s.schedule_recurring(functools.partial(make_note, log), 60, start_in=3600, id="minutely")
    # Ten intervals pass while no scheduler runs.
    conn = sqlite3.connect(path)
    conn.execute("UPDATE schedules SET next_fire = ?", (time.time() - 600,))
    conn.commit()
    conn.close()
    async with js.JobScheduler(store=f"sqlite:///{path}") as s:
        with anyio.fail_after(30):
            while not runs(log):  # noqa: ASYNC110 - the store's claim fires it
                await anyio.sleep(0.02)
            await s.join()
        (next_fire,) = _rows(path, "SELECT next_fire FROM schedules")[0]
    assert len(_rows(path, "SELECT id FROM jobs WHERE schedule = 'minutely'")) == 1
    assert time.time() < next_fire <= time.time() + 60  # the next slot, not a backlog


async def test_a_fire_is_skipped_while_the_previous_job_runs(path: Path, tmp_path: Path) -> None:
    log = str(tmp_path / "log")
    slow = functools.partial(make_note, log, "slow", 1.0)
    async with js.JobScheduler(store=f"sqlite:///{path}") as s:
        s.schedule_recurring(slow, 0.05, id="slow")
        with anyio.fail_after(30):
            while not runs(log):  # noqa: ASYNC110 - the store's claim starts it
                await anyio.sleep(0.02)
        await anyio.sleep(0.3)  # six intervals while the first job still runs
        assert len(_rows(path, "SELECT id FROM jobs WHERE schedule = 'slow'")) == 1
        s.cancel_recurring("slow")
        await s.flush()
        await s.join()


async def test_two_schedulers_make_one_job_per_fire_time(path: Path, tmp_path: Path) -> None:
    log = str(tmp_path / "log")
    url = f"sqlite:///{path}"
    async with js.JobScheduler(store=url) as a, js.JobScheduler(store=url) as b:
        a.schedule_recurring(functools.partial(make_note, log), 0.02, id="shared")
        await a.flush()
        with anyio.fail_after(30):
            while len(runs(log)) < 10:  # noqa: ASYNC110 - either member fires it
                await anyio.sleep(0.02)
        b.cancel_recurring("shared")
        await b.flush()
    fires = _rows(path, "SELECT fire_time, COUNT(*) FROM jobs GROUP BY fire_time")
    assert len(fires) >= 10 and all(count == 1 for _, count in fires)
