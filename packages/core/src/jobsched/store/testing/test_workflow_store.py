"""Workflows kept as one (issue 37): ``add_workflow`` writes a workflow's
row, jobs and edges all or nothing; ``workflow``, ``workflows`` and
``workflow_graph`` read them back; ``cancel_workflow`` ends every unfinished
job of one at once; prune takes a workflow's row with its last job.
"""

from __future__ import annotations

import pickle

import pytest

import jobsched as js
from jobsched.store import (
    ON_FAILURE_CANCEL,
    ON_FAILURE_RUN,
    OWN_ID_HEAD,
    Change,
    JobDataError,
    JobStore,
    NewJob,
    NewWorkflow,
    Outcome,
)

from . import _ends

pytestmark: pytest.MarkDecorator = pytest.mark.anyio

S = js.JobStatus
NOW = 1_700_000_000.0
ROOM = {"async": 999}
WF = 5_000


def new(
    job_id: int, after: tuple[int, ...] = (), run: tuple[int, ...] = (), name: str = ""
) -> NewJob:
    return NewJob(job_id, name or f"j{job_id}", "async", (float(abs(job_id)),), NOW, NOW,
                  b"P" + bytes([abs(job_id) % 256]), depends_on=after, run_on_failure=run,
                  own_id=job_id < 0)  # fmt: skip


def flow(jobs: list[NewJob], workflow_id: int = WF, name: str = "nightly") -> NewWorkflow:
    for job in jobs:
        job.workflow = workflow_id
    return NewWorkflow(workflow_id, name, NOW - 1, jobs)


async def claimable(store: JobStore, at: float = NOW + 5) -> list[int]:
    """The ids a claim takes now (handed back: the store is as it was)."""
    claims = await store.claim("probe", 999, ROOM, at, 30)
    if claims:
        await store.release("probe", [c.id for c in claims])
    return sorted(c.id for c in claims)


async def end(store: JobStore, job_id: int, how: S) -> list[Change]:
    """Claim ``job_id`` and end it ``how`` (see _ends)."""
    return await _ends.end(store, job_id, how, ROOM)


async def nothing_of(store: JobStore, ids: list[int], workflow_id: int = WF) -> None:
    """None of the jobs, nor the workflow, is in the store."""
    assert [i for i in ids if await store.fetch(i) is not None] == []
    assert await store.workflow(workflow_id) is None
    assert await store.workflow_graph(workflow_id) is None
    assert [w.id for w in await store.workflows()] == []


# ── add_workflow ─────────────────────────────────────────────────────────


async def test_a_workflow_is_added_with_its_jobs_and_edges(store: JobStore) -> None:
    """1 and 2 are roots; 3 waits for 1; 4 waits for 3 and, on a "run" edge, for 2."""
    jobs = [new(1), new(2), new(3, after=(1,)), new(4, after=(2, 3), run=(2,))]
    assert await store.add_workflow(flow(jobs), NOW) == []
    row = await store.workflow(WF)
    assert row is not None
    assert (row.id, row.name, row.created_at, row.size) == (WF, "nightly", NOW - 1, 4)
    assert row.counts == {S.PENDING: 4} and not row.finished
    three = await store.fetch(3)
    assert three is not None and three.workflow == WF and three.depends_on == (1,)
    assert await claimable(store) == [1, 2]
    graph = await store.workflow_graph(WF)
    assert graph is not None and graph.workflow == row and not graph.truncated
    assert [(j.id, j.name, j.status, j.attempts) for j in graph.jobs] == [
        (i, f"j{i}", S.PENDING, 0) for i in (1, 2, 3, 4)
    ]
    assert sorted(graph.edges) == [
        (1, 3, ON_FAILURE_CANCEL),
        (2, 4, ON_FAILURE_RUN),
        (3, 4, ON_FAILURE_CANCEL),
    ]
    # The edges work as any job's: 2 fails, 4 still waits for 3.
    assert await end(store, 2, S.FAILED) == []
    await end(store, 1, S.COMPLETED)
    assert await claimable(store) == [3]
    await end(store, 3, S.COMPLETED)
    assert await claimable(store) == [4]
    await end(store, 4, S.COMPLETED)
    row = await store.workflow(WF)
    assert row is not None and row.finished
    assert row.counts == {S.COMPLETED: 3, S.FAILED: 1}


