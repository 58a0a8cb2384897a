"""Queues for the operator (``JobScheduler.queues``, ``pause_queue``,
``resume_queue``): in memory, a pause the workers' take-next honours; on a
durable store, the store's pause, which every member's claim reads.

In memory a pause puts a filter in front of the take-next only while some
queue is paused, so a scheduler with nothing paused takes its jobs as it
did: a job of a paused queue that the take-next meets is set aside (still
PENDING, counted as waiting) and queued again at its queue's resume.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, TypeVar

from .._enums import JobStatus
from .._exceptions import SchedulerError
from .._jobs._options import DEFAULT_QUEUE, check_queue
from ._state import STARTED

if TYPE_CHECKING:
    from .._jobs._job import Job
    from .._queueinfo import QueueInfo
    from ..store._rows import Member
    from ._link import StoreLink
    from ._state import RunState

T = TypeVar("T")

#: The statuses a queue's counts hold: its unfinished jobs.
LIVE = frozenset((JobStatus.PENDING, JobStatus.RETRY_WAIT, JobStatus.RUNNING))
#: What a memory scheduler's queues list as the member serving them.
HERE = "this scheduler"


class MemoryPauses:
    """The queues paused in memory, and the jobs of theirs set aside."""

    __slots__ = ("_push", "inner", "parked", "paused")

    def __init__(self, inner: Callable[[], Job | None], push: Callable[[Job], None]) -> None:
        #: The take-next the filter stands in front of (admission's, or the queue's).
        self.inner = inner
        self.paused: set[str] = set()
        self.parked: dict[str, list[Job]] = {}
        self._push = push

    def take(self) -> Job | None:
        """The next job of a queue not paused, or None."""
        inner, paused = self.inner, self.paused
        while True:
            job = inner()
            if job is None or job.queue not in paused:
                return job
            self.parked.setdefault(job.queue, []).append(job)

    def resume(self, name: str) -> bool:
        if name not in self.paused:
            return False
        self.paused.discard(name)
        for job in self.parked.pop(name, ()):
            if not job.status._terminal:  # type: ignore[attr-defined]
                self._push(job)
        return True


def memory_infos(
    jobs: Iterable[Job], paused: set[str], served: frozenset[str] | None
) -> list[QueueInfo]:
    """Every queue with unfinished jobs, paused, or served here, by name."""
    from .._queueinfo import QueueInfo, ordered

    counts: dict[str, Counter[JobStatus]] = {}
    for job in jobs:
        if job.status in LIVE:
            counts.setdefault(job.queue, Counter())[job.status] += 1
    names = set(counts) | paused | (served if served is not None else {DEFAULT_QUEUE})
    return [
        QueueInfo(
            name,
            name in paused,
            ordered(counts.get(name, {})),
            (HERE,) if served is None or name in served else (),
        )
        for name in sorted(names)
    ]


async def stored_infos(link: StoreLink, run: RunState) -> list[QueueInfo]:
    """The store's queues: unfinished counts, pauses, and the live members
    that serve each (see ``_queueinfo.queue_infos``)."""
    from .._queueinfo import queue_infos

    _need_open_store(link, run)
    store = link.store
    await link.flush()  # this process's submits first
    counts: dict[tuple[str, JobStatus], int] = await _optional(
        link, "counting queues", store.queue_counts, {}
    )
    paused = await link.read("listing paused queues", store.paused_queues, patience=None)
    members: list[Member] = await _optional(link, "listing members", store.members, [])
    return queue_infos(counts, paused, members, time.time())


async def stored_pause(link: StoreLink, run: RunState, name: str, pause: bool) -> None:
    """Pause (or resume) ``name`` in the store, for every member."""
    check_queue(name)
    _need_open_store(link, run)
    store = link.store
    if pause:
        await link.read("pausing a queue", lambda: store.pause_queue(name), patience=None)
    else:
        await link.read("resuming a queue", lambda: store.resume_queue(name), patience=None)
        link.wake_claimer()  # its jobs may be claimed now


async def _optional(link: StoreLink, what: str, call: Callable[[], Awaitable[T]], empty: T) -> T:
    """A read a store may not implement (a store without a members list)."""
    try:
        return await link.read(what, call, patience=None)
    except NotImplementedError:
        return empty


def _need_open_store(link: StoreLink, run: RunState) -> None:
    if run.phase != STARTED:
        raise SchedulerError(
            f"the queues of the store {link.store.url} are managed through a running "
            "scheduler: call this inside 'async with JobScheduler(...)' (or after start(), "
            "before stop())"
        )
