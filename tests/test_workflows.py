"""Workflows on the memory store (issue 37, steps E1 and E2), on asyncio and trio:
results that reach jobs, each edge's failure policy with every way an
upstream can end, ``enqueue_workflow`` all or none, ``workflow()``,
``cancel_workflow()``, and the history's guard of upstreams.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import flow_jobs as fj
import pytest

import jobsched as js
from jobsched._engine._flowgraph import LOOKS

S = js.JobStatus
NO_RETRY = js.RetryPolicy(max_retries=0)

pytestmark = pytest.mark.anyio

Clock = Callable[[], float]


def call(func: Any, *args: Any, **options: Any) -> js.FunctionJob[Any]:
    return js.FunctionJob(func, args=args, **options)


def failing(**options: Any) -> js.FunctionJob[Any]:
    return js.FunctionJob(fj.fail, retry=NO_RETRY, **options)


async def ended(s: js.JobScheduler, job_id: str) -> js.Job:
    with anyio.fail_after(60):
        return await s.wait(job_id)


# Results reaching the job


@pytest.mark.parametrize("executor", ["async", "thread", "process"])
async def test_results_reach_the_job_on_every_executor(clock: Clock, executor: str) -> None:
    """result_of in args and kwargs, results_of in a list: the values arrive in
    the job as it runs, in a worker process too."""
    func = fj.collect if executor == "async" else fj.collect_sync
    async with js.JobScheduler(clock=clock) as s:
        a = s.submit(call(fj.add, 1, 2))
        b = s.submit(call(fj.add, "x", "y"))
        job = js.FunctionJob(
            func,
            args=(js.result_of(a), [js.result_of(b), 7]),
            kwargs={"all": js.results_of([b, a])},
            executor=executor,
            timeout=None,
        )
        d = s.submit(job)
        # No timeout: trio's virtual clock would jump over the worker process.
        done = await s.wait(d)
    assert done.status is S.COMPLETED, done.last_error
    assert done.result == [3, ["xy", 7], ("all", ["xy", 3])]


async def test_results_reach_a_subclass_job_through_its_attributes(clock: Clock) -> None:
    """A subclass job's attributes holding markers hold the values when it runs;
    its upstreams may be given as Jobs."""
    async with js.JobScheduler(clock=clock) as s:
        one = call(fj.add, 1)
        s.submit(one)
        rest = [s.submit(call(fj.add, n)) for n in (10, 20)]
        done = await ended(s, s.submit(fj.Sum(js.result_of(one), js.results_of(rest))))
    assert (done.status, done.result) == (S.COMPLETED, 31)


async def test_results_reach_a_registered_job_and_options_take_after(clock: Clock) -> None:
    """A registered job (JSON arguments) receives its upstreams' results, a
    failed one's slot holding the error; f.options(depends_on=) takes an After."""
    async with fj.app.scheduler(clock=clock) as s:
        bad = s.submit(failing())
        ok = s.submit(call(fj.add, 5))
        sender = fj.total.options(depends_on=js.After(bad, on_failure="run"))
        job_id = await sender.enqueue(js.results_of([ok, bad, ok]), start=js.result_of(ok))
        done = await ended(s, job_id)
        assert (done.status, done.result) == (S.COMPLETED, 15)
        strict = await fj.total.options(depends_on=[bad]).enqueue([1])
        assert (await ended(s, strict)).status is S.CANCELLED


async def test_results_of_keeps_the_order_given(clock: Clock) -> None:
    """results_of lists the results in its own order, an upstream named twice twice,
    whatever order the upstreams ended in."""
    s = js.JobScheduler(clock=clock)
    gate = anyio.Event()
    late = s.submit(call(fj.wait_for, gate, "late"))
    early = s.submit(call(fj.same, "early"))
    fan_in = s.submit(call(fj.collect, js.results_of([late, early, late])))
    async with s:
        await ended(s, early)
        assert s.get(fan_in).status is S.PENDING  # still waiting for late
        gate.set()
        done = await ended(s, fan_in)
    assert done.result == [["late", "early", "late"]]


