"""A store that goes away for a while: the scheduler rides it out.

A store marks a transient failure (a dropped connection, a locked or full
database) with StoreUnavailableError. The scheduler's link retries those with
backoff and never ends on them: running jobs go on, their outcomes are
written when the store is back, the outage is logged once when it starts and
once when it ends, and flush()/enqueue() raise after a bounded wait instead of
hanging, without losing what they waited for. These run the scheduler on
asyncio and on trio (the real clock: the SQLite store works in threads).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

import anyio
import outage_jobs
import pytest
from durable_jobs import Note, runs
from outage_jobs import Held

import jobsched as js
from jobsched._engine._link import _outage, _timing
from jobsched._jobs._ids import id_number
from jobsched.store import Change, Claimed, DueSchedule, NewJob, Outcome, Recorded
from jobsched_sqlite import SQLiteStore, _schema

pytestmark = pytest.mark.anyio

S = js.JobStatus
TESTS = Path(__file__).resolve().parent
WARNED = "is unavailable"
BACK = "is back after"


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    # Trio on its real clock: the store's threads would look like hours to
    # a mock clock.
    return str(request.param)


@pytest.fixture(autouse=True)
def quick_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    # The same capped, jittered backoff, on a smaller scale: seconds of
    # retries are not what these tests are about.
    monkeypatch.setattr(
        _timing, "STORE_BACKOFF", js.RetryPolicy(max_retries=0, base_delay=0.005, max_delay=0.05)
    )


class FlakyStore(SQLiteStore):
    """A SQLite store whose link calls fail on demand with StoreUnavailableError."""

    def __init__(self, url: str, lease: float = 30.0) -> None:
        super().__init__(url, lease=lease)
        #: The next this many calls fail.
        self.failures = 0
        #: Every call fails while set.
        self.down = False
        #: Calls that failed so far.
        self.failed = 0
        #: Set by the next claim that succeeds, when the test makes one.
        self.claimed: anyio.Event | None = None
        #: Set by the next call that fails.
        self.tripped = anyio.Event()

    def _trip(self, what: str) -> None:
        if self.down or self.failures > 0:
            self.failures = max(0, self.failures - 1)
            self.failed += 1
            self.tripped.set()
            raise js.StoreUnavailableError(f"planned outage ({what})")

    async def add(self, jobs: Sequence[NewJob], now: float) -> list[Change]:
        self._trip("add")
        return await super().add(jobs, now)

    async def claim(
        self, owner: str, *args: Any, starting: int | None = None, **kw: Any
    ) -> list[Claimed]:
        self._trip("claim")
        claims = await super().claim(owner, *args, starting=starting, **kw)
        if self.claimed is not None:
            self.claimed.set()
        return claims

    async def start(self, owner: str, starts: Sequence[tuple[int, int, float]]) -> None:
        self._trip("start")
        await super().start(owner, starts)

    async def record(self, owner: str, outcomes: Sequence[Outcome]) -> Recorded:
        self._trip("record")
        return await super().record(owner, outcomes)

    async def extend(self, owner: str, ids: Collection[int], until: float) -> list[int]:
        self._trip("extend")
        return await super().extend(owner, ids, until)

    async def cancel(self, ids: Collection[int], now: float) -> list[Change]:
        self._trip("cancel")
        return await super().cancel(ids, now)

    async def next_due(self) -> float | None:
        self._trip("next_due")
        return await super().next_due()

    async def claim_schedules(self, owner: str, now: float, lease: float) -> list[DueSchedule]:
        self._trip("claim_schedules")
        return await super().claim_schedules(owner, now, lease)

    async def prune(self, keep: int) -> int:
        self._trip("prune")
        return await super().prune(keep)

    async def unfinished(self) -> int:
        self._trip("unfinished")
        return await super().unfinished()

    async def fetch(self, job_id: int) -> Any:
        self._trip("fetch")
        return await super().fetch(job_id)

    async def release(self, owner: str, ids: Collection[int]) -> None:
        self._trip("release")
        await super().release(owner, ids)


def flaky(tmp_path: Path, lease: float = 30.0) -> FlakyStore:
    return FlakyStore(f"sqlite:///{tmp_path / 'jobs.db'}", lease=lease)


def outage_lines(caplog: pytest.LogCaptureFixture) -> tuple[list[str], list[str]]:
    """The link's WARNINGs that an outage began, and its INFOs that one ended."""
    records = [r for r in caplog.records if r.name == "jobsched"]
    warned = [
        r.getMessage() for r in records if r.levelno == logging.WARNING and WARNED in r.getMessage()
    ]
    back = [r.getMessage() for r in records if r.levelno == logging.INFO and BACK in r.getMessage()]
    return warned, back


