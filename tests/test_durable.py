"""The scheduler on a durable store (SQLite): restarts, crashes, signatures, bad input.

Runs on asyncio only: the store works in threads, which trio's mock clock
would jump over, and the scheduler's logic is the same on both backends
(test_scheduler.py covers trio).
"""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import anyio
import durable_jobs
import pytest
from durable_jobs import Fails, Gated, Noop, Note, StallFirst, runs

import jobsched as js
from jobsched._engine import _storedreads
from jobsched._engine._link import _timing
from jobsched.strategies import ReadyQueue

pytestmark = pytest.mark.anyio

S = js.JobStatus
TESTS = Path(__file__).resolve().parent
FAST = js.RetryPolicy(max_retries=3, base_delay=0.01, jitter=False)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'jobs.db'}"


async def test_a_durable_run_matches_the_in_memory_one(db: str, tmp_path: Path) -> None:
    """Results, retries, dependencies and the cascade, as the memory store gives them."""
    log = str(tmp_path / "log")
    async with js.JobScheduler(store=db) as s:
        a = s.submit(Note(log, 1))
        b = s.submit(Note(log, 2), depends_on=[a])
        flaky = s.submit(Fails(2, retry=FAST))
        broken = s.submit(Fails(9, retry=js.RetryPolicy(max_retries=1, base_delay=0.01)))
        downstream = s.submit(Note(log, 5), depends_on=[broken])
        with anyio.fail_after(30):
            await s.join()
        got = {i: await s.fetch(i) for i in (a, b, flaky, broken, downstream)}
    assert [(j.status, j.result) for j in (got[a], got[b])] == [(S.COMPLETED, 1), (S.COMPLETED, 2)]
    assert (got[flaky].status, got[flaky].attempts, got[flaky].result) == (S.COMPLETED, 3, "ok")
    assert (got[broken].status, got[broken].attempts) == (S.FAILED, 2)
    assert (
        got[broken].last_traceback is not None and "ConnectionError" in got[broken].last_traceback
    )
    assert got[downstream].status is S.CANCELLED
    assert got[downstream].last_error == f"upstream {broken} failed"
    assert s.get(downstream).status is S.CANCELLED  # this process's view follows the store
    assert [w for w, _ in runs(log)[a]] == ["start", "end"]


async def test_queued_jobs_survive_a_restart(db: str, tmp_path: Path) -> None:
    """Jobs committed before a stop run when a new scheduler opens the store."""
    log = str(tmp_path / "log")
    first = js.JobScheduler(store=db)
    async with first:
        ids = [await first.enqueue(Note(log, i), delay=3600) for i in range(3)]
        upstream = await first.enqueue(Note(log, "up"), delay=3600)
        dependent = await first.enqueue(Note(log, "down"), depends_on=[upstream])
    assert runs(log) == {}  # nothing ran: all were delayed
    # A new process would see the same rows; a new store object is as fresh.
    async with js.JobScheduler(store=db) as second:
        for job_id in ids:
            assert (await second.fetch(job_id)).status is S.PENDING
            assert second.cancel(job_id) is True  # not known here: cancelled in the store
        await second.flush()
        assert [(await second.fetch(i)).status for i in ids] == [S.CANCELLED] * 3
        assert (await second.fetch(dependent)).status is S.PENDING


async def test_a_dependency_submitted_by_another_process(db: str, tmp_path: Path) -> None:
    """depends_on takes ids this process doesn't know but the store holds;
    enqueue refuses one the store doesn't hold, and submit's job is cancelled."""
    log = str(tmp_path / "log")
    async with js.JobScheduler(store=db) as first:
        upstream = await first.enqueue(Note(log, "up"), delay=3600)
    async with js.JobScheduler(store=db) as second:
        assert upstream not in {j.job_id for j in second.jobs()}  # not known here
        dependent = await second.enqueue(Note(log, "down"), depends_on=[upstream])
        assert (await second.fetch(dependent)).status is S.PENDING  # blocked on it
        absent = f"job-{int(upstream.split('-')[1]) + 10_000}"
        count = len(second.jobs())
        with pytest.raises(js.UnknownJobError, match=rf"\['{absent}'\] that the store"):
            await second.enqueue(Note(log, "never"), depends_on=[absent])
        assert len(second.jobs()) == count  # nothing accepted
        orphan = second.submit(Note(log, "orphan"), depends_on=[absent])
        await second.flush()
        gone = await second.fetch(orphan)
        assert gone.status is S.CANCELLED
        assert gone.last_error == f"upstream {absent} is not in the store"
        assert second.cancel(upstream) is True  # the upstream fails over here...
        await second.flush()
        with anyio.fail_after(30):
            await second.join()
        # ...and its cascade reaches the dependent this process submitted.
        assert (await second.fetch(dependent)).status is S.CANCELLED
    assert runs(log) == {}


