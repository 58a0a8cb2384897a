"""The queue operations the scheduler needs, served by two in-memory heaps.

Durable stores (SQLite, PostgreSQL with leases) are meant to implement the
same four operations; nothing else in the scheduler touches the heaps.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable
from heapq import heappop, heappush
from typing import Any

from ._jobs import Job
from ._strategies import FIFOStrategy, PriorityStrategy, SchedulingStrategy, SortKey


class JobQueue:
    """A ready heap ordered by the strategy's key and a delayed heap ordered by ``run_at``.

    Cancelled jobs are not removed from either heap (that is O(n)); they are
    skipped when popped. The scheduler never queues a job twice, so a terminal
    status is all a skipped entry needs.
    """

    __slots__ = ("_delayed", "_entry", "_key", "_ready")

    def __init__(self, key: Callable[[Job], SortKey]) -> None:
        self._key = key
        # Ready entries are flat, ``(*key, job)``: see SchedulingStrategy._entry.
        owner = getattr(key, "__self__", None)
        self._entry: Callable[[Job], tuple[Any, ...]] = (
            owner._entry
            if isinstance(owner, SchedulingStrategy) and owner.key == key
            else lambda job: (*key(job), job)
        )
        self._ready: list[tuple[Any, ...]] = []
        self._delayed: list[tuple[float, int, Job]] = []

    def push_ready(self, job: Job) -> None:
        """Queue a job that may start now."""
        heappush(self._ready, self._entry(job))

    def push_delayed(self, job: Job) -> bool:
        """Queue a job that may start at ``job.run_at``; True if it is now the earliest."""
        entry = (job.run_at, job.seq, job)
        delayed = self._delayed
        heappush(delayed, entry)
        return delayed[0] is entry

    def promote_due(self, now: float) -> int:
        """Move every delayed job due by ``now`` to the ready side; how many moved."""
        # Through push_ready, so every ready side shares this; promotion is
        # per delayed job, not the dispatch hot path.
        delayed, push = self._delayed, self.push_ready
        moved = 0
        while delayed and delayed[0][0] <= now:
            job = heappop(delayed)[2]
            if not job.status._terminal:  # type: ignore[attr-defined]
                push(job)
                moved += 1
        return moved

    def pop_next(self) -> Job | None:
        """Remove and return the best ready job, or None when none is ready."""
        ready = self._ready
        while ready:
            job: Job = heappop(ready)[-1]
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


class ReadyQueue(ABC):
    """The ready side of the queue, for a strategy whose order is not one heap key.

    A strategy supplies one from :meth:`SchedulingStrategy.ready_queue`. Like
    the plain heap, it may keep cancelled jobs and skip them when popping.
    """

    __slots__ = ()

    @abstractmethod
    def push(self, job: Job) -> None:
        """Hold a job that may start now."""

    @abstractmethod
    def pop(self) -> Job | None:
        """Remove and return the job to start next, or None; never a terminal job."""

    @abstractmethod
    def __len__(self) -> int:
        """Entries held, counting cancelled ones not yet skipped."""


class _PluggedJobQueue(JobQueue):
    """A :class:`JobQueue` whose ready side is a strategy's :class:`ReadyQueue`.

    A subclass rather than a branch in :class:`JobQueue`, so the plain heap
    path pays nothing for the hook.
    """

    __slots__ = ("_plug",)

    def __init__(self, key: Callable[[Job], SortKey], ready: ReadyQueue) -> None:
        super().__init__(key)
        self._plug = ready

    def push_ready(self, job: Job) -> None:
        self._plug.push(job)

    def pop_next(self) -> Job | None:
        return self._plug.pop()

    def __len__(self) -> int:
        return len(self._plug) + len(self._delayed)


class _Level:
    """One priority level of a :class:`_LevelQueue`."""

    __slots__ = ("fifo", "late", "rank")

    def __init__(self, rank: Any) -> None:
        self.rank = rank
        self.fifo: deque[Job] = deque()  # jobs in increasing seq order
        self.late: list[tuple[int, Job]] = []  # (seq, job) heap: pushed out of seq order


class _LevelQueue(JobQueue):
    """The ready side for :class:`PriorityStrategy` and :class:`FIFOStrategy`: a FIFO per level.

    Their key is ``(-priority, seq)`` (FIFO: one level), and jobs nearly
    always become ready in ``seq`` order, so a deque per priority level serves
    them in O(1) where a heap pays O(log n) comparisons, most of them cache
    misses once the queue is large, and holds a bare reference per job instead
    of an entry tuple. A job that becomes ready out of ``seq`` order (a retry,
    a delayed or blocked job released late) goes to a small heap beside its
    level's deque and the two are merged on pop, so the order is exactly the
    key's.
    """

    __slots__ = ("_by_rank", "_fifo_only", "_levels")

    def __init__(self, strategy: SchedulingStrategy) -> None:
        super().__init__(strategy.key)
        self._fifo_only = type(strategy) is FIFOStrategy
        self._by_rank: dict[Any, _Level] = {}
        self._levels: list[_Level] = []  # best (smallest rank) first

    def push_ready(self, job: Job) -> None:
        # -priority is a plain int even for a JobPriority: hashing it is cheap.
        rank = 0 if self._fifo_only else -job.priority
        level = self._by_rank.get(rank)
        if level is None:
            level = self._by_rank[rank] = _Level(rank)
            self._levels.append(level)
            self._levels.sort(key=_rank_of)
        fifo = level.fifo
        if not fifo or fifo[-1].seq < job.seq:
            fifo.append(job)
        else:
            heappush(level.late, (job.seq, job))

    def pop_next(self) -> Job | None:
        for level in self._levels:
            fifo, late = level.fifo, level.late
            while fifo or late:
                if late and (not fifo or late[0][0] < fifo[0].seq):
                    job = heappop(late)[1]
                else:
                    job = fifo.popleft()
                if not job.status._terminal:  # type: ignore[attr-defined]
                    return job
        return None

    def __len__(self) -> int:
        held = sum(len(level.fifo) + len(level.late) for level in self._levels)
        return held + len(self._delayed)


def _rank_of(level: _Level) -> Any:
    return level.rank


def queue_for(strategy: SchedulingStrategy) -> JobQueue:
    """The queue ``strategy`` orders: the plain heap on its key, or its own ready side."""
    ready = strategy.ready_queue()
    if ready is None:
        if type(strategy) in (PriorityStrategy, FIFOStrategy):
            # Exact types only: a subclass may override key().
            return _LevelQueue(strategy)
        return JobQueue(strategy.key)
    return _PluggedJobQueue(strategy.key, ready)
