"""Workflows on durable stores (issue 37, step E3, the submit side): a
workflow enqueued all or none in one store add, ``workflow()`` and
``cancel_workflow()`` through the store, and ``on_failure="run"`` edges.

Result markers are stored and their upstreams become edges; the results
reach the job at its claim (tests/test_workflow_inputs.py tests that side
on rows made through the store; the end-to-end tests below submit through
the scheduler).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import durable_store
import flow_jobs as fj
import pytest

import jobsched as js
from jobsched import JobStatus as S

pytestmark = pytest.mark.anyio

NO_RETRY = js.RetryPolicy(max_retries=0)
FAR = 3600.0


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    # The real clock on both: the stores work in threads and sockets.
    return str(request.param)


#: A new store, one URL so that two schedulers share it (tests/durable_store.py).
store_url = durable_store.store_url


def call(func: Any, *args: Any, **options: Any) -> js.FunctionJob[Any]:
    return js.FunctionJob(func, args=args, retry=NO_RETRY, **options)


#: Set by the running job below (made in each test's event loop).
STARTED: anyio.Event | None = None


async def run_until_cancelled() -> None:
    assert STARTED is not None
    STARTED.set()
    await anyio.sleep_forever()


def failing() -> js.FunctionJob[Any]:
    return js.FunctionJob(fj.fail, retry=NO_RETRY)


def store_of(url: str) -> Any:
    if url.startswith("postgresql"):
        from pg import SECRET

        from jobsched_postgres import PostgresStore

        return PostgresStore(url, secret=SECRET)
    return url


@asynccontextmanager
async def scheduler(url: str) -> AsyncIterator[js.JobScheduler]:
    async with js.JobScheduler(store=store_of(url)) as s:
        yield s


stored = durable_store.stored


async def test_a_workflow_runs_and_reads_from_the_store(store_url: str) -> None:
    async with scheduler(store_url) as s:
        wf = js.Workflow("pair")
        a = wf.add(call(fj.add, 1, 2))
        b = wf.add(call(fj.add, 10), depends_on=[a])
        workflow_id = await s.enqueue_workflow(wf)
        assert await s.result(b.job_id, timeout=60) == 10
        assert await s.result(a.job_id, timeout=60) == 3
        info = await s.workflow(workflow_id)
        assert (info.id, info.name, info.counts, info.finished, info.size) == (
            workflow_id,
            "pair",
            {S.COMPLETED: 2},
            True,
            2,
        )
        assert info.created_at is not None
        assert a.workflow_id == workflow_id
        job = await s.wait(b.job_id, timeout=60)
        assert job.workflow_id == workflow_id
        assert await stored(s) == (2, 1)
        with pytest.raises(js.UnknownJobError, match="workflow"):
            await s.workflow("wf-999999")
        with pytest.raises(js.UnknownJobError, match="workflow"):
            await s.cancel_workflow("nonsense")


async def test_a_workflow_enqueued_before_start_runs_after(store_url: str) -> None:
    s = js.JobScheduler(store=store_of(store_url))
    wf = js.Workflow("early")
    a = wf.add(call(fj.add, 1))
    b = wf.add(call(fj.add, 2), depends_on=[a])
    workflow_id = await s.enqueue_workflow(wf)
    async with s:
        assert await s.result(b.job_id, timeout=60) == 2
        assert (await s.workflow(workflow_id)).finished


async def test_an_upstream_outside_may_be_a_job_of_another_member(store_url: str) -> None:
    """An id unknown here is the store's to check: a job another scheduler
    submitted is waited for; one the store never held cancels at once."""
    # An own id: a numbered one could equal the provisional number that
    # Workflow.add gives a new job from this process's counter (job.job_id),
    # which then reads as that job's own id (a known debt of step E3).
    async with scheduler(store_url) as first:
        up = await first.enqueue(call(fj.add, 1), job_id="elsewhere")
        assert await first.result(up, timeout=60) == 1
    async with scheduler(store_url) as s:
        wf = js.Workflow("outside")
        after = wf.add(call(fj.add, 2), depends_on=[up])
        never = wf.add(call(fj.add, 3), depends_on=["job-999999999999"])
        await s.enqueue_workflow(wf)
        assert await s.result(after.job_id, timeout=60) == 2
        assert (await s.wait(never.job_id, timeout=60)).status is S.CANCELLED


async def test_a_submitted_job_is_an_upstream_whatever_its_number(store_url: str) -> None:
    """A job submitted to the store has the store's number, which may equal
    the number a new job of a workflow was given here: it is still another job."""
    async with scheduler(store_url) as s:
        ups = [call(fj.add, n) for n in range(3)]
        for up in ups:
            await s.enqueue(up)
        wf = js.Workflow("after submitted")
        downs = [wf.add(call(fj.add, 10), depends_on=ups) for _ in range(3)]
        await s.enqueue_workflow(wf)
        for down in downs:
            assert await s.result(down.job_id, timeout=60) == 10


async def test_an_upstream_by_the_id_it_had_when_added_is_that_job(store_url: str) -> None:
    """A string edge naming a job of the workflow by its id at add time:
    the store numbers the job anew, and the edge follows it."""
    async with scheduler(store_url) as s:
        wf = js.Workflow("by id")
        bad = wf.add(failing())
        after = wf.add(call(fj.add, 5), depends_on=[bad.job_id])
        await s.enqueue_workflow(wf)
        job = await s.wait(after.job_id, timeout=60)
        assert job.status is S.CANCELLED
        assert (await s.wait(bad.job_id, timeout=60)).status is S.FAILED


async def test_an_unpicklable_job_leaves_nothing(store_url: str) -> None:
    async with scheduler(store_url) as s:
        wf = js.Workflow("half")
        good = wf.add(call(fj.add, 1))
        wf.add(call(fj.same, lambda: None), depends_on=[good])
        with pytest.raises(TypeError):
            await s.enqueue_workflow(wf)
        assert s.jobs() == []
        assert await stored(s) == (0, 0)
        # Its jobs are as they were: the good one can still be submitted alone.
        assert good.workflow_id is None
        assert await s.result(await s.enqueue(call(fj.add, 2)), timeout=60) == 2


async def test_an_own_id_the_store_holds_refuses_the_whole_workflow(store_url: str) -> None:
    async with scheduler(store_url) as first:
        await first.enqueue(call(fj.add, 1), job_id="mine", delay=FAR)
    async with scheduler(store_url) as s:
        wf = js.Workflow("clash")
        wf.add(call(fj.add, 2), delay=FAR)
        wf.add(call(fj.add, 3), job_id="mine")
        with pytest.raises(ValueError, match="already"):
            await s.enqueue_workflow(wf)
        assert s.jobs() == []
        assert await stored(s) == (1, 0)


async def test_a_cancelled_enqueue_still_writes_the_workflow(store_url: str) -> None:
    """A caller cancelled while enqueuing: the workflow is written and its
    jobs are this process's either way (the flush is not cut short today;
    if it were, the queued write would still be made)."""
    async with scheduler(store_url) as s:
        wf = js.Workflow("cancelled caller")
        a = wf.add(call(fj.add, 1))
        b = wf.add(call(fj.add, 2), depends_on=[a])
        with anyio.CancelScope() as scope:
            scope.cancel()
            await s.enqueue_workflow(wf)
        assert await s.result(b.job_id, timeout=60) == 2
        assert a.workflow_id is not None
        assert (await s.workflow(a.workflow_id)).counts == {S.COMPLETED: 2}


async def test_an_own_id_held_here_is_refused_before_the_store(store_url: str) -> None:
    async with scheduler(store_url) as s:
        await s.enqueue(call(fj.add, 1), job_id="mine", delay=FAR)
        wf = js.Workflow("clash")
        wf.add(call(fj.add, 2), delay=FAR)
        wf.add(call(fj.add, 3), job_id="mine")
        with pytest.raises(ValueError, match="held already"):
            await s.enqueue_workflow(wf)
        assert await stored(s) == (1, 0)


async def test_cancel_workflow_cancels_its_jobs_and_cascades(store_url: str) -> None:
    async with scheduler(store_url) as s:
        wf = js.Workflow("later")
        a = wf.add(call(fj.add, 1), delay=FAR)
        b = wf.add(call(fj.add, 2), depends_on=[a])
        workflow_id = await s.enqueue_workflow(wf)
        outside = await s.enqueue(call(fj.add, 3), depends_on=[b])
        lenient = await s.enqueue(call(fj.add, 4), depends_on=[js.After(b, on_failure="run")])
        assert await s.cancel_workflow(workflow_id) == 2
        info = await s.workflow(workflow_id)
        assert (info.counts, info.finished) == ({S.CANCELLED: 2}, True)
        assert a.status is S.CANCELLED and b.status is S.CANCELLED
        assert (await s.wait(outside, timeout=60)).status is S.CANCELLED
        assert await s.result(lenient, timeout=60) == 4
        assert await s.cancel_workflow(workflow_id) == 0


async def test_cancel_workflow_stops_a_running_job_of_it(store_url: str) -> None:
    global STARTED
    STARTED = anyio.Event()
    async with scheduler(store_url) as s:
        wf = js.Workflow("running")
        a = wf.add(call(run_until_cancelled, timeout=None))
        b = wf.add(call(fj.add, 2), depends_on=[a])
        workflow_id = await s.enqueue_workflow(wf)
        await STARTED.wait()
        assert await s.cancel_workflow(workflow_id) == 2
        assert (await s.wait(a.job_id, timeout=60)).status is S.CANCELLED
        assert (await s.wait(b.job_id, timeout=60)).status is S.CANCELLED
        info = await s.workflow(workflow_id)
        assert (info.counts, info.finished) == ({S.CANCELLED: 2}, True)


async def test_a_run_edge_runs_the_dependent_after_a_failure(store_url: str) -> None:
    async with scheduler(store_url) as s:
        bad = failing()
        await s.enqueue(bad)
        anyway = await s.enqueue(call(fj.add, 7), depends_on=[js.After(bad, on_failure="run")])
        cancelled = await s.enqueue(call(fj.add, 8), depends_on=[bad])
        assert await s.result(anyway, timeout=60) == 7
        assert (await s.wait(cancelled, timeout=60)).status is S.CANCELLED
        # In a workflow too.
        wf = js.Workflow("anyway")
        up = wf.add(failing())
        down = wf.add(call(fj.add, 9), depends_on=[js.After(up, on_failure="run")])
        await s.enqueue_workflow(wf)
        assert await s.result(down.job_id, timeout=60) == 9


async def test_a_marker_is_stored_with_its_upstream_as_an_edge(store_url: str) -> None:
    """The marker's upstream is an edge (a cancel edge): its failure cancels
    the job. Its value needs the claim side (wf-inputs)."""
    async with scheduler(store_url) as s:
        bad = failing()
        await s.enqueue(bad)
        marked = await s.enqueue(call(fj.collect, js.result_of(bad)))
        assert (await s.wait(marked, timeout=60)).status is S.CANCELLED
        link = s._backing.link
        assert link is not None
        row = await link.store.fetch(int(marked[4:]))
        assert row is not None and [d[0] for d in row.deps] == [int(bad.job_id[4:])]


async def test_a_registered_jobs_markers_are_tags_and_edges(store_url: str) -> None:
    """A registered job's JSON keeps its markers as tags; their upstreams and
    its run edge are the store's edges, with their policies."""
    from jobsched.store import EDGE_WAITING, ON_FAILURE_CANCEL, ON_FAILURE_RUN

    async with fj.app.scheduler(store=store_of(store_url)) as s:
        ok = await s.enqueue(call(fj.add, 5), delay=FAR)
        other = await s.enqueue(call(fj.add, 6), delay=FAR)
        sender = fj.total.options(depends_on=js.After(other, on_failure="run"))
        job_id = await sender.enqueue(js.results_of([ok]), start=js.result_of(ok))
        link = s._backing.link
        assert link is not None
        row = await link.store.fetch(int(job_id[4:]))
        assert row is not None and row.args is not None
        assert '"$results_of"' in row.args and '"$result_of"' in row.args
        assert sorted(row.deps) == [
            (int(ok[4:]), ON_FAILURE_CANCEL, EDGE_WAITING),
            (int(other[4:]), ON_FAILURE_RUN, EDGE_WAITING),
        ]