async def test_an_upstream_outside_that_failed_cancels_its_jobs_at_once(store: JobStore) -> None:
    """10 (outside) failed: 1 ("cancel" on it) ends at once, and 2 ("cancel"
    on 1) with it; 3 ("run" on 10) and 4 (on 11, outside and waiting) wait."""
    await store.add([new(10), new(11)], NOW)
    await end(store, 10, S.FAILED)
    jobs = [new(1, after=(10,)), new(2, after=(1,)), new(3, after=(10,), run=(10,))]
    jobs.append(new(4, after=(11,)))
    changes = await store.add_workflow(flow(jobs), NOW)
    assert [(c.id, c.status, c.error) for c in changes] == [
        (1, S.CANCELLED, "upstream job-10 failed"),
        (2, S.CANCELLED, "upstream job-1 cancelled"),
    ]
    assert await claimable(store) == [3, 11]
    await end(store, 11, S.COMPLETED)
    assert await claimable(store) == [3, 4]
    row = await store.workflow(WF)
    assert row is not None and row.counts == {S.CANCELLED: 2, S.PENDING: 2}
    # The store's own counts (jobsched stats) hear of the jobs it cancelled.
    assert await store.counts() == {
        (S.FAILED, "async"): 1, (S.COMPLETED, "async"): 1,
        (S.CANCELLED, "async"): 2, (S.PENDING, "async"): 2,
    }  # fmt: skip


async def test_an_own_id_the_store_holds_fails_the_whole_workflow(store: JobStore) -> None:
    # Plain ids reserved, as the scheduler's are: a store may number own-id
    # rows from the same sequence.
    a = store.reserve_ids(2)
    b = a + 1
    await store.add([new(-7)], NOW)
    jobs = [new(a), new(-8, after=(a,)), new(-7, after=(a,)), new(b, after=(-8,))]
    with pytest.raises(ValueError, match="-7"):
        await store.add_workflow(flow(jobs), NOW)
    await nothing_of(store, [a, -8, b])
    held = await store.fetch(-7)
    assert held is not None and held.workflow is None and held.depends_on == ()
    assert await claimable(store) == [-7]
    # Nothing half-written stands in the way of the same workflow without it.
    jobs = [new(a), new(-8, after=(a,)), new(b, after=(-8,))]
    assert await store.add_workflow(flow(jobs), NOW) == []
    assert await claimable(store) == [-7, a]
    graph = await store.workflow_graph(WF)
    assert graph is not None and sorted(j.id for j in graph.jobs) == sorted([a, -8, b])
    assert sorted(graph.edges) == [(-8, b, ON_FAILURE_CANCEL), (a, -8, ON_FAILURE_CANCEL)]


async def test_an_own_id_twice_in_one_workflow_fails_it(store: JobStore) -> None:
    a = store.reserve_ids(1)
    with pytest.raises(ValueError, match="-7"):
        await store.add_workflow(flow([new(-7), new(a), new(-7, after=(a,))]), NOW)
    await nothing_of(store, [-7, a])


async def test_a_workflow_number_the_store_holds_fails_the_add(store: JobStore) -> None:
    await store.add_workflow(flow([new(1)]), NOW)
    with pytest.raises(ValueError, match=str(WF)):
        await store.add_workflow(flow([new(2), new(3, after=(2,))]), NOW)
    assert [i for i in (2, 3) if await store.fetch(i) is not None] == []
    row = await store.workflow(WF)
    assert row is not None and row.size == 1


async def test_a_workflow_without_jobs_is_refused(store: JobStore) -> None:
    with pytest.raises(ValueError, match="no jobs"):
        await store.add_workflow(NewWorkflow(WF, "empty", NOW, []), NOW)
    assert await store.workflow(WF) is None


async def test_a_job_the_store_cannot_keep_mid_way_leaves_nothing(store: JobStore) -> None:
    """The last of many jobs has a name a database cannot keep (a lone
    surrogate): refused as JobDataError with nothing written, the jobs and
    edges before it undone; or kept whole by a store that can."""
    jobs = [new(i, after=(1,) if i > 1 else ()) for i in range(1, 200)]
    jobs.append(new(200, after=(199,), name="half \ud800 a pair"))
    try:
        await store.add_workflow(flow(jobs), NOW)
    except JobDataError:
        await nothing_of(store, list(range(1, 201)))
        assert await claimable(store) == []
        # The store works on.
        assert await store.add_workflow(flow([new(1), new(2, after=(1,))]), NOW) == []
        assert await claimable(store) == [1]
    else:
        row = await store.workflow(WF)
        assert row is not None and row.counts == {S.PENDING: 200}


