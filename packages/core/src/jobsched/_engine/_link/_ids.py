"""Job ids and submit order, handed out synchronously (``submit`` is).

Ids come from blocks the store reserves (``JobStore.reserve_ids``), unique
across processes and restarts; the next block is reserved ahead, so a burst
of submits rarely waits on the store.
"""

from __future__ import annotations

import contextlib
import math
import time

from ..._exceptions import StoreUnavailableError
from ...store._base import JobStore
from . import _timing


class Ids:
    """The ids of new jobs and their submit order, for one member."""

    __slots__ = ("_block", "_end_id", "_last_seq", "_next_id", "_reserved_at", "_spare", "_store")

    def __init__(self, store: JobStore) -> None:
        self._store = store
        self._next_id = 0
        self._end_id = 0
        self._spare: tuple[int, int] | None = None  # a reserved block: (first, size)
        self._block = _timing.ID_BLOCK
        self._reserved_at = -math.inf
        self._last_seq = 0

    def next_id(self) -> int:
        """A new job id, unique in the store across processes and restarts."""
        if self._next_id >= self._end_id:
            spare, self._spare = self._spare, None
            if spare is None:
                spare = (self._store.reserve_ids(self._block), self._block)
            first, size = spare
            self._next_id, self._end_id = first, first + size
        number = self._next_id
        self._next_id += 1
        if self._spare is None and self._end_id - self._next_id < self._block // 2:
            # Reserve the next block ahead, so submit rarely waits for one;
            # a block used up soon after the last asks for a larger one.
            clock = time.monotonic()
            if clock - self._reserved_at < 1.0:
                self._block = min(self._block * 2, _timing.MAX_ID_BLOCK)
            self._reserved_at = clock
            # On a failure the ids in hand still serve; the next submit asks again.
            with contextlib.suppress(StoreUnavailableError):
                self._spare = (self._store.reserve_ids(self._block), self._block)
        return number

    def next_seq(self) -> int:
        """Submit order across members: wall-clock microseconds, strictly increasing here."""
        seq = max(self._last_seq + 1, time.time_ns() // 1000)
        self._last_seq = seq
        return seq