async def test_markers_naming_workflow_jobs_by_their_add_time_ids_follow_them(
    store_url: str,
) -> None:
    """The store numbers a workflow's jobs anew when it is enqueued: a marker
    naming one by the id it had when added (a FunctionJob's, and a registered
    job's, whose arguments were JSON text at once) gets that job's result;
    and a refused enqueue leaves the registered job's arguments as they were."""
    wf = js.Workflow("by id")
    up = wf.add(call(fj.add, 1, 2))
    other = wf.add(call(fj.add, 10))
    by_id = wf.add(call(fj.collect, js.result_of(up.job_id), [js.result_of(other)]))
    registered = wf.add(fj.total.job(js.results_of([up.job_id, other.job_id]), 100))
    async with fj.app.scheduler(store=store_of(store_url)) as s:
        await s.enqueue_workflow(wf)
        assert await s.result(by_id.job_id) == [3, [10]]
        assert await s.result(registered.job_id) == 113
    refused = js.Workflow("refused")
    first = refused.add(call(fj.add, 1))
    job = refused.add(fj.total.job(js.results_of([first.job_id])))
    text = job.args_json  # type: ignore[attr-defined]
    refused.add(call(lambda: None))  # cannot be pickled: the enqueue fails
    async with fj.app.scheduler(store=store_of(store_url)) as s:
        with pytest.raises(TypeError):
            await s.enqueue_workflow(refused)
    assert job.args_json == text  # type: ignore[attr-defined]