async def test_ten_thousand_jobs_are_one_call(store: JobStore) -> None:
    """A fan-out of 9,999 jobs and a fan-in of all of them, in one call."""
    jobs = [new(i) for i in range(1, 10_000)]
    jobs.append(new(10_000, after=tuple(range(1, 10_000))))
    assert await store.add_workflow(flow(jobs), NOW) == []
    row = await store.workflow(WF)
    assert row is not None and row.size == 10_000 and row.counts == {S.PENDING: 10_000}
    fan_in = await store.fetch(10_000)
    assert fan_in is not None and len(fan_in.depends_on) == 9_999
    claims = await store.claim("m1", 20, ROOM, NOW, 30)
    assert len(claims) == 20 and 10_000 not in {c.id for c in claims}


# ── reads ────────────────────────────────────────────────────────────────


async def test_workflows_are_listed_newest_first(store: JobStore) -> None:
    """Paged with limit and before; unfinished: those with a job not ended."""
    for number in (101, 102, 103):
        await store.add_workflow(flow([new(number)], number, name=f"w{number}"), NOW)
    await end(store, 102, S.COMPLETED)
    assert [w.id for w in await store.workflows()] == [103, 102, 101]
    assert [w.name for w in await store.workflows(limit=2)] == ["w103", "w102"]
    assert [w.id for w in await store.workflows(before=103)] == [102, 101]
    assert [w.id for w in await store.workflows(unfinished=True)] == [103, 101]
    assert [w.id for w in await store.workflows(limit=1, before=103, unfinished=True)] == [101]
    listed = {w.id: w for w in await store.workflows()}
    assert listed[102].counts == {S.COMPLETED: 1} and listed[102].finished
    assert listed[101].counts == {S.PENDING: 1}


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ({"limit": 0}, ValueError),
        ({"limit": "5"}, TypeError),
        ({"limit": True}, TypeError),
        ({"before": "103"}, TypeError),
        ({"before": 2**63}, ValueError),
    ],
)
async def test_bad_arguments_of_workflows_are_refused(
    store: JobStore, args: dict[str, object], error: type[Exception]
) -> None:
    with pytest.raises(error):
        await store.workflows(**args)  # type: ignore[arg-type]


async def test_a_graph_past_its_limit_is_truncated(store: JobStore) -> None:
    """The first ``limit`` jobs, the edges into them (from any upstream), and
    truncated; the counts are of every job."""
    jobs = [new(1)] + [new(i, after=(i - 1,)) for i in range(2, 8)]
    await store.add_workflow(flow(jobs), NOW)
    graph = await store.workflow_graph(WF, limit=3)
    assert graph is not None and graph.truncated
    assert [j.id for j in graph.jobs] == [1, 2, 3]
    assert sorted(graph.edges) == [(1, 2, ON_FAILURE_CANCEL), (2, 3, ON_FAILURE_CANCEL)]
    assert graph.workflow.counts == {S.PENDING: 7}
    whole = await store.workflow_graph(WF, limit=7)
    assert whole is not None and not whole.truncated and len(whole.jobs) == 7
    with pytest.raises(ValueError, match="limit"):
        await store.workflow_graph(WF, limit=0)


async def test_unknown_workflows_read_as_none(store: JobStore) -> None:
    await store.add([new(1)], NOW)
    assert await store.workflow(WF) is None
    assert await store.workflow_graph(WF) is None
    assert await store.workflows() == []
    assert await store.cancel_workflow(WF, NOW) == (0, [])
    plain = await store.fetch(1)
    assert plain is not None and plain.workflow is None


async def test_a_graph_shows_progress_attempts_and_ends(store: JobStore) -> None:
    await store.add_workflow(flow([new(1), new(2)]), NOW)
    claims = await store.claim("m1", 999, ROOM, NOW, 30)
    assert sorted(c.id for c in claims) == [1, 2]
    await store.record("m1", [Outcome(1, 1, S.COMPLETED, NOW + 3)])
    graph = await store.workflow_graph(WF)
    assert graph is not None
    one, two = graph.jobs
    assert (one.status, one.attempts, one.finished_at) == (S.COMPLETED, 1, NOW + 3)
    assert (two.status, two.attempts, two.finished_at) == (S.RUNNING, 1, None)


