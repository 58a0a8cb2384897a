"""The dict store's workflows: one added whole (all its jobs or none), read
with its jobs' counts and graph, and cancelled whole."""

from __future__ import annotations

from abc import abstractmethod
from collections import Counter

from jobsched import JobStatus
from jobsched.store import (
    ON_FAILURE_CANCEL,
    ON_FAILURE_RUN,
    OWN_ID_HEAD,
    Change,
    GraphJob,
    JobStore,
    NewWorkflow,
    WorkflowGraph,
    WorkflowRow,
    check_limit,
    check_workflows_args,
    own_id_in,
)

from . import _deps
from ._rows import State

S = JobStatus


class Workflows(JobStore):
    """``add_workflow`` and the workflow reads: a dict has no index, so each
    read looks at every row (fine at its scale)."""

    @property
    @abstractmethod
    def _state(self) -> State:
        """The store of this object's name (see ``DictStore``)."""

    async def add_workflow(self, workflow: NewWorkflow, now: float) -> list[Change]:
        state = self._state
        if not workflow.jobs:
            raise ValueError(f"workflow {workflow.id} has no jobs: a workflow needs at least one")
        if workflow.id in state.workflows:
            raise ValueError(f"the store holds a workflow numbered {workflow.id} already")
        ids = [job.id for job in workflow.jobs]
        # Checked before anything is written: nothing awaits, so this holds.
        held = [i for i in ids if i in state.jobs] + [i for i, n in Counter(ids).items() if n > 1]
        if held:
            raise ValueError(
                f"the store holds a job with the id of workflow job(s) {held} already "
                "(an id of your own, given twice): nothing of the workflow was added"
            )
        changes = _deps.add(state, workflow.jobs, now)
        for job_id in ids:
            state.jobs[job_id].workflow = workflow.id
        state.workflows[workflow.id] = (workflow.name, workflow.created_at, len(ids))
        return changes

    def _row(self, workflow_id: int) -> WorkflowRow | None:
        state = self._state
        found = state.workflows.get(workflow_id)
        if found is None:
            return None
        counts = Counter(r.status for r in state.jobs.values() if r.workflow == workflow_id)
        return WorkflowRow(workflow_id, *found, dict(counts))

    async def workflow(self, workflow_id: int) -> WorkflowRow | None:
        return self._row(workflow_id)

    async def workflows(
        self, *, limit: int = 50, before: int | None = None, unfinished: bool = False
    ) -> list[WorkflowRow]:
        limit, before = check_workflows_args(limit=limit, before=before)
        rows = []
        for workflow_id in sorted(self._state.workflows, reverse=True):
            if before is not None and workflow_id >= before:
                continue
            row = self._row(workflow_id)
            if row is not None and not (unfinished and row.finished):
                rows.append(row)
            if len(rows) == limit:
                break
        return rows

    async def workflow_graph(self, workflow_id: int, *, limit: int = 2_000) -> WorkflowGraph | None:
        limit = check_limit(limit)
        row = self._row(workflow_id)
        if row is None:
            return None
        mine = sorted(
            (r for r in self._state.jobs.values() if r.workflow == workflow_id), key=lambda r: r.id
        )
        jobs = [
            GraphJob(
                r.id,
                r.name,
                r.status,
                None,
                r.attempts,
                r.finished_at,
                own_id=own_id_in(r.payload[:OWN_ID_HEAD], r.id),
            )
            for r in mine[:limit]
        ]
        edges = [
            (u, r.id, ON_FAILURE_RUN if u in r.lenient else ON_FAILURE_CANCEL)
            for r in mine[:limit]
            for u in sorted(r.depends_on)
        ]
        return WorkflowGraph(row, jobs, edges, len(mine) > limit)

    async def cancel_workflow(self, workflow_id: int, now: float) -> tuple[int, list[Change]]:
        state = self._state
        mine = sorted(
            (r for r in state.jobs.values() if r.workflow == workflow_id and r.finished_at is None),
            key=lambda r: r.id,
        )
        changes: list[Change] = []
        for row in mine:
            if row.status is S.RUNNING:
                row.cancel_requested = True  # its owner sees it at its next extend()
            else:
                _deps.finish(row, S.CANCELLED, now, "cancelled")
                changes.append(Change(row.id, S.CANCELLED, "cancelled"))
        # Their own dependents are cancelled already: the cascade reaches
        # only those outside the workflow (or counts off their "run" edges).
        for change in list(changes):
            changes += _deps.cascade(state, change.id, S.CANCELLED, now)
        return len(mine), changes
