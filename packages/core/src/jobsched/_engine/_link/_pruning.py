"""When and how the committer prunes the store's history: every
``_timing.prune_every(max_finished)`` outcomes, and at stop, by the
scheduler's :class:`~jobsched.Retention` (``history_limit`` is one of a
count only)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from ..._retention import Retention
from ...store._base import JobStore
from . import _timing


class Pruning:
    """Counts the outcomes committed since the last prune, and makes the prune call."""

    __slots__ = ("every", "finished", "keeping", "store", "wall")

    def __init__(self, store: JobStore, keeping: Retention, wall: Callable[[], float]) -> None:
        self.store = store
        self.keeping = keeping
        self.wall = wall
        bound = keeping.max_finished
        #: Outcomes between two prunes; None: the rule keeps every job (Retention()).
        self.every: int | None = (
            _timing.prune_every(bound if bound is not None else _timing.PRUNE_EVERY)
            if bound is not None or keeping.ages()
            else None
        )
        #: Outcomes committed since the last prune.
        self.finished = 0

    def due(self, outcomes: int) -> bool:
        """Count ``outcomes`` more; True (and the count starts again) when a prune is due."""
        self.finished += outcomes
        if self.every is None or self.finished < self.every:
            return False
        self.finished = 0
        return True

    def left(self) -> bool:
        """At stop: True (and the count starts again) if outcomes came since the last prune."""
        if self.every is None or not self.finished:
            return False
        self.finished = 0
        return True

    def prune(self) -> Awaitable[int]:
        """The store's prune by the rule: each age as a cutoff on the wall
        clock, which the stored ``finished_at`` is read on."""
        keeping = self.keeping
        cutoffs = keeping.cutoffs(self.wall())
        if cutoffs:
            return self.store.prune(keeping.max_finished, cutoffs)
        # Only a count (history_limit): the call every store implements.
        return self.store.prune(keeping.max_finished)
