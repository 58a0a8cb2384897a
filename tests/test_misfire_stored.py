"""misfire= for stored schedules, on SQLite and PostgreSQL, asyncio and trio.

A producer registers the schedule; the store's row is then moved back as if
no member ran for some intervals (``put_schedules`` with a past fire time:
what a fleet stopped for a deploy leaves); then members start. The fire
times come from the store's rows, where one job per (schedule, fire time)
is kept whichever member makes it.
"""

from __future__ import annotations

import functools
import logging
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from durable_jobs import make_note

import jobsched as js

pytestmark = pytest.mark.anyio

HOUR = 3600.0


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    # Stored schedules run on the wall clock: no mock clock here.
    return str(request.param)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], js.JobStore]:
    """Opens a new store object on one store of the test's kind, per member."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'jobs.db'}"
        return lambda: js.open_store(url)
    from pg import SECRET, schema_url

    url = schema_url(request.getfixturevalue("pg_session_database"))
    return lambda: js.open_store(url, secret=SECRET)


def _fire_times(store: js.JobStore, schedule: str) -> list[float]:
    """The fire times of the jobs ``schedule`` made, oldest first (read with SQL)."""
    url = store.url
    if url.startswith("sqlite"):
        conn = sqlite3.connect(url.removeprefix("sqlite:///"))
        try:
            sql = "SELECT fire_time FROM jobs WHERE schedule = ? ORDER BY fire_time"
            return [row[0] for row in conn.execute(sql, (schedule,))]
        finally:
            conn.close()
    import psycopg

    with psycopg.connect(url) as pg:
        sql = "SELECT fire_time FROM jobsched_jobs WHERE schedule = %s ORDER BY fire_time"
        return [row[0] for row in pg.execute(sql, (schedule,))]


async def _register(store: Callable[[], js.JobStore], log: str, misfire: str, missed: int) -> float:
    """Register an hourly schedule, then move it back as if ``missed`` fires
    passed with no member running; the oldest missed fire time."""
    async with js.JobScheduler(store=store(), num_workers=0) as producer:
        note = functools.partial(make_note, log)
        producer.schedule_recurring(note, HOUR, start_in=HOUR, id="hourly", misfire=misfire)
    # The last missed fire was half an hour ago: the next is half an hour on.
    oldest = time.time() - (missed - 1) * HOUR - HOUR / 2
    direct = store()
    await direct.open()
    try:
        (row,) = await direct.schedules()
        # Removed first: the same payload put again keeps its next fire.
        await direct.remove_schedules([row.id])
        await direct.put_schedules([(row.id, row.payload, oldest)])
    finally:
        await direct.close()
    return oldest


async def _caught_up(members: list[js.JobScheduler]) -> float:
    """Wait until the schedule's next fire is in the future and every job it
    made has finished; that next fire."""
    with anyio.fail_after(60):
        while True:
            (info,) = await members[0].schedules()
            assert info.next_fire is not None
            if info.next_fire.timestamp() > time.time():
                break
            await anyio.sleep(0.05)
        for member in members:
            await member.join()
    return info.next_fire.timestamp()


@pytest.mark.parametrize(("misfire", "made"), [("coalesce", 1), ("skip", 0), ("all", 10)])
async def test_a_fleet_restarted_after_ten_missed_fires(
    store: Callable[[], js.JobStore], tmp_path: Path, misfire: str, made: int
) -> None:
    """Ten hourly fires missed: coalesce makes one job (for the oldest), skip
    none, all ten with their own fire times, oldest first; then the next
    fire is the one half an hour from now."""
    oldest = await _register(store, str(tmp_path / "log"), misfire, 10)
    async with js.JobScheduler(store=store()) as s:
        following = await _caught_up([s])
        (info,) = await s.schedules()
        fires = _fire_times(s._link.store, "hourly")  # type: ignore[union-attr]
    assert info.misfire == misfire
    assert following == pytest.approx(oldest + 10 * HOUR, abs=1e-3)
    assert fires == pytest.approx([oldest + k * HOUR for k in range(made)], abs=1e-3)


async def test_more_than_100_missed_fires_make_the_latest_100_and_warn_once(
    store: Callable[[], js.JobStore], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """150 missed fires with misfire="all": the latest 100 are made, one
    WARNING names the 50 dropped, and two members restarting together make
    each fire once."""
    oldest = await _register(store, str(tmp_path / "log"), "all", 150)
    with caplog.at_level(logging.WARNING, logger="jobsched"):
        async with js.JobScheduler(store=store()) as a, js.JobScheduler(store=store()) as b:
            following = await _caught_up([a, b])
            fires = _fire_times(a._link.store, "hourly")  # type: ignore[union-attr]
    assert following == pytest.approx(oldest + 150 * HOUR, abs=1e-3)
    assert fires == pytest.approx([oldest + k * HOUR for k in range(50, 150)], abs=1e-3)
    warned = [r.getMessage() for r in caplog.records if "misfire='all'" in r.getMessage()]
    assert len(warned) == 1, warned
    assert "'hourly'" in warned[0] and "drops the 50 older" in warned[0]


async def test_two_members_restarting_together_make_each_missed_fire_once(
    store: Callable[[], js.JobStore], tmp_path: Path
) -> None:
    """Two members start on a backlog of ten: ten jobs, one per fire time."""
    oldest = await _register(store, str(tmp_path / "log"), "all", 10)
    async with js.JobScheduler(store=store()) as a, js.JobScheduler(store=store()) as b:
        await _caught_up([a, b])
        fires = _fire_times(a._link.store, "hourly")  # type: ignore[union-attr]
    assert fires == pytest.approx([oldest + k * HOUR for k in range(10)], abs=1e-3)


async def test_a_stored_schedule_keeps_its_policy_and_refuses_an_unknown_one(
    store: Callable[[], js.JobStore],
) -> None:
    """The policy is stored with the schedule (the default keeps today's
    payload); an unknown one is refused before anything is stored."""
    from jobsched._time._recurring import StoredSchedule

    async with js.JobScheduler(store=store(), num_workers=0) as s:
        note = functools.partial(make_note, "unused")
        s.schedule_recurring(note, HOUR, id="coalesced")
        s.schedule_cron(note, "@daily", id="daily", misfire="all")
        with pytest.raises(ValueError, match="'coalesce'.*'skip'.*'all'.*'never'"):
            s.schedule_recurring(note, HOUR, id="bad", misfire="never")
        with pytest.raises(ValueError, match="'coalesce'.*'skip'.*'all'.*'never'"):
            s.schedule_cron(note, "@daily", id="bad", misfire="never")
        infos = {i.id: i.misfire for i in await s.schedules()}
    assert infos == {"coalesced": "coalesce", "daily": "all"}
    # A coalescing schedule pickles as before misfire existed.
    assert StoredSchedule(note, HOUR, None, False).__reduce__()[1] == (note, HOUR, None, False)


class _OlderStoredSchedule:
    """StoredSchedule as versions before misfire= had it: four arguments."""

    __slots__ = ("allow_overlap", "factory", "interval", "trigger")

    def __init__(self, factory: Any, interval: Any, trigger: Any, allow_overlap: bool) -> None:
        self.factory, self.interval = factory, interval
        self.trigger, self.allow_overlap = trigger, allow_overlap


def test_an_older_member_loads_a_skip_schedule_and_fires_it_as_coalescing(
    tmp_path: Path,
) -> None:
    """During a rolling deploy a member of an older version loads a schedule
    with misfire="skip" or "all" (and calls its factory) rather than failing
    to load it, which would have it remove the schedule."""
    import io
    import pickle

    from jobsched._time._recurring import StoredSchedule

    class Older(pickle.Unpickler):
        def find_class(self, module: str, name: str) -> Any:
            if (module, name) == ("jobsched._recurring", "StoredSchedule"):
                return _OlderStoredSchedule
            return super().find_class(module, name)

    log = str(tmp_path / "log")
    for misfire in ("skip", "all"):
        stored = StoredSchedule(functools.partial(make_note, log), HOUR, None, False, misfire)
        older = Older(io.BytesIO(pickle.dumps(stored))).load()
        assert isinstance(older, _OlderStoredSchedule)
        job = older.factory()
        assert isinstance(job, js.Job) and job.log == log  # type: ignore[attr-defined]
        again = pickle.loads(pickle.dumps(stored))  # and this version reads the policy back
        assert again.misfire == misfire and again.factory().log == log
