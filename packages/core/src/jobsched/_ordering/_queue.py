"""The queue operations the scheduler needs, served by two in-memory heaps.

Durable stores (SQLite, PostgreSQL with leases) are meant to implement the
same operations; nothing else in the scheduler touches the heaps.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable
from heapq import heapify, heappop, heappush
from typing import Any

from .._jobs._job import Job
from ._strategies import FIFOStrategy, PriorityStrategy, SchedulingStrategy, SortKey


class JobQueue:
    """A ready heap ordered by the strategy's key and a delayed heap ordered by ``run_at``.

    Push and pop are O(log n). A cancelled job is not taken out of its heap
    at once (that is O(n)); it is skipped when popped. The scheduler never
    queues a job twice, so a terminal status is all a skipped entry needs.
    But a delayed job may not be popped for hours, nor a queued one while the
    workers are busy, so :meth:`discard` counts cancellations and, once they
    may be half the entries held, rebuilds the heaps without the dead ones:
    O(1) amortised per cancel, and dead entries never outnumber live ones.
    """

    __slots__ = ("_check_at", "_dead", "_delayed", "_entry", "_key", "_ready")

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
        self._dead = 0  # discards since the last purge: an upper bound on dead entries
        self._check_at = 1  # the count at which to compare it with the entries held

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
        """The earliest ``run_at`` of a live delayed job, or None."""
        delayed = self._delayed
        # Dead heads go now, so the ticker never sleeps until a cancelled job's time.
        while delayed and delayed[0][2].status._terminal:  # type: ignore[attr-defined]
            heappop(delayed)
        return delayed[0][0] if delayed else None

    def discard(self, job: Job) -> None:
        """``job`` was cancelled before it was popped: its entry, if any, may go."""
        # A cancelled job that was in no heap (blocked on a dependency, held by
        # a limit) counts too; that only brings a purge forward, and a purge
        # costs O(entries held) < 2 * discards since the last one either way.
        self._dead += 1
        if self._dead < self._check_at:
            return
        if self._dead * 2 > self._held():
            self._purge()
            self._dead = 0
        # Counting what is held may cost more than O(1) (one step per level):
        # count again only after as many discards as it costs.
        self._check_at = self._dead + self._held_cost()

    def _held(self) -> int:
        """Entries the next purge would scan."""
        return len(self)

    def _held_cost(self) -> int:
        return 1

    def _purge(self) -> None:
        """Drop every terminal job's entry."""
        _drop_terminal(self._delayed)
        _drop_terminal(self._ready)

    def __len__(self) -> int:
        """Entries held, counting cancelled ones not yet skipped."""
        return len(self._ready) + len(self._delayed)


def _drop_terminal(heap: list[Any]) -> None:
    # In place: callers may hold the list.
    heap[:] = [entry for entry in heap if not entry[-1].status._terminal]
    heapify(heap)


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

    # The strategy's own ready side keeps its cancelled jobs until it pops
    # them (ReadyQueue has no purge); only the delayed heap is purged here.
    def _held(self) -> int:
        return len(self._delayed)

    def _purge(self) -> None:
        _drop_terminal(self._delayed)


class _Level:
    """One priority level of a :class:`_LevelQueue`."""

    __slots__ = ("active", "fifo", "late", "rank")

    def __init__(self, rank: Any) -> None:
        self.rank = rank
        self.fifo: deque[Job] = deque()  # jobs in increasing seq order
        self.late: list[tuple[int, Job]] = []  # (seq, job) heap: pushed out of seq order
        self.active = False  # in its queue's heap of levels