async def test_a_dependent_runs_after_its_upstream_from_another_process(
    db: str, tmp_path: Path
) -> None:
    log = str(tmp_path / "log")
    async with js.JobScheduler(store=db) as first:
        upstream = await first.enqueue(Note(log, "up"), delay=0.5)
    async with js.JobScheduler(store=db) as second:
        dependent = second.submit(Note(log, "down"), depends_on=[upstream])
        with anyio.fail_after(30):
            await second.join()
        assert (await second.fetch(dependent)).result == "down"
    lines = [line.rsplit(" ", 1)[0] for line in _lines(log)]
    assert lines == [
        f"start {upstream}",
        f"end {upstream}",
        f"start {dependent}",
        f"end {dependent}",
    ]


async def test_enqueue_returns_once_committed(db: str, tmp_path: Path) -> None:
    store = js.open_store(db)
    s = js.JobScheduler(store=store)
    async with s:
        job_id = await s.enqueue(Note(str(tmp_path / "log"), 1), delay=3600)
        other = js.open_store(db)  # another connection sees the commit
        await other.open()
        stored = await other.fetch(int(job_id.split("-")[1]))
        await other.close()
    assert stored is not None and stored.status is S.PENDING


async def test_join_sees_a_commit_that_lands_while_it_counts(
    db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last outcome commits while join() asks the store how many jobs are
    left: join returns then, not a poll interval later (here, never)."""
    monkeypatch.setattr(_timing, "POLL_INTERVAL", 3600.0)
    monkeypatch.setattr(_storedreads, "POLL_INTERVAL", 3600.0)
    durable_jobs.GATE = anyio.Event()
    ended = anyio.Event()
    async with js.JobScheduler(store=db) as s:
        s.add_listener(lambda job, old, new: new.is_terminal and ended.set())
        s.submit(Gated("gated"))
        await s.flush()
        link = s._link
        assert link is not None
        count = link.store.unfinished
        counts = 0

        async def unfinished_while_the_job_ends() -> int:
            nonlocal counts
            counts += 1
            left = await count()
            if counts == 1:  # stale by the time it returns: the job ends, and commits
                durable_jobs.GATE.set()
                await ended.wait()
                await s.flush()
            return left

        monkeypatch.setattr(link.store, "unfinished", unfinished_while_the_job_ends)
        with anyio.fail_after(20):
            await s.join()
    assert counts == 2


async def test_a_flush_before_the_committer_runs_and_its_first_batch_never_overlap(
    db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A flush before start writes its batch itself; the committer's first
    batch waits for it. Run together, the earlier batch committed last and set
    the committed count back, and the flush in stop() then waited forever
    (the hang that held CI for 5,400 s: a cancel of a chain's head before
    start, then join)."""
    s = js.JobScheduler(store=db)
    s.submit(Noop("first"))
    link = s._link
    assert link is not None
    real_add = link.store.add
    gate, first_blocked, second_started = anyio.Event(), anyio.Event(), anyio.Event()
    writing = most = 0

    async def add(jobs, now):  # type: ignore[no-untyped-def]
        nonlocal writing, most
        writing += 1
        most = max(most, writing)
        try:
            if not first_blocked.is_set():
                first_blocked.set()
                await gate.wait()
            else:
                second_started.set()
            return await real_add(jobs, now)
        finally:
            writing -= 1

    monkeypatch.setattr(link.store, "add", add)
    async with anyio.create_task_group() as tg:
        tg.start_soon(s.flush)  # no committer yet: it writes "first" itself
        await first_blocked.wait()
        async with s:
            s.submit(Noop("second"))  # the committer's first batch
            with anyio.move_on_after(1.0):  # at once, if it does not wait its turn
                await second_started.wait()
            gate.set()
            with anyio.fail_after(20):
                await s.join()
                await s.flush()
    assert most == 1


async def test_a_round_of_outcomes_and_the_next_claim_share_one_commit(
    db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last claimed job taken asks for the next claim, so the claim joins
    the round's outcomes in one transaction of SQLite's group commit: about
    one fsync per round of jobs, not two."""
    # Rounds of the workers alone: claims ahead of them make rounds so long
    # that two commits a round would pass too (tests/test_prefetch.py).
    monkeypatch.setattr(_timing, "PREFETCH_MAX", 0)
    # 64 workers: a round as long as a worker's streak between yields (the
    # worker that runs them yields before it finds none left).
    async with js.JobScheduler(store=db, num_workers=64) as s:
        for _ in range(64 * 30):
            s.submit(Noop("noop"))
        await s.flush()  # the submits' transaction is not a round's
        link = s._link
        assert link is not None
        group = link.store._group  # type: ignore[attr-defined]
        groups, writes = group.groups, group.writes
        with anyio.fail_after(30):
            await s.join()
        rounds = group.groups - groups
        written = group.writes - writes  # claims, outcomes, prunes
    assert written >= 60  # 30 rounds at least, each a claim and its outcomes
    assert rounds <= 0.6 * written, (rounds, written)


def _lines(log: str) -> list[str]:
    return Path(log).read_text().splitlines()


def _child(tmp_path: Path, body: str) -> subprocess.Popen[bytes]:
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent(body))
    env = {**os.environ, "PYTHONPATH": str(TESTS)}
    return subprocess.Popen([sys.executable, str(script)], env=env)


def _wait_for(predicate, what: str, seconds: float = 30.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def _started(db: str) -> int:
    """Jobs whose start the SQLite store ``db`` holds (read by a connection of its own)."""
    from contextlib import closing

    with closing(sqlite3.connect(db.removeprefix("sqlite:///"), timeout=30)) as conn:
        (count,) = conn.execute("SELECT count(*) FROM jobs WHERE started_at IS NOT NULL").fetchone()
    return int(count)


@pytest.mark.parametrize("retries", [1, 0])
async def test_a_job_running_in_a_killed_process_is_retried_or_failed(
    db: str, tmp_path: Path, retries: int
) -> None:
    """kill -9 mid-attempt: the next scheduler counts that attempt as lost."""
    log = tmp_path / "log"
    child = _child(
        tmp_path,
        f"""
        import anyio, jobsched as js
        from durable_jobs import StallFirst, Note

        async def main():
            async with js.JobScheduler(store={db!r}) as s:
                s.submit(StallFirst({str(log)!r}, retry=js.RetryPolicy(max_retries={retries},
                         base_delay=0.01), name="stall"))
                s.submit(Note({str(log)!r}, "later"), delay=3600)
                await anyio.sleep(3600)

        anyio.run(main)
        """,
    )
    try:
        _wait_for(lambda: log.exists() and "start" in log.read_text(), "the job to start")
        # Its start committed too: a start still in the group commit leaves
        # the attempt uncounted (claims ahead are not attempts), and the next
        # scheduler would run attempt 1 again, which stalls.
        _wait_for(lambda: _started(db) == 1, "the start to be stored")
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    async with js.JobScheduler(store=db) as s:
        stalled = "job-" + log.read_text().split()[1].split("-")[1]
        with anyio.fail_after(30):
            # Another process's job: only the store can tell when it is done.
            while (await s.fetch(stalled)).status not in (S.COMPLETED, S.FAILED):  # noqa: ASYNC110
                await anyio.sleep(0.05)
        job = await s.fetch(stalled)
        later = [j for j in runs(log) if j != stalled]
    if retries:
        assert (job.status, job.attempts, job.result) == (S.COMPLETED, 2, "recovered")
        assert runs(log)[stalled] == [("start", 1), ("start", 2), ("end", 2)]
    else:
        assert (job.status, job.attempts, job.last_error) == (S.FAILED, 1, "worker lost")
    assert later == []  # the delayed job is still waiting, not run early


async def test_a_cancel_of_a_running_job_survives_its_process_dying(
    db: str, tmp_path: Path
) -> None:
    """cancel() then kill -9 while the thread still runs: the cancel is in the
    store, so the next scheduler ends the job CANCELLED, not retried."""
    log, marker = tmp_path / "log", tmp_path / "marker"
    child = _child(
        tmp_path,
        f"""
        import anyio, jobsched as js
        from durable_jobs import Stubborn, log_line

        async def main():
            async with js.JobScheduler(store={db!r}) as s:
                job_id = await s.enqueue(Stubborn({str(log)!r}, 60))
                while s.get(job_id).status is not js.JobStatus.RUNNING:
                    await anyio.sleep(0.01)
                assert s.cancel(job_id)
                await s.flush()
                log_line({str(marker)!r}, "cancelled")
                await anyio.sleep(3600)

        anyio.run(main)
        """,
    )
    try:
        _wait_for(marker.exists, "the cancel")
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    stalled = "job-" + log.read_text().split()[1].split("-")[1]
    async with js.JobScheduler(store=db) as s:
        with anyio.fail_after(30):
            await s.join()
        job = await s.fetch(stalled)
    assert (job.status, job.last_error) == (S.CANCELLED, "cancelled")
    assert runs(log)[stalled] == [("start", 1)]  # never run again


async def test_a_job_cancelled_while_its_owner_died_ends_cancelled(db: str, tmp_path: Path) -> None:
    """The store holds the cancel of a running job whose member died: the
    member that takes the job over ends it CANCELLED instead of retrying it."""
    log = str(tmp_path / "log")
    async with js.JobScheduler(store=db) as s:
        job_id = await s.enqueue(Note(log, 1), delay=3600)
    gone = await anyio.run_process([sys.executable, "-c", "import os; print(os.getpid())"])
    dead_owner = f"{socket.gethostname()}:{int(gone.stdout)}:0"
    store = js.open_store(db)
    await store.open()
    (claim,) = await store.claim(dead_owner, 1, {"async": 1}, time.time() + 3601, 30)
    await store.cancel([claim.id], time.time())
    await store.close()
    async with js.JobScheduler(store=db) as s:
        with anyio.fail_after(30):
            await s.join()
        job = await s.fetch(job_id)
    assert (job.status, job.attempts, job.last_error) == (S.CANCELLED, 1, "cancelled")
    assert runs(log) == {}


async def test_a_job_that_cannot_be_stored_is_refused_before_anything_is_accepted(
    db: str,
) -> None:
    async with js.JobScheduler(store=db) as s:
        with pytest.raises(TypeError, match="cannot be stored.*module level"):
            s.submit(js.FunctionJob(lambda: 1))
        # An argument at fault is named as the argument (issue 38).
        with pytest.raises(TypeError, match=r"its argument args\[0\] \(_thread.lock\)"):
            s.submit(js.FunctionJob(print, (threading.Lock(),)))
        assert s.jobs() == []
        await s.join()  # nothing was written


def test_bad_store_arguments_are_refused_at_construction(tmp_path: Path) -> None:
    with pytest.raises(js.StoreNotFoundError, match="redis"):
        js.JobScheduler(store="redis://localhost/0")
    with pytest.raises(ValueError, match="malformed store URL"):
        js.JobScheduler(store="jobs.db")
    with pytest.raises(TypeError, match="store must be"):
        js.JobScheduler(store=42)  # type: ignore[arg-type]
    with pytest.raises(js.SchedulerError, match="OwnQueue does not work with a durable store"):
        js.JobScheduler(OwnQueue(), store=f"sqlite:///{tmp_path}/j.db")


class OwnQueue(js.SchedulingStrategy):
    """A strategy whose order is a ready queue of its own, not a key a store can sort by."""

    def key(self, job: js.Job) -> tuple[float, ...]:
        return (job.seq,)

    def ready_queue(self) -> ReadyQueue:
        return js.FairShareStrategy().ready_queue()


async def test_an_unopenable_store_fails_start_and_submit_clearly(tmp_path: Path) -> None:
    s = js.JobScheduler(store=f"sqlite:///{tmp_path}/missing/jobs.db")
    with pytest.raises(js.StoreUnavailableError, match="does not exist"):
        async with s:
            pass
    # Before start, submit needs the store for the job's id: it says so too,
    # and accepts nothing.
    with pytest.raises(js.StoreUnavailableError, match="does not exist"):
        s.submit(Note(str(tmp_path / "log"), 1))
    assert s.jobs() == []
    (tmp_path / "missing").mkdir()
    job_id = s.submit(Note(str(tmp_path / "log"), 1))
    async with s:  # the folder exists now: the same scheduler starts
        with anyio.fail_after(30):
            await s.join()
    assert s.get(job_id).status is S.COMPLETED and s.get(job_id).result == 1


async def test_cancel_reaches_queued_and_running_jobs(db: str, tmp_path: Path) -> None:
    log = tmp_path / "log"
    started = anyio.Event()
    s = js.JobScheduler(store=db)
    s.add_listener(lambda job, old, new: new is S.RUNNING and started.set())
    async with s:
        queued = s.submit(Note(str(log), "q"), delay=3600)
        running = s.submit(StallFirst(str(log), retry=js.RetryPolicy(max_retries=0)))
        with anyio.fail_after(30):
            await started.wait()
        assert s.cancel(queued) and s.cancel(running)
        with anyio.fail_after(30):
            await s.join()
        assert (await s.fetch(queued)).status is S.CANCELLED
        assert (await s.fetch(running)).status is S.CANCELLED


async def test_join_ends_when_another_member_ran_this_ones_jobs(db: str, tmp_path: Path) -> None:
    """join() asks the store, not only this process's view, which never sees them end."""
    log = str(tmp_path / "log")
    submitter = js.JobScheduler(store=db)
    ids = [submitter.submit(Note(log, n)) for n in range(3)]
    await submitter.flush()  # committed, not started: nothing runs here yet
    async with js.JobScheduler(store=db) as runner:
        with anyio.fail_after(30):
            await runner.join()
    async with submitter:
        with anyio.fail_after(30):
            await submitter.join()  # its own view still says 3 pending
        assert all(submitter.get(i).status is S.PENDING for i in ids)
        assert [(await submitter.fetch(i)).status for i in ids] == [S.COMPLETED] * 3
