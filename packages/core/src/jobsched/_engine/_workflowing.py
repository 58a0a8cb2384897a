"""Workflows on the scheduler: ``enqueue_workflow`` (all of its jobs or none),
``workflow`` (what it holds, by status) and ``cancel_workflow``.

``WorkflowCalls`` is a stateless base of ``JobScheduler`` holding the three
public methods; the part they reach, ``Workflows``, is made on first use
(a scheduler that never enqueues a workflow pays nothing). In memory a
workflow is a record here: its name, when it was enqueued, its jobs' numbers
in the order added. On a durable store the store keeps them (see
``_storedflows``): one add of all their jobs, its reads and its cancel.
"""

from __future__ import annotations

import sys
from collections import Counter
from typing import TYPE_CHECKING, Any

from .._enums import JobStatus
from .._exceptions import SchedulerStoppedError, UnknownJobError
from .._jobs._ids import id_number, next_number, own_number
from ._edging import set_flow
from ._state import _describe

if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime

    from .._jobs._job import Job
    from .._workflows._edges import After
    from .._workflows._inputs import Inputs
    from .._workflows._workflow import Workflow, WorkflowInfo
    from ._backing import Backing
    from ._cancel import Canceller
    from ._outcomes import Outcomes
    from ._scheduler import JobScheduler
    from ._state import JobTable, RunState, Settings
    from ._submission import Submission

_RUNNING = JobStatus.RUNNING


class WorkflowCalls:
    """``JobScheduler``'s workflow methods: they reach the Workflows part."""

    __slots__ = ()

    def _workflows(self) -> Workflows:
        part: Workflows | None = self.__dict__.get("_workflows_part")
        if part is None:
            part = self.__dict__["_workflows_part"] = Workflows(self)  # type: ignore[arg-type]
        return part

    async def enqueue_workflow(self, workflow: Workflow) -> str:
        """Enqueue every job of ``workflow``, or none; its id (``"wf-<n>"``).

        Every job is checked first, as ``submit`` checks it, with its
        options (``delay``, ``at``, ``job_id``) and its upstreams (jobs of
        the workflow added before it, or jobs submitted already); any error
        leaves the scheduler without any of them.

        :raises TypeError: ``workflow`` is not a ``js.Workflow``.
        :raises ValueError: it is empty, or an id of your own is held already.
        :raises SchedulerError: a job of it was submitted already (a workflow
            is enqueued once).
        :raises UnknownJobError: an upstream outside it is not known here
            (on a durable store: is no job id).
        """
        return await self._workflows().enqueue(workflow)

    async def workflow(self, workflow_id: str) -> WorkflowInfo:
        """What the scheduler holds of the workflow: its jobs by status, and
        whether all have finished (a job no longer held counts as finished).

        :raises UnknownJobError: no such workflow (the message says workflow).
        """
        return await self._workflows().info(workflow_id)

    async def cancel_workflow(self, workflow_id: str) -> int:
        """Cancel every unfinished job of the workflow, ``"run"``-edge ones too;
        how many. Running ones are cancelled as ``cancel()`` does; jobs
        outside it that depend on its jobs follow their own edges.

        :raises UnknownJobError: no such workflow.
        """
        return await self._workflows().cancel(workflow_id)


class Record:
    """A workflow enqueued here."""

    __slots__ = ("created_at", "name", "numbers")

    def __init__(self, name: str, created_at: datetime, numbers: list[int]) -> None:
        self.name = name
        self.created_at = created_at
        #: Its jobs' numbers, in the order they were added (upstreams first).
        self.numbers = numbers


