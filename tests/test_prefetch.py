"""Claims ahead of the workers on a durable store (prefetch, issue 25).

A member holds claimed jobs beyond its idle workers when its jobs are short
(as many as its workers run in ``PREFETCH_AHEAD`` seconds at the recent mean
attempt time, at most ``PREFETCH_MAX``), none when they are long, under rate
limits or under fair share. Jobs claimed ahead are held as running ones are:
a cancel ends them CANCELLED without a run, a stop hands them back to the
store (their attempt uncounted), and each runs once.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import durable_jobs
import pytest
from durable_jobs import Gated, Noop, Note, runs
from pg import SECRET, schema_url

import jobsched as js
from jobsched._engine._link import _timing

pytestmark = pytest.mark.anyio
S = js.JobStatus


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'jobs.db'}"
    monkeypatch.setenv("JOBSCHED_SECRET", SECRET)
    return schema_url(request.getfixturevalue("pg_session_database"))


@pytest.fixture
def gate() -> Iterator[anyio.Event]:
    durable_jobs.GATE = anyio.Event()
    yield durable_jobs.GATE
    durable_jobs.GATE = None


class Claims(list[tuple[int, int]]):
    """(limit asked, jobs got) of every claim of a scheduler's store from now on."""

    def __init__(self, s: js.JobScheduler) -> None:
        super().__init__()
        self._changed = anyio.Event()
        link = s._link
        assert link is not None
        store = link.store
        claim = store.claim

        async def counted(owner: str, limit: int, *args: Any, **kwargs: Any) -> Any:
            got = await claim(owner, limit, *args, **kwargs)
            self.append((limit, len(got)))
            self._changed.set()
            self._changed = anyio.Event()
            return got

        store.claim = counted  # type: ignore[method-assign]

    @property
    def taken(self) -> int:
        return sum(got for _, got in self)

    async def until(self, total: int) -> None:
        """Return once the claims took ``total`` jobs in all."""
        while self.taken < total:
            await self._changed.wait()


def count_claims(s: js.JobScheduler) -> Claims:
    return Claims(s)


async def reached(s: js.JobScheduler, job_ids: list[str], status: js.JobStatus) -> None:
    """Return once every job of ``job_ids`` is in ``status`` in ``s``."""
    done = anyio.Event()

    def there() -> bool:
        return all(_known(s, i) and s.get(i).status is status for i in job_ids)

    def look(job: js.Job, old: js.JobStatus, new: js.JobStatus) -> None:
        if there():
            done.set()

    s.add_listener(look)
    try:
        if not there():
            await done.wait()
    finally:
        s.remove_listener(look)


def _known(s: js.JobScheduler, job_id: str) -> bool:
    try:
        s.get(job_id)
    except js.UnknownJobError:
        return False
    return True


async def enqueue(db: str, jobs: list[js.Job]) -> list[str]:
    """Commit ``jobs`` with a scheduler that runs nothing (a producer)."""
    async with js.JobScheduler(store=db, num_workers=0) as producer:
        return [await producer.enqueue(job) for job in jobs]


async def test_short_jobs_are_claimed_ahead_of_the_workers(db: str, tmp_path: Path) -> None:
    log = str(tmp_path / "log")
    ids = await enqueue(db, [Note(log, i) for i in range(1500)])
    s = js.JobScheduler(store=db, num_workers=8)
    claims = count_claims(s)  # before the start: from the first claim on
    async with s:
        with anyio.fail_after(120):
            await s.join()
    assert max(limit for limit, _ in claims) > 8  # more than the idle workers
    taken = [got for _, got in claims if got]
    assert sum(taken) == 1500
    assert len(taken) < 1500 / 16  # rounds of more than two workers' worth each
    assert {job_id: [what for what, _ in seen] for job_id, seen in runs(log).items()} == {
        job_id: ["start", "end"] for job_id in ids
    }


async def test_long_jobs_are_not_claimed_ahead(db: str, tmp_path: Path) -> None:
    """Jobs of a quarter of a second: 8 workers run 0.64 of one in
    PREFETCH_AHEAD, so no claim asks for more than the idle workers."""
    log = str(tmp_path / "log")
    await enqueue(db, [Note(log, i, seconds=0.25) for i in range(24)])
    s = js.JobScheduler(store=db, num_workers=8)
    claims = count_claims(s)  # before the start: from the first claim on
    async with s:
        with anyio.fail_after(120):
            await s.join()
    assert claims and max(limit for limit, _ in claims) <= 8


