"""BackgroundScheduler's workflow methods: blocking versions of the
scheduler's, each waiting for its answer on the loop thread."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .._engine._scheduler import JobScheduler
    from .._workflows._workflow import Workflow, WorkflowInfo
    from ._loopthread import LoopThread


class WorkflowMethods:
    """A stateless base of ``BackgroundScheduler`` (its module stays short)."""

    __slots__ = ()

    _loop: LoopThread
    _scheduler: JobScheduler

    def enqueue_workflow(self, workflow: Workflow) -> str:
        """Enqueue every job of ``workflow`` or none; its id (see
        :meth:`JobScheduler.enqueue_workflow`)."""
        return self._loop.wait_for(
            "enqueue_workflow()", partial(self._scheduler.enqueue_workflow, workflow)
        )

    def workflow(self, workflow_id: str) -> WorkflowInfo:
        """The workflow's jobs by status (see :meth:`JobScheduler.workflow`)."""
        return self._loop.wait_for("workflow()", partial(self._scheduler.workflow, workflow_id))

    def cancel_workflow(self, workflow_id: str) -> int:
        """Cancel its unfinished jobs; how many (see :meth:`JobScheduler.cancel_workflow`)."""
        return self._loop.wait_for(
            "cancel_workflow()", partial(self._scheduler.cancel_workflow, workflow_id)
        )