async def test_a_marker_makes_an_edge_that_cancels(clock: Clock) -> None:
    """A marker's upstream is a cancel edge: its failure cancels the job, which never runs."""
    async with js.JobScheduler(clock=clock) as s:
        bad = s.submit(failing())
        taker = s.submit(call(fj.collect, js.result_of(bad)))
        done = await ended(s, taker)
    assert done.status is S.CANCELLED
    assert done.last_error == f"upstream {bad} failed"


# Each policy, each end


async def _ends(s: js.JobScheduler, how: str) -> str:
    """An upstream that ends ``how``: FAILED, TIMED_OUT or CANCELLED."""
    if how == "fails":
        return s.submit(failing())
    if how == "times out":
        return s.submit(js.FunctionJob(fj.sleep_long, timeout=1.0, retry=NO_RETRY))
    return s.submit(call(fj.add, 1), delay=3600)  # cancelled below, before it runs


@pytest.mark.parametrize(
    ("how", "status"),
    [("fails", S.FAILED), ("times out", S.TIMED_OUT), ("is cancelled", S.CANCELLED)],
)
async def test_each_policy_when_an_upstream_does_not_complete(
    clock: Clock, how: str, status: js.JobStatus
) -> None:
    """A cancel edge cancels the dependent naming the upstream's end; a run edge
    runs it; result_of of that upstream raises UpstreamFailedError inside the
    job (FAILED, not retried), results_of holds the error in its slot."""
    s = js.JobScheduler(clock=clock)
    up = await _ends(s, how)
    ok = s.submit(call(fj.add, 5))
    run = js.After(up, on_failure="run")
    cancelled = s.submit(call(fj.add, 1), depends_on=[up])
    ran = s.submit(call(fj.add, 2), depends_on=[run])
    raised = s.submit(
        call(fj.collect, js.result_of(up), retry=js.RetryPolicy(max_retries=3)), depends_on=run
    )
    slots = s.submit(call(fj.describe, js.results_of([up, ok])), depends_on=[run])
    async with s:
        if how == "is cancelled":
            assert s.cancel(up) is True
        for job_id in (cancelled, ran, raised, slots):
            await ended(s, job_id)
    assert s.get(up).status is status
    word = status.value
    assert (s.get(cancelled).status, s.get(cancelled).last_error) == (
        S.CANCELLED,
        f"upstream {up} {word}",
    )
    assert (s.get(ran).status, s.get(ran).result) == (S.COMPLETED, 2)
    failed = s.get(raised)
    assert failed.status is S.FAILED and failed.attempts == 1
    assert failed.last_error.startswith(f"UpstreamFailedError: upstream {up} ended {word}")
    assert s.get(slots).result == [f"failed {up} {word}", "5"]


async def test_mixed_ends_follow_each_edge(clock: Clock) -> None:
    """D waits for A (cancel) and B (run): B failing leaves D waiting for A;
    A completing runs D with B's slot failed. E waits for F (cancel) and G
    (run): F failing cancels E whatever G does. A chain of cancel edges
    ending in a run edge: the run edge's job runs."""
    s = js.JobScheduler(clock=clock)
    gate = anyio.Event()
    a = s.submit(call(fj.wait_for, gate, "a"))
    b = s.submit(failing())
    d = s.submit(
        call(fj.describe, js.results_of([a, b])), depends_on=[js.After(b, on_failure="run")]
    )
    f = s.submit(failing())
    g = s.submit(call(fj.same, "g"))
    e = s.submit(call(fj.add, 1), depends_on=[f, js.After(g, on_failure="run")])
    chained = s.submit(call(fj.add, 1), depends_on=[b])
    after_chain = s.submit(call(fj.add, 3), depends_on=[js.After(chained, on_failure="run")])
    async with s:
        await ended(s, b)
        await ended(s, e)
        assert s.get(d).status is S.PENDING  # B's edge counted off; A's not yet
        gate.set()
        await ended(s, d)
        await ended(s, after_chain)
    assert (s.get(d).status, s.get(d).result) == (S.COMPLETED, ["'a'", f"failed {b} failed"])
    assert (s.get(e).status, s.get(e).last_error) == (S.CANCELLED, f"upstream {f} failed")
    assert s.get(chained).status is S.CANCELLED
    assert (s.get(after_chain).status, s.get(after_chain).result) == (S.COMPLETED, 3)