async def test_an_outage_is_ridden_out(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Failing calls are retried: every job completes exactly once, and the
    outage is logged once when it starts and once when it ends."""
    caplog.set_level(logging.INFO, logger="jobsched")
    store = flaky(tmp_path)
    log = str(tmp_path / "log")
    outage_jobs.reset(3)
    assert outage_jobs.GATE is not None and outage_jobs.ALL_STARTED is not None
    async with js.JobScheduler(store=store, num_workers=4) as s:
        held = [s.submit(Held(i)) for i in range(3)]
        with anyio.fail_after(30):
            await outage_jobs.ALL_STARTED.wait()
        # Running jobs end while the store is away: their outcomes wait.
        store.failures = 12
        notes = [s.submit(Note(log, i)) for i in range(20)]
        outage_jobs.GATE.set()
        with anyio.fail_after(60):
            await s.flush()
            await s.join()
        got = [await s.fetch(i) for i in held + notes]
    assert store.failed == 12  # every planned failure was met, none ended the scheduler
    assert [(j.status, j.attempts) for j in got] == [(S.COMPLETED, 1)] * 23
    assert [j.result for j in got[:3]] == [0, 1, 2]
    assert {i: r for i, r in runs(log).items()} == {i: [("start", 1), ("end", 1)] for i in notes}
    warned, back = outage_lines(caplog)
    assert len(warned) == 1 and len(back) == 1, (warned, back)
    assert "planned outage" in warned[0] and store.url in warned[0]
    assert store.url in back[0]


async def test_an_outage_longer_than_the_lease_keeps_the_members_jobs(tmp_path: Path) -> None:
    """A job that ran through an outage longer than its lease is not taken
    over by its own member once the store is back: it completes, attempt 1."""
    store = flaky(tmp_path, lease=1.0)
    outage_jobs.reset(2)
    assert outage_jobs.GATE is not None and outage_jobs.ALL_STARTED is not None
    async with js.JobScheduler(store=store, num_workers=4) as s:
        held = [s.submit(Held(i)) for i in range(2)]
        with anyio.fail_after(30):
            await outage_jobs.ALL_STARTED.wait()
        store.down = True
        await anyio.sleep(2.0)  # the outage: twice the lease
        store.claimed = anyio.Event()
        store.down = False
        with anyio.fail_after(30):
            # Back: the claim after the outage must not take these over as lost.
            await store.claimed.wait()
            await s.flush()
        outage_jobs.GATE.set()
        with anyio.fail_after(60):
            await s.join()
        got = [await s.fetch(i) for i in held]
    assert [(j.status, j.attempts, j.last_error) for j in got] == [(S.COMPLETED, 1, None)] * 2


class StalledRecords(FlakyStore):
    """Outcomes that do not get written (``mode``: the call hangs, or fails
    as unavailable) until ``resume`` is set; every other call works. Each
    lease renewal is kept, and announced on ``renewed``."""

    def __init__(self, url: str, mode: str, lease: float) -> None:
        super().__init__(url, lease=lease)
        self.mode = mode
        self.stalled = anyio.Event()  # set when the first outcome is held up
        self.resume = anyio.Event()
        self.renewals: list[tuple[set[int], float]] = []
        self.renewed = anyio.Event()

    async def record(self, owner: str, outcomes: Sequence[Outcome]) -> Recorded:
        self.stalled.set()
        if not self.resume.is_set():
            if self.mode == "fail":
                raise js.StoreUnavailableError("planned outage (record)")
            await self.resume.wait()
        return await super().record(owner, outcomes)

    async def extend(self, owner: str, ids: Collection[int], until: float) -> list[int]:
        cancelled = await super().extend(owner, ids, until)
        self.renewals.append((set(ids), until))
        self.renewed.set()
        return cancelled


@pytest.mark.parametrize("mode", ["hang", "fail"])
async def test_a_finished_jobs_lease_is_kept_until_its_outcome_is_committed(
    tmp_path: Path, mode: str
) -> None:
    """A job whose outcome waits in the batch is still RUNNING in the store
    under this member: its lease is renewed until the outcome is written, so
    a commit that stalls past the lease does not let another member take the
    finished job over as lost and run it again."""
    path = tmp_path / "jobs.db"
    store = StalledRecords(f"sqlite:///{path}", mode, lease=1.0)
    log = str(tmp_path / "log")
    outage_jobs.reset(1)
    assert outage_jobs.GATE is not None and outage_jobs.ALL_STARTED is not None
    other = SQLiteStore(f"sqlite:///{path}")
    async with js.JobScheduler(store=store, num_workers=4) as s:
        try:
            s.submit(Held(0))  # keeps the heartbeat beating whatever it holds
            with anyio.fail_after(30):
                await outage_jobs.ALL_STARTED.wait()
            note = s.submit(Note(log, "done"))
            with anyio.fail_after(30):
                await store.stalled.wait()
            # The second renewal from now began after the outcome was held up.
            for _ in range(2):
                store.renewed = anyio.Event()
                with anyio.fail_after(30):
                    await store.renewed.wait()
            ids, until = store.renewals[-1]
            assert id_number(note) in ids, store.renewals
            await other.open()
            try:
                # Another member looking for lost attempts just before that lease ends.
                assert await other.claim("other", 9, {"async": 9}, until - 0.01, 1.0) == []
            finally:
                await other.close()
        finally:
            # A failed check must not leave stop() waiting for the outcome.
            store.resume.set()
            outage_jobs.GATE.set()
        with anyio.fail_after(30):
            await s.join()
        got = await s.fetch(note)
    assert (got.status, got.attempts, got.last_error) == (S.COMPLETED, 1, None)
    assert runs(log) == {note: [("start", 1), ("end", 1)]}


async def failed_more(store: FlakyStore, calls: int) -> None:
    """Until ``calls`` more of the store's calls have failed."""
    target = store.failed + calls
    with anyio.fail_after(30):
        while store.failed < target:
            store.tripped = anyio.Event()
            await store.tripped.wait()


async def test_join_and_wait_ride_an_outage(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """join() and wait() wait for jobs anyway: their reads are retried while
    the store is away (the same outage, logged once), and they return once
    the store is back and the jobs have run."""
    caplog.set_level(logging.INFO, logger="jobsched")
    store = flaky(tmp_path)
    log = str(tmp_path / "log")
    outage_jobs.reset(2)
    assert outage_jobs.GATE is not None and outage_jobs.ALL_STARTED is not None
    async with js.JobScheduler(store=store, num_workers=4) as s:
        held = [s.submit(Held(i)) for i in range(2)]
        notes = [s.submit(Note(log, i), delay=0.05) for i in range(2)]
        with anyio.fail_after(30):
            await outage_jobs.ALL_STARTED.wait()
            await s.flush()  # nothing for join's or wait's flush to wait for
        store.down = True
        waited: list[js.Job] = []

        async def wait_for_one() -> None:
            waited.append(await s.wait(held[0]))

        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(s.join)
                tg.start_soon(wait_for_one)
                await failed_more(store, 20)  # join and wait are retrying, not raised
                outage_jobs.GATE.set()  # outcomes made while the store is away
                await failed_more(store, 5)
                store.down = False
        finally:  # a failed check must not leave stop() waiting
            outage_jobs.GATE.set()
            store.down = False
        got = [await s.fetch(i) for i in held + notes]
    assert [(j.status, j.attempts) for j in waited + got] == [(S.COMPLETED, 1)] * 5
    assert runs(log) == {i: [("start", 1), ("end", 1)] for i in notes}
    warned, back = outage_lines(caplog)
    assert len(warned) == 1 and len(back) == 1, (warned, back)


async def test_a_stop_under_a_riding_join_or_wait_ends_them(tmp_path: Path) -> None:
    """stop() while join() and wait() ride an outage: they raise
    SchedulerStoppedError (the job runs when a scheduler on the store runs)."""
    store = flaky(tmp_path)
    log = str(tmp_path / "log")
    ended: list[str] = []

    async def expect_stopped(call: Any, *args: Any) -> None:
        with pytest.raises(js.SchedulerStoppedError):
            await call(*args)
        ended.append(call.__name__)

    s = js.JobScheduler(store=store)
    try:
        async with s:
            later = await s.enqueue(Note(log, "later"), delay=3600)
            store.down = True
            with anyio.fail_after(60):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(expect_stopped, s.join)
                    tg.start_soon(expect_stopped, s.wait, later)
                    await failed_more(store, 10)
                    await s.stop()
    finally:
        store.down = False
    assert sorted(ended) == ["join", "wait"]
    (row,) = await reopened_jobs(tmp_path)
    assert (f"job-{row.id}", row.status) == (later, S.PENDING)


async def test_a_wait_with_a_timeout_ends_in_an_outage_that_outlasts_it(tmp_path: Path) -> None:
    """wait(timeout=...) rides an outage no longer than its timeout: past it,
    TimeoutError, caused by the StoreUnavailableError; the job runs on."""
    store = flaky(tmp_path)
    log = str(tmp_path / "log")
    async with js.JobScheduler(store=store) as s:
        note = await s.enqueue(Note(log, "n"), delay=3600)
        store.down = True
        with anyio.fail_after(30), pytest.raises(TimeoutError, match="within 0.3 s") as timed:
            await s.wait(note, timeout=0.3)
        assert isinstance(timed.value.__cause__, js.StoreUnavailableError)
        assert "planned outage" in str(timed.value.__cause__)
        store.down = False


async def test_fetch_in_an_outage_raises_at_once(tmp_path: Path) -> None:
    """fetch() is a one-off read: in an outage it raises StoreUnavailableError,
    and the caller decides whether to try again."""
    store = flaky(tmp_path)
    log = str(tmp_path / "log")
    async with js.JobScheduler(store=store) as s:
        note = await s.enqueue(Note(log, "n"), delay=3600)
        store.down = True
        with anyio.fail_after(30), pytest.raises(js.StoreUnavailableError, match="planned outage"):
            await s.fetch(note)
        store.down = False
        assert (await s.fetch(note)).status is S.PENDING


class ReleaseFails(FlakyStore):
    """Its hand-backs at stop fail ``release_failures`` times: of unstarted
    jobs (``release``) and of attempts cut short (``hand_back``) alike."""

    release_failures = 0
    releases = 0

    def _fails(self) -> None:
        self.releases += 1
        if self.release_failures:
            self.release_failures -= 1
            raise js.StoreUnavailableError("planned outage (release)")

    async def release(self, owner: str, ids: Collection[int]) -> None:
        self._fails()
        await super().release(owner, ids)

    async def hand_back(self, owner: str, attempts: Sequence[tuple[int, int, float]]) -> None:
        self._fails()
        await super().hand_back(owner, attempts)


async def handed_back_at_stop(store: ReleaseFails) -> str:
    """A running job cut short as `jobsched worker`'s drain does, then stop():
    the job is handed back to the store there. Its id."""
    outage_jobs.reset(1)
    assert outage_jobs.ALL_STARTED is not None
    async with js.JobScheduler(store=store, num_workers=1) as s:
        held = s.submit(Held(0))
        with anyio.fail_after(30):
            await outage_jobs.ALL_STARTED.wait()
        assert s._hand_back_running() == 1
    return held


async def test_stop_hands_back_unstarted_jobs_through_an_outage(tmp_path: Path) -> None:
    """stop()'s hand-back of claimed jobs it will not run is retried while the
    store is away: the job waits in the store again, its attempt uncounted."""
    store = ReleaseFails(f"sqlite:///{tmp_path / 'jobs.db'}")
    store.release_failures = 3
    with anyio.fail_after(60):
        held = await handed_back_at_stop(store)
    assert store.releases == 4
    (row,) = await reopened_jobs(tmp_path)
    assert (f"job-{row.id}", row.status, row.attempts, row.owner) == (held, S.PENDING, 0, None)
    # The cut attempt is in its history once, whatever the tries before.
    reopened = SQLiteStore(f"sqlite:///{tmp_path / 'jobs.db'}")
    await reopened.open()
    try:
        history = await reopened.attempts(job_id=row.id)
    finally:
        await reopened.close()
    assert [(a.attempt, a.handed_back, a.error) for a in history] == [
        (1, True, "handed back at stop")
    ]


async def test_stop_gives_up_handing_back_after_the_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store away for all of UNAVAILABLE_WAIT: stop() raises, saying the
    claimed jobs were not handed back and what becomes of them."""
    monkeypatch.setattr(_timing, "UNAVAILABLE_WAIT", 0.3)
    store = ReleaseFails(f"sqlite:///{tmp_path / 'jobs.db'}")
    store.release_failures = 10**9
    stopped = pytest.raises(
        js.StoreUnavailableError,
        match="1 claimed job.s. were not handed back.*until their lease runs out",
    )
    with anyio.fail_after(60), stopped:
        await handed_back_at_stop(store)
    assert store.releases > 1  # retried before giving up
    (row,) = await reopened_jobs(tmp_path)
    assert (row.status, row.attempts) == (S.RUNNING, 1)


class ReleaseStalls(ReleaseFails):
    """Its hand-backs fail as unavailable until ``resume`` is set; each lease
    renewal is kept and announced on ``renewed``."""

    def __init__(self, url: str, lease: float) -> None:
        super().__init__(url, lease=lease)
        self.resume = anyio.Event()
        self.release_tried = anyio.Event()
        self.renewals: list[set[int]] = []
        self.renewed = anyio.Event()

    def _fails(self) -> None:
        self.releases += 1
        self.release_tried.set()
        if not self.resume.is_set():
            raise js.StoreUnavailableError("planned outage (release)")

    async def release(self, owner: str, ids: Collection[int]) -> None:
        self._fails()
        await SQLiteStore.release(self, owner, ids)

    async def hand_back(self, owner: str, attempts: Sequence[tuple[int, int, float]]) -> None:
        self._fails()
        await SQLiteStore.hand_back(self, owner, attempts)

    async def extend(self, owner: str, ids: Collection[int], until: float) -> list[int]:
        cancelled = await super().extend(owner, ids, until)
        self.renewals.append(set(ids))
        self.renewed.set()
        return cancelled


async def test_a_handed_back_jobs_lease_is_kept_until_it_is_released(tmp_path: Path) -> None:
    """A job stop() hands back is still RUNNING under this member until the
    release commits: its lease is renewed meanwhile, so a release that waits
    out an outage past the lease does not let another member take the job
    over as lost (an attempt counted, 'worker lost')."""
    store = ReleaseStalls(f"sqlite:///{tmp_path / 'jobs.db'}", lease=1.0)
    outage_jobs.reset(1)
    assert outage_jobs.ALL_STARTED is not None
    renewed: list[set[int]] = []

    async def watch_the_stop() -> None:
        try:
            with anyio.fail_after(30):
                await store.release_tried.wait()
                # The second renewal from now began after the release failed.
                for _ in range(2):
                    store.renewed = anyio.Event()
                    await store.renewed.wait()
            renewed.append(store.renewals[-1])
        finally:
            store.resume.set()  # a failed check must not leave stop() retrying

    async with (
        anyio.create_task_group() as tg,
        js.JobScheduler(store=store, num_workers=1) as s,
    ):
        held = s.submit(Held(0))
        with anyio.fail_after(30):
            await outage_jobs.ALL_STARTED.wait()
        assert s._hand_back_running() == 1
        tg.start_soon(watch_the_stop)  # the stop, on leaving this block
    assert renewed and id_number(held) in renewed[0], store.renewals
    (row,) = await reopened_jobs(tmp_path)
    assert (f"job-{row.id}", row.status, row.attempts, row.owner) == (held, S.PENDING, 0, None)


class PruneLocked(FlakyStore):
    """Its prunes fail as unavailable while ``locked`` (a finished row an
    operator holds locked: PostgreSQL's DELETE meets its lock_timeout)."""

    locked = True
    prunes = 0

    async def prune(self, keep: int) -> int:
        self.prunes += 1
        if self.locked:
            raise js.StoreUnavailableError("planned lock (prune)")
        return await SQLiteStore.prune(self, keep)


async def test_a_prune_that_keeps_failing_holds_up_no_writes(tmp_path: Path) -> None:
    """Pruning is housekeeping: a prune the store keeps refusing is tried
    again at the next cadence, and meanwhile outcomes and submits commit
    (retried in place, it held every later write up for as long)."""
    store = PruneLocked(f"sqlite:///{tmp_path / 'jobs.db'}")
    async with js.JobScheduler(store=store, num_workers=2, history_limit=1) as s:
        with anyio.fail_after(30):
            first = [s.submit(Note(str(tmp_path / "log"), i)) for i in range(3)]
            await s.join()
            for job_id in first:
                assert (await s.wait(job_id)).status is S.COMPLETED
            tried = store.prunes
            assert tried >= 1
            store.locked = False
            last = s.submit(Note(str(tmp_path / "log"), "last"))
            assert (await s.wait(last)).status is S.COMPLETED
            await s.flush()
    assert store.prunes > tried
    assert len(await reopened_jobs(tmp_path)) <= 2  # pruned once the lock went


async def reopened_jobs(tmp_path: Path) -> list[Any]:
    reopened = SQLiteStore(f"sqlite:///{tmp_path / 'jobs.db'}")
    await reopened.open()
    try:
        return list(await reopened.jobs())
    finally:
        await reopened.close()


async def test_flush_and_enqueue_raise_after_their_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """While the store stays away past UNAVAILABLE_WAIT, flush() and enqueue()
    raise StoreUnavailableError; what they waited for is written once it is back."""
    caplog.set_level(logging.INFO, logger="jobsched")
    monkeypatch.setattr(_timing, "UNAVAILABLE_WAIT", 0.3)
    store = flaky(tmp_path)
    log = str(tmp_path / "log")
    async with js.JobScheduler(store=store) as s:
        before = await s.enqueue(Note(log, "before"))
        store.down = True
        during = s.submit(Note(log, "during"))
        with anyio.fail_after(30), pytest.raises(js.StoreUnavailableError) as flushed:
            await s.flush()
        message = str(flushed.value)
        assert store.url in message and "planned outage" in message
        assert "not committed yet" in message and "flush() again" in message
        with anyio.fail_after(30), pytest.raises(js.StoreUnavailableError, match="unavailable"):
            await s.enqueue(Note(log, "enqueued"))
        (enqueued,) = [j.job_id for j in s.jobs() if j.name == "note 'enqueued'"]
        assert s.get(during).status is S.PENDING  # accepted, waiting for the store
        store.down = False
        with anyio.fail_after(60):
            await s.flush()
            await s.join()
        got = {i: await s.fetch(i) for i in (before, during, enqueued)}
    assert {i: (j.status, j.attempts) for i, j in got.items()} == {
        i: (S.COMPLETED, 1) for i in (before, during, enqueued)
    }
    assert runs(log) == {i: [("start", 1), ("end", 1)] for i in (before, during, enqueued)}
    warned, back = outage_lines(caplog)
    assert len(warned) == 1 and len(back) == 1, (warned, back)


async def test_flush_before_start_gives_up_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """flush() before start() writes the batch itself, with the same bounded
    wait; the job stays queued and runs once the store is back."""
    monkeypatch.setattr(_timing, "UNAVAILABLE_WAIT", 0.3)
    store = flaky(tmp_path)
    log = str(tmp_path / "log")
    s = js.JobScheduler(store=store)
    early = s.submit(Note(log, "early"))
    store.down = True
    with anyio.fail_after(30), pytest.raises(js.StoreUnavailableError, match="not committed yet"):
        await s.flush()
    store.down = False
    async with s:
        with anyio.fail_after(60):
            await s.join()
        assert (await s.fetch(early)).status is S.COMPLETED
    assert runs(log) == {early: [("start", 1), ("end", 1)]}


@pytest.mark.parametrize("call", ["enqueue", "flush", "producer-enqueue"])
async def test_an_enqueue_or_flush_that_gives_up_leaves_async_with_as_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, call: str
) -> None:
    """The StoreUnavailableError that enqueue() or flush() raises after its
    wait leaves `async with` unwrapped, so `except StoreUnavailableError`
    around the block catches it; the stop that fails in its wake is logged."""
    monkeypatch.setattr(_timing, "UNAVAILABLE_WAIT", 0.3)
    store = flaky(tmp_path)
    log = str(tmp_path / "log")
    caught = None
    with anyio.fail_after(60):
        try:
            producer = call.startswith("producer")
            async with js.JobScheduler(store=store, num_workers=0 if producer else 4) as s:
                store.down = True
                if call.endswith("enqueue"):
                    await s.enqueue(Note(log, "refused"))
                else:
                    s.submit(Note(log, "refused"))
                    await s.flush()
        except js.StoreUnavailableError as exc:
            caught = exc
    assert caught is not None
    assert "not committed yet" in str(caught) and "planned outage" in str(caught)
    stop_failed = [r for r in caplog.records if "stop() failed while leaving" in r.getMessage()]
    assert len(stop_failed) == 1 and "StoreUnavailableError" in stop_failed[0].getMessage()


async def test_a_body_error_wins_over_a_stop_that_fails_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The body's own error leaves `async with` even when the stop after it
    fails (its writes cannot be committed): that failure is logged."""
    monkeypatch.setattr(_timing, "UNAVAILABLE_WAIT", 0.3)
    store = flaky(tmp_path)
    with anyio.fail_after(60), pytest.raises(ValueError, match="the body's own") as raised:  # noqa: PT012 - the body is the subject
        async with js.JobScheduler(store=store) as s:
            store.down = True
            s.submit(Note(str(tmp_path / "log"), "unwritten"), delay=3600)
            raise ValueError("the body's own")
    assert type(raised.value) is ValueError
    assert any(
        "stop() failed while leaving `async with` on ValueError" in r.getMessage()
        for r in caplog.records
    )


async def test_a_lone_error_of_a_task_leaves_async_with_unwrapped(tmp_path: Path) -> None:
    """The one error that ended the scheduler's tasks (a store's bug in a
    claim) leaves `async with` as itself; only several stay grouped."""

    class Broken(FlakyStore):
        async def claim(self, owner: str, *args: Any, **kw: Any) -> list[Claimed]:
            raise RuntimeError("a bug in the store's claim")

    store = Broken(f"sqlite:///{tmp_path / 'jobs.db'}")
    with anyio.fail_after(60), pytest.raises(RuntimeError, match="claim") as raised:  # noqa: PT012 - the body is the subject
        async with js.JobScheduler(store=store) as s:
            s.submit(Note(str(tmp_path / "log"), "x"))
            await anyio.sleep_forever()
    assert type(raised.value) is RuntimeError


async def test_stop_while_the_store_is_away_raises_and_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """stop() with the store away raises StoreUnavailableError after the wait
    and ends (its writes are not reported committed); the store still works."""
    monkeypatch.setattr(_timing, "UNAVAILABLE_WAIT", 0.3)
    store = flaky(tmp_path)
    log = str(tmp_path / "log")
    s = js.JobScheduler(store=store)
    # Its own error, not wrapped in the task group's exception group.
    stopped = pytest.raises(js.StoreUnavailableError, match="1 write.s. are not committed yet")
    with anyio.fail_after(60), stopped:
        async with s:
            kept = await s.enqueue(Note(log, "kept"), delay=3600)
            store.down = True
            s.submit(Note(log, "lost"), delay=3600)
    errors = [
        r
        for r in caplog.records
        if r.levelno == logging.ERROR and "not committed at stop" in r.getMessage()
    ]
    assert len(errors) == 1
    store.down = False
    reopened = SQLiteStore(f"sqlite:///{tmp_path / 'jobs.db'}")
    await reopened.open()
    try:
        # The job enqueue() reported committed is there; the one stop() could
        # not write is not (and stop() said so).
        assert [(j.name, j.status) for j in await reopened.jobs()] == [("note 'kept'", S.PENDING)]
        assert f"job-{(await reopened.jobs())[0].id}" == kept
    finally:
        await reopened.close()


def test_an_outage_warning_masks_the_password(caplog: pytest.LogCaptureFixture) -> None:
    """The WARNING names the store URL with its password masked."""
    caplog.set_level(logging.INFO, logger="jobsched")
    outage = _outage.Outage("postgresql://app:hunter2@db:5432/jobs")
    outage.failed("claiming jobs", js.StoreUnavailableError("connection refused"))
    outage.failed("writing", js.StoreUnavailableError("connection refused"))
    assert not outage.ok("claiming jobs")  # the writes still fail
    assert outage.ok("writing")
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "hunter2" not in text and "postgresql://app:***@db:5432/jobs" in text
    warned, back = outage_lines(caplog)
    assert len(warned) == 1 and len(back) == 1


# ── the SQLite store on a real file ─────────────────────────────────────────


def unprivileged() -> list[str]:
    """The command prefix that runs a child without root's power to write
    read-only files (nothing when not root); skips the test if there is none."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root, and without setpriv to drop CAP_DAC_OVERRIDE")
    return [
        setpriv,
        "--inh-caps=-all",
        "--bounding-set=-dac_override,-dac_read_search,-fowner",
    ]


