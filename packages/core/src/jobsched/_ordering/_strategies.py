"""Scheduling strategies: each turns a job into a heap key.

A key is computed once, when a job becomes runnable, and the smallest key runs
first. Keys must therefore not depend on the current time: that is what lets
the ready queue be a heap (O(log n) push and pop) instead of a list re-sorted on
every dispatch. ``seq`` (submit order) ends every key so two jobs never tie and
the heap never compares Job objects.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

from .._jobs._job import Job

if TYPE_CHECKING:
    from ._queue import ReadyQueue

SortKey = tuple[Any, ...]


class SchedulingStrategy(ABC):
    """Orders runnable jobs: ``key(job)``, smallest first, time-invariant."""

    __slots__ = ()

    @abstractmethod
    def key(self, job: Job) -> SortKey:
        """The job's place in the ready queue; smaller runs first."""

    def _entry(self, job: Job) -> tuple[Any, ...]:
        # The ready heap's entry: the key's fields, then the job. One flat
        # tuple per queued job instead of a key tuple inside an entry tuple
        # saves an allocation and 56 bytes per job, and the heap compares
        # plain numbers instead of nested tuples. Built-in strategies build
        # it directly.
        return (*self.key(job), job)

    def ready_queue(self) -> ReadyQueue | None:
        """A new ready side for a scheduler, or None for the plain heap on :meth:`key`.

        Override it only when the order cannot be a per-job key (fair share).
        """
        return None


class FIFOStrategy(SchedulingStrategy):
    """Submit order. No starvation, no prioritisation."""

    __slots__ = ()

    def key(self, job: Job) -> SortKey:
        return (job.seq,)

    def _entry(self, job: Job) -> tuple[Any, ...]:
        return (job.seq, job)


class PriorityStrategy(SchedulingStrategy):
    """Highest priority first, FIFO within a priority. LOW can starve."""

    __slots__ = ()

    def key(self, job: Job) -> SortKey:
        return (-job.priority, job.seq)

    def _entry(self, job: Job) -> tuple[Any, ...]:
        return (-job.priority, job.seq, job)


class AgingPriorityStrategy(SchedulingStrategy):
    """Priority with aging, which bounds starvation.

    ``effective(now) = priority + age_rate * (now - submitted_at)``. Every
    waiting job ages at the same rate, so comparing two jobs at any ``now``
    gives the same answer as comparing ``priority - age_rate * submitted_at``,
    which is time-invariant and therefore a valid heap key. With
    ``age_rate=0.1`` a LOW job outranks a fresh HIGH one after 20 s.

    :param age_rate: priority levels gained per second of waiting.
    """

    __slots__ = ("age_rate",)

    def __init__(self, age_rate: float = 0.1) -> None:
        if not age_rate > 0:
            raise ValueError(f"age_rate must be positive, got {age_rate!r}")
        self.age_rate: float = age_rate

    def key(self, job: Job) -> SortKey:
        return (self.age_rate * job.submitted_at - job.priority, job.seq)

    def _entry(self, job: Job) -> tuple[Any, ...]:
        return (self.age_rate * job.submitted_at - job.priority, job.seq, job)


class EarliestDeadlineFirstStrategy(SchedulingStrategy):
    """Earliest deadline first; jobs without a deadline go last, by priority."""

    __slots__ = ()

    def key(self, job: Job) -> SortKey:
        deadline = job.deadline
        if deadline is None:
            deadline = math.inf
        return (deadline, -job.priority, job.seq)

    def _entry(self, job: Job) -> tuple[Any, ...]:
        deadline = job.deadline
        if deadline is None:
            deadline = math.inf
        return (deadline, -job.priority, job.seq, job)