async def test_edges_to_upstreams_ended_before_submit(clock: Clock) -> None:
    """An upstream that ended before the job was submitted: a run edge is met at
    once (the job runs, with the failure in its slot), a cancel edge cancels
    it at submit, and a completed one's result is bound at submit."""
    async with js.JobScheduler(clock=clock) as s:
        bad = s.submit(failing())
        good = s.submit(call(fj.add, 4))
        await ended(s, bad)
        await ended(s, good)
        ran = s.submit(
            call(fj.describe, js.results_of([good, bad])),
            depends_on=js.After(s.get(bad), on_failure="run"),
        )
        cancelled = s.submit(call(fj.add, 1), depends_on=s.get(bad))
        assert s.get(cancelled).status is S.CANCELLED
        done = await ended(s, ran)
    assert (done.status, done.result) == (S.COMPLETED, ["4", f"failed {bad} failed"])


async def test_depends_on_refuses_a_job_never_submitted(clock: Clock) -> None:
    """A Job in depends_on (or a marker) must have been submitted: else the
    error says how; nothing is added."""
    s = js.JobScheduler(clock=clock)
    never = call(fj.add, 1)
    with pytest.raises(js.UnknownJobError, match="never submitted: submit it first"):
        s.submit(call(fj.add, 2), depends_on=never)
    with pytest.raises(js.UnknownJobError, match="never submitted"):
        s.submit(call(fj.collect, js.result_of(never)))
    with pytest.raises(js.UnknownJobError, match=r"unknown job\(s\) \['job-999999999'\]"):
        s.submit(call(fj.add, 2), depends_on=[js.After("job-999999999", on_failure="run")])
    assert s.jobs() == []


# Workflows


def _diamond(name: str = "diamond") -> tuple[js.Workflow, list[js.Job]]:
    wf = js.Workflow(name)
    top = wf.add(call(fj.add, 1))
    left = wf.add(call(fj.add, js.result_of(top), 10))
    right = wf.add(call(fj.add, js.result_of(top), 100), job_id="diamond-right")
    bottom = wf.add(call(fj.collect, js.results_of([left, right])))
    return wf, [top, left, right, bottom]


async def test_a_workflow_runs_and_reports(clock: Clock) -> None:
    """enqueue_workflow adds every job with its edges; workflow() counts them by
    status, finished once all ended; each job knows its workflow's id."""
    wf, jobs = _diamond()
    s = js.JobScheduler(clock=clock)
    workflow_id = await s.enqueue_workflow(wf)
    assert workflow_id.startswith("wf-")
    info = await s.workflow(workflow_id)
    assert (info.id, info.name, info.counts, info.finished, info.size) == (
        workflow_id,
        "diamond",
        {S.PENDING: 4},
        False,
        4,
    )
    assert info.created_at is not None
    assert [job.workflow_id for job in jobs] == [workflow_id] * 4
    assert jobs[2].job_id == "diamond-right"
    plain = s.submit(call(fj.add, 1))
    assert s.get(plain).workflow_id is None
    async with s:
        await s.join()
    assert jobs[3].result == [[11, 101]]
    info = await s.workflow(workflow_id)
    assert (info.counts, info.finished) == ({S.COMPLETED: 4}, True)
    with pytest.raises(js.UnknownJobError, match="no workflow 'wf-0'"):
        await s.workflow("wf-0")
    with pytest.raises(js.UnknownJobError, match="workflow"):
        await s.cancel_workflow("job-1")