@pytest.mark.parametrize("limits", ["rate_limits", "fair_share"])
async def test_no_claims_ahead_under_rate_limits_or_fair_share(db: str, limits: str) -> None:
    await enqueue(db, [Noop("noop", rate_key="r", tenant="t") for _ in range(600)])
    options: dict[str, Any] = (
        {"rate_limits": {"r": js.RateLimit(1e6)}}
        if limits == "rate_limits"
        else {"strategy": js.FairShareStrategy()}
    )
    s = js.JobScheduler(store=db, num_workers=8, **options)
    claims = count_claims(s)
    async with s:
        with anyio.fail_after(120):
            await s.join()
    assert sum(got for _, got in claims) == 600
    assert max(limit for limit, _ in claims) <= 8


def _hold_ahead(s: js.JobScheduler) -> None:
    """As if the member had seen its jobs end in a few microseconds."""
    s._attempt_time = 1e-5


@pytest.fixture
def never_stale(monkeypatch: pytest.MonkeyPatch) -> None:
    """Jobs claimed ahead of stuck workers stay claimed (the test below that
    hands them back is about that)."""
    monkeypatch.setattr(_timing, "PREFETCH_STALE", 3600.0)


@pytest.mark.usefixtures("never_stale")
async def test_a_stop_hands_back_the_jobs_claimed_ahead(db: str, gate: anyio.Event) -> None:
    """Four workers wait at a gate with the rest of the batch claimed behind
    them; stop() hands all of it back, attempts uncounted, and a new member
    runs every job once."""
    blocked = await enqueue(db, [Gated("gate") for _ in range(4)])
    behind = await enqueue(db, [Noop("noop") for _ in range(40)])
    s = js.JobScheduler(store=db, num_workers=4)
    _hold_ahead(s)
    claims = count_claims(s)
    async with s:
        with anyio.fail_after(60):
            await claims.until(44)
            await reached(s, blocked, S.RUNNING)
        assert all(s.get(job_id).status is S.PENDING for job_id in behind)
        await s.stop(grace=0)
    async with js.JobScheduler(store=db, num_workers=0) as reader:
        for job_id in blocked + behind:
            stored = await reader.fetch(job_id)
            assert (stored.status, stored.attempts) == (S.PENDING, 0)
    gate.set()
    async with js.JobScheduler(store=db, num_workers=4) as again:
        with anyio.fail_after(60):
            await again.join()
        for job_id in blocked + behind:
            done = await again.fetch(job_id)
            assert (done.status, done.attempts) == (S.COMPLETED, 1)


@pytest.mark.usefixtures("never_stale")
async def test_a_cancel_from_another_member_ends_a_job_claimed_ahead(
    db: str, gate: anyio.Event, tmp_path: Path
) -> None:
    """Member A holds a job claimed ahead of its blocked workers; B, which
    never saw the job, cancels it: A ends it CANCELLED without running it."""
    log = str(tmp_path / "log")
    await enqueue(db, [Gated("gate") for _ in range(2)])
    behind = await enqueue(db, [Note(log, i) for i in range(10)])
    a = js.JobScheduler(store=db, num_workers=2)
    _hold_ahead(a)
    claims = count_claims(a)
    async with a, js.JobScheduler(store=db, num_workers=0) as b:
        with anyio.fail_after(60):
            await claims.until(12)
        victim = behind[5]
        assert a.get(victim).status is S.PENDING  # claimed, not started
        started = time.monotonic()
        assert b.cancel(victim)
        with anyio.fail_after(30):
            await reached(a, [victim], S.CANCELLED)
        took = time.monotonic() - started
        gate.set()
        with anyio.fail_after(60):
            await a.join()
        assert (await b.fetch(victim)).status is S.CANCELLED
    assert victim not in runs(log)
    assert set(runs(log)) == set(behind) - {victim}
    assert took < 10  # the contract's "within a second", with room for a loaded machine


