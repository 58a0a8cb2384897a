"""Two schedulers on one PostgreSQL store, in one process: what one member
commits reaches the other through the store alone.

The fleet in several processes (kills, pauses, fencing under load) is tested
in the fleet tests; these pin the store's wake-up and hand-over on both
backends, fast.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest
from pg import SECRET, schema_url
from sample_jobs import Ok

import jobsched as js
from jobsched._engine._link import _timing
from jobsched_postgres import PostgresStore

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    # The real clock on both: the store works in threads.
    return str(request.param)


async def test_an_idle_member_is_woken_by_notify_not_by_polling(
    pg_session_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With polling an hour apart, the store's NOTIFY wakes the idle member and it runs the job."""
    monkeypatch.setattr(_timing, "POLL_INTERVAL", 3600.0)
    url = schema_url(pg_session_database)
    worker_store, submitter_store = (PostgresStore(url, secret=SECRET) for _ in range(2))
    listening, notified, finished = anyio.Event(), anyio.Event(), anyio.Event()
    seen: list[Any] = []
    watch = worker_store.watch

    async def counting_watch(wake: Callable[[], None]) -> None:
        def counted() -> None:
            # The first call is the catch-up once LISTEN is in place; any
            # later one is a notification.
            (notified if listening.is_set() else listening).set()
            wake()

        await watch(counted)

    monkeypatch.setattr(worker_store, "watch", counting_watch)

    def listener(job: js.Job, old: js.JobStatus, new: js.JobStatus) -> None:
        if new is js.JobStatus.COMPLETED:
            seen.append(job.result)
            finished.set()

    worker = js.JobScheduler(store=worker_store, num_workers=2)
    worker.add_listener(listener)
    async with worker:
        with anyio.fail_after(20):
            await listening.wait()
            submitter = js.JobScheduler(store=submitter_store)  # never started: it only submits
            job_id = submitter.submit(Ok("from the other member"))
            await submitter.flush()
            await submitter_store.close()
            await notified.wait()
            await finished.wait()
        stored = await worker.fetch(job_id)
    assert seen == ["from the other member"]
    assert stored.status is js.JobStatus.COMPLETED
