"""``js.Retention`` (issue 38): finished jobs kept by age per outcome and by
count, in the memory table and through the store link's prune.

The stores' prune itself is in the conformance suite
(jobsched.store.testing.test_retention), on SQLite, PostgreSQL and the
example dict store.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path

import anyio
import pytest

import jobsched as js
from jobsched_sqlite import SQLiteStore

pytestmark = pytest.mark.anyio

S = js.JobStatus
HOUR = 3600.0
DAY = 24 * HOUR


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Clock:
    """The scheduler's clock, moved by the test: finish times without sleeps."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def boom() -> None:
    raise js.NonRetryableError("boom")


async def run(s: js.JobScheduler, fn: object, n: int = 1) -> list[str]:
    """Submit ``n`` FunctionJobs of ``fn`` and wait until they end."""
    ids = [s.submit(js.FunctionJob(fn, ())) for _ in range(n)]  # type: ignore[arg-type]
    with anyio.fail_after(10):
        await s.join()
    return ids


def known(s: js.JobScheduler, ids: list[str]) -> list[str]:
    kept = []
    for job_id in ids:
        try:
            s.get(job_id)
        except js.UnknownJobError:
            continue
        kept.append(job_id)
    return kept


async def test_a_days_completions_do_not_push_out_a_failure_kept_a_week() -> None:
    """Memory store, a moved clock: completions kept a day go as they age,
    the failure kept seven days stays through a busy day and goes after a
    week; a count bound alone (history_limit=10) would have dropped it."""
    clock = Clock()
    retention = js.Retention(completed=DAY, failed=timedelta(days=7))
    async with js.JobScheduler(retention=retention, clock=clock) as s:
        (failed,) = await run(s, boom)
        assert s.get(failed).status is S.FAILED
        busy: list[str] = []
        for _ in range(48):  # a completion every half hour for a day
            clock.now += HOUR / 2
            busy += await run(s, int)
        assert known(s, [failed, *busy]) == [failed, *busy]
        clock.now += DAY / 2  # the first half of the day's completions aged out
        later = await run(s, int)
        assert known(s, busy) == busy[23:]
        assert known(s, [failed]) == [failed]
        clock.now += 7 * DAY
        await run(s, int)
        assert known(s, [failed, *busy, *later]) == []
        with pytest.raises(js.UnknownJobError, match="retention=Retention"):
            s.get(failed)


async def test_max_finished_bounds_the_kept_jobs_oldest_first() -> None:
    """Beyond ``max_finished`` the oldest finished jobs go, of any outcome,
    with an age or without."""
    for retention in (js.Retention(max_finished=3), js.Retention(failed=DAY, max_finished=3)):
        # One worker: the jobs finish in the order they were submitted.
        async with js.JobScheduler(retention=retention, clock=Clock(), num_workers=1) as s:
            ids = await run(s, boom) + await run(s, int, 4)
            assert known(s, ids) == ids[2:], retention


async def test_without_an_age_the_table_keeps_its_plain_history() -> None:
    """history_limit, or a Retention of a count only, trims the one deque
    inline (no Python call per finished job: tests/test_hot_path_calls.py);
    an age files the jobs by outcome instead."""
    plain = js.JobScheduler(history_limit=5)
    assert plain._table.remember == plain._table.finished.append
    counted = js.JobScheduler(retention=js.Retention(max_finished=5))
    assert counted._table.remember == counted._table.finished.append
    assert counted._table.history_limit == 5
    aged = js.JobScheduler(retention=js.Retention(cancelled=60))
    assert aged._table.remember != aged._table.finished.append


def test_retention_is_checked_where_it_is_given() -> None:
    """A bad retention, or one beside a history_limit, is refused with the fix."""
    with pytest.raises(TypeError, match="must be a jobsched.Retention"):
        js.JobScheduler(retention={"failed": 60})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"Retention\(max_finished=50\)"):
        js.JobScheduler(history_limit=50, retention=js.Retention(failed=60))
    with pytest.raises(ValueError, match="Retention failed=0"):
        js.Retention(failed=0)
    with pytest.raises(ValueError, match=r"Retention completed=datetime.timedelta\(days=-1\)"):
        js.Retention(completed=timedelta(days=-1))
    with pytest.raises(ValueError, match="max_finished=-1"):
        js.Retention(max_finished=-1)
    assert js.Retention(failed=timedelta(hours=2)).ages() == {S.FAILED: 7200.0, S.TIMED_OUT: 7200.0}