START = textwrap.dedent(
    """
    import sys
    import anyio
    import jobsched as js

    async def main():
        try:
            async with js.JobScheduler(store=sys.argv[1]):
                pass
        except js.StoreUnavailableError as exc:
            print("refused:", exc)
        else:
            print("started")

    anyio.run(main, backend=sys.argv[2])
    """
)


@pytest.mark.parametrize("read_only", ["file", "folder"])
def test_a_read_only_file_is_refused_at_start(
    tmp_path: Path, read_only: str, anyio_backend: str
) -> None:
    """A store file (or its folder) this process may not write is refused when
    the scheduler starts, naming the path and what is read-only."""
    folder = tmp_path / "db"
    folder.mkdir()
    path = folder / "jobs.db"
    _schema.connect(path).close()
    assert sorted(p.name for p in folder.iterdir()) == ["jobs.db"]  # no -wal left behind
    if read_only == "file":
        path.chmod(0o444)
    else:
        folder.chmod(0o555)
    try:
        done = subprocess.run(
            [*unprivileged(), sys.executable, "-c", START, f"sqlite:///{path}", anyio_backend],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        folder.chmod(0o755)
        path.chmod(0o644)
    assert done.returncode == 0, done.stderr
    out = done.stdout.strip()
    assert out.startswith(f"refused: the SQLite store {str(path)!r} is read-only"), out
    if read_only == "file":
        assert "(the file is read-only" in out
    else:
        assert f"its folder {str(folder)!r} is read-only" in out and "jobs.db-wal" in out
    assert "make the file and its folder writable" in out


DISK_FULL = textwrap.dedent(
    """
    import json, logging, os, resource, signal, sys
    import anyio
    import jobsched as js
    from jobsched._engine._link import _timing
    from durable_jobs import Noop

    # A write past the size limit fails with EFBIG instead of killing us.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    _timing.STORE_BACKOFF = js.RetryPolicy(max_retries=0, base_delay=0.005, max_delay=0.05)
    db, backend = sys.argv[1], sys.argv[2]
    records = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append((record.levelname, record.getMessage()))

    logging.getLogger("jobsched").addHandler(Keep())
    logging.getLogger("jobsched").setLevel(logging.INFO)

    def warned():
        return [m for level, m in records if level == "WARNING" and "is unavailable" in m]

    async def main():
        soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        async with js.JobScheduler(store=f"sqlite:///{db}", num_workers=4) as s:
            first = [s.submit(Noop("before")) for _ in range(20)]
            await s.flush()
            await s.join()
            # The disk is full: no file may grow past the database's size.
            resource.setrlimit(resource.RLIMIT_FSIZE, (os.path.getsize(db), hard))
            more = [s.submit(Noop("during")) for _ in range(300)]
            with anyio.fail_after(60):
                while not warned():
                    await anyio.sleep(0.01)
            await anyio.sleep(0.5)  # full for a while: many retries, still one WARNING
            resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))  # room again
            with anyio.fail_after(120):
                await s.flush()
                await s.join()
            got = [await s.fetch(i) for i in first + more]
        print(json.dumps({
            "done": [[j.status.value, j.attempts] for j in got],
            "warned": warned(),
            "back": [m for level, m in records if level == "INFO" and "is back after" in m],
            "errors": [m for level, m in records if level == "ERROR"],
        }))

    anyio.run(main, backend=backend)
    """
)


def test_a_full_disk_then_room_again(tmp_path: Path, anyio_backend: str) -> None:
    """With the file size limit hit (a full disk) the scheduler keeps going;
    once there is room again every job runs, exactly once, and the process
    never exits on it."""
    db = tmp_path / "jobs.db"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-c", DISK_FULL, str(db), anyio_backend],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["done"] == [["completed", 1]] * 320
    assert len(report["warned"]) == 1 and len(report["back"]) == 1, report
    assert "full" in report["warned"][0] or "I/O" in report["warned"][0], report["warned"]
    assert str(db) in report["warned"][0]
    assert report["errors"] == []


def test_which_sqlite_errors_are_transient() -> None:
    """Locked, full, I/O and read-only errors are an outage; a constraint is a bug."""
    from jobsched_sqlite._errors import is_transient

    for message in ("database is locked", "database or disk is full", "disk I/O error"):
        assert is_transient(sqlite3.OperationalError(message))  # by message (Python 3.10)
    assert not is_transient(sqlite3.IntegrityError("UNIQUE constraint failed: jobs.id"))
    assert not is_transient(RuntimeError("database is locked"))
    full = sqlite3.OperationalError("whatever the text")
    full.sqlite_errorcode = 13  # SQLITE_FULL
    assert is_transient(full)
    ioerr_write = sqlite3.OperationalError("disk I/O error")
    ioerr_write.sqlite_errorcode = 10 | (3 << 8)  # SQLITE_IOERR_WRITE
    assert is_transient(ioerr_write)
    constraint = sqlite3.IntegrityError("UNIQUE constraint failed")
    constraint.sqlite_errorcode = 19 | (8 << 8)  # CONSTRAINT_UNIQUE
    assert not is_transient(constraint)


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_transient_error_fails_the_whole_group(tmp_path: Path) -> None:
    """A write of a group commit that fails for a transient reason fails every
    write of the group, none committed, as StoreUnavailableError."""
    store = SQLiteStore(f"sqlite:///{tmp_path / 'jobs.db'}")
    await store.open()
    try:

        def ok(conn: sqlite3.Connection) -> None:
            conn.execute("UPDATE jobsched_meta SET value = 41 WHERE key = 'next_id'")

        def full(conn: sqlite3.Connection) -> None:
            raise sqlite3.OperationalError("database or disk is full")

        errors: list[BaseException] = []

        async def write(fn: Any) -> None:
            try:
                await store._write_async(fn)
            except js.StoreUnavailableError as exc:
                errors.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(write, ok)
            tg.start_soon(write, full)
        assert len(errors) == 2, errors
        assert all("database or disk is full" in str(e) for e in errors)
        assert store.reserve_ids(1) != 41  # the first write was rolled back with the group
    finally:
        await store.close()


async def test_a_store_bug_still_ends_the_scheduler(tmp_path: Path) -> None:
    """Any other exception from the store is no outage: the scheduler ends on
    it, as before, rather than retry a bug for ever."""

    class Broken(FlakyStore):
        async def record(self, owner: str, outcomes: Sequence[Outcome]) -> Recorded:
            raise RuntimeError("a bug in the store")

    store = Broken(f"sqlite:///{tmp_path / 'jobs.db'}")
    log = str(tmp_path / "log")
    ended: BaseException | None = None
    with anyio.fail_after(60):
        try:
            async with js.JobScheduler(store=store) as s:
                s.submit(Note(log, "x"))
                await s.join()
        except Exception as exc:
            ended = exc
    assert ended is not None
    # Raised where the committer met it and again where the stop's flush did.
    assert {repr(e) for e in leaves(ended)} == {"RuntimeError('a bug in the store')"}


def leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions in ``exc``, exception groups opened."""
    inner = getattr(exc, "exceptions", None)  # an exception group (Python 3.10: the backport)
    if inner is None:
        return [exc]
    return [leaf for one in inner for leaf in leaves(one)]
