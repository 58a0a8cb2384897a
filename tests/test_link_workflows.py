"""The store link's workflow write (issue 37, plan section 5.3): a workflow
queued with ``StoreLink.add_workflow`` keeps its place among the submits,
is written as one ``JobStore.add_workflow`` between the adds queued before
it and after it, and its caller, awaiting it, gets the changes its add made
or the error the store gave it (the committer writes on)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import jobsched as js
from jobsched._engine._link import StoreLink
from jobsched._engine._link._flows import FlowWrite
from jobsched._engine._link._writes import Writes
from jobsched.store import Change, NewJob, NewWorkflow, Outcome
from jobsched.store._codec import BIG
from jobsched_sqlite import SQLiteStore

pytestmark = pytest.mark.anyio

S = js.JobStatus
NOW = 1_700_000_000.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _job(number: int, after: tuple[int, ...] = (), *, own_id: bool = False) -> NewJob:
    return NewJob(number, f"j{number}", "async", (0.0,), NOW, NOW, b"x", depends_on=after,
                  own_id=own_id)  # fmt: skip


def _flow(number: int, jobs: list[NewJob]) -> NewWorkflow:
    for job in jobs:
        job.workflow = number
    return NewWorkflow(number, f"w{number}", NOW, jobs)


async def _never() -> None:
    raise AssertionError("no flush here")


def _steps(writes: Writes) -> list[Any]:
    return [
        step.workflow.id if isinstance(step, FlowWrite) else [j.id for j in step]
        for step in writes.take_batch(NOW).add_steps()
    ]


async def test_a_workflow_keeps_its_place_among_the_adds() -> None:
    writes = Writes()
    writes.add(_job(1))
    writes.add(_job(2))
    writes.add_workflow(FlowWrite(_flow(100, [_job(3)]), _never))
    writes.add_workflow(FlowWrite(_flow(101, [_job(4)]), _never))
    writes.add(_job(5))
    assert writes.appended == 5
    assert _steps(writes) == [[1, 2], 100, 101, [5]]
    assert not writes.pending()
    writes.add_workflow(FlowWrite(_flow(102, [_job(6)]), _never))
    assert writes.pending()
    assert _steps(writes) == [102]


async def test_a_big_results_cut_keeps_the_workflows_places() -> None:
    """A workflow queued before the cut goes with the batch before it; one
    after goes with the next, still after the adds queued before it."""
    writes = Writes()
    writes.add(_job(1))
    writes.add_workflow(FlowWrite(_flow(100, [_job(2)]), _never))
    writes.record(Outcome(9, 1, S.COMPLETED, NOW, result=b"r" * BIG))  # the cut
    writes.add(_job(3))
    writes.add_workflow(FlowWrite(_flow(101, [_job(4)]), _never))
    writes.add(_job(5))
    first = writes.take_batch(NOW)
    assert [j.id for j in first.adds] == [1] and first.outcomes == []
    assert [(at, w.workflow.id) for at, w in first.flows] == [(1, 100)]
    assert _steps(writes) == [[3], 101, [5]]


async def test_an_own_id_of_a_workflow_is_unconfirmed_until_written() -> None:
    writes = Writes()
    job = _job(-7, own_id=True)
    writes.add_workflow(FlowWrite(_flow(100, [job]), _never))
    assert writes.unconfirmed(-7) == b"x"


class _Host:
    """What the committer tells the scheduler of a batch."""

    def __init__(self) -> None:
        self.changes: list[Change] = []

    def committed(self) -> None:
        pass

    def changed(self, changes: Sequence[Change]) -> None:
        self.changes += changes

    def existed(self, ids: Sequence[int]) -> None:
        raise AssertionError(f"no job of these tests existed: {ids}")


class _Logged(SQLiteStore):
    """A SQLite store that logs its adds, failing ``add_workflow`` as told."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.calls: list[Any] = []
        self.outages = 0
        self.no_workflows = False

    async def add(self, jobs: Sequence[NewJob], now: float) -> list[Change]:
        self.calls.append([j.id for j in jobs])
        return await super().add(jobs, now)

    async def add_workflow(self, workflow: NewWorkflow, now: float) -> list[Change]:
        self.calls.append(workflow.id)
        if self.no_workflows:
            raise NotImplementedError("_Logged cannot keep workflows")
        if self.outages:
            self.outages -= 1
            raise js.StoreUnavailableError("the disk is away")
        return await super().add_workflow(workflow, now)