async def test_a_workflow_is_added_all_or_none(clock: Clock) -> None:
    """A bad job anywhere in a workflow leaves the scheduler without any of
    its jobs, and the good ones unsubmitted: an upstream unknown here, an id
    of one's own held already, a queue not served; an empty workflow and a
    second enqueue are refused too."""
    s = js.JobScheduler(clock=clock, queues=["default"])
    held = s.submit(call(fj.add, 0), job_id="taken")
    cases: list[tuple[Callable[[js.Workflow], object], type[Exception], str]] = [
        (lambda wf: wf.add(call(fj.add, 1), depends_on="job-999999999"), js.UnknownJobError,
         "job-999999999, which is neither in"),
        (lambda wf: wf.add(call(fj.add, 1), job_id="taken"), ValueError, "'taken' .* held already"),
        (lambda wf: wf.add(call(fj.add, 1, queue="other")), ValueError, "does not serve"),
    ]  # fmt: skip
    for bad, error, message in cases:
        wf = js.Workflow("half")
        first = wf.add(call(fj.add, 1))
        second = wf.add(call(fj.add, js.result_of(first)))
        bad(wf)
        with pytest.raises(error, match=message):
            await s.enqueue_workflow(wf)
        assert [job.job_id for job in s.jobs()] == [held]
        assert first.seq == second.seq == 0 and first.status is S.PENDING
    with pytest.raises(ValueError, match="has no jobs"):
        await s.enqueue_workflow(js.Workflow("empty"))
    with pytest.raises(TypeError, match="takes a js.Workflow"):
        await s.enqueue_workflow([call(fj.add, 1)])  # type: ignore[arg-type]
    wf, _ = _diamond()
    await s.enqueue_workflow(wf)
    with pytest.raises(js.SchedulerError, match="already submitted"):
        await s.enqueue_workflow(wf)
    assert len(s.jobs()) == 5


async def test_a_workflow_may_depend_on_jobs_outside_it(clock: Clock) -> None:
    """A workflow's job may wait for a job submitted before, by Job or id."""
    async with js.JobScheduler(clock=clock) as s:
        outside = call(fj.add, 40)
        s.submit(outside)
        wf = js.Workflow("outside")
        inner = wf.add(call(fj.add, js.result_of(outside), 2))
        wf.add(call(fj.add, 0), depends_on=[outside.job_id, inner])
        await s.enqueue_workflow(wf)
        await s.join()
    assert inner.result == 42


async def test_cancel_workflow_counts_a_job_a_listener_cancelled_during_it(
    clock: Clock,
) -> None:
    """A listener that cancels another job of the workflow as one is
    cancelled ends it during the call: it was unfinished when the call
    began, so it is counted (the memory model's thorough profile found the
    count one short)."""
    gate = anyio.Event()
    wf = js.Workflow("listened")
    first = wf.add(call(fj.add, 1))
    second = wf.add(call(fj.add, 2))
    async with js.JobScheduler(clock=clock, num_workers=1) as s:
        blocker = s.submit(js.FunctionJob(fj.wait_for, args=(gate,), timeout=None))

        def cancel_first(job: js.Job, old: js.JobStatus, new: js.JobStatus) -> None:
            if job is second and new is S.CANCELLED:
                s.cancel(first.job_id)

        s.add_listener(cancel_first)
        workflow_id = await s.enqueue_workflow(wf)
        assert await s.cancel_workflow(workflow_id) == 2
        gate.set()
        await ended(s, blocker)
    assert (first.status, second.status) == (S.CANCELLED, S.CANCELLED)