class _Recording(SQLiteStore):
    """Records the arguments of every prune."""

    calls: list[tuple[int | None, Mapping[js.JobStatus, float] | None]]

    async def prune(
        self, keep: int | None, before: Mapping[js.JobStatus, float] | None = None
    ) -> int:
        self.calls.append((keep, before))
        return await super().prune(keep, before)


def recording(tmp_path: Path) -> _Recording:
    store = _Recording(f"sqlite:///{tmp_path / 'jobs.db'}")
    store.calls = []
    return store


async def test_the_link_prunes_by_age_on_the_wall_clock(tmp_path: Path) -> None:
    """On a durable store the link passes each age as a cutoff on the wall
    clock (the stored finished_at's), and the count bound as ``keep``."""
    store = recording(tmp_path)
    retention = js.Retention(completed=HOUR, failed=DAY, max_finished=100)
    before = time.time()
    async with js.JobScheduler(store=store, retention=retention) as s:
        await run(s, int, 3)  # below the cadence: the stop prunes
    after = time.time()
    ((keep, cutoffs),) = store.calls
    assert keep == 100 and cutoffs is not None
    assert set(cutoffs) == {S.COMPLETED, S.FAILED, S.TIMED_OUT}
    assert before - HOUR <= cutoffs[S.COMPLETED] <= after - HOUR
    assert cutoffs[S.FAILED] == cutoffs[S.TIMED_OUT] == cutoffs[S.COMPLETED] - DAY + HOUR


async def test_history_limit_prunes_as_before_and_keeping_everything_never_prunes(
    tmp_path: Path,
) -> None:
    """history_limit: ``prune(keep)`` alone, the call every store implements.
    Retention() keeps every job: no prune at all."""
    store = recording(tmp_path / "a")
    (tmp_path / "a").mkdir()
    async with js.JobScheduler(store=store, history_limit=7) as s:
        await run(s, int, 2)
    assert store.calls == [(7, None)]
    (tmp_path / "b").mkdir()
    forever = recording(tmp_path / "b")
    async with js.JobScheduler(store=forever, retention=js.Retention()) as s:
        await run(s, int, 2)
    assert forever.calls == []


def test_the_app_carries_its_retention_to_its_schedulers(tmp_path: Path) -> None:
    """js.App(retention=...) reaches app.scheduler() and app.background()."""
    retention = js.Retention(failed=timedelta(days=30), max_finished=1000)
    app = js.App(f"sqlite:///{tmp_path / 'jobs.db'}", retention=retention)
    assert app.settings()["retention"] is retention
    s = app.scheduler()
    bg = app.background(num_workers=1)
    for made in (s, bg.scheduler):
        assert made._table.keeping is retention
        assert made._link is not None
        assert made._link._committer._pruning.keeping is retention
        anyio.run(made.stop)


def test_background_scheduler_takes_a_retention() -> None:
    retention = js.Retention(completed=60)
    bg = js.BackgroundScheduler(retention=retention)
    assert bg.scheduler._table.keeping is retention


def test_the_worker_options_make_a_retention_over_the_apps(tmp_path: Path) -> None:
    """``jobsched worker --keep OUTCOME=AGE --max-finished N``: a Retention
    for a worker without an app, or the app's with those fields replaced;
    the start line names it."""
    from jobsched._cli._keepopts import KeepType
    from jobsched._cli._workeropts import Options, described, plain_scheduler

    keep = dict(KeepType().convert(v, None, None) for v in ("failed=7d", "completed=90m"))
    assert keep == {"failed": 7 * DAY, "completed": 5400.0}
    options = Options(store_url=None, workers=1, keep=keep, max_finished=500)
    plain = plain_scheduler(options, SQLiteStore(f"sqlite:///{tmp_path / 'jobs.db'}"))
    assert plain._table.keeping == js.Retention(completed=5400.0, failed=7 * DAY, max_finished=500)
    assert "keeping completed 5400s, failed 604800s, timed_out 604800s, at most 500" in described(
        plain
    )
    base = js.Retention(cancelled=60, failed=DAY)
    over = options.overrides({"retention": base})["retention"]
    assert over == js.Retention(completed=5400.0, failed=7 * DAY, cancelled=60, max_finished=500)
    assert Options(store_url=None, workers=1).overrides({"retention": base})["retention"] is base
    assert "retention" not in Options(store_url=None, workers=1).overrides({})
