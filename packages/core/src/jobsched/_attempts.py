"""Running attempts: what cancel() reaches, and one deadline heap for their timeouts."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from heapq import heapify, heappop, heappush
from typing import Any

import anyio


class _CancelledScope:
    """Stands in for a scope when the worker itself was cancelled (shutdown)."""

    cancel_called = True


SHUTDOWN_SCOPE: Any = _CancelledScope()


class Attempt:
    """A running attempt that suspended: what cancel() needs to reach it."""

    __slots__ = ("deadline", "live", "reason", "scope")

    def __init__(self, scope: anyio.CancelScope) -> None:
        self.scope: anyio.CancelScope = scope
        self.reason: str | None = None
        self.live = True
        #: When it times out (scheduler clock), while Deadlines watches it.
        self.deadline: float | None = None

    def cancel(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason
        self.scope.cancel()


class Deadlines:
    """The timeouts of every suspended attempt, in one heap the ticker watches.

    A timer per attempt (setting and resetting the worker scope's deadline)
    cost about 4 µs, as much as the rest of an attempt that suspends: anyio
    makes and cancels an event-loop timer each time. Here an attempt's
    timeout is a heap push; the ticker sleeps until the earliest deadline and
    cancels the scope of an attempt still running then (its ``reason`` stays
    None: it timed out). Attempts that end are removed lazily: at once when
    they head the heap (with one timeout for all jobs they nearly always do),
    otherwise when the stale entries outnumber the live ones.
    """

    __slots__ = ("_heap", "_seq", "_stale")

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Attempt]] = []
        self._seq = itertools.count()
        self._stale = 0

    def watch(self, attempt: Attempt, deadline: float) -> None:
        attempt.deadline = deadline
        heappush(self._heap, (deadline, next(self._seq), attempt))

    def ended(self, attempt: Attempt) -> None:
        """``attempt`` is over: forget its deadline."""
        attempt.live = False
        if attempt.deadline is None:
            return
        attempt.deadline = None
        self._stale += 1
        heap = self._heap
        while heap and not heap[0][2].live:
            heappop(heap)
            self._stale -= 1
        if self._stale > 64 and self._stale * 2 > len(heap):
            self._heap = [entry for entry in heap if entry[2].live]
            heapify(self._heap)
            self._stale = 0

    def next_at(self) -> float | None:
        """The earliest deadline watched, or None."""
        return self._heap[0][0] if self._heap else None

    def expire(self, now: float) -> None:
        """Cancel every attempt whose deadline has passed."""
        heap = self._heap
        while heap and heap[0][0] <= now:
            attempt = heappop(heap)[2]
            if attempt.live:
                attempt.deadline = None
                attempt.scope.cancel()
            else:
                self._stale -= 1

    def hand_back(self, clock: Callable[[], float]) -> None:
        """The ticker is exiting: put each live deadline back on its attempt's scope."""
        heap, self._heap, self._stale = self._heap, [], 0
        for deadline, _, attempt in heap:
            if attempt.live:
                attempt.deadline = None
                attempt.scope.deadline = anyio.current_time() + (deadline - clock())