# Results end to end: submitted through the scheduler, received at the claim


@pytest.mark.parametrize("executor", ["async", "process"])
async def test_results_reach_a_job_submitted_with_markers(store_url: str, executor: str) -> None:
    """result_of and results_of in a job submitted to a durable store: the
    upstreams' results arrive in it as it runs, in a worker process too, and
    a failed upstream on a "run" edge fills its slot with the error."""
    func = fj.collect if executor == "async" else fj.collect_sync
    async with scheduler(store_url) as s:
        a = s.submit(call(fj.add, 1, 2))
        b = s.submit(call(fj.add, "x", "y"))
        bad = s.submit(failing())
        job = js.FunctionJob(
            func,
            args=(js.result_of(a), [js.result_of(b), 7]),
            kwargs={"all": js.results_of([b, a, bad])},
            executor=executor,
            retry=NO_RETRY,
        )
        done = await s.wait(s.submit(job, depends_on=[js.After(bad, on_failure="run")]))
    assert done.status is S.COMPLETED, done.last_error
    got = done.result
    assert got[:2] == [3, ["xy", 7]] and got[2][0] == "all"
    slots = got[2][1]
    assert slots[:2] == ["xy", 3] and isinstance(slots[2], js.UpstreamFailedError)


async def test_a_workflow_fan_in_receives_every_result(store_url: str) -> None:
    """A workflow of 200 jobs and a fan-in, enqueued in one call: the fan-in
    gets all 200 results in the order given, and a registered job gets them
    as JSON values."""
    wf = js.Workflow("fan")
    shards = [wf.add(call(fj.same, n)) for n in range(200)]
    fan_in = wf.add(call(fj.total, js.results_of(shards)))
    async with fj.app.scheduler(store=store_of(store_url)) as s:
        wf_id = await s.enqueue_workflow(wf)
        registered = s.submit(fj.total.job(js.results_of(shards[:10]), 1000))
        assert await s.result(fan_in.job_id) == sum(range(200))
        assert await s.result(registered) == 1000 + sum(range(10))
        info = await s.workflow(wf_id)
    assert info.finished and info.counts == {S.COMPLETED: 201}