#: Emptied levels kept for reuse while no more levels than this are known. A
#: level costs about 1 µs and 900 bytes to make (its deque), so a queue that
#: runs dry and refills keeps its few levels; many distinct priorities don't
#: keep one level each forever.
_KEPT_LEVELS = 16


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

    The levels that hold jobs are in a heap by rank, so with L of them a push
    or pop is O(1) while its level stays non-empty, plus O(log L) when the
    level fills or empties: a few priorities cost nothing, 10,000 distinct
    ones O(log L). An emptied level leaves the heap (at the next pop, or push
    to another level) and is forgotten unless few levels are known
    (:data:`_KEPT_LEVELS`). Counting the entries held takes a step per level,
    so :meth:`discard` counts them every L + 1 cancels: dead entries may then
    pass the live ones by 2 (L + 1).
    """

    __slots__ = ("_active", "_by_rank", "_fifo_only")

    def __init__(self, strategy: SchedulingStrategy) -> None:
        super().__init__(strategy.key)
        self._fifo_only = type(strategy) is FIFOStrategy
        self._by_rank: dict[Any, _Level] = {}  # every level held: active, or kept empty
        # (rank, level) for each non-empty level. An emptied level stays on
        # top until the next pop_next, or push_ready of another level, takes
        # it off, so a queue that runs dry and refills (a job at a time, say)
        # pays no heap push and pop per job; nothing else is ever empty.
        # Ranks are unique, so the heap never compares levels.
        self._active: list[tuple[Any, _Level]] = []

    def push_ready(self, job: Job) -> None:
        # -priority is a plain int even for a JobPriority: hashing it is cheap.
        rank = 0 if self._fifo_only else -job.priority
        level = self._by_rank.get(rank)
        if level is None:
            level = self._by_rank[rank] = _Level(rank)
        fifo = level.fifo
        if fifo:
            if fifo[-1].seq < job.seq:
                fifo.append(job)
            else:
                heappush(level.late, (job.seq, job))
            return
        if not level.active:
            self._activate(level)
        fifo.append(job)

    def _activate(self, level: _Level) -> None:
        active = self._active
        if active:
            top = active[0][1]
            if not top.fifo and not top.late:
                self._retire()  # emptied by pop_next, which leaves it on top
        heappush(active, (level.rank, level))
        level.active = True

    def pop_next(self) -> Job | None:
        active = self._active
        while active:
            level = active[0][1]
            fifo, late = level.fifo, level.late
            if late and (not fifo or late[0][0] < fifo[0].seq):
                job = heappop(late)[1]
            elif fifo:
                job = fifo.popleft()
            elif len(active) > 1:
                self._retire()
                continue
            else:
                return None
            if not job.status._terminal:  # type: ignore[attr-defined]
                return job
        return None

    def _retire(self) -> None:
        """Take the empty top level out of the heap; forget it unless few levels are known."""
        level = heappop(self._active)[1]
        level.active = False
        if len(self._by_rank) > _KEPT_LEVELS:
            del self._by_rank[level.rank]

    def __len__(self) -> int:
        held = sum(len(level.fifo) + len(level.late) for _, level in self._active)
        return held + len(self._delayed)

    def _held_cost(self) -> int:
        return len(self._active) + 1

    def _purge(self) -> None:
        _drop_terminal(self._delayed)
        kept = []
        for entry in self._active:
            level = entry[1]
            level.fifo = deque(job for job in level.fifo if not job.status._terminal)  # type: ignore[attr-defined]
            _drop_terminal(level.late)
            if level.fifo or level.late:
                kept.append(entry)
                continue
            level.active = False
            if len(self._by_rank) > _KEPT_LEVELS:
                del self._by_rank[level.rank]
        heapify(kept)
        self._active[:] = kept


def queue_for(strategy: SchedulingStrategy) -> JobQueue:
    """The queue ``strategy`` orders: the plain heap on its key, or its own ready side."""
    ready = strategy.ready_queue()
    if ready is None:
        if type(strategy) in (PriorityStrategy, FIFOStrategy):
            # Exact types only: a subclass may override key().
            return _LevelQueue(strategy)
        return JobQueue(strategy.key)
    return _PluggedJobQueue(strategy.key, ready)