class Workflows:
    """Enqueues, reads and cancels workflows in this scheduler."""

    __slots__ = (
        "_add",
        "_backing",
        "_cancelling",
        "_outcomes",
        "_records",
        "_run",
        "_settings",
        "_submission",
        "_table",
    )

    def __init__(self, s: JobScheduler) -> None:
        self._table: JobTable = s._table
        self._run: RunState = s._run
        self._settings: Settings = s._settings
        self._backing: Backing = s._backing
        self._submission: Submission = s._submission
        self._add = s._add
        self._cancelling: Canceller = s._cancelling
        self._outcomes: Outcomes = s._outcomes
        #: Workflow number -> its record, oldest first.
        self._records: dict[int, Record] = {}

    async def enqueue(self, workflow: Workflow) -> str:
        """See :meth:`WorkflowCalls.enqueue_workflow`."""
        from .._workflows._workflow import Workflow

        if not isinstance(workflow, Workflow):
            raise TypeError(f"enqueue_workflow takes a js.Workflow, got {workflow!r}")
        if self._run.stopping:
            raise SchedulerStoppedError(
                f"cannot enqueue {workflow!r}: the scheduler is stopping or stopped"
            )
        if not workflow.jobs:
            raise ValueError(f"{workflow!r} has no jobs: add some with wf.add(job) first")
        from .._workflows._inputs import find_inputs

        # Imported once here, not per job: a relative import in a function
        # costs a package look-up per call (10,000 of them in W23).
        planned = [self._check(workflow, find_inputs, *added) for added in workflow.jobs]
        link = self._backing.link
        if link is not None:
            from . import _storedflows

            await link.levels.check(f"enqueue_workflow({workflow.name!r})")
            hooks = self._submission.hooks
            stored = []
            for (job, delay, _, inputs, _, own), (_, edges, _) in zip(
                planned, workflow.jobs, strict=True
            ):
                if hooks:
                    self._submission.run_hooks(job)
                    # A hook may change the job: its markers are found again.
                    inputs = _storedflows.FIND
                stored.append((job, delay, edges, own, inputs))
            return await _storedflows.enqueue(
                link, self._submission, self._table, self._outcomes, workflow, stored
            )
        # Every check passed: nothing below can fail, so all are added.
        number = next_number()
        numbers = []
        hooks = self._submission.hooks
        table = self._table
        remember, limit = table.remember, table.history_limit
        # A job cancelled as it is added (a "cancel" upstream of it failed)
        # ends, and an end trims the history: it could evict a finished
        # upstream of a job added after it, not yet pinned by that job's edge
        # (the model check found it). So ends file nothing until all are added.
        ended: list[int] = []
        table.remember, table.history_limit = ended.append, sys.maxsize
        try:
            for job, delay, deps, inputs, lenient, own in planned:
                set_flow(job, inputs, lenient)
                job._flow.workflow = number  # type: ignore[union-attr]
                if hooks:
                    self._submission.run_hooks(job)
                upstreams = [id_number(job_id) for job_id in deps]
                self._add(job, delay, upstreams, own)
                numbers.append(job._jobsched_id)
        finally:
            table.remember, table.history_limit = remember, limit
            self._file(ended)
        self._forget_gone()
        from datetime import datetime, timezone

        self._records[number] = Record(workflow.name, datetime.now(timezone.utc), numbers)
        return f"wf-{number}"

    def _check(
        self,
        workflow: Workflow,
        find_inputs: Callable[[Job], Inputs | None],
        job: Job,
        edges: tuple[After, ...],
        options: dict[str, Any],
    ) -> tuple[Job, float, list[str], Inputs | None, list[str], str | None]:
        """One job's checks: what adding it takes (its upstreams by id)."""
        delay = options.get("delay", 0.0)
        at = options.get("at")
        if at is not None:
            from .._jobs._options import delay_until

            delay = delay_until(at, delay)
        self._submission.check_alone(job, delay)
        own = options.get("job_id")
        if own is not None and own_number(own) in self._table.jobs:
            raise ValueError(
                f"job id {own!r} of {workflow!r} is held already: a workflow's jobs are new "
                "jobs (half of one enqueued twice would be a second workflow's half)"
            )
        try:
            self._settings.strategy.key(job)
        except Exception as exc:
            raise TypeError(
                f"{_describe(job)} cannot be queued: the strategy "
                f"{type(self._settings.strategy).__name__} failed on it "
                f"({type(exc).__name__}: {exc})"
            ) from exc
        deps = []
        for edge in edges:
            upstream = edge.job
            # Added to the workflow before this job (Workflow.add saw to that).
            inside = (
                upstream in workflow._ids
                if type(upstream) is str
                else id(upstream) in workflow._added
            )
            if not inside and not self._known(edge.job_id):
                raise UnknownJobError(
                    f"{_describe(job)} depends on {edge.job_id}, which is neither in "
                    f"{workflow!r} nor known here: submit it first (finished jobs are "
                    f"forgotten after {self._table.kept_by()})"
                )
            deps.append(edge.job_id)
        lenient = [edge.job_id for edge in edges if edge.on_failure == "run"]
        return job, delay, deps, find_inputs(job), lenient, own

    def _known(self, job_id: str) -> bool:
        number = id_number(job_id)
        # A durable store may hold a job unknown here (the store checks it).
        return number in self._table.jobs or bool(number and self._backing.dependencies_elsewhere)

    def _record(self, workflow_id: str) -> tuple[int, Record]:
        number = 0
        if isinstance(workflow_id, str) and workflow_id.startswith("wf-"):
            number = id_number("job-" + workflow_id[3:])
        record = self._records.get(number)
        if record is None:
            raise UnknownJobError(
                f"no workflow {workflow_id!r}: it was never enqueued here, or all of its "
                f"jobs were forgotten ({self._table.kept_by()})"
            )
        return number, record

    async def info(self, workflow_id: str) -> WorkflowInfo:
        """See :meth:`WorkflowCalls.workflow`."""
        link = self._backing.link
        if link is not None:
            from . import _storedflows

            return await _storedflows.info(link, workflow_id)
        from .._workflows._workflow import WorkflowInfo

        number, record = self._record(workflow_id)
        jobs = self._table.jobs
        held = [jobs[n] for n in record.numbers if n in jobs]
        counts = dict(Counter(job.status for job in held))
        finished = all(job.status._terminal for job in held)  # type: ignore[attr-defined]
        return WorkflowInfo(
            f"wf-{number}", record.name, counts, finished, record.created_at, len(record.numbers)
        )

    async def cancel(self, workflow_id: str) -> int:
        """See :meth:`WorkflowCalls.cancel_workflow`: waiting jobs first,
        dependents before their upstreams (the reverse of the add order), so
        each ends "cancelled" rather than by its upstream's cascade; then the
        running ones."""
        link = self._backing.link
        if link is not None:
            from . import _storedflows

            return await _storedflows.cancel(link, self._table, self._outcomes, workflow_id)
        _, record = self._record(workflow_id)
        jobs = self._table.jobs
        mine = [jobs[n] for n in reversed(record.numbers) if n in jobs]
        unfinished = [job for job in mine if not job.status._terminal]  # type: ignore[attr-defined]
        waiting = [job for job in unfinished if job.status is not _RUNNING]
        running = [job for job in unfinished if job.status is _RUNNING]
        done = 0
        for job in waiting + running:
            if job.status._terminal:  # type: ignore[attr-defined]
                # Ended during this call: a listener of an earlier cancel here
                # cancelled it. Unfinished when the call began, so it counts.
                done += job.status is JobStatus.CANCELLED
            elif self._cancelling.cancel(job.job_id):
                done += 1
        return done

    def _file(self, ended: list[int]) -> None:
        """File the jobs that ended as they were added, and trim the history
        as each end would have (``Outcomes._finish_here``), now that every
        job of the workflow pins its upstreams."""
        table = self._table
        for number in ended:
            table.remember(number)
            if len(table.finished) > table.history_limit:
                old = table.finished.popleft()
                if old in self._outcomes.dependents:
                    self._outcomes.evict(old)
                else:
                    table.jobs.pop(old, None)

    def _forget_gone(self) -> None:
        """Drop the oldest records none of whose jobs is held any more (a
        workflow goes with its last job)."""
        jobs = self._table.jobs
        records = self._records
        while records:
            number, record = next(iter(records.items()))
            if any(n in jobs for n in record.numbers):
                return
            del records[number]
