"""The SQLite store's counts(), kept by triggers, against a full count of its rows
after a real run: completions, retries, failures, the cascade, cancels, prune, retry."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import anyio
import pytest
from dashboard_jobs import Hold, Work

import jobsched as js
from jobsched_sqlite import SQLiteStore

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def full_count(path: Path) -> dict[tuple[js.JobStatus, str], int]:
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT status, executor, COUNT(*) FROM jobs GROUP BY 1, 2")
        return {(js.JobStatus(s), e): n for s, e, n in rows}
    finally:
        conn.close()


async def test_counts_match_the_rows_through_a_run(tmp_path: Path) -> None:
    """Every status change a scheduler, cancel, retry and prune make is counted."""
    path = tmp_path / "jobs.db"
    store = SQLiteStore(f"sqlite:///{path}")
    once = js.RetryPolicy(max_retries=1, base_delay=0)
    never = js.RetryPolicy(max_retries=0)
    async with js.JobScheduler(num_workers=2, store=store) as s:
        with anyio.fail_after(30):
            for i in range(5):
                s.submit(Work(f"ok {i}"))
            flaky = s.submit(Work("flaky", failures=1, retry=once))
            bad = s.submit(Work("bad", failures=-1, retry=never))
            s.submit(Work("after bad"), depends_on=[bad])
            await s.join()
            hold = s.submit(Hold("hold", timeout=None))
            later = s.submit(Work("later"), delay=600)
            s.cancel(later)
            await s.flush()
            assert (await s.fetch(hold)).status in (js.JobStatus.PENDING, js.JobStatus.RUNNING)
            assert await store.counts() == full_count(path)
            assert (await s.fetch(flaky)).status is js.JobStatus.COMPLETED
            assert await store.retry([int(bad.removeprefix("job-"))], time.time())
            assert await store.counts() == full_count(path)
            s.cancel(hold)
            await s.join()
    await store.open()
    try:
        assert await store.prune(keep=3) > 0
        counts = await store.counts()
        assert counts == full_count(path)
        assert sum(counts.values()) == 3
    finally:
        await store.close()
