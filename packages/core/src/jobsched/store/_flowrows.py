"""The rows of workflows, results and progress a store takes and returns
(public through :mod:`jobsched.store`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .._enums import JobStatus
from ._rows import NewJob


@dataclass(frozen=True, slots=True)
class Input:
    """An upstream as a dependent receives it (:meth:`JobStore.inputs`)."""

    id: int
    status: JobStatus
    #: As stored (``b"J"`` and JSON, or the signed pickle); None unless completed.
    result: bytes | None
    error: str | None


@dataclass(frozen=True, slots=True)
class ProgressRow:
    """A running attempt's progress to write (:meth:`JobStore.progress`)."""

    id: int
    attempt: int
    fraction: float | None
    message: str | None


@dataclass(frozen=True, slots=True)
class NewWorkflow:
    """A workflow to add (:meth:`JobStore.add_workflow`): its row and its jobs, all or none."""

    #: Its number, from :meth:`JobStore.reserve_ids` as job ids are (``wf-<id>``).
    id: int
    name: str
    created_at: float
    #: In an order where each job's upstreams inside the workflow come
    #: before it; each job's ``workflow`` is ``id``.
    jobs: Sequence[NewJob]


@dataclass(frozen=True, slots=True)
class WorkflowRow:
    """A workflow as the store has it (:meth:`JobStore.workflow`, ``workflows``)."""

    id: int
    name: str
    created_at: float
    #: How many jobs it was added with.
    size: int
    #: Of the jobs the store still holds (pruned ones are not counted), by
    #: status; a status no job has is left out.
    counts: dict[JobStatus, int]

    @property
    def finished(self) -> bool:
        """No job of it is unfinished (a pruned job counts as finished)."""
        return all(status.is_terminal for status, n in self.counts.items() if n)


@dataclass(frozen=True, slots=True)
class GraphJob:
    """A job as a workflow's graph draws it (:class:`WorkflowGraph`)."""

    id: int
    name: str
    status: JobStatus
    progress: float | None
    attempts: int
    finished_at: float | None
    progress_message: str | None = None
    #: The id given at submit (``job_id="receipt-42"``) of a job stored under
    #: a negative ``id``, read from the head of its payload (``own_id_in``
    #: over ``OWN_ID_HEAD`` bytes); None for a numbered job or one not read.
    own_id: str | None = None


@dataclass(frozen=True, slots=True)
class WorkflowGraph:
    """A workflow's jobs and the edges between them (:meth:`JobStore.workflow_graph`)."""

    workflow: WorkflowRow
    #: Its jobs the store holds, by id, at most the read's ``limit``.
    jobs: list[GraphJob]
    #: ``(upstream, downstream, on_failure)`` (``ON_FAILURE_*``) for each
    #: edge whose dependent is in ``jobs``, by (downstream, upstream); an
    #: upstream may lie outside the workflow, or outside ``jobs`` when truncated.
    edges: list[tuple[int, int, int]]
    #: It has more jobs than ``jobs`` holds.
    truncated: bool