async def test_cancel_workflow_counts_a_job_a_listeners_cascade_ended_during_it(
    clock: Clock,
) -> None:
    """A listener that cancels an upstream outside the workflow as a job of
    it is cancelled ends the upstream's other dependent in the workflow by
    the cascade, before the call reaches it: it is counted (unfinished when
    the call began) and blames the upstream, as its cascade says."""
    gate = anyio.Event()
    async with js.JobScheduler(clock=clock, num_workers=1) as s:
        blocker = s.submit(js.FunctionJob(fj.wait_for, args=(gate,), timeout=None))
        upstream = js.FunctionJob(fj.add, args=(0, 1))
        s.submit(upstream)
        wf = js.Workflow("cascaded")
        first = wf.add(call(fj.add, 1), depends_on=[upstream])
        second = wf.add(call(fj.add, 2), depends_on=[upstream])

        def cancel_upstream(job: js.Job, old: js.JobStatus, new: js.JobStatus) -> None:
            if job is second and new is S.CANCELLED:
                s.cancel(upstream.job_id)

        s.add_listener(cancel_upstream)
        workflow_id = await s.enqueue_workflow(wf)
        assert await s.cancel_workflow(workflow_id) == 2
        gate.set()
        await ended(s, blocker)
    assert (second.status, second.last_error) == (S.CANCELLED, "cancelled")
    assert (first.status, first.last_error) == (
        S.CANCELLED,
        f"upstream {upstream.job_id} cancelled",
    )


async def test_cancel_workflow(clock: Clock) -> None:
    """cancel_workflow cancels every unfinished job of it: the running one is
    cancelled as cancel() does, a waiting one and a run-edge one end
    "cancelled"; a job outside it follows its own edge (cancel: cascaded; run:
    runs); finished jobs are not counted."""
    started = anyio.Event()
    wf = js.Workflow("to cancel")
    done = wf.add(call(fj.add, 1))
    running = wf.add(js.FunctionJob(fj.run_until_cancelled, args=(started,), timeout=None))
    waiting = wf.add(call(fj.add, 2), depends_on=[running, done])
    finally_ = wf.add(call(fj.add, 3), depends_on=[js.After(running, on_failure="run")])
    async with js.JobScheduler(clock=clock) as s:
        workflow_id = await s.enqueue_workflow(wf)
        outside_cancel = s.submit(call(fj.add, 4), depends_on=[waiting])
        outside_run = s.submit(call(fj.add, 5), depends_on=[js.After(waiting, on_failure="run")])
        with anyio.fail_after(60):
            await started.wait()
        await ended(s, done.job_id)
        assert await s.cancel_workflow(workflow_id) == 3
        await ended(s, running.job_id)
        await ended(s, outside_run)
        info = await s.workflow(workflow_id)
        assert await s.cancel_workflow(workflow_id) == 0
    assert running.status is S.CANCELLED
    assert (waiting.status, waiting.last_error) == (S.CANCELLED, "cancelled")
    assert (finally_.status, finally_.last_error) == (S.CANCELLED, "cancelled")
    assert s.get(outside_cancel).status is S.CANCELLED
    assert s.get(outside_cancel).last_error == f"upstream {waiting.job_id} cancelled"
    assert s.get(outside_run).status is S.COMPLETED
    assert (info.counts, info.finished) == ({S.COMPLETED: 1, S.CANCELLED: 3}, True)


# The history's guard


async def test_the_history_keeps_an_upstream_of_an_unfinished_job(clock: Clock) -> None:
    """history_limit=5 and 50 fast jobs: an upstream whose dependent still waits
    (for a slow upstream) stays known and its result reaches the dependent;
    once the dependent ended, it goes like any other."""
    gate = anyio.Event()
    async with js.JobScheduler(clock=clock, history_limit=5) as s:
        fast = s.submit(call(fj.add, 7))
        slow = s.submit(call(fj.wait_for, gate, 3))
        dependent = s.submit(call(fj.add, js.result_of(fast), js.result_of(slow)))
        await ended(s, fast)
        for _ in range(50):
            await ended(s, s.submit(call(fj.add, 1)))
        assert s.get(fast).result == 7
        assert len(s._table.finished) <= 6  # the bound, and the one pinned job
        gate.set()
        assert (await ended(s, dependent)).result == 10
        for _ in range(10):
            await ended(s, s.submit(call(fj.add, 1)))
        with pytest.raises(js.UnknownJobError):
            s.get(fast)
        assert len(s._table.finished) == 5


