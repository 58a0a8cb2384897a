"""What an operator sees of a queue (:class:`QueueInfo`), in memory or stored."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ._enums import JobStatus
from ._jobs._options import DEFAULT_QUEUE

if TYPE_CHECKING:
    from .store._rows import Member

#: The statuses a queue's counts hold: its unfinished jobs.
LIVE = (JobStatus.PENDING, JobStatus.RETRY_WAIT, JobStatus.RUNNING)
#: A member is live within three missed reports (``MEMBER_EVERY``, 5 s).
LIVE_WITHIN = 15.0


@dataclass(frozen=True, slots=True)
class QueueInfo:
    """One queue, as :meth:`JobScheduler.queues` lists it."""

    #: The queue's name (``"default"`` for jobs submitted without ``queue=``).
    name: str
    #: Whether it is paused (:meth:`JobScheduler.pause_queue`): no member
    #: claims its jobs until it is resumed.
    paused: bool
    #: Its unfinished jobs by status (PENDING, RETRY_WAIT, RUNNING; a status
    #: without jobs is left out): what the store counts cheaply at any
    #: history, finished jobs being the history.
    counts: dict[JobStatus, int] = field(default_factory=dict)
    #: The live members that claim its jobs (owner ids, sorted; on the
    #: memory store ``"this scheduler"``); empty: no member serves it, its
    #: jobs wait for one.
    served_by: tuple[str, ...] = ()


def queue_infos(
    counts: Mapping[tuple[str, JobStatus], int],
    paused: Collection[str],
    members: Sequence[Member],
    now: float,
) -> list[QueueInfo]:
    """A store's queues, by name: every queue with unfinished jobs
    (``JobStore.queue_counts``), paused, or named by a live member (a
    member of every queue names the default one); each with the live
    members that serve it (the scheduler, the CLI and the dashboard agree)."""
    live = [m for m in members if now - m.seen_at <= LIVE_WITHIN and m.workers > 0]
    names = {queue for queue, _ in counts} | set(paused)
    for member in live:
        names.update(member.queues if member.queues is not None else (DEFAULT_QUEUE,))
    by_queue: dict[str, dict[JobStatus, int]] = {}
    for (queue, status), n in counts.items():
        by_queue.setdefault(queue, {})[status] = n
    return [
        QueueInfo(
            name,
            name in paused,
            ordered(by_queue.get(name, {})),
            tuple(sorted(m.owner for m in live if m.serves(name))),
        )
        for name in sorted(names)
    ]


def ordered(counts: Mapping[JobStatus, int]) -> dict[JobStatus, int]:
    """``counts`` in LIVE's order, the statuses without jobs left out."""
    return {status: counts[status] for status in LIVE if counts.get(status)}
