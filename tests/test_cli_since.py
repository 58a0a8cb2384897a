"""`jobsched jobs --since` across members: ids do not follow the submits.

Each member numbers its jobs from a block of ids of its own, so a quiet
member's job of a minute ago can have a lower id than a busy member's of
last week. The listing once stopped at the first page of older jobs and
missed it.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import anyio

from jobsched._cli._read import Filters, _filtered
from jobsched.store import JobPage


class _PagedStore:
    """Pages newest id first, as every store's ``job_page`` does."""

    def __init__(self, jobs: list[Any]) -> None:
        self.jobs = sorted(jobs, key=lambda job: -job.id)
        self.pages = 0

    async def job_page(
        self, *, statuses: Any, limit: int, before: int | None, scan: int, **_: Any
    ) -> JobPage:
        self.pages += 1
        window = [job for job in self.jobs if before is None or job.id < before][:limit]
        rest = [job for job in self.jobs if job.id < window[-1].id] if window else []
        return JobPage(window, window[-1].id if window and rest else None, len(window))


def _job(job_id: int, submitted_at: float) -> Any:
    return SimpleNamespace(id=job_id, submitted_at=submitted_at)


def test_since_finds_a_quiet_members_recent_job_below_older_ones() -> None:
    # Member A took ids 1-1000 and submitted job 2 just now; member B took
    # 1001-2000 and submitted 20 jobs last week.
    last_week, now = 1_000.0, 1_000_000.0
    store = _PagedStore(
        [_job(1, last_week), _job(2, now)] + [_job(1001 + n, last_week) for n in range(20)]
    )
    filters = Filters(None, {}, None, None, now - 3600)
    found = anyio.run(_filtered, store, (), 5, filters)
    assert [job.id for job in found] == [2]
    # It read to the end of the history, page by page (5 at a time).
    assert store.pages == 5


def test_since_still_stops_once_enough_are_found() -> None:
    store = _PagedStore([_job(n, 10.0 * n) for n in range(1, 101)])
    found = anyio.run(_filtered, store, (), 3, Filters(None, {}, None, None, 0.0))
    assert [job.id for job in found] == [100, 99, 98]
    assert store.pages == 1
