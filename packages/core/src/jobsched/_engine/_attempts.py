"""Running attempts: what cancel() reaches, and one deadline heap for their timeouts and graces."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from heapq import heapify, heappop, heappush
from typing import Any

import anyio

from .._jobs._current import Running
from .._jobs._job import Job
from . import _resume


class _CancelledScope:
    """Stands in for the scope of an attempt that is over as cancelled or timed out:
    the worker itself was cancelled (shutdown), or the attempt ended past its deadline."""

    cancel_called = True


SHUTDOWN_SCOPE: Any = _CancelledScope()


class Attempt:
    """A running attempt that suspended: what cancel() needs to reach it."""

    __slots__ = (
        "abandoned",
        "cell",
        "deadline",
        "job",
        "live",
        "on_cancel",
        "reason",
        "scope",
        "seq",
    )

    def __init__(
        self,
        scope: anyio.CancelScope,
        job: Job,
        on_cancel: Callable[[Attempt], None],
    ) -> None:
        self.scope: anyio.CancelScope = scope
        self.job = job
        self.reason: str | None = None
        self.live = True
        #: The scheduler stopped waiting for it (see JobScheduler._abandon).
        self.abandoned = False
        #: When it times out, or its grace ends (scheduler clock), while
        #: Deadlines watches it; ``seq`` tells its one live heap entry.
        self.deadline: float | None = None
        self.seq = 0
        self.on_cancel = on_cancel
        #: Its worker's js.current_job() cell (see _jobs._current.Running).
        self.cell: Running | None = None

    def cancel(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason
        if not self.scope.cancel_called:
            self.scope.cancel()
            self.on_cancel(self)


class Deadlines:
    """The timeouts and cancel graces of every suspended attempt, in one heap
    the ticker watches.

    A timer per attempt (setting and resetting the worker scope's deadline)
    cost about 4 µs, as much as the rest of an attempt that suspends: anyio
    makes and cancels an event-loop timer each time. Here an attempt's
    timeout is a heap push; the ticker sleeps until the earliest deadline and
    cancels the scope of an attempt still running then (its ``reason`` stays
    None: it timed out). A cancelled attempt gets a second entry,
    :data:`~jobsched._engine._resume.CANCEL_GRACE` later: if it is still running
    then, ``abandon`` is called with it. An attempt has one live entry at a
    time (the one whose ``seq`` it holds); the others, and those of attempts
    that ended, are removed lazily: at once when they head the heap (with one
    timeout for all jobs they nearly always do), otherwise when the stale
    entries outnumber the live ones.
    """

    __slots__ = ("_abandon", "_heap", "_seq", "_stale")

    def __init__(self, abandon: Callable[[Attempt], None]) -> None:
        self._heap: list[tuple[float, int, Attempt]] = []
        self._seq = itertools.count(1)
        self._stale = 0
        self._abandon = abandon

    def watch(self, attempt: Attempt, deadline: float) -> None:
        if attempt.deadline is not None:
            self._stale += 1  # its earlier entry
        attempt.deadline = deadline
        attempt.seq = seq = next(self._seq)
        heappush(self._heap, (deadline, seq, attempt))

    def unwatch(self, attempt: Attempt) -> None:
        """Stop watching ``attempt``'s deadline, for now (it may be watched again)."""
        if attempt.deadline is not None:
            attempt.deadline = None
            attempt.seq = 0  # no entry has it: the one in the heap is stale
            self._stale += 1

    def grace(self, attempt: Attempt, now: float) -> float:
        """``attempt`` was just cancelled: watch for it outliving the grace; when that is."""
        deadline = now + _resume.CANCEL_GRACE
        self.watch(attempt, deadline)
        return deadline

    def ended(self, attempt: Attempt) -> None:
        """``attempt`` is over: forget its deadline."""
        attempt.live = False
        if attempt.deadline is None:
            return
        attempt.deadline = None
        self._stale += 1
        heap = self._heap
        while heap and not _is_live(heap[0]):
            heappop(heap)
            self._stale -= 1
        if self._stale > 64 and self._stale * 2 > len(heap):
            self._heap = [entry for entry in heap if _is_live(entry)]
            heapify(self._heap)
            self._stale = 0

    def next_at(self) -> float | None:
        """The earliest deadline watched, or None."""
        return self._heap[0][0] if self._heap else None

    def expire(self, now: float) -> None:
        """Time out every attempt past its deadline; abandon those past their grace."""
        # self._heap, not a local: abandoning runs listeners, which may cancel
        # other attempts (a push) while this loop runs.
        while self._heap and self._heap[0][0] <= now:
            entry = heappop(self._heap)
            if not _is_live(entry):
                self._stale -= 1
                continue
            attempt = entry[2]
            attempt.deadline = None
            if attempt.scope.cancel_called:
                self._abandon(attempt)
            else:
                attempt.scope.cancel()
                self.grace(attempt, now)

    def hand_back(self, clock: Callable[[], float]) -> None:
        """The ticker is exiting: put each live timeout back on its attempt's scope.

        Graces are dropped: during shutdown the scheduler waits for every
        attempt anyway.
        """
        heap, self._heap, self._stale = self._heap, [], 0
        for entry in heap:
            deadline, _, attempt = entry
            if _is_live(entry):
                attempt.deadline = None
                if not attempt.scope.cancel_called:
                    attempt.scope.deadline = anyio.current_time() + (deadline - clock())


def _is_live(entry: tuple[float, int, Attempt]) -> bool:
    attempt = entry[2]
    return attempt.live and attempt.seq == entry[1]
