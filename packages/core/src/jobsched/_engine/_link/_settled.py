"""What a caller waiting for jobs' ends sleeps on: this member's commits,
and the outcomes other members commit that the store notifies of.

``join()`` and ``wait()`` read the store after each (``jobsched._engine``),
so a commit must wake them at once, and a poll interval bounds the wait for
others' work when the store does not notify.
"""

from __future__ import annotations

import anyio

from . import _timing


class Settled:
    """Two events, each replaced when set: the next commit here, and the
    next commit here or elsewhere that ended jobs."""

    __slots__ = ("_progress", "_settled")

    def __init__(self) -> None:
        self._progress = anyio.Event()
        #: Set (and replaced) by this member's commits and by the store's
        #: notifications of others' outcomes: what wait() sleeps on.
        self._settled = anyio.Event()

    def next_progress(self) -> anyio.Event:
        """The event this member's next commit sets."""
        return self._progress

    def next_settled(self) -> anyio.Event:
        """The event the next commit here, or the next outcome another member
        commits that the store notifies of, sets."""
        return self._settled

    async def progress(self, event: anyio.Event) -> None:
        """Wait for ``event`` (see :meth:`next_progress`), or a poll interval (others' work)."""
        with anyio.move_on_after(_timing.POLL_INTERVAL):
            await event.wait()

    def committed(self) -> None:
        """A commit of this member's ended: wake both kinds of waiter."""
        progress, self._progress = self._progress, anyio.Event()
        progress.set()
        self.wake()

    def wake(self) -> None:
        """Jobs may have ended elsewhere: wake those that wait for any end."""
        settled, self._settled = self._settled, anyio.Event()
        settled.set()
