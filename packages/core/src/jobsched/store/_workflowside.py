"""The optional methods of :class:`~jobsched.store.JobStore` for workflows
(issue 37): the results a dependent receives, a running job's progress, and
workflows kept as one (added all or none, read, cancelled). ``inputs`` and
``progress`` have defaults that work on any store, so a store written before
them keeps working; the workflow methods' defaults raise
``NotImplementedError`` naming the store (it cannot keep workflows)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from ._flowrows import Input, ProgressRow
from ._waitreads import WaitingReads

if TYPE_CHECKING:
    from ._flowrows import NewWorkflow, WorkflowGraph, WorkflowRow
    from ._rows import Change, StoredJob


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

    async def add_workflow(self, workflow: NewWorkflow, now: float) -> list[Change]:
        """Add the workflow's row, its jobs and their edges in one transaction:
        all or nothing. The jobs are taken as :meth:`add` takes them (an
        upstream outside the workflow that already ended settles its edge at
        once); the changes are the jobs that ends cancelled at once.

        :raises ValueError: a job's own id (``NewJob.own_id``) is held
            already, or the workflow's id is: nothing is written.
        """
        raise NotImplementedError(f"{type(self).__name__} cannot keep workflows")

    async def workflow(self, workflow_id: int) -> WorkflowRow | None:
        """The workflow with its jobs' counts by status, or None (never
        added, or pruned with its last job)."""
        raise NotImplementedError(f"{type(self).__name__} cannot keep workflows")

    async def workflows(
        self, *, limit: int = 50, before: int | None = None, unfinished: bool = False
    ) -> list[WorkflowRow]:
        """Up to ``limit`` workflows, newest (highest id) first, with ids below
        ``before`` if given; with ``unfinished``, only those with a job not
        yet finished.

        :raises TypeError: ``limit`` is not an int, ``before`` neither an int nor None.
        :raises ValueError: ``limit`` is below 1.
        """
        raise NotImplementedError(f"{type(self).__name__} cannot keep workflows")

    async def workflow_graph(self, workflow_id: int, *, limit: int = 2_000) -> WorkflowGraph | None:
        """The workflow's jobs (the first ``limit`` by id) and their edges to
        their upstreams, or None when the store holds no such workflow.

        :raises TypeError: ``limit`` is not an int.
        :raises ValueError: ``limit`` is below 1.
        """
        raise NotImplementedError(f"{type(self).__name__} cannot keep workflows")

    async def cancel_workflow(self, workflow_id: int, now: float) -> tuple[int, list[Change]]:
        """Cancel every unfinished job of the workflow in one transaction: a
        queued one at once, a running one flagged for its owner to stop (as
        :meth:`cancel` does), whatever its edges' policies. How many it
        cancelled or flagged, and the changes: its jobs cancelled at once and
        the dependents outside it that their edges cancelled or released.
        An unknown workflow: ``(0, [])``."""
        raise NotImplementedError(f"{type(self).__name__} cannot keep workflows")
