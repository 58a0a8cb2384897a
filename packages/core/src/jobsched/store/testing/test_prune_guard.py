"""``JobStore.prune`` and dependency edges (issue 37, the retention guard):
a finished upstream that an unfinished job has an edge from is kept, by
count and by age, for its dependent still waits for it or reads its result
when it is claimed (Oban #722: a pruned upstream left its dependent waiting
for ever); once no unfinished job has an edge from it, it goes as any other.
A pruned job's edges go with it: an own id used again starts with none.
"""

from __future__ import annotations

import pytest

import jobsched as js
from jobsched.store import EDGE_WAITING, ON_FAILURE_CANCEL, JobStore, NewJob, Outcome

pytestmark: pytest.MarkDecorator = pytest.mark.anyio

S = js.JobStatus
NOW = 1_700_000_000.0
DAY = 86_400.0
ROOM = {"async": 99}


def new(job_id: int, after: tuple[int, ...] = ()) -> NewJob:
    return NewJob(job_id, f"j{job_id}", "async", (float(abs(job_id)),), NOW, NOW,
                  b"P" + bytes([abs(job_id) % 256]), depends_on=after,
                  own_id=job_id < 0)  # fmt: skip


async def complete(store: JobStore, ids: list[int], at: float) -> None:
    """Claim the ready jobs, complete ``ids`` at ``at`` and hand the others back."""
    claims = await store.claim("m", 50, ROOM, at, 10 * DAY)
    mine = [c for c in claims if c.id in ids]
    assert sorted(c.id for c in mine) == sorted(ids), claims
    others = [c.id for c in claims if c.id not in ids]
    if others:
        await store.release("m", others)
    outcomes = [Outcome(c.id, c.attempt, S.COMPLETED, at) for c in mine]
    assert (await store.record("m", outcomes)).refused == []


async def kept(store: JobStore, ids: list[int]) -> list[int]:
    return [i for i in ids if await store.fetch(i) is not None]


async def held_graph(store: JobStore) -> None:
    """1 and 2 (upstreams of 4) and 3 end at NOW, 6..10 a day on; 4 waits for 5, not run."""
    await store.add([new(1), new(2), new(3), new(5)], NOW)
    await complete(store, [1, 2, 3], NOW)
    await store.add([new(4, after=(1, 2, 5))], NOW)
    await store.add([new(i) for i in range(6, 11)], NOW)
    await complete(store, list(range(6, 11)), NOW + DAY)


async def test_an_upstream_of_a_waiting_job_survives_a_prune_by_count(store: JobStore) -> None:
    """keep=0 takes every finished job but the upstreams of job 4, which
    waits, then is ready; once 4 has run, they go too, with 4."""
    await held_graph(store)
    assert await store.prune(0) == 6
    assert await kept(store, list(range(1, 11))) == [1, 2, 4, 5]
    await complete(store, [5], NOW + 2 * DAY)
    # 4 waits no more, but reads its upstreams' results when it is claimed.
    assert await store.prune(0) == 0
    assert await kept(store, list(range(1, 11))) == [1, 2, 4, 5]
    await complete(store, [4], NOW + 3 * DAY)
    assert await store.prune(0) == 4
    assert await kept(store, list(range(1, 11))) == []


async def test_a_held_upstream_takes_no_place_of_the_newest_kept(store: JobStore) -> None:
    """keep=5 keeps the five newest (6..10) and the held 1 and 2 beyond them."""
    await held_graph(store)
    assert await store.prune(5) == 1
    assert await kept(store, list(range(1, 11))) == [1, 2, 4, 5, 6, 7, 8, 9, 10]


async def test_an_upstream_of_a_waiting_job_survives_a_prune_by_age(store: JobStore) -> None:
    """Completions kept an hour, two days on: all aged, only the upstreams of
    the waiting 4 stay."""
    await held_graph(store)
    before = {S.COMPLETED: NOW + 2 * DAY - 3600.0}
    assert await store.prune(None, before) == 6
    assert await kept(store, list(range(1, 11))) == [1, 2, 4, 5]


async def test_a_pruned_jobs_edges_go_with_it(store: JobStore) -> None:
    """A dependent of own id cancelled while its upstream waits, pruned, and
    its id used again for a job that waits on another: the old edge went
    with the pruned job, so the upstream's failure cancels nothing."""
    await store.add([new(-1), new(-3)], NOW)
    await store.add([new(-2, after=(-1,))], NOW)
    await store.cancel([-2], NOW)
    job = await store.fetch(-2)
    assert job is not None and job.status is S.CANCELLED
    assert await store.prune(0) == 1
    again = [new(-2, after=(-3,))]
    await store.add(again, NOW + 1)
    assert not again[0].existed
    job = await store.fetch(-2)
    # A store that keeps no settled edges may give none (see StoredJob.deps).
    assert job is not None and job.deps in ((), ((-3, ON_FAILURE_CANCEL, EDGE_WAITING),))
    claims = await store.claim("m", 50, ROOM, NOW + 1, 10 * DAY)
    assert sorted(c.id for c in claims) == [-3, -1]
    (up,) = [c for c in claims if c.id == -1]
    await store.release("m", [-3])
    failed = Outcome(-1, up.attempt, S.FAILED, NOW + 2, error="E: boom")
    assert (await store.record("m", [failed])).changes == []
    job = await store.fetch(-2)
    assert job is not None and job.status is S.PENDING
