"""Paused queues: no claim of any member takes a paused queue's jobs, on
every claim path (key order, some queues, queue rooms, rate limits, fair
share), and a resume gives them back; members report what they serve.

docs/stores.md "Queues" is what every store implements; the scheduler's
side (``pause_queue``, ``queues()``) is tested with the scheduler
(the repository's tests/test_queue_pauses.py).
"""

from __future__ import annotations

import pytest

import jobsched as js
from jobsched.store import DEFAULT_QUEUE, Claimed, JobStore, Member, NewJob

from . import Opener

pytestmark = pytest.mark.anyio

NOW = 1_700_000_000.0
ALL = {"async": 99}


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


async def mixed(store: JobStore) -> None:
    """Video's jobs have the best keys: a claim that took them would show."""
    await store.add(
        [new(1, 1.0, "video"), new(2, 2.0, "video"), new(3, 3.0), new(4, 4.0, "emails")], NOW
    )


async def test_a_paused_queue_is_claimed_by_no_member(store: JobStore, member: Opener) -> None:
    """Paused through one member, honoured by another's claim of every queue."""
    await mixed(store)
    assert await store.pause_queue("video") is True
    other = await member()
    assert ids(await other.claim("m2", 9, ALL, NOW, 30)) == [3, 4]
    assert await other.claim("m2", 9, ALL, NOW, 30) == []
    assert await other.paused_queues() == {"video"}


async def test_a_resumed_queue_is_claimed_again(store: JobStore) -> None:
    await mixed(store)
    await store.pause_queue("video")
    assert ids(await store.claim("m", 1, ALL, NOW, 30)) == [3]
    assert await store.resume_queue("video") is True
    assert await store.paused_queues() == set()
    assert ids(await store.claim("m", 9, ALL, NOW, 30)) == [1, 2, 4]


async def test_pausing_twice_and_resuming_a_queue_not_paused_change_nothing(
    store: JobStore,
) -> None:
    """Idempotent: the second pause says False, a resume of a queue never paused too."""
    assert await store.resume_queue("video") is False
    assert await store.pause_queue("video") is True
    assert await store.pause_queue("video") is False
    assert await store.paused_queues() == {"video"}
    assert await store.resume_queue("video") is True
    assert await store.resume_queue("video") is False


async def test_a_queue_no_job_used_may_be_paused_ahead_of_its_jobs(store: JobStore) -> None:
    await store.pause_queue("reports")
    await store.add([new(1, 1.0, "reports"), new(2, 2.0)], NOW)
    assert ids(await store.claim("m", 9, ALL, NOW, 30)) == [2]


async def test_the_default_queue_pauses_like_any(store: JobStore) -> None:
    """On a store whose jobs are all the default queue's (no named queue used)."""
    await store.add([new(1, 1.0), new(2, 2.0)], NOW)
    await store.pause_queue(DEFAULT_QUEUE)
    assert await store.claim("m", 9, ALL, NOW, 30) == []
    await store.add([new(3, 0.5, "emails")], NOW)
    assert ids(await store.claim("m", 9, ALL, NOW, 30)) == [3]
    await store.resume_queue(DEFAULT_QUEUE)
    assert ids(await store.claim("m", 9, ALL, NOW, 30)) == [1, 2]


async def test_a_claim_of_named_queues_leaves_the_paused_one(store: JobStore) -> None:
    await mixed(store)
    await store.pause_queue("video")
    got = await store.claim("m", 9, ALL, NOW, 30, queues={"video", "emails"})
    assert ids(got) == [4]
    got = await store.claim("m", 9, ALL, NOW, 30, queue_room={"emails": 1})
    assert ids(got) == [3]


async def test_rate_limited_and_fair_share_claims_leave_the_paused_one(store: JobStore) -> None:
    await store.add(
        [
            new(1, 1.0, "video", rate_key="r", tenant="a"),
            new(2, 2.0, "video", tenant="b"),
            new(3, 3.0, rate_key="r", tenant="a"),
            new(4, 4.0, tenant="b"),
        ],
        NOW,
    )
    await store.pause_queue("video")
    rates = {"r": js.RateLimit(100, 1.0)}
    assert ids(await store.claim("m", 1, ALL, NOW, 30, rates=rates)) == [3]
    assert ids(await store.claim("m", 9, ALL, NOW, 30, tenants={"a": 1, "b": 1})) == [4]


async def test_a_delayed_job_of_a_paused_queue_waits_past_its_time(store: JobStore) -> None:
    await store.add([new(1, 1.0, "video", run_at=NOW + 5), new(2, 2.0, run_at=NOW + 5)], NOW)
    await store.pause_queue("video")
    assert ids(await store.claim("m", 9, ALL, NOW + 10, 30)) == [2]
    await store.resume_queue("video")
    assert ids(await store.claim("m", 9, ALL, NOW + 11, 30)) == [1]


async def test_members_report_the_queues_and_executors_they_serve(store: JobStore) -> None:
    await store.report_member(
        Member("h:1:a", 4, 0, NOW, NOW, queues=("emails", "video"), executors=("async", "thread"))
    )
    await store.report_member(Member("h:2:b", 4, 0, NOW, NOW + 1))
    got = {m.owner: m for m in await store.members()}
    assert got["h:1:a"].queues == ("emails", "video")
    assert got["h:1:a"].executors == ("async", "thread")
    assert got["h:2:b"].queues is None and got["h:2:b"].executors == ()
    assert got["h:1:a"].serves("video") and not got["h:1:a"].serves(DEFAULT_QUEUE)
    assert got["h:2:b"].serves("anything")
    # A member that serves no queue (a producer) reports an empty tuple, not None.
    await store.report_member(Member("h:1:a", 0, 0, NOW, NOW + 2, queues=()))
    got = {m.owner: m for m in await store.members()}
    assert got["h:1:a"].queues == () and not got["h:1:a"].serves("video")
