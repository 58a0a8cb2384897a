"""The link's close: one way, one flag every task looks at.

:meth:`StoreLink.close <jobsched._engine._link.StoreLink.close>` begins it;
the committer then writes what is left, the claimer and the heartbeat end,
and a backoff waiting to retry a store call is cut short (the call is tried
once more, then its task ends).
"""

from __future__ import annotations

import anyio


class Closing:
    """Whether the link is closing, and the event that ends backoffs early."""

    __slots__ = ("_backoffs_end", "closing")

    def __init__(self) -> None:
        #: Set once, by :meth:`begin`: read by every part, written by none.
        self.closing = False
        self._backoffs_end = anyio.Event()

    def begin(self) -> None:
        """Closing from now on: the tasks end at their next look."""
        self.closing = True

    def end_backoffs(self) -> None:
        """Wake the backoffs that wait (see :meth:`backoff_cut`)."""
        self._backoffs_end.set()

    async def backoff_cut(self) -> None:
        """Return once :meth:`end_backoffs` was called (a backoff waits on this)."""
        await self._backoffs_end.wait()
