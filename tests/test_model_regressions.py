"""Bugs the model checks found, each pinned by a focused test.

The memory model's (tests/test_model.py) run in virtual time: trio's
``MockClock(autojump_threshold=0)``, so the waits cost nothing and every event
happens at an exact time. The durable model's (tests/test_model_durable.py)
run its falsifying programs again, in real processes on SQLite, next to a
focused test of each cause.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import anyio
import durable_jobs
import pytest
import scheduler_model as m
from durable_jobs import FailsAtGate
from test_model_durable import DurableMachine
from trio.testing import MockClock

import jobsched as js
from jobsched._jobs._ids import id_number

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> tuple[str, dict[str, Any]]:
    return "trio", {"clock": MockClock(autojump_threshold=0)}


async def _nap(seconds: float) -> None:
    await anyio.sleep(seconds)


def _job(name: str, priority: js.JobPriority, rate_key: str | None = None) -> js.FunctionJob:
    return js.FunctionJob(_nap, (1.0,), name=name, priority=priority, rate_key=rate_key)


async def test_rate_limited_held_job_does_not_hand_its_slot_to_a_worse_job() -> None:
    """A held job released into a free executor slot but refused a token passes the slot on
    to the best held job, not to a worse job that happens to be in the ready queue.

    Found by the model: with ``executor_limits`` and ``rate_limits`` together, the
    slot went to whatever was ready, so a LOW job overtook a HIGH one that had been
    waiting for that executor all along.
    """
    started: list[str] = []
    scheduler = js.JobScheduler(
        num_workers=2,
        executor_limits={"async": 1},
        # One token, the next one 10 s away: "first" takes it.
        rate_limits={"r": js.RateLimit(1, per=10.0)},
        clock=anyio.current_time,
    )

    def on_start(job: js.Job, old: js.JobStatus, new: js.JobStatus) -> None:
        if new is js.JobStatus.RUNNING:
            started.append(job.name)

    scheduler.add_listener(on_start)
    async with scheduler:
        first = scheduler.submit(_job("first", js.JobPriority.MEDIUM, rate_key="r"))
        await anyio.sleep(0.5)
        # The async slot is taken: the idle worker holds these two back.
        scheduler.submit(_job("limited", js.JobPriority.CRITICAL, rate_key="r"))
        scheduler.submit(_job("high", js.JobPriority.HIGH))
        # Becomes ready the moment "first" ends, in the same step that frees the slot.
        scheduler.submit(_job("low", js.JobPriority.LOW), depends_on=[first])
        with anyio.fail_after(100):
            await scheduler.join()
    assert started == ["first", "high", "low", "limited"]


async def _upstream() -> str:
    return "u"


async def _fails() -> None:
    raise ValueError("f")


@pytest.mark.parametrize(
    "history",
    [{"history_limit": 2}, {"retention": js.Retention(completed=5.0)}],
    ids=["count bound", "retention by age"],
)
async def test_a_workflow_job_cancelled_as_it_is_added_evicts_no_upstream_of_a_later_one(
    history: dict[str, Any],
) -> None:
    """A workflow job whose upstream failed ends CANCELLED as it is added; that end
    trims the history, and must not evict a finished upstream of a job added after it.

    Found by the model: the eviction dropped the later job's upstream before its
    edge pinned it, so ``enqueue_workflow`` raised a ``TypeError`` blaming the
    strategy (a ``KeyError`` inside) and left the first job added, not all or none.
    """
    no_retry = js.RetryPolicy(max_retries=0)
    async with js.JobScheduler(clock=anyio.current_time, **history) as s:
        upstream = s.submit(js.FunctionJob(_upstream))
        await s.wait(upstream)
        failed = s.submit(js.FunctionJob(_fails, retry=no_retry))
        await s.wait(failed)
        # Past the age a retention keeps it for: the next end evicts it.
        await anyio.sleep(10.0)
        wf = js.Workflow("w")
        cancelled = wf.add(js.FunctionJob(_upstream), depends_on=[failed])
        last = wf.add(js.FunctionJob(_upstream), depends_on=[js.After(upstream)])
        await s.enqueue_workflow(wf)
        assert cancelled.status is js.JobStatus.CANCELLED
        with anyio.fail_after(100):
            assert await s.result(last.job_id) == "u"
        # Once its dependent ended, the upstream is the history's again.
        assert s.get(last.job_id).status is js.JobStatus.COMPLETED


class _LingersPastItsTimeout(js.AsyncJob):
    """Times out at 0.5 s, then takes 0.5 s more to clean up (shielded)."""

    async def run(self) -> None:
        try:
            await anyio.sleep(10)
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.sleep(0.5)


async def test_stop_cancel_running_cancels_an_attempt_its_timeout_already_cut() -> None:
    """In memory, ``stop(cancel_running=True)`` ends every running job CANCELLED, one
    whose timeout fired at that moment and is still cleaning up too.

    Found by the memory model's thorough profile: once stop() handed running
    attempts back through the worker drain's path, one its timeout had already
    cut short was skipped, and ended TIMED_OUT with a retry left that no
    scheduler would ever make.
    """
    job = _LingersPastItsTimeout("lingers", timeout=0.5, retry=js.RetryPolicy(max_retries=1))
    async with js.JobScheduler(clock=anyio.current_time) as scheduler:
        scheduler.submit(job)
        await anyio.sleep(0.5)  # the timeout fires now
        await scheduler.stop(cancel_running=True)
    assert (job.status, job.last_error) == (js.JobStatus.CANCELLED, "scheduler shut down")


class _CleansUpFor2s(js.AsyncJob):
    """Waits; when cancelled, cleans up for 2 s (shielded), longer than CANCEL_GRACE."""

    async def run(self) -> None:
        try:
            await anyio.sleep(10)
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.sleep(2.0)


async def test_a_cancel_during_a_shutdowns_clean_up_changes_nothing() -> None:
    """``cancel()`` of a job that ``stop(cancel_running=True)`` already cancelled, while
    its clean-up runs, returns True (the job is still RUNNING) and changes nothing: the
    job ends CANCELLED by the shutdown when its clean-up ends, 2 s after the stop.

    Pins the engine's side of a failure the memory model's thorough profile reported
    ("j5 attempt 1 cancelled at 4.0, ended at 4.0"): the engine was right, the model
    took the later cancel() as the instant the job was cancelled (see the program below).
    """
    job = _CleansUpFor2s("cleans up")
    ended: list[tuple[float, js.JobStatus]] = []

    def on_change(changed: js.Job, old: js.JobStatus, new: js.JobStatus) -> None:
        if old is js.JobStatus.RUNNING:
            ended.append((anyio.current_time(), new))

    scheduler = js.JobScheduler(clock=anyio.current_time)
    scheduler.add_listener(on_change)
    async with scheduler:
        scheduler.submit(job)
        await anyio.sleep(1.0)
        stopped_at = anyio.current_time()
        async with anyio.create_task_group() as tg:
            tg.start_soon(partial(scheduler.stop, cancel_running=True))
            await anyio.sleep(0.5)  # stop() waits for the clean-up
            assert job.status is js.JobStatus.RUNNING
            assert scheduler.cancel(job.job_id)
    assert ended == [(stopped_at + 2.0, js.JobStatus.CANCELLED)]
    assert job.last_error == "scheduler shut down"


def test_model_program_a_cancel_after_the_shutdown_cancel_is_not_the_cancel_instant() -> None:
    """Found by the memory model's thorough profile (hypothesis 6.170.17), shrunk by hand:
    "j0 attempt 1 cancelled at 1.5, ended at 3.0" under ``stop_cancel``.

    ``stop(cancel_running=True)`` at 1.0 cancels both lingering jobs; j1 ends at 1.5
    and its listener cancels j0, still in its 2 s clean-up, which ends at 3.0 as the
    shutdown's cancel says. The model used the later cancel() (1.5) as the cancel
    instant and expected 3.5; it now takes the first cancel.
    """

    def linger(seconds: float) -> m.JobSpec:
        return m.JobSpec(kind="linger", timeout=30.0, linger=seconds)

    program = m.Program(
        m.Config(num_workers=2, ending="stop_cancel"),
        [
            m.Submit(0, linger(2.0), 0.0, ()),
            m.Submit(1, linger(0.5), 0.0, ()),
            m.CancelWhen(0, 1, js.JobStatus.CANCELLED),
            m.Advance(1.0),
        ],
    )
    harness = m.run_program(program)
    j0 = next(rec for rec in harness.records.values() if rec.name == "j0")
    assert (j0.cancelled_at, j0.finished_at(), j0.job.last_error) == (
        1.5,
        3.0,
        "scheduler shut down",
    )


def test_model_program_a_cancel_workflow_job_ended_by_a_listeners_cascade() -> None:
    """Found by the memory model's thorough profile (hypothesis 6.170.17), as it shrank it:
    "j1: cancel() returned True, yet 'upstream job-N cancelled'".

    j1 and j2 of a workflow depend on j0 outside it, still waiting; a listener
    cancels j0 when j2 is cancelled. cancel_workflow cancels j2 first (dependents
    before upstreams, the reverse of the add order), the listener cancels j0, and
    its cascade ends j1 before the call reaches it: counted (it was unfinished
    when the call began), blamed on j0. The model took every job the call counted
    as one a cancel() ended; it now leaves out a cascade from a job the call did
    not end.
    """
    program = m.Program(
        m.Config(num_workers=1, history_limit=0, strategy="aging"),
        [
            m.Submit(0, m.JobSpec(), 0.5, ()),
            m.EnqueueWorkflow(
                0, (m.Submit(1, m.JobSpec(), 0.0, (0,)), m.Submit(2, m.JobSpec(), 0.0, (0,)))
            ),
            m.CancelWhen(0, 2, js.JobStatus.CANCELLED),
            m.CancelWorkflow(0),
        ],
    )
    harness = m.run_program(program)
    j0, j1, j2 = (harness.by_index[i] for i in range(3))
    assert (j1.cancelled_at, j1.job.last_error) == (None, f"upstream {j0.job.job_id} cancelled")
    assert (j2.cancelled_at, j2.job.last_error) == (0.0, "cancelled")
    assert "cancel_workflow: a job ended by a listener's cascade" in harness.coverage()


# ── The durable model (tests/test_model_durable.py) ──────────────────────
#
# Real processes and real time: the programs are as hypothesis shrank them
# (thorough profile, hypothesis 6.170.17). Each depends on a race that the
# program makes likely, not certain; the focused tests next to them hit the
# cause every time. Sync tests: each life is a process of its own and the
# checks run their own event loop.


@pytest.mark.timeout(300)
def test_durable_program_a_cancel_that_races_the_claim_is_not_lost() -> None:
    """Found by the durable model: job 2, cancelled in the last life, COMPLETED.

    The new scheduler had claimed the job in the store but not yet heard
    back when ``cancel()`` ran, so the cancel went to the store, which set
    ``cancel_requested`` on the RUNNING row for its owner's next heartbeat.
    The first attempt failed before that beat; its retry was recorded, the
    next claim cleared the flag and the job completed. The stores now end a
    retry of a job with a cancel request CANCELLED
    (test_a_retry_of_a_job_cancelled_while_it_ran_ends_cancelled in
    the conformance suite's test_outcomes.py, on every store).
    """
    m = DurableMachine()
    m.reopen(clean=False)
    m.wait(seconds=0.05)
    m.reopen(clean=False)
    m.wait(seconds=0.05)
    m.submit(after=[(0, "id")], takes=[], delay=0.0, failures=0, seconds=0.0, thread=False)
    m.wait(seconds=0.05)
    for which in (0, 0, 0, 0, 32):
        m.cancel(which=which)
    m.reopen(clean=True)
    m.wait(seconds=0.05)
    m.wait(seconds=0.2)
    m.wait(seconds=0.2)
    m.submit(
        after=[(47, "id"), (42, "id")], takes=[], delay=0.0, failures=3, seconds=0.0, thread=False
    )
    m.submit(after=[], takes=[], delay=0.0, failures=1, seconds=0.02, thread=False)
    m.reopen(clean=True)
    m.cancel(which=7)
    m.cancel(which=8)
    m.teardown()


@pytest.mark.timeout(300)
def test_durable_program_b_a_failure_during_stop_keeps_its_retry() -> None:
    """Found by the durable model: job 1, one planned failure, FAILED with it.

    Its first attempt failed while the life's clean ``stop()`` waited for the
    running attempts, and a stopping scheduler retried nothing: right for the
    memory store, whose jobs die with it, but on a durable store the retry is
    the next member's to run (see the focused test below).
    """
    m = DurableMachine()
    m.reopen(clean=False)
    m.reopen(clean=False)
    m.submit(after=[], takes=[], delay=0.0, failures=0, seconds=0.0, thread=False)
    m.cancel(which=0)
    m.cancel(which=0)
    m.reopen(clean=False)
    m.wait(seconds=0.05)
    m.submit(after=[], takes=[], delay=0.0, failures=1, seconds=0.0, thread=False)
    m.cancel(which=0)
    m.reopen(clean=True)
    m.teardown()


@pytest.mark.timeout(300)
def test_durable_program_c_a_cancel_of_a_job_unknown_here_stops_a_claim_on_its_way() -> None:
    """Found by the durable model: job 0 (due 0.3 s after its submit, four
    lives earlier) COMPLETED although ``cancel()`` had returned True before
    it started, in the same process.

    The new life did not know job 0, so ``cancel()`` sent the cancel to the
    store; the store had claimed the job for this member just before, and
    that claim arrived after the cancel returned: the job started and ended
    in a millisecond, before the heartbeat brought the cancel request back.
    A claim of a job this process cancelled as unknown now ends it CANCELLED
    (fenced) instead of starting it. Before the fix this program failed on
    5 runs of 5.
    """
    m = DurableMachine()
    m.submit(
        after=[(14, "id"), (0, "id")], takes=[], delay=0.3, failures=0, seconds=0.0, thread=False
    )
    m.submit(
        after=[(44, "id"), (27, "id")], takes=[], delay=0.0, failures=0, seconds=0.0, thread=True
    )
    m.wait(seconds=0.05)
    m.cancel(which=29)
    m.cancel(which=33)
    m.reopen(clean=True)
    m.reopen(clean=True)
    m.reopen(clean=False)
    m.reopen(clean=True)
    m.submit(after=[], takes=[], delay=0.0, failures=0, seconds=0.0, thread=True)
    m.cancel(which=0)
    m.wait(seconds=0.2)
    m.cancel(which=26)
    m.wait(seconds=0.05)
    m.submit(
        after=[(14, "id"), (8, "id")], takes=[], delay=0.0, failures=3, seconds=0.3, thread=False
    )
    m.wait(seconds=0.2)
    m.submit(after=[], takes=[], delay=0.1, failures=3, seconds=0.0, thread=False)
    m.submit(after=[], takes=[], delay=0.0, failures=0, seconds=0.0, thread=True)
    m.wait(seconds=0.2)
    m.cancel(which=34)
    m.teardown()


@pytest.mark.timeout(120)
def test_a_durable_job_that_fails_while_its_scheduler_stops_is_retried_later(
    tmp_path: Path,
) -> None:
    """``stop()`` never costs a durable job a retry: an attempt that fails
    while stop() waits for it leaves the job RETRY_WAIT in the store, and the
    next scheduler on the store runs it again."""
    db = f"sqlite:///{tmp_path / 'jobs.db'}"
    retry = js.RetryPolicy(max_retries=2, base_delay=0.0, jitter=False)

    async def main() -> None:
        durable_jobs.GATE = anyio.Event()
        running = anyio.Event()
        s = js.JobScheduler(store=db)

        def on_change(job: js.Job, old: js.JobStatus, new: js.JobStatus) -> None:
            if new is js.JobStatus.RUNNING:
                running.set()

        s.add_listener(on_change)
        with anyio.fail_after(60):
            await s.start()
            job_id = await s.enqueue(FailsAtGate("gate", retry=retry))
            await running.wait()
            async with anyio.create_task_group() as tg:
                tg.start_soon(s.stop)
                # Every task waits: stop() began, and waits for the attempt.
                await anyio.wait_all_tasks_blocked()
                assert s._stopping
                durable_jobs.GATE.set()
        store = js.open_store(db)  # the row itself: a scheduler would claim it
        await store.open()
        try:
            stored = await store.fetch(id_number(job_id))
        finally:
            await store.close()
        assert stored is not None
        assert (stored.status, stored.attempts) == (js.JobStatus.RETRY_WAIT, 1)
        assert stored.last_error == "ConnectionError: failed at the gate"
        async with js.JobScheduler(store=db) as again:
            with anyio.fail_after(60):
                await again.join()
            done = await again.fetch(job_id)
        assert (done.status, done.attempts, done.result) == (js.JobStatus.COMPLETED, 2, "ok")

    anyio.run(main, backend="asyncio")
