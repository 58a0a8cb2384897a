"""The ticker: promotes due delayed jobs, fires schedules, times attempts out."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import anyio

from ._attempts import Attempt, Deadlines

if TYPE_CHECKING:
    from ._backing import Due
    from ._state import RunState


class Ticker:
    """One task that sleeps until the next thing that is due: what its due
    sources fire (delayed jobs, schedules) and the attempts' deadlines.

    It owns the deadlines it watches, its wakeup, and when it sleeps until;
    the workers hand it attempts through :meth:`watch` and :meth:`grace`.
    What it fires is its ``sources``, which the backing hands it (memory: its
    delayed jobs and, once made, its schedules; durable: none, the claimer
    fires stored schedules).
    """

    __slots__ = (
        "_clock",
        "_exited",
        "_run",
        "deadlines",
        "sleeps_until",
        "sources",
        "wakeup",
        "watching",
    )

    def __init__(
        self,
        run: RunState,
        clock: Callable[[], float],
        abandon: Callable[[Attempt], None],
        exited: Callable[[], None],
    ) -> None:
        self._run = run
        self._clock = clock
        self._exited = exited  # the lifecycle's count of live tasks
        #: What is fired when due, in this order (see the class docstring).
        self.sources: tuple[Due, ...] = ()
        #: Attempt timeouts, while the ticker runs to watch them (see Deadlines).
        self.deadlines = Deadlines(abandon)
        self.wakeup: anyio.Event | None = None
        #: When the sleeping ticker wakes next (math.inf: when woken).
        self.sleeps_until = math.inf
        #: Whether the ticker watches deadlines (from spawn until it exits).
        self.watching = False

    async def run(self) -> None:
        """Fire what is due, expire deadlines; sleep in between, until stopping."""
        self.watching = True
        deadlines = self.deadlines
        run = self._run
        clock = self._clock
        try:
            while not run.stopping:
                now = clock()
                deadlines.expire(now)
                for source in self.sources:
                    source.fire_due(now)
                next_at = self._next_due()
                timeout_at = deadlines.next_at()
                if timeout_at is not None and (next_at is None or timeout_at < next_at):
                    next_at = timeout_at
                wakeup = self.wakeup = anyio.Event()
                if next_at is None:
                    self.sleeps_until = math.inf
                    await wakeup.wait()
                else:
                    self.sleeps_until = next_at
                    with anyio.move_on_after(max(0.0, next_at - clock())):
                        await wakeup.wait()
                self.wakeup = None
        finally:
            # Attempts still running keep their timeouts: on their own scopes.
            self.watching = False
            deadlines.hand_back(clock)
            self._exited()

    def _next_due(self) -> float | None:
        next_at = None
        for source in self.sources:
            at = source.next_at()
            if at is not None and (next_at is None or at < next_at):
                next_at = at
        return next_at

    def wake(self) -> None:
        """Something new may be due sooner: look again now."""
        if self.wakeup is not None:
            self.wakeup.set()

    def watch(self, attempt: Attempt, deadline: float) -> bool:
        """Time ``attempt`` out at ``deadline``; False if the ticker does not
        watch (it has exited: the attempt's scope keeps its own deadline)."""
        if not self.watching:
            return False
        self.deadlines.watch(attempt, deadline)
        if deadline < self.sleeps_until:
            self.wake()
        return True

    def grace(self, attempt: Attempt) -> None:
        """``attempt`` was just cancelled: give it CANCEL_GRACE seconds to end."""
        # Not watching: stop() is under way, and waits for it anyway.
        if self.watching and self.deadlines.grace(attempt, self._clock()) < self.sleeps_until:
            self.wake()
