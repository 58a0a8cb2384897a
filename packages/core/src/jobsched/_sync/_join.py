"""``BackgroundScheduler.join()``'s wait: the store's word first, then the scheduler's.

A durable store knows of jobs this process never submitted (a producer's,
another member's), so ``join()`` asks it before waiting on the scheduler.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import anyio

if TYPE_CHECKING:
    from .._engine._scheduler import JobScheduler
    from ..store._base import JobStore


def check_timeout(timeout: float | None) -> None:
    """:raises ValueError, TypeError: ``timeout`` is not None nor seconds >= 0."""
    if timeout is None:
        return
    try:
        if not timeout >= 0:  # NaN too
            raise ValueError(f"timeout must be a number of seconds >= 0, got {timeout!r}")
    except TypeError:
        raise TypeError(f"timeout must be a number of seconds or None, got {timeout!r}") from None


async def join_within(
    scheduler: JobScheduler, store: JobStore | None, seconds: float | None
) -> bool:
    """True once every job is terminal; False if ``seconds`` passed first."""
    if store is not None:
        # The first look at the store is not cut short by the timeout: it
        # takes a round trip, and join(timeout=0) must still be able to
        # answer True.
        await scheduler.flush()
        if not await store.unfinished():
            return True
    with anyio.move_on_after(math.inf if seconds is None else seconds):
        await scheduler.join()
        return True
    return False
