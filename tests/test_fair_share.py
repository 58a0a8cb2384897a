"""Fair share: per-tenant queues served weighted round-robin, each in the inner strategy's order."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from durable_jobs import Fails

import jobsched as js
from jobsched.strategies import ReadyQueue

_seq = itertools.count(1)


def job(tenant: str | None, name: str = "", priority: int = 1) -> js.Job:
    """A job as the scheduler would queue it (with a submit order)."""
    j = js.FunctionJob(lambda: None, tenant=tenant, name=name or str(tenant), priority=priority)
    j.seq = next(_seq)
    return j


def drain(queue: ReadyQueue) -> list[str]:
    names = []
    while (j := queue.pop()) is not None:
        names.append(j.name)
    return names


# ── The ready queue on its own ─────────────────────────────────────────────


def test_round_robin_across_tenants_in_order_of_arrival() -> None:
    """Tenants take turns, one job each, in the order they first queued; None is a tenant."""
    queue = js.FairShareStrategy().ready_queue()
    for tenant in ["a", "a", "a", "b", None, "b"]:
        queue.push(job(tenant))
    assert len(queue) == 6
    assert drain(queue) == ["a", "b", "None", "a", "b", "a"]
    assert len(queue) == 0
    assert queue.pop() is None


def test_weights_give_bigger_turns() -> None:
    """A tenant of weight 3 starts three jobs per round to another's one."""
    queue = js.FairShareStrategy(weights={"a": 3}).ready_queue()
    for _ in range(8):
        queue.push(job("a"))
        queue.push(job("b"))
    assert drain(queue) == ["a", "a", "a", "b"] * 2 + ["a", "a", "b"] + ["b"] * 5


def test_each_tenant_is_ordered_by_the_inner_strategy() -> None:
    """Within a tenant the inner strategy decides: priority by default, FIFO if asked."""
    pushes = [("a", "low", 0), ("a", "high", 2), ("b", "b1", 1), ("a", "crit", 3)]
    by_priority = js.FairShareStrategy().ready_queue()
    fifo = js.FairShareStrategy(inner=js.FIFOStrategy()).ready_queue()
    for tenant, name, priority in pushes:
        by_priority.push(job(tenant, name, priority))
        fifo.push(job(tenant, name, priority))
    assert drain(by_priority) == ["crit", "b1", "high", "low"]
    assert drain(fifo) == ["low", "b1", "high", "crit"]


def test_a_newcomer_waits_at_most_one_dispatch_per_active_tenant() -> None:
    """Behind 10,000 queued jobs of one tenant, another tenant's single job is next but one."""
    queue = js.FairShareStrategy().ready_queue()
    for _ in range(10_000):
        queue.push(job("big"))
    for tenant in ["c", "d"]:
        for _ in range(5):
            queue.push(job(tenant))
    for _ in range(7):  # mid-way through a round
        queue.pop()
    queue.push(job("newcomer"))
    ahead = 0
    while (j := queue.pop()) is not None and j.tenant != "newcomer":
        ahead += 1
    assert j is not None
    assert ahead <= 3  # big, c and d: one dispatch each at most


def test_cancelled_jobs_are_skipped() -> None:
    """A cancelled job is dropped when reached, and its tenant's turn passes to its next job."""
    queue = js.FairShareStrategy().ready_queue()
    a1, a2, b1 = job("a", "a1"), job("a", "a2"), job("b", "b1")
    for j in (a1, a2, b1):
        queue.push(j)
    a1.status = js.JobStatus.CANCELLED
    b1.status = js.JobStatus.CANCELLED
    assert drain(queue) == ["a2"]
    assert len(queue) == 0


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"weights": {"a": 0}}, ValueError, r"weights\['a'\] must be a positive integer"),
        ({"weights": {"a": -1}}, ValueError, r"positive integer"),
        ({"weights": {"a": 1.5}}, ValueError, r"positive integer.*got 1.5"),
        ({"weights": {"a": True}}, ValueError, r"positive integer"),
        ({"weights": {"a": "2"}}, ValueError, r"positive integer"),
        ({"weights": {"": 2}}, ValueError, r"non-empty strings"),
        ({"weights": {3: 2}}, ValueError, r"tenant names"),
        ({"inner": "priority"}, TypeError, r"inner must be a jobsched.SchedulingStrategy"),
        ({"inner": js.FairShareStrategy()}, TypeError, r"order jobs by key alone"),
    ],
)
def test_bad_options(kwargs: dict[str, Any], error: type[Exception], match: str) -> None:
    """Bad weights and inner strategies are refused with the problem named."""
    with pytest.raises(error, match=match):
        js.FairShareStrategy(**kwargs)


def test_empty_tenant_is_refused() -> None:
    """A job's tenant is a non-empty name or None."""
    with pytest.raises(ValueError, match="tenant must be a non-empty name or None"):
        js.FunctionJob(lambda: None, tenant="")
    with pytest.raises(TypeError, match="tenant must be a string or None"):
        js.FunctionJob(lambda: None, tenant=7)  # type: ignore[arg-type]