async def test_a_graph_names_jobs_by_their_own_ids(store: JobStore) -> None:
    """A job stored under an own id reads it back from its payload's head
    (as fetch and list do); a numbered job, or one whose id lies past the
    head the graph reads, has none (it shows by its number)."""
    from jobsched.store import own_number  # the number submit(job_id=...) stores under

    receipt, far = own_number("receipt-42"), own_number("far-7")
    named = new(receipt)
    named.payload = b"P" + pickle.dumps(("receipt-42", "x" * 10))
    deep = new(far, after=(receipt,))
    deep.payload = b"P" + pickle.dumps(("y" * OWN_ID_HEAD, "far-7"))
    await store.add_workflow(flow([named, deep, new(3, after=(far,))]), NOW)
    graph = await store.workflow_graph(WF)
    assert graph is not None
    by_id = {job.id: job.own_id for job in graph.jobs}
    assert by_id == {receipt: "receipt-42", far: None, 3: None}
    assert sorted(graph.edges) == sorted(
        [(receipt, far, ON_FAILURE_CANCEL), (far, 3, ON_FAILURE_CANCEL)]
    )


# ── cancel_workflow ──────────────────────────────────────────────────────


async def test_cancel_workflow_ends_its_jobs_and_flags_the_running(store: JobStore) -> None:
    """1 runs (flagged); 2 waits for 1, 3 for 2 on a "run" edge (cancelled
    too: a cancel of the whole is no failure of a part), 4 is delayed; 5
    completed stays. Outside: 20 ("cancel" on 2) is cancelled, 21 ("run" on
    2) runs, 22 (on 5) is untouched."""
    jobs = [new(1), new(2, after=(1,)), new(3, after=(2,), run=(2,)), new(4), new(5)]
    jobs[3].run_at = NOW + 3600
    await store.add_workflow(flow(jobs), NOW)
    await end(store, 5, S.COMPLETED)
    await store.add([new(20, after=(2,)), new(21, after=(2,), run=(2,)), new(22, after=(5,))], NOW)
    claims = await store.claim("m2", 999, ROOM, NOW, 30)
    assert sorted(c.id for c in claims) == [1, 22]
    await store.release("m2", [22])
    count, changes = await store.cancel_workflow(WF, NOW + 2)
    assert count == 4
    assert sorted((c.id, c.status, c.error) for c in changes) == [
        (2, S.CANCELLED, "cancelled"),
        (3, S.CANCELLED, "cancelled"),
        (4, S.CANCELLED, "cancelled"),
        (20, S.CANCELLED, "upstream job-2 cancelled"),
    ]
    assert await store.extend("m2", [1], NOW + 60) == [1]
    one = await store.fetch(1)
    assert one is not None and one.status is S.RUNNING
    assert await claimable(store) == [21, 22]
    row = await store.workflow(WF)
    assert row is not None and not row.finished
    assert row.counts == {S.RUNNING: 1, S.CANCELLED: 3, S.COMPLETED: 1}
    # Its owner ends it cancelled: the workflow is finished.
    await store.record("m2", [Outcome(1, 1, S.CANCELLED, NOW + 3, error="cancelled")])
    row = await store.workflow(WF)
    assert row is not None and row.finished
    assert await store.cancel_workflow(WF, NOW + 4) == (0, [])
    assert await store.counts() == {
        (S.CANCELLED, "async"): 5, (S.COMPLETED, "async"): 1, (S.PENDING, "async"): 2,
    }  # fmt: skip


# ── prune ────────────────────────────────────────────────────────────────


async def test_a_workflow_goes_with_its_last_job(store: JobStore) -> None:
    """Prune keeps the row while a job of it is held; the last job's prune
    takes the row (and the list forgets it)."""
    await store.add_workflow(flow([new(1), new(2), new(3)]), NOW)
    await store.add_workflow(flow([new(4)], WF + 1), NOW)
    await end(store, 1, S.COMPLETED)
    await end(store, 4, S.COMPLETED)
    assert await store.prune(0) == 2
    row = await store.workflow(WF)
    assert row is not None and row.size == 3 and row.counts == {S.PENDING: 2}
    assert await store.workflow(WF + 1) is None
    assert [w.id for w in await store.workflows()] == [WF]
    count, _ = await store.cancel_workflow(WF, NOW + 1)
    assert count == 2
    assert await store.prune(0) == 2
    assert await store.workflow(WF) is None
    assert await store.workflow_graph(WF) is None
    assert await store.workflows() == []
