"""Queue pauses in the PostgreSQL store's claim paths beyond the conformance
suite's: the frontier claim (a member's bounds), a member that has not seen
the pause, and what the claims write (nothing for a paused queue's rows: no
claim and release)."""

from __future__ import annotations

import pg_store
import psycopg
import pytest
from pg import SECRET

from jobsched.store import NewJob
from jobsched_postgres import PostgresStore

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]

NOW = 1_700_000_000.0
ALL = {"async": 99}

anyio_backend, url, store = pg_store.anyio_backend, pg_store.url, pg_store.store


def new(job_id: int, key: float, queue: str = "default") -> NewJob:
    return NewJob(job_id, f"j{job_id}", "async", (key,), run_at=NOW, submitted_at=NOW,
                  payload=b"P", queue=queue)  # fmt: skip


def ids(claims: list) -> list[int]:  # type: ignore[type-arg]
    return sorted(c.id for c in claims)


async def test_the_frontier_claim_takes_no_paused_row_and_finds_them_all_at_the_resume(
    store: PostgresStore, url: str
) -> None:
    """A member with bounds from claims before the pause: its paused queue's
    rows, ready before and made ready during the pause, with keys below and
    above its bound, are neither taken nor skipped for good."""
    await store.add([new(i, float(i)) for i in range(1, 5)] + [new(10, 10.0, "video")], NOW)
    assert ids(await store.claim("m", 2, ALL, NOW, 30)) == [1, 2]  # bounds kept
    other = PostgresStore(url, secret=SECRET)
    await other.open()
    try:
        assert await other.pause_queue("video")
        await store.add([new(20, 0.5, "video"), new(21, 20.0, "video"), new(22, 21.0)], NOW)
        assert ids(await store.claim("m", 99, ALL, NOW, 30)) == [3, 4, 22]
        assert await store.claim("m", 99, ALL, NOW, 30) == []
        with psycopg.connect(url) as conn:
            rows = conn.execute(
                "SELECT status, attempts, owner FROM jobsched_jobs WHERE queue_name = 'video'"
            ).fetchall()
        assert rows == [("pending", 0, None)] * 3  # never claimed, nor handed back
        assert await other.resume_queue("video")
        assert ids(await store.claim("m", 99, ALL, NOW, 30)) == [10, 20, 21]
    finally:
        await other.close()


async def test_a_member_that_saw_a_pause_claims_as_before_once_it_ends(
    store: PostgresStore,
) -> None:
    """After the resume, the first claim reads no pause and the member goes
    back to the plain claim (its bounds read from the front once)."""
    await store.add([new(i, float(i), "video" if i % 2 else "default") for i in range(1, 7)], NOW)
    await store.pause_queue("video")
    assert ids(await store.claim("m", 1, ALL, NOW, 30)) == [2]
    assert store._pauses
    await store.resume_queue("video")
    assert ids(await store.claim("m", 2, ALL, NOW, 30)) == [1, 3]
    assert not store._pauses
    assert ids(await store.claim("m", 9, ALL, NOW, 30)) == [4, 5, 6]


async def test_a_pause_on_a_store_without_named_queues_pauses_the_default_one(
    store: PostgresStore,
) -> None:
    """The pause adds the named queues' column: the claims that leave the
    default queue out name it, on a store that never saw a named queue."""
    await store.add([new(1, 1.0), new(2, 2.0)], NOW)
    assert await store.pause_queue("default")
    assert await store.claim("m", 9, ALL, NOW, 30) == []
    assert await store.claim("m", 9, ALL, NOW, 30, queues={"default"}) == []
    assert await store.resume_queue("default")
    assert ids(await store.claim("m", 9, ALL, NOW, 30, queues={"default"})) == [1, 2]