@pytest.fixture
async def logged(tmp_path: Path) -> Any:
    store = _Logged(f"sqlite:///{tmp_path / 'jobs.db'}")
    await store.open()
    yield store
    await store.close()


def _link(store: _Logged) -> tuple[StoreLink, _Host]:
    host = _Host()
    return StoreLink(store, host, 10**9), host  # type: ignore[arg-type]  # no task runs


async def test_the_adds_around_a_workflow_are_written_before_and_after_it(
    logged: _Logged,
) -> None:
    """With no committer running, awaiting the workflow writes the batch:
    the adds before it, it, then the adds after it (one of which waits for
    a job of it); its change (a job cancelled at once) reaches the host."""
    link, host = _link(logged)
    base = logged.reserve_ids(10)
    link.add(_job(base))
    link.add(_job(base + 1))
    await link.flush()
    await link.add_workflow(_flow(500, [_job(base + 2)]))  # flushed alone: a known state
    logged.calls.clear()
    link.add(_job(base + 3))
    write = link.add_workflow(
        _flow(501, [_job(base + 4, after=(base + 3,)), _job(base + 5, (77,))])
    )
    link.add(_job(base + 6, after=(base + 4,)))
    changes = await write
    assert [(c.id, c.status) for c in changes] == [(base + 5, S.CANCELLED)]
    assert logged.calls == [[base + 3], 501, [base + 6]]
    assert (base + 5, S.CANCELLED) in [(c.id, c.status) for c in host.changes]
    six = await logged.fetch(base + 6)
    assert six is not None and six.depends_on == (base + 4,) and six.status is S.PENDING
    assert (await write) == changes  # awaited again: the same answer, nothing written again
    assert logged.calls == [[base + 3], 501, [base + 6]]


async def test_a_refused_workflow_raises_to_its_caller_and_the_link_writes_on(
    logged: _Logged,
) -> None:
    """A held own id: ValueError at the await, nothing of the workflow
    written; the adds around it are, and the link works on."""
    link, _ = _link(logged)
    base = logged.reserve_ids(10)
    link.add(_job(-7, own_id=True))
    write = link.add_workflow(_flow(600, [_job(base), _job(-7, after=(base,), own_id=True)]))
    link.add(_job(base + 1))
    with pytest.raises(ValueError, match="-7"):
        await write
    assert await logged.fetch(base) is None and await logged.workflow(600) is None
    assert await logged.fetch(base + 1) is not None
    assert link.unconfirmed(-7) is None  # settled with its batch
    link.add(_job(base + 2))
    await link.flush()
    assert await logged.fetch(base + 2) is not None


async def test_a_store_without_workflows_says_so_to_the_caller(logged: _Logged) -> None:
    logged.no_workflows = True
    link, _ = _link(logged)
    base = logged.reserve_ids(10)
    write = link.add_workflow(_flow(700, [_job(base)]))
    link.add(_job(base + 1))
    with pytest.raises(NotImplementedError, match="cannot keep workflows"):
        await write
    assert await logged.fetch(base + 1) is not None


async def test_an_outage_retries_the_workflow_whole_and_not_the_adds_before_it(
    logged: _Logged, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jobsched._engine._link import _timing

    monkeypatch.setattr(_timing, "STORE_BACKOFF", js.RetryPolicy(max_retries=0, base_delay=0))
    logged.outages = 2
    link, _ = _link(logged)
    base = logged.reserve_ids(10)
    link.add(_job(base))
    write = link.add_workflow(_flow(800, [_job(base + 1, after=(base,))]))
    link.add(_job(base + 2))
    assert await write == []
    assert logged.calls == [[base], 800, 800, 800, [base + 2]]
    row = await logged.workflow(800)
    assert row is not None and row.counts == {S.PENDING: 1}