async def test_jobs_claimed_ahead_of_stuck_workers_go_back_to_the_store(
    db: str, gate: anyio.Event, tmp_path: Path
) -> None:
    """Both of A's workers wait at a gate (long jobs) with ten short jobs
    claimed behind them: after PREFETCH_STALE A hands those back, attempts
    uncounted, and B's idle workers run them while A's are still stuck."""
    log = str(tmp_path / "log")
    blocked = await enqueue(db, [Gated("gate", timeout=None) for _ in range(2)])
    behind = await enqueue(db, [Note(log, i) for i in range(10)])
    a = js.JobScheduler(store=db, num_workers=2)
    _hold_ahead(a)
    claims = count_claims(a)
    async with a:
        with anyio.fail_after(60):
            await claims.until(12)
            await reached(a, blocked, S.RUNNING)
        b = js.JobScheduler(store=db, num_workers=2)
        async with b:
            with anyio.fail_after(60):
                for job_id in behind:
                    assert (await b.wait(job_id)).status is S.COMPLETED
            assert all(a.get(job_id).status is S.RUNNING for job_id in blocked)
        for job_id in behind:
            assert (await a.fetch(job_id)).attempts == 1  # the claim ahead was not counted
        gate.set()
        with anyio.fail_after(60):
            await a.join()
    assert {job_id: [w for w, _ in seen] for job_id, seen in runs(log).items()} == {
        job_id: ["start", "end"] for job_id in behind
    }


async def test_a_hand_back_the_store_refuses_is_tried_again(
    db: str, gate: anyio.Event, tmp_path: Path
) -> None:
    """The store is unavailable when A hands back the jobs stuck behind its
    workers: they stay A's (leases renewed, never run by A) until A's next
    heartbeat hands them back, attempts uncounted, for the next member to
    run once. (They used to wait for A's stop: with workers that wait for a
    commit an outage holds up, that was every job A held, for as long as A
    ran.)"""
    log = str(tmp_path / "log")
    blocked = await enqueue(db, [Gated("gate", timeout=None) for _ in range(2)])
    behind = await enqueue(db, [Note(log, i) for i in range(6)])
    a = js.JobScheduler(store=db, num_workers=2)
    _hold_ahead(a)
    claims = count_claims(a)
    link = a._link
    assert link is not None
    release = link.store.release
    refused, retried = anyio.Event(), anyio.Event()

    async def unavailable(owner: str, ids: Any) -> None:
        if not refused.is_set():
            refused.set()
            raise js.StoreUnavailableError("the database went away")
        await release(owner, ids)
        retried.set()

    link.store.release = unavailable  # type: ignore[method-assign]
    async with a:
        with anyio.fail_after(60):
            await claims.until(8)
            await refused.wait()  # the heartbeat's hand-back, after PREFETCH_STALE
            await retried.wait()  # the next beat's
        async with js.JobScheduler(store=db, num_workers=0) as reader:
            for job_id in behind:
                back = await reader.fetch(job_id)
                assert (back.status, back.attempts) == (S.PENDING, 0), back
        await a.stop(grace=0)
    gate.set()
    async with js.JobScheduler(store=db, num_workers=2) as again:
        with anyio.fail_after(60):
            await again.join()
        for job_id in blocked + behind:
            done = await again.fetch(job_id)
            assert (done.status, done.attempts) == (S.COMPLETED, 1)
    assert {job_id: [w for w, _ in seen] for job_id, seen in runs(log).items()} == {
        job_id: ["start", "end"] for job_id in behind
    }


async def running_rows(db: str) -> int:
    """How many rows the store holds RUNNING (under any member)."""
    store = js.open_store(db)
    await store.open()
    try:
        counts = await store.counts()
    finally:
        await store.close()
    return sum(n for (status, _), n in counts.items() if status is S.RUNNING)


