"""A dependency edge's failure policy (``NewJob.run_on_failure``, issue 37).

An edge is settled once, when its upstream ends: a completion counts it
off; any other end (FAILED, TIMED_OUT, CANCELLED) counts it off too on a
"run" edge and cancels the dependent on a "cancel" edge (every edge not in
``run_on_failure``: today's cascade). A dependent runs when every edge is
counted off, so none hangs. An upstream the store does not hold cancels the
dependent whatever the policy.
"""

from __future__ import annotations

import pytest

import jobsched as js
from jobsched.store import Change, JobStore, NewJob

from . import _ends

pytestmark: pytest.MarkDecorator = pytest.mark.anyio

S = js.JobStatus
NOW = 1_700_000_000.0
EXECUTORS = {"async": 99}


def new(job_id: int, after: tuple[int, ...] = (), run: tuple[int, ...] = ()) -> NewJob:
    return NewJob(job_id, f"j{job_id}", "async", (float(job_id),), NOW, NOW,
                  b"P" + bytes([job_id]), depends_on=after, run_on_failure=run)  # fmt: skip


def new_many(job_id: int, after: tuple[int, ...] = (), run: tuple[int, ...] = ()) -> NewJob:
    """``new`` for ids past a byte's range."""
    return NewJob(job_id, f"j{job_id}", "async", (float(job_id),), NOW, NOW, b"P",
                  depends_on=after, run_on_failure=run)  # fmt: skip


async def claimable(store: JobStore, at: float = NOW + 5) -> list[int]:
    """The ids a claim takes now (then handed back, so the store is as it was)."""
    claims = await store.claim("probe", 50, EXECUTORS, at, 30)
    if claims:
        await store.release("probe", [c.id for c in claims])
    return sorted(c.id for c in claims)


async def status(store: JobStore, job_id: int) -> tuple[S, str | None]:
    job = await store.fetch(job_id)
    assert job is not None, job_id
    return job.status, job.last_error


async def end(store: JobStore, job_id: int, how: S) -> list[Change]:
    """Claim ``job_id`` and end it ``how`` (see _ends)."""
    return await _ends.end(store, job_id, how, EXECUTORS)


@pytest.mark.parametrize("how", [S.FAILED, S.TIMED_OUT])
async def test_a_run_edge_lets_the_dependent_run_after_a_failed_upstream(
    store: JobStore, how: S
) -> None:
    await store.add([new(1), new(2, after=(1,), run=(1,)), new(3, after=(1,))], NOW)
    changes = await end(store, 1, how)
    # The "cancel" edge cancels its dependent as before; the "run" edge's runs.
    assert [(c.id, c.status, c.error) for c in changes] == [
        (3, S.CANCELLED, f"upstream job-1 {how.value}")
    ]
    assert await claimable(store) == [2]
    assert (await status(store, 2))[0] is S.PENDING


async def test_a_run_edge_lets_the_dependent_run_after_a_cancelled_upstream(
    store: JobStore,
) -> None:
    """The operator's cancel of a queued upstream."""
    await store.add([new(1), new(2, after=(1,), run=(1,))], NOW + 100)
    assert await store.cancel([1], NOW) == [Change(1, S.CANCELLED, "cancelled")]
    assert await claimable(store, NOW + 200) == [2]


async def test_a_run_edge_to_an_upstream_ended_before_the_add_is_not_waited_for(
    store: JobStore,
) -> None:
    await store.add([new(1), new(2)], NOW)
    await end(store, 1, S.FAILED)
    await end(store, 2, S.COMPLETED)
    changes = await store.add([new(3, after=(1, 2), run=(1,)), new(4, after=(1,))], NOW)
    assert [(c.id, c.status, c.error) for c in changes] == [
        (4, S.CANCELLED, "upstream job-1 failed")
    ]
    assert await claimable(store) == [3]


async def test_an_upstream_not_in_the_store_cancels_the_dependent_whatever_the_policy(
    store: JobStore,
) -> None:
    changes = await store.add([new(2, after=(77,), run=(77,))], NOW)
    assert [(c.id, c.status, c.error) for c in changes] == [
        (2, S.CANCELLED, "upstream job-77 is not in the store")
    ]


