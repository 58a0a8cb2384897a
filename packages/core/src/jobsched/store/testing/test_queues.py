"""Named queues in a durable store: a claim takes only the queues it serves,
within each queue's room, and the operator reads see each job's queue.

docs/stores.md "Queues" is what every store implements. The scheduler's side
(``JobScheduler(queues=..., queue_limits=...)``) is tested with the scheduler
(the repository's tests/test_queues.py).
"""

from __future__ import annotations

import pytest

import jobsched as js
from jobsched.store import DEFAULT_QUEUE, Claimed, JobStore, NewJob, Outcome

pytestmark = pytest.mark.anyio

NOW = 1_700_000_000.0
ALL = {"async": 99}
S = js.JobStatus


def new(job_id: int, key: float, queue: str = DEFAULT_QUEUE, **kw: object) -> NewJob:
    fields: dict[str, object] = {
        "name": f"j{job_id}",
        "executor": "async",
        "run_at": NOW,
        "submitted_at": NOW,
        "payload": b"P" + job_id.to_bytes(4, "big"),
    }
    fields.update(kw)
    return NewJob(job_id, key=(key,), queue=queue, **fields)  # type: ignore[arg-type]


def ids(claims: list[Claimed]) -> list[int]:
    return [c.id for c in claims]


async def test_a_claim_takes_only_the_queues_it_serves(store: JobStore) -> None:
    """Best first within the served queues; the other queues' better jobs stay."""
    await store.add(
        [new(1, 1.0, "video"), new(2, 2.0, "emails"), new(3, 3.0), new(4, 4.0, "emails")], NOW
    )
    assert ids(await store.claim("m", 5, ALL, NOW, 30, queues={"emails"})) == [2, 4]
    assert ids(await store.claim("m", 5, ALL, NOW, 30, queues={DEFAULT_QUEUE})) == [3]
    assert ids(await store.claim("m", 5, ALL, NOW, 30, queues={"emails"})) == []
    assert ids(await store.claim("m", 5, ALL, NOW, 30)) == [1]  # None: every queue


async def test_several_queues_are_served_in_key_order_across_them(store: JobStore) -> None:
    await store.add(
        [
            new(1, 5.0, "video"),
            new(2, 1.0, "emails"),
            new(3, 2.0),
            new(4, 3.0, "emails"),
            new(5, 4.0, "reports"),
        ],
        NOW,
    )
    got = await store.claim("m", 3, ALL, NOW, 30, queues={"emails", DEFAULT_QUEUE, "reports"})
    assert ids(got) == [2, 3, 4]
    assert ids(await store.claim("m", 3, ALL, NOW, 30, queues=["reports", "video"])) == [5, 1]


async def test_a_queue_no_job_ever_used_claims_nothing(store: JobStore) -> None:
    await store.add([new(1, 1.0)], NOW)
    assert await store.claim("m", 5, ALL, NOW, 30, queues={"never-used"}) == []
    assert await store.claim("m", 5, ALL, NOW, 30, queues=()) == []
    assert ids(await store.claim("m", 5, ALL, NOW, 30, queues={DEFAULT_QUEUE})) == [1]


async def test_queue_room_bounds_each_queue_and_the_rest_goes_to_the_next(
    store: JobStore,
) -> None:
    await store.add([new(i, float(i), "video" if i <= 4 else "emails") for i in range(1, 9)], NOW)
    got = await store.claim("m", 5, ALL, NOW, 30, queue_room={"video": 2})
    assert ids(got) == [1, 2, 5, 6, 7]
    # A full queue (room 0) gets nothing, however good its keys.
    assert ids(await store.claim("m", 5, ALL, NOW, 30, queue_room={"video": 0})) == [8]
    got = await store.claim("m", 5, ALL, NOW, 30, queues={"video"}, queue_room={"video": 1})
    assert ids(got) == [3]


async def test_queue_room_and_executor_room_both_hold(store: JobStore) -> None:
    await store.add(
        [
            new(1, 1.0, "video", executor="thread"),
            new(2, 2.0, "video"),
            new(3, 3.0, "video", executor="thread"),
            new(4, 4.0, "emails", executor="thread"),
            new(5, 5.0, "emails"),
        ],
        NOW,
    )
    got = await store.claim("m", 5, {"thread": 1, "async": 99}, NOW, 30, queue_room={"video": 2})
    assert ids(got) == [1, 2, 5]


