"""A job's rare workflow fields, in one slot (``Job._flow``), None for most jobs.

Most jobs have no workflow, no result markers and no progress: one slot
holding None costs them 8 bytes, where seven slots would cost 56 and every
pickle of a job their names.
"""

from __future__ import annotations

from typing import Any


class Flow:
    """What a job has of workflows and progress.

    :ivar workflow: the store's number of the workflow the job belongs to;
        while the job waits in a :class:`~jobsched.Workflow` not yet
        enqueued, that Workflow object (so that a job joins one workflow only).
    :ivar inputs: where the job's result markers are (``_workflows._markers.Inputs``).
    :ivar lenient: the ids of the upstreams on ``on_failure="run"`` edges.
    :ivar bound: a registered job's arguments with the upstreams' results in
        place of the markers, once bound.
    :ivar failed: the ``UpstreamFailedError`` a bound job raises instead of running.
    :ivar progress: the last fraction the job reported, or None.
    :ivar message: the last progress message, or None.
    """

    __slots__ = ("bound", "failed", "inputs", "lenient", "message", "progress", "workflow")

    def __init__(self) -> None:
        self.workflow: Any = None
        self.inputs: Any = None
        self.lenient: frozenset[str] = frozenset()
        self.bound: dict[str, Any] | None = None
        self.failed: BaseException | None = None
        self.progress: float | None = None
        self.message: str | None = None

    def __reduce__(self) -> tuple[Any, ...]:
        # What a process worker needs of it (a registered job's bound
        # arguments, the error a failing job raises, the progress) and no
        # more: the inputs hold the job's arguments as submitted, a second
        # copy of them, and a Workflow not yet enqueued holds every job in it.
        workflow = self.workflow if type(self.workflow) is int else None
        state = (workflow, self.lenient, self.bound, self.failed, self.progress, self.message)
        return (_restore, state)


def _restore(
    workflow: int | None,
    lenient: frozenset[str],
    bound: dict[str, Any] | None,
    failed: BaseException | None,
    progress: float | None,
    message: str | None,
) -> Flow:
    flow = Flow()
    flow.workflow = workflow
    flow.lenient = lenient
    flow.bound = bound
    flow.failed = failed
    flow.progress = progress
    flow.message = message
    return flow


def flow_of(job: Any) -> Flow:
    """``job``'s Flow, made on first need."""
    flow = getattr(job, "_flow", None)
    if flow is None:
        flow = job._flow = Flow()
    return flow