async def test_mixed_edges_a_failed_run_upstream_still_waits_for_the_cancel_one(
    store: JobStore,
) -> None:
    """D waits for A ("cancel") and B ("run"). B fails: D still waits for A;
    A completes: D runs."""
    await store.add([new(1), new(2), new(3, after=(1, 2), run=(2,))], NOW)
    assert await end(store, 2, S.FAILED) == []
    assert await claimable(store) == [1]
    await end(store, 1, S.COMPLETED)
    assert await claimable(store) == [3]


async def test_mixed_edges_a_failed_cancel_upstream_cancels_whatever_the_run_one_did(
    store: JobStore,
) -> None:
    await store.add([new(1), new(2), new(3, after=(1, 2), run=(2,))], NOW)
    await end(store, 2, S.COMPLETED)
    changes = await end(store, 1, S.FAILED)
    assert [(c.id, c.status, c.error) for c in changes] == [
        (3, S.CANCELLED, "upstream job-1 failed")
    ]
    assert await claimable(store) == []


async def test_a_chain_of_cancel_edges_ending_in_a_run_edge(store: JobStore) -> None:
    """1 fails; 2 ("cancel" on 1) is cancelled, and so its "run" dependent 3
    runs, while 4 ("cancel" on 2) is cancelled in turn."""
    await store.add(
        [new(1), new(2, after=(1,)), new(3, after=(2,), run=(2,)), new(4, after=(2,))], NOW
    )
    changes = await end(store, 1, S.FAILED)
    assert sorted((c.id, c.status, c.error) for c in changes) == [
        (2, S.CANCELLED, "upstream job-1 failed"),
        (4, S.CANCELLED, "upstream job-2 cancelled"),
    ]
    assert await claimable(store) == [3]


async def test_a_retried_failed_upstream_settles_its_run_edge_once(store: JobStore) -> None:
    """A run-edge dependent counted off by its upstream's failure does not
    count it off again (or wait for it again) when the upstream is retried
    and ends."""
    await store.add([new(1), new(2), new(3, after=(1, 2), run=(1,))], NOW)
    await end(store, 1, S.FAILED)
    assert await store.retry([1], NOW) == [1]
    await end(store, 1, S.FAILED)
    assert await claimable(store) == [2]  # 3 still waits for 2, counted once
    await end(store, 2, S.COMPLETED)
    assert await claimable(store) == [3]


async def test_a_retried_upstream_does_not_release_a_retried_dependent_twice(
    store: JobStore,
) -> None:
    """1 fails and cancels 3 (which waits for 1 and 2); the operator retries
    3 (it waits for 2 only) and 1, which completes: 3 still waits for 2."""
    await store.add([new(1), new(2), new(3, after=(1, 2))], NOW)
    changes = await end(store, 1, S.FAILED)
    assert [(c.id, c.status) for c in changes] == [(3, S.CANCELLED)]
    assert await store.retry([3, 1], NOW) == [3, 1]
    await end(store, 1, S.COMPLETED)
    assert await claimable(store) == [2]
    await end(store, 2, S.COMPLETED)
    assert await claimable(store) == [3]


async def test_a_fan_in_sees_every_upstreams_status_however_many(store: JobStore) -> None:
    """700 upstreams, more than one statement reads on SQLite (500): a
    failed one past the first few hundred, or an unknown one last, settles
    the dependents' edges as one upstream would."""
    many = tuple(range(1, 701))
    first = NewJob(650, "j650", "async", (0.0,), NOW, NOW, b"P")  # claimed first
    await store.add([first, *(new_many(i) for i in many if i != 650)], NOW)
    await end(store, 650, S.FAILED)
    changes = await store.add(
        [
            new_many(801, many, run=(650,)),
            new_many(802, many),
            new_many(803, (*many[:600], 9999)),  # pending ones, then one unknown
        ],
        NOW,
    )
    assert [(c.id, c.status, c.error) for c in changes] == [
        (802, S.CANCELLED, "upstream job-650 failed"),
        (803, S.CANCELLED, "upstream job-9999 is not in the store"),
    ]
    # The "run" edge to 650 is counted off; 801 waits for the 699 others.
    assert (await status(store, 801))[0] is S.PENDING
    assert 801 not in await claimable(store)