async def test_delayed_and_retried_jobs_keep_their_queue(store: JobStore) -> None:
    await store.add([new(1, 1.0, "emails", run_at=NOW + 10), new(2, 2.0, "emails")], NOW)
    assert await store.claim("m", 5, ALL, NOW, 30, queues={DEFAULT_QUEUE}) == []
    (claim,) = await store.claim("m", 5, ALL, NOW, 30, queues={"emails"})
    assert claim.id == 2
    await store.record(
        "m", [Outcome(2, claim.attempt, S.RETRY_WAIT, NOW + 1, run_at=NOW + 5, error="x")]
    )
    assert await store.claim("m", 5, ALL, NOW + 20, 30, queues={DEFAULT_QUEUE}) == []
    assert ids(await store.claim("m", 5, ALL, NOW + 20, 30, queues={"emails"})) == [1, 2]


async def test_a_queue_filter_holds_under_a_rate_limit_and_fair_share(store: JobStore) -> None:
    await store.add(
        [
            new(1, 1.0, "video", tenant="a", rate_key="r"),
            new(2, 2.0, "emails", tenant="a", rate_key="r"),
            new(3, 3.0, "emails", tenant="b"),
            new(4, 4.0, "video", tenant="b"),
        ],
        NOW,
    )
    rates = {"r": js.RateLimit(100, 1.0)}
    got = await store.claim("m", 5, ALL, NOW, 30, rates=rates, queues={"emails"})
    assert sorted(ids(got)) == [2, 3]
    got = await store.claim("m", 5, ALL, NOW, 30, tenants={"a": 1, "b": 1}, queues={"video"})
    assert sorted(ids(got)) == [1, 4]


async def test_a_small_queue_is_served_beside_a_big_one(store: JobStore) -> None:
    """The big queue's jobs come first by key; the small queue's worker still
    gets its own (the benchmark W18 measures that it does not read them)."""
    await store.add([new(i, float(i), "big") for i in range(1, 2001)], NOW)
    await store.add([new(i, 5000.0 + i, "small") for i in range(2001, 2011)], NOW)
    got = await store.claim("m", 20, ALL, NOW, 30, queues={"small"})
    assert ids(got) == list(range(2001, 2011))


async def test_the_reads_give_each_jobs_queue(store: JobStore) -> None:
    await store.add([new(1, 1.0, "emails"), new(2, 2.0)], NOW)
    one, two = await store.fetch(1), await store.fetch(2)
    assert one is not None and two is not None
    assert (one.queue, two.queue) == ("emails", DEFAULT_QUEUE)
    listed = {job.id: job.queue for job in await store.jobs()}
    assert listed == {1: "emails", 2: DEFAULT_QUEUE}


async def test_job_page_filters_by_queue(store: JobStore) -> None:
    await store.add(
        [new(i, float(i), "emails" if i % 2 else DEFAULT_QUEUE) for i in range(1, 7)], NOW
    )
    page = await store.job_page(queue="emails")
    assert [job.id for job in page.jobs] == [5, 3, 1]
    page = await store.job_page(queue=DEFAULT_QUEUE, limit=2)
    assert [job.id for job in page.jobs] == [6, 4]
    assert page.next_before == 4
    assert (await store.job_page(queue="nobody")).jobs == []
    with pytest.raises(TypeError, match="queue must be a str"):
        await store.job_page(queue=3)  # type: ignore[arg-type]


async def test_queue_counts_count_the_unfinished_jobs_of_each_queue(store: JobStore) -> None:
    await store.add(
        [
            new(1, 1.0, "emails"),
            new(2, 2.0, "emails"),
            new(3, 3.0, "emails", run_at=NOW + 60),
            new(4, 4.0),
            new(5, 5.0, "emails", depends_on=(1,)),
        ],
        NOW,
    )
    claims = await store.claim("m", 2, ALL, NOW, 30, queues={"emails"})
    assert ids(claims) == [1, 2]
    await store.record("m", [Outcome(2, claims[1].attempt, S.COMPLETED, NOW + 1)])
    counts = await store.queue_counts()
    assert counts == {
        ("emails", S.RUNNING): 1,
        ("emails", S.PENDING): 2,  # one delayed, one waiting for its upstream
        (DEFAULT_QUEUE, S.PENDING): 1,
    }