def test_key_is_the_inner_key() -> None:
    """The key orders a job within its tenant only; plain strategies keep the plain heap."""
    strategy = js.FairShareStrategy(inner=js.FIFOStrategy())
    j = job("a")
    assert strategy.key(j) == (j.seq,)
    assert js.PriorityStrategy().ready_queue() is None
    assert "FairShareStrategy" in repr(strategy)


# ── In the scheduler ───────────────────────────────────────────────────────


def dispatch_log(s: js.JobScheduler) -> list[js.Job]:
    started: list[js.Job] = []
    s.add_listener(lambda j, old, new: started.append(j) if new is js.JobStatus.RUNNING else None)
    return started


@pytest.mark.anyio
async def test_one_tenants_backlog_does_not_starve_another(
    make_scheduler: Callable[..., js.JobScheduler], durable: bool
) -> None:
    """A job another tenant submits mid-way through a backlog of 10,000 (300 on a
    durable store, which pays a commit per claim here) starts right after one more of them."""
    count = 300 if durable else 10_000
    submitted_at: list[int] = []

    async with make_scheduler(js.FairShareStrategy(), num_workers=1) as s:
        started = dispatch_log(s)

        def submit_small(job: js.Job, old: js.JobStatus, new: js.JobStatus) -> None:
            # As the 101st starts, another tenant submits one.
            if new is js.JobStatus.RUNNING and job.name == "big 100":
                submitted_at.append(len(started))
                s.submit(js.FunctionJob(noop_async, tenant="small", name="small"))

        s.add_listener(submit_small)
        for i in range(count):
            s.submit(js.FunctionJob(noop_async, tenant="big", name=f"big {i}"))
        with anyio.fail_after(60):
            await s.join()
    small_index = next(i for i, j in enumerate(started) if j.name == "small")
    # started[submitted_at - 1] is the job that submitted it; one more "big" may go first.
    # On a durable store the submit waits for the next group commit, and a
    # claim or two of "big" may commit before it (a loaded machine saw 3):
    # still no starvation, with 200 "big" jobs left behind it.
    assert small_index - submitted_at[0] <= (5 if durable else 1)
    assert len(started) == count + 1


async def noop_async() -> None:
    pass


def noop() -> None:
    pass


@pytest.mark.anyio
async def test_weighted_shares_over_a_run(make_scheduler: Callable[..., js.JobScheduler]) -> None:
    """With weights 3:1 and both backlogged, starts alternate three to one; None is a tenant."""
    async with make_scheduler(js.FairShareStrategy(weights={"gold": 3}), num_workers=1) as s:
        started = dispatch_log(s)
        for _ in range(40):
            s.submit(js.FunctionJob(noop_async, tenant="gold"))
            s.submit(js.FunctionJob(noop_async, tenant=None))
        with anyio.fail_after(60):
            await s.join()
    first = [j.tenant for j in started[:40]]
    assert first.count("gold") == 30 and first.count(None) == 10
    assert first[:8] == ["gold", "gold", "gold", None] * 2


@pytest.mark.anyio
async def test_delayed_and_retried_jobs_rejoin_their_tenant(
    make_scheduler: Callable[..., js.JobScheduler],
) -> None:
    """Jobs leaving the delayed queue (delay, retry backoff) go back to their tenant's queue."""
    policy = js.RetryPolicy(max_retries=2, base_delay=0.05, jitter=False)
    async with make_scheduler(js.FairShareStrategy(), num_workers=1) as s:
        started = dispatch_log(s)
        ids = [
            s.submit(js.FunctionJob(noop_async, name="late", tenant="a"), delay=0.1),
            s.submit(Fails(1, name="retry", tenant="b", retry=policy)),
            s.submit(js.FunctionJob(noop_async, name="now", tenant="a")),
        ]
        with anyio.fail_after(30):
            await s.join()
        assert all(s.get(i).status is js.JobStatus.COMPLETED for i in ids)
    names = [j.name for j in started]
    assert sorted(names) == ["late", "now", "retry", "retry"]
    assert names[:2] == ["retry", "now"]


class Checkpointing(js.Executor):
    """Suspends once per job (so limits matter) and tracks attempts in flight."""

    name = "checkpointing"

    def __init__(self) -> None:
        self.in_flight = self.peak = 0
        self.ran: list[str] = []

    async def run(self, job: js.Job) -> Any:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            await anyio.sleep(0.01)
        finally:
            self.in_flight -= 1
        self.ran.append(job.name)


@pytest.mark.anyio
async def test_fair_share_with_executor_limits(
    make_scheduler: Callable[..., js.JobScheduler],
) -> None:
    """Held-back jobs go back to their tenant's queue and every job still runs once."""
    executor = Checkpointing()
    async with make_scheduler(
        js.FairShareStrategy(),
        num_workers=3,
        executors={"checkpointing": executor},
        executor_limits={"checkpointing": 1},
    ) as s:
        for i in range(6):
            s.submit(
                js.FunctionJob(noop, executor="checkpointing", name=f"t{i}", tenant=f"x{i % 2}")
            )
        with anyio.fail_after(30):
            await s.join()
        assert all(j.status is js.JobStatus.COMPLETED for j in s.jobs())
    assert executor.peak == 1
    # Tenants alternate, and each tenant's own jobs keep their order.
    assert executor.ran == ["t0", "t1", "t2", "t3", "t4", "t5"]