async def test_a_claim_whose_reply_comes_during_stop_is_handed_back(db: str) -> None:
    """Issue 32: a claim on its way when stop() began brought jobs after the
    stop had collected what to hand back; they stayed RUNNING under the
    stopped member until its lease ran out, then lost an attempt. The stop
    now waits for that claim and hands its jobs back uncounted."""
    jobs = await enqueue(db, [Noop("noop") for _ in range(20)])
    s = js.JobScheduler(store=db, num_workers=4)
    link = s._link
    assert link is not None
    store, claim = link.store, link.store.claim
    asked, stopping = anyio.Event(), anyio.Event()
    got: list[int] = []

    async def late(*args: Any, **kwargs: Any) -> Any:
        asked.set()
        await stopping.wait()  # the reply comes once stop() has begun
        claims = await claim(*args, **kwargs)
        got.append(len(claims))
        return claims

    store.claim = late  # type: ignore[method-assign]
    wake_all = s._wake_all

    def stop_begins() -> None:
        stopping.set()
        wake_all()

    s._wake_all = stop_begins  # type: ignore[method-assign]
    async with s:
        with anyio.fail_after(60):
            await asked.wait()
            await s.stop(grace=2)
    assert got and got[0] > 0, got  # the claim took jobs while the member stopped
    assert await running_rows(db) == 0
    async with js.JobScheduler(store=db, num_workers=0) as reader:
        for job_id in jobs:
            stored = await reader.fetch(job_id)
            assert (stored.status, stored.attempts) == (S.PENDING, 0), stored


async def test_fifty_stops_under_load_leave_no_row_running(db: str) -> None:
    """A member stopped while it claims ahead, 50 times: every job it claimed
    is finished or handed back uncounted by the time stop() returns."""
    # Enough for every round (each runs a few dozen, one claim's worth).
    await enqueue_many(db, 10_000)
    for _ in range(50):
        s = js.JobScheduler(store=db, num_workers=4)
        s.add_listener(finished := Completions(20))
        async with s:
            with anyio.fail_after(60):
                await finished.event.wait()
                await s.stop(grace=2)
        assert await running_rows(db) == 0
    async with js.JobScheduler(store=db, num_workers=0) as reader:
        counts = await reader._link.store.counts()  # type: ignore[union-attr]
    # Handed back uncounted: nothing failed, nothing waits for a retry.
    assert {status for status, _ in counts} <= {S.COMPLETED, S.PENDING}, counts


class Completions:
    """A listener whose ``event`` is set at the ``count``-th completion."""

    def __init__(self, count: int) -> None:
        self.left = count
        self.event = anyio.Event()
        self._next = anyio.Event()

    def __call__(self, job: js.Job, old: js.JobStatus, new: js.JobStatus) -> None:
        if new is S.COMPLETED:
            self.left -= 1
            if self.left == 0:
                self.event.set()
            self._next.set()
            self._next = anyio.Event()

    async def changed(self) -> None:
        """Return at the next completion."""
        await self._next.wait()


async def enqueue_many(db: str, count: int) -> None:
    async with js.JobScheduler(store=db, num_workers=0) as producer:
        for _ in range(count):
            producer.submit(Noop("noop"))
        await producer.flush()


async def test_workers_wait_for_the_commit_once_outcomes_pile_up(
    db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 32: short jobs outran a lagging commit and hundreds of outcomes
    waited for it, each a job a kill -9 runs again. Once OUTCOMES_WAITING_MAX
    wait for the next commit (the batch being written aside), the workers
    start no more held jobs until a commit ends."""
    monkeypatch.setattr(_timing, "OUTCOMES_WAITING_MAX", 8)
    await enqueue_many(db, 200)
    s = js.JobScheduler(store=db, num_workers=4)
    link = s._link
    assert link is not None
    record, writing, release = link.store.record, anyio.Event(), anyio.Event()

    async def stuck(owner: str, outcomes: Any) -> Any:
        writing.set()
        await release.wait()  # a commit that lags
        return await record(owner, outcomes)

    link.store.record = stuck  # type: ignore[method-assign]
    s.add_listener(piled := Completions(-1))
    async with s:
        with anyio.fail_after(60):
            await writing.wait()
            while len(link._outcomes) < 8:
                await piled.changed()
            for _ in range(200):  # the workers had every chance to run more
                await anyio.lowlevel.checkpoint()
            assert len(link._outcomes) == 8
            assert s._claimed, "jobs wait claimed, not started"
            release.set()
            await s.join()
    async with js.JobScheduler(store=db, num_workers=0) as reader:
        counts = await reader._link.store.counts()  # type: ignore[union-attr]
    assert counts == {(S.COMPLETED, "async"): 200}
