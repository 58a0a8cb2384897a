"""What an operator sees of a queue (:class:`QueueInfo`), in memory or stored."""

from __future__ import annotations

from dataclasses import dataclass, field

from ._enums import JobStatus


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
    #: The live members that claim its jobs (owner ids, sorted); empty: no
    #: member serves it, its jobs wait for one.
    served_by: tuple[str, ...] = ()
