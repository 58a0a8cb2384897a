"""The optional methods of :class:`~jobsched.store.JobStore` for workflows
(issue 37): the results a dependent receives, and a running job's progress.
Each has a default that works on any store, so a store written before them
keeps working; the built-in stores answer each in one or two statements."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from ._rows import Input, ProgressRow
from ._waitreads import WaitingReads

if TYPE_CHECKING:
    from ._rows import StoredJob


class WorkflowSide(WaitingReads):
    """The optional workflow methods of :class:`~jobsched.store.JobStore`, with their defaults."""

    if TYPE_CHECKING:

        async def fetch(self, job_id: int) -> StoredJob | None: ...

    async def inputs(self, ids: Collection[int], max_bytes: int) -> dict[int, Input] | int:
        """The upstreams ``ids`` as their dependents receive them, by id; an id
        the store does not hold (never added, or pruned) is left out. Their
        total result size instead, when it exceeds ``max_bytes``.

        The default fetches each job (a read per id)."""
        found: dict[int, Input] = {}
        total = 0
        for job_id in dict.fromkeys(ids):
            job = await self.fetch(job_id)
            if job is None:
                continue
            total += len(job.result or b"")
            if total > max_bytes:
                return total
            found[job_id] = Input(job.id, job.status, job.result, job.last_error)
        return found

    async def progress(self, owner: str, rows: Sequence[ProgressRow]) -> None:
        """Write the progress of running attempts, each only while ``owner``
        runs that attempt (the fence an outcome has); others are skipped.

        The default keeps none: the job's ``progress`` then reads None."""
        return None
