"""The queue operations the scheduler needs, served by two in-memory heaps.

Durable stores (SQLite, PostgreSQL with leases) are meant to implement the
same four operations; nothing else in the scheduler touches the heaps.
"""

from __future__ import annotations

from collections.abc import Callable
from heapq import heappop, heappush

from ._jobs import Job
from ._strategies import SortKey


class JobQueue:
    """A ready heap ordered by the strategy's key and a delayed heap ordered by ``run_at``.

    Cancelled jobs are not removed from either heap (that is O(n)); they are
    skipped when popped. The scheduler never queues a job twice, so a terminal
    status is all a skipped entry needs.
    """

    __slots__ = ("_delayed", "_key", "_ready")

    def __init__(self, key: Callable[[Job], SortKey]) -> None:
        self._key = key
        self._ready: list[tuple[SortKey, Job]] = []
        self._delayed: list[tuple[float, int, Job]] = []

    def push_ready(self, job: Job) -> None:
        """Queue a job that may start now."""
        heappush(self._ready, (self._key(job), job))

    def push_delayed(self, job: Job) -> bool:
        """Queue a job that may start at ``job.run_at``; True if it is now the earliest."""
        entry = (job.run_at, job.seq, job)
        delayed = self._delayed
        heappush(delayed, entry)
        return delayed[0] is entry

    def promote_due(self, now: float) -> int:
        """Move every delayed job due by ``now`` to the ready heap; how many moved."""
        delayed, ready, key = self._delayed, self._ready, self._key
        moved = 0
        while delayed and delayed[0][0] <= now:
            job = heappop(delayed)[2]
            if not job.status._terminal:  # type: ignore[attr-defined]
                heappush(ready, (key(job), job))
                moved += 1
        return moved

    def pop_next(self) -> Job | None:
        """Remove and return the best ready job, or None when none is ready."""
        ready = self._ready
        while ready:
            job = heappop(ready)[1]
            if not job.status._terminal:  # type: ignore[attr-defined]
                return job
        return None

    def next_due(self) -> float | None:
        """The earliest ``run_at`` in the delayed heap, or None."""
        delayed = self._delayed
        return delayed[0][0] if delayed else None

    def __len__(self) -> int:
        """Entries held, counting cancelled ones not yet skipped."""
        return len(self._ready) + len(self._delayed)
