"""Named queues on the pages: the overview's table of unfinished jobs per
queue (``JobStore.queue_counts``, as ``jobsched stats`` prints it), and the
job list's reads filtered by queue.

The table is shown only when queues are in use: when the unfinished jobs
are of more than one queue, or of one that is not ``default``. A store that
cannot count per queue (``NotImplementedError``) shows no table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from starlette.exceptions import HTTPException

from jobsched import JobStatus, JobStore
from jobsched.store import DEFAULT_QUEUE, JobPage

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


@dataclass(slots=True)
class QueueTable:
    statuses: tuple[JobStatus, ...]
    rows: list[Row]


def job_list_url(queue: str, status: JobStatus | None = None) -> str:
    pairs = [("queue", queue)] + ([("status", status.value)] if status is not None else [])
    return f"/jobs?{urlencode(pairs)}"


def table(counts: Mapping[tuple[str, JobStatus], int]) -> QueueTable | None:
    """The table, queues by name; None when no queue but ``default`` holds
    an unfinished job (nothing to tell apart)."""
    queues = sorted({queue for (queue, _), n in counts.items() if n})
    if not queues or queues == [DEFAULT_QUEUE]:
        return None
    rows = [
        Row(
            queue,
            job_list_url(queue),
            [(counts.get((queue, s), 0), job_list_url(queue, s)) for s in LIVE],
        )
        for queue in queues
    ]
    return QueueTable(LIVE, rows)


async def read_table(store: JobStore) -> QueueTable | None:
    """The overview's queue table from one ``queue_counts`` read, or None."""
    try:
        counts = await store.queue_counts()
    except NotImplementedError:
        return None
    return table(counts)


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
