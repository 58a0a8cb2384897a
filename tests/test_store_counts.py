"""The SQLite store's operator reads at scale: counts() (kept by triggers) against a
full count of its rows after a real run (completions, retries, failures, the cascade,
cancels, prune, retry), and lists by status that skip the completed history."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import anyio
import pytest
from dashboard_jobs import Hold, Work

import jobsched as js
from jobsched_sqlite import SQLiteStore, _sql

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


async def test_lists_by_status_do_not_scan_the_finished_history(tmp_path: Path) -> None:
    """jobs(statuses=...) for statuses no job has, and counts(), read an index and a
    table, not 20,000 completed rows (counted in SQLite VM steps, not time)."""
    store = SQLiteStore(f"sqlite:///{tmp_path / 'jobs.db'}")
    await store.open()
    try:
        conn = store._conn
        assert conn is not None
        conn.execute("BEGIN")
        conn.executemany(
            "INSERT INTO jobs (id, name, executor, status, k0, k1, k2, run_at, submitted_at, "
            "finished_at, payload) VALUES (?, 'n', 'async', 'completed', 0, 0, 0, 0, 0, 1, x'')",
            [(i,) for i in range(1, 20_001)],
        )
        _sql.count_completed(conn, {"async": 20_000})  # as the outcomes would have
        conn.execute("COMMIT")
        steps = 0

        def step() -> int:
            nonlocal steps
            steps += 1
            return 0

        conn.set_progress_handler(step, 100)
        for statuses in [(js.JobStatus.FAILED,), (js.JobStatus.PENDING, js.JobStatus.RETRY_WAIT)]:
            steps = 0
            assert await store.jobs(statuses=statuses, limit=25) == []
            assert steps < 50, (statuses, steps * 100)
        steps = 0
        assert len(await store.jobs(statuses=(js.JobStatus.COMPLETED,), limit=25)) == 25
        steps = 0
        assert await store.counts() == {(js.JobStatus.COMPLETED, "async"): 20_000}
        assert steps < 50, ("counts", steps * 100)
        conn.set_progress_handler(None, 0)
    finally:
        await store.close()