def finished_held(s: js.JobScheduler) -> set[str]:
    return {job.job_id for job in s.jobs() if job.status.is_terminal}


async def test_a_job_ending_behind_pinned_upstreams_is_not_kept(clock: Clock) -> None:
    """history_limit=0: LOOKS upstreams of a waiting job are kept, and a job ends
    behind them; once the waiting job is cancelled, none is kept.

    Found by the memory model's thorough profile ("7 finished jobs kept (6
    pinned), history_limit=0"): the eviction spent its looks on the pinned
    ones and left the job behind them oldest; the end that unpinned them
    dropped that oldest job only (it has no dependents: the finish's own
    path), and they stayed for good as no other end followed.
    """
    gate = anyio.Event()
    async with js.JobScheduler(clock=clock, history_limit=0) as s:
        slow = s.submit(call(fj.wait_for, gate))
        upstreams = [s.submit(call(fj.add, n)) for n in range(LOOKS)]
        waiting = s.submit(call(fj.add, 0), depends_on=[*upstreams, slow])
        for upstream in upstreams:
            await ended(s, upstream)
        await ended(s, s.submit(call(fj.add, 1)))
        assert set(upstreams) <= finished_held(s)
        assert s.cancel(waiting)
        assert finished_held(s) == set()
        gate.set()


async def test_an_end_that_unpins_many_upstreams_lets_every_one_go(clock: Clock) -> None:
    """history_limit=0: LOOKS + 1 upstreams of a waiting job, and between them one
    of another waiting job, end one by one; once the first waiting job is
    cancelled, only the other's upstream is kept.

    An eviction stops after LOOKS pinned jobs sent back, not after LOOKS jobs
    looked at: it spent its looks on the unpinned ones it dropped, stopped at
    the pinned one, and the jobs behind it stayed, with one job pinned.
    """
    held = anyio.Event()
    gates = [anyio.Event() for _ in range(LOOKS + 2)]
    async with js.JobScheduler(clock=clock, history_limit=0, num_workers=LOOKS + 4) as s:
        blocker = s.submit(call(fj.wait_for, held))
        gated = [s.submit(call(fj.wait_for, gate)) for gate in gates]
        other, mine = gated[2], gated[:2] + gated[3:]
        waiting = s.submit(call(fj.add, 0), depends_on=[*mine, blocker])
        s.submit(call(fj.add, 0), depends_on=[other, blocker])
        # This order (the others' upstream third) leaves it ahead of the
        # last ones: an order found by simulating the history's deque.
        for gate, job_id in zip(gates, gated, strict=True):
            gate.set()
            await ended(s, job_id)
        assert finished_held(s) == set(gated)
        assert s.cancel(waiting)
        assert finished_held(s) == {other}
        held.set()


async def test_a_retention_by_age_keeps_an_upstream_of_an_unfinished_job(clock: Clock) -> None:
    """Retention(completed=1, max_finished=3): an upstream older than its age,
    and behind newer finished jobs, stays while its dependent waits; once the
    dependent ended, it ages out like the others."""
    gate = anyio.Event()
    retention = js.Retention(completed=1, max_finished=3)
    async with js.JobScheduler(clock=clock, retention=retention) as s:
        fast = s.submit(call(fj.add, 7))
        slow = s.submit(call(fj.wait_for, gate, 3))
        dependent = s.submit(call(fj.add, js.result_of(fast), js.result_of(slow)))
        await ended(s, fast)
        for _ in range(5):
            await anyio.sleep(1.5)  # past the age: each finish below drops the aged
            await ended(s, s.submit(call(fj.add, 1)))
        assert s.get(fast).result == 7
        gate.set()
        assert (await ended(s, dependent)).result == 10
        await anyio.sleep(1.5)
        await ended(s, s.submit(call(fj.add, 1)))
        with pytest.raises(js.UnknownJobError):
            s.get(fast)


