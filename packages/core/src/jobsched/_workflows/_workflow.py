"""``js.Workflow``: jobs collected to be enqueued as one; ``js.WorkflowInfo``:
what a store says of one. Loaded on first use (see ``jobsched.__getattr__``)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._enums import JobStatus
from .._exceptions import SchedulerError, UnknownJobError
from .._jobs._flow import flow_of
from .._jobs._ids import check_own_id
from .._jobs._job import Job
from .._jobs._options import delay_until
from .._jobs._text import check_text
from ._edges import After, edges, with_inputs
from ._inputs import find_inputs

if TYPE_CHECKING:
    from datetime import datetime

#: The options ``Workflow.add`` takes, as ``submit`` does.
SUBMIT_OPTIONS = ("delay", "at", "job_id")


class Workflow:
    """Jobs and their edges, enqueued all or none by ``await s.enqueue_workflow(wf)``.

    ::

        wf = js.Workflow("nightly")
        parts = [wf.add(js.FunctionJob(fetch, args=(url,))) for url in urls]
        wf.add(js.FunctionJob(merge, args=(js.results_of(parts),)))
        wf.add(js.FunctionJob(clean_up), depends_on=[js.After(p, on_failure="run") for p in parts])
        workflow_id = await s.enqueue_workflow(wf)

    A job's upstreams are the jobs ``depends_on`` names and the targets of
    the ``js.result_of`` / ``js.results_of`` markers in its arguments. An
    upstream given as a Job must have been added to this workflow before
    it, or submitted already; one given as an id may be any job's, in the
    workflow (added earlier, with ``job_id=``) or in the store. So the jobs
    are added in an order where every upstream comes first, and a cycle
    cannot be built.

    :param name: a label for the workflow (``jobsched workflows``, the dashboard).
    :raises TypeError: ``name`` is not a str.
    :raises ValueError: ``name`` is empty or holds NUL or a lone surrogate.
    """

    __slots__ = ("_added", "_ids", "_named", "jobs", "name")

    def __init__(self, name: str) -> None:
        if type(name) is not str:
            raise TypeError(f"a workflow's name must be a str, got {name!r}")
        if not name:
            raise ValueError("a workflow's name must not be empty: say what it does")
        #: The workflow's label.
        self.name: str = check_text("workflow name", name)
        #: Each job as added: the job, its edges (markers' upstreams included,
        #: an upstream once) and the submit options given (``delay``, ``at``,
        #: ``job_id``), in the order added, which is an order of the graph.
        self.jobs: list[tuple[Job, tuple[After, ...], dict[str, Any]]] = []
        self._added: set[int] = set()  # id() of each job added
        self._ids: dict[str, Job] = {}  # the jobs' ids: unique within the workflow
        self._named: dict[str, Job] = {}  # ids named before any job of this workflow had them

    def add(
        self,
        job: Job,
        depends_on: str | Job | After | Iterable[str | Job | After] = (),
        **submit_options: Any,
    ) -> Job:
        """Add ``job``; returns it (to name it in later jobs' ``depends_on`` or markers).

        :param depends_on: job ids, jobs or ``js.After`` edges the job waits for.
        :param submit_options: ``delay`` (seconds), ``at`` (an aware
            datetime) or ``job_id`` (an id of your own, given to the job now),
            as ``submit`` takes them.
        :raises TypeError: ``job`` is not a Job, an option is unknown or of
            the wrong type, or ``depends_on`` holds something else than ids,
            jobs and Afters.
        :raises SchedulerError: ``job`` was submitted already.
        :raises ValueError: ``job`` is in this or another workflow already,
            its id is another job's here, an option's value is wrong, or an
            earlier job named its id before it was added (which could close
            a cycle).
        :raises UnknownJobError: an upstream given as a Job is neither added
            earlier nor submitted.
        """
        if not isinstance(job, Job):
            raise TypeError(f"Workflow.add takes a jobsched.Job, got {job!r}")
        if id(job) in self._added:
            raise ValueError(f"{job!r} is in workflow {self.name!r} already: add each job once")
        if job.seq or job.status is not JobStatus.PENDING:
            raise SchedulerError(
                f"{job!r} was submitted already: a workflow takes new jobs only (make a new "
                "job object, and name the submitted one in depends_on)"
            )
        flow = getattr(job, "_flow", None)
        if flow is not None and flow.workflow is not None:
            raise ValueError(
                f"{job!r} belongs to another workflow ({_label(flow.workflow)}): a job joins "
                "one workflow; make a new job object for this one"
            )
        # Most jobs of a big workflow take no option: no sets made for them.
        options = _check_options(job, submit_options) if submit_options else {}
        own = options.get("job_id")
        job_id = own if own is not None else job.job_id
        deps = [] if type(depends_on) is tuple and not depends_on else edges(depends_on)
        inputs = find_inputs(job)
        if inputs is not None:
            deps = with_inputs(deps, inputs)
        for edge in deps:
            self._check_upstream(job, job_id, edge)
        if job_id in self._ids:
            raise ValueError(
                f"job id {job_id!r} is in workflow {self.name!r} already "
                f"({self._ids[job_id]!r}): give each job its own id"
            )
        named_by = self._named.get(job_id)
        if named_by is not None:
            raise ValueError(
                f"{named_by!r}, added earlier, depends on {job_id!r}: add {job_id} before "
                "the jobs that depend on it (that keeps the workflow free of cycles)"
            )
        # Every check passed: now change the job and the workflow.
        for edge in deps:
            if type(edge.job) is str and edge.job not in self._ids:
                self._named.setdefault(edge.job, job)
        if own is not None:
            job._set_own_id(own)
        flow_of(job).workflow = self
        self._added.add(id(job))
        self._ids[job_id] = job
        self.jobs.append((job, tuple(deps), options))
        return job

    def _check_upstream(self, job: Job, job_id: str, edge: After) -> None:
        upstream = edge.job
        # A Job is itself only: on a durable store a submitted job's number is
        # the store's, and may equal the one this process gave a new job.
        if upstream is job or (type(upstream) is str and upstream == job_id):
            raise ValueError(f"{job!r} depends on itself, which would never run")
        if type(upstream) is str or id(upstream) in self._added or upstream.seq:  # type: ignore[union-attr]
            return
        raise UnknownJobError(
            f"{job!r} depends on {upstream!r}, which is neither in workflow {self.name!r} "
            "nor submitted: add it to the workflow before the jobs that depend on it, or "
            "submit it first"
        )

    def __len__(self) -> int:
        return len(self.jobs)

    def __repr__(self) -> str:
        return f"Workflow({self.name!r}, {len(self.jobs)} jobs)"


def _label(workflow: object) -> str:
    return repr(workflow) if isinstance(workflow, Workflow) else f"wf-{workflow}"


def _check_options(job: Job, options: dict[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(options) - set(SUBMIT_OPTIONS))
    if unknown:
        extra = (
            " (a workflow commits in its own transaction: connection= is enqueue's)"
            if "connection" in unknown
            else ""
        )
        raise TypeError(
            f"Workflow.add got unknown option(s) {unknown} for {job!r}: it takes "
            f"{', '.join(SUBMIT_OPTIONS)}{extra}"
        )
    delay = options.get("delay", 0.0)
    if isinstance(delay, bool) or not isinstance(delay, (int, float)):
        raise TypeError(f"delay must be a number of seconds >= 0, got {delay!r}")
    if not delay >= 0 or delay == math.inf:
        raise ValueError(f"delay must be a finite number of seconds >= 0, got {delay!r}")
    at = options.get("at")
    if at is not None:
        delay_until(at, delay)  # submit's check of at=; the delay is worked out at enqueue
    own = options.get("job_id")
    if own is not None:
        check_own_id(own)
    return {key: value for key, value in options.items() if value is not None}


@dataclass(frozen=True, slots=True)
class WorkflowInfo:
    """A workflow as ``await s.workflow(workflow_id)`` reads it.

    :ivar id: its id, ``"wf-<n>"``.
    :ivar name: the name it was given.
    :ivar counts: how many of its jobs the store holds, by status.
    :ivar finished: True when none of its jobs is unfinished (a pruned job
        counts as finished).
    :ivar created_at: when it was enqueued (UTC), where the store says.
    :ivar size: how many jobs it was enqueued with (pruned ones included).
    """

    id: str
    name: str
    counts: dict[JobStatus, int]
    finished: bool
    created_at: datetime | None = None
    size: int = 0
