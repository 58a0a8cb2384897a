"""Named queues on the pages: the overview's table of unfinished jobs per
queue (``JobStore.queue_counts``, as ``jobsched stats`` prints it), and the
job list's reads filtered by queue.

The table is shown only when queues are in use: when the unfinished jobs
are of more than one queue, or of one that is not ``default``, or a queue
is paused. A store that cannot count per queue (``NotImplementedError``)
shows no table. Each row says whether its queue is paused and which live
members serve it (``Member.queues``), and marks a queue that none serves:
its jobs wait for a worker started with ``--queue`` naming it.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from starlette.exceptions import HTTPException

from jobsched import JobStatus, JobStore
from jobsched._queueinfo import LIVE_WITHIN
from jobsched.store import DEFAULT_QUEUE, JobPage, Member

from ._limits import MEMBERS_LIMIT

#: The statuses ``queue_counts`` counts, in the order the table shows them
#: (the CLI's ``stats`` order).
LIVE = (JobStatus.PENDING, JobStatus.RUNNING, JobStatus.RETRY_WAIT)


@dataclass(slots=True)
class Row:
    """One queue's unfinished jobs, each count with the job list it opens."""

    queue: str
    url: str
    #: (count, the job list of the queue's jobs of that status), in LIVE's order.
    cells: list[tuple[int, str]]
    paused: bool = False
    #: The live members that serve it; None: the store keeps no members list.
    served_by: tuple[str, ...] | None = None

    @property
    def unserved(self) -> bool:
        """No live member serves it (known only from a members list)."""
        return self.served_by == ()


@dataclass(slots=True)
class QueueTable:
    statuses: tuple[JobStatus, ...]
    rows: list[Row]


def job_list_url(queue: str, status: JobStatus | None = None) -> str:
    pairs = [("queue", queue)] + ([("status", status.value)] if status is not None else [])
    return f"/jobs?{urlencode(pairs)}"


def table(
    counts: Mapping[tuple[str, JobStatus], int],
    paused: Collection[str] = (),
    members: Sequence[Member] | None = None,
    now: float = 0.0,
) -> QueueTable | None:
    """The table, queues by name; None when no queue but ``default`` holds
    an unfinished job and none is paused (nothing to tell apart).

    :param members: the members list (None: the store keeps none), read
        at ``now``: a member is live within ``LIVE_WITHIN`` seconds.
    """
    queues = sorted({queue for (queue, _), n in counts.items() if n} | set(paused))
    if not queues or (queues == [DEFAULT_QUEUE] and not paused):
        return None
    live = (
        None
        if members is None
        else [m for m in members if now - m.seen_at <= LIVE_WITHIN and m.workers > 0]
    )
    rows = [
        Row(
            queue,
            job_list_url(queue),
            [(counts.get((queue, s), 0), job_list_url(queue, s)) for s in LIVE],
            queue in paused,
            None if live is None else tuple(sorted(m.owner for m in live if m.serves(queue))),
        )
        for queue in queues
    ]
    return QueueTable(LIVE, rows)


async def read_table(store: JobStore) -> QueueTable | None:
    """The overview's queue table from the store's queue counts, its paused
    queues and its members list, or None."""
    try:
        counts = await store.queue_counts()
    except NotImplementedError:
        return None
    paused = await store.paused_queues()
    try:
        members: list[Member] | None = await store.members(limit=MEMBERS_LIMIT)
    except NotImplementedError:
        members = None
    return table(counts, paused, members, time.time())


async def job_page(store: JobStore, args: Mapping[str, Any], **page: Any) -> JobPage:
    """``store.job_page(**args, **page)``; a store written before queues or
    arguments, whose ``job_page`` takes no ``queue`` or ``args``, is a 501
    saying so (as the CLI's ``jobs --queue`` says it) rather than a 500."""
    try:
        return await store.job_page(**args, **page)
    except TypeError as exc:
        if "queue" not in args and "args" not in args:
            raise
        what = "argument" if "args" in args else "queue"
        raise HTTPException(501, f"this store cannot filter jobs by {what} ({exc})") from None
