"""The finished jobs a scheduler's table keeps under a retention by age
(``js.Retention`` with an age for some outcome).

Only a count bounds the history by default, and the table keeps that in one
deque, trimmed inline on the finish path (no Python call per job). An age
per outcome needs the jobs apart by outcome: a failure kept a week must not
hold up the completions behind it that are due to go. So each status has a
deque in finish order, and every finish drops the heads that aged out and,
over ``max_finished``, the oldest head of all.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from .._enums import JobStatus
from .._jobs._job import Job


class RetainedHistory:
    """Finished jobs by status, oldest first; :meth:`add` files one and
    evicts (from ``jobs``) what the rule no longer keeps."""

    __slots__ = ("_ages", "_bound", "_by_status", "_filed", "_jobs", "_size", "keep")

    def __init__(
        self, jobs: dict[int, Job], ages: dict[JobStatus, float], bound: int | None
    ) -> None:
        self._jobs = jobs
        self._ages = [(status, age) for status, age in ages.items()]
        self._bound = bound
        #: status -> (finished_at, filing order, job number), in finish order:
        #: the filing order breaks ties of finished_at (a coarse clock, or a
        #: test's fixed one) so the count bound drops the first filed.
        self._by_status: dict[JobStatus, deque[tuple[float, int, int]]] = {}
        self._filed = 0
        self._size = 0
        #: The dependency graph's guard: True keeps a job a retention would
        #: drop (one an unfinished job depends on); refiled as if it just ended.
        self.keep: Callable[[int], bool] | None = None

    def __len__(self) -> int:
        return self._size

    def add(self, number: int) -> None:
        """File the job ``number`` that just ended; evict by age (its finish
        time is now), then beyond the count bound."""
        job = self._jobs[number]
        now = job.finished_at if job.finished_at is not None else 0.0
        by_status = self._by_status
        queue = by_status.get(job.status)
        if queue is None:
            queue = by_status[job.status] = deque()
        self._filed += 1
        queue.append((now, self._filed, number))
        self._size += 1
        for status, age in self._ages:
            aged = by_status.get(status)
            if aged:
                cutoff = now - age
                looks = len(aged)
                while aged and aged[0][0] < cutoff and looks:
                    looks -= 1
                    self._drop(aged, now)
        bound = self._bound
        if bound is not None:
            looks = self._size
            while self._size > bound and looks:
                looks -= 1
                oldest = min((q for q in by_status.values() if q), key=lambda q: q[0])
                self._drop(oldest, now)

    def _drop(self, queue: deque[tuple[float, int, int]], now: float) -> None:
        """Evict the oldest of ``queue``, or refile it at ``now`` if it is kept."""
        entry = queue.popleft()
        number = entry[2]
        keep = self.keep
        if keep is not None and keep(number):
            self._filed += 1
            queue.append((now, self._filed, number))
            return
        self._jobs.pop(number, None)
        self._size -= 1
