"""A stop's hand-back: the jobs a stopping member lets go of, in one call
each kind.

The scheduler cuts the attempts still running past the stop's grace and
notes each here (:meth:`HandBacks.cut`, with when it ended); at close it
hands back every job it still holds (:meth:`HandBacks.release`): the cut
attempts through ``JobStore.hand_back``, which keeps them in the job's
history, the rest (claimed, never started) through ``release``.
"""

from __future__ import annotations

from collections.abc import Collection

from ...store._base import JobStore


class HandBacks:
    """The attempts a stop cut short, until the store took them back."""

    __slots__ = ("_owner", "_stopped_early", "_store")

    def __init__(self, store: JobStore, owner: str) -> None:
        self._store = store
        self._owner = owner
        #: Job id -> (the attempt cut, when it ended).
        self._stopped_early: dict[int, tuple[int, float]] = {}

    def cut(self, number: int, attempt: int, ended_at: float) -> None:
        """Attempt ``attempt`` of job ``number`` was cut short at ``ended_at``."""
        self._stopped_early[number] = (attempt, ended_at)

    async def release(self, numbers: Collection[int]) -> None:
        """Hand back ``numbers``: the cut attempts kept in the history, the rest
        released. Called again after a failure, it writes nothing twice: both
        store calls are fenced on this member still holding the row."""
        cut = self._stopped_early
        attempts = [(n, *cut[n]) for n in numbers if n in cut]
        rest = [n for n in numbers if n not in cut]
        if attempts:
            await self._store.hand_back(self._owner, attempts)
            for number, _, _ in attempts:
                del cut[number]
        if rest:
            await self._store.release(self._owner, rest)
