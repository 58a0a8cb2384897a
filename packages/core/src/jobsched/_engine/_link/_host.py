"""What the link asks of the scheduler it serves: :class:`Host`.

The engine's side is ``jobsched._engine._linkhost.LinkHost``; a test may pass
an object with only the methods the part it runs calls.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Protocol

from ...store._rows import Change, Claimed, DueSchedule


class Host(Protocol):
    """What the link needs from the scheduler it serves."""

    def claim_capacity(self) -> tuple[int, Mapping[str, int]]:
        """How many jobs to claim now, and how many at most on each executor."""

    def queue_room(self, wanted: int) -> Mapping[str, int] | None:
        """How many at most of each limited queue (None: no queue is limited)."""

    def stale_claims(self) -> list[int]:
        """Claimed jobs that waited too long ahead of stuck workers, to hand back."""

    def handed_back(self, numbers: Collection[int]) -> None:
        """The store took back jobs :meth:`stale_claims` gave."""

    def deferred(self) -> list[tuple[int, float, str]]:
        """Claimed jobs this member cannot load, to hand back until a later
        time (``JobStore.defer``): ``(id, run_at, error)`` each, taken."""

    def undeferred(self, jobs: list[tuple[int, float, str]]) -> None:
        """The store did not take back jobs :meth:`deferred` gave (an outage)."""

    def claimed(self, claims: Sequence[Claimed]) -> None:
        """Take claimed jobs: queue them for the workers, or settle lost ones."""

    def changed(self, changes: Sequence[Change]) -> None:
        """Statuses the store set (cascaded cancels, cancels of queued jobs)."""

    def existed(self, ids: Sequence[int]) -> None:
        """Jobs with ids of their own that the store already held: not added."""

    def held(self) -> Collection[int]:
        """Ids of the jobs this member holds (claimed, running, or handed
        back at stop and not yet released). The link
        renews the leases of these and of the jobs whose outcomes it has yet
        to commit."""

    def cancel_held(self, ids: Collection[int]) -> None:
        """Someone asked to cancel these jobs, which this member holds."""

    def committed(self) -> None:
        """A group commit ended: workers that waited for it may start jobs."""

    async def fire_schedules(self, due: Sequence[DueSchedule]) -> bool:
        """Make the fires of stored schedules this member claimed; True if
        one is due again (missed fires caught up one by one)."""

    def executor_names(self) -> tuple[str, ...]:
        """The executors this member claims jobs on, sorted, for the members list."""

    @property
    def num_workers(self) -> int:
        """The scheduler's ``num_workers``, for the members list."""