def test_binding_an_upstream_no_longer_held_fails_the_job_not_the_scheduler() -> None:
    """If an upstream were gone when a job is bound (the guard prevents it),
    the job would receive an UpstreamFailedError, never hang."""
    from jobsched._engine._edging import set_flow
    from jobsched._engine._flowgraph import bind_inputs
    from jobsched._workflows._inputs import find_inputs

    job = js.FunctionJob(fj.collect_sync, args=(js.result_of("job-123456789"),))
    set_flow(job, find_inputs(job), ())
    bind_inputs(job, {})
    with pytest.raises(js.UpstreamFailedError, match="no longer held by this scheduler"):
        job.run_sync()


# The synchronous facade


def test_background_scheduler_has_the_workflow_methods() -> None:
    """BackgroundScheduler's blocking enqueue_workflow, workflow and cancel_workflow."""
    wf, jobs = _diamond()
    with js.BackgroundScheduler() as s:
        workflow_id = s.enqueue_workflow(wf)
        assert s.result(jobs[3].job_id, timeout=60) == [[11, 101]]
        info = s.workflow(workflow_id)
        assert (info.counts, info.finished) == ({S.COMPLETED: 4}, True)
        assert s.cancel_workflow(workflow_id) == 0


# A durable store in the caller's transaction (markers and "run" edges there:
# tests/test_txenqueue.py; the rest: test_workflows_durable.py)


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_durable_store_takes_jobs_and_afters_in_the_callers_transaction(
    tmp_path: Path,
) -> None:
    """submit(connection=...) takes Jobs and Afters in depends_on as it takes ids."""
    import sqlite3

    path = tmp_path / "jobs.db"
    async with js.JobScheduler(store=f"sqlite:///{path}") as s:
        up = call(fj.add, 1)
        await s.enqueue(up)
        conn = sqlite3.connect(path, isolation_level=None)
        conn.execute("BEGIN IMMEDIATE")
        by_job = s.submit(call(fj.add, 2), depends_on=up, connection=conn)
        conn.execute("COMMIT")
        conn.close()
        assert await s.result(by_job, timeout=60) == 2
        by_after = await s.enqueue(call(fj.add, 3), depends_on=[js.After(up.job_id)])
        assert await s.result(by_after, timeout=60) == 3
        assert len(s.jobs()) == 3


async def test_depends_on_takes_any_iterable_and_single_items(clock: Clock) -> None:
    """A generator mixing ids and Afters (read once), a single Job, a single
    After: each is the edges it names."""
    async with js.JobScheduler(clock=clock) as s:
        bad = s.submit(failing())
        good = call(fj.add, 1)
        s.submit(good)
        mixed = s.submit(
            call(fj.add, 2), depends_on=(d for d in [good.job_id, js.After(bad, on_failure="run")])
        )
        one_job = s.submit(call(fj.add, 3), depends_on=good)
        one_after = s.submit(call(fj.add, 4), depends_on=js.After(bad, on_failure="run"))
        # The id is read before the After sends the rest the cold way: kept.
        spent = s.submit(call(fj.add, 5), depends_on=(d for d in [bad, js.After(good)]))
        for job_id in (mixed, one_job, one_after, spent):
            await ended(s, job_id)
    assert [s.get(i).status for i in (mixed, one_job, one_after)] == [S.COMPLETED] * 3
    assert (s.get(spent).status, s.get(spent).last_error) == (S.CANCELLED, f"upstream {bad} failed")


async def test_a_stopped_scheduler_refuses_a_workflow(clock: Clock) -> None:
    """enqueue_workflow after stop() raises SchedulerStoppedError, as submit does."""
    s = js.JobScheduler(clock=clock)
    async with s:
        pass
    wf, jobs = _diamond()
    with pytest.raises(js.SchedulerStoppedError, match="stopping or stopped"):
        await s.enqueue_workflow(wf)
    assert s.jobs() == [] and jobs[0].seq == 0
