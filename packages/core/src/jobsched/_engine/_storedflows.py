"""Workflows on a durable store (issue 37, step E3): enqueued all or none in
one ``JobStore.add_workflow``, read and cancelled through the store.

Every row is built before any is written and none is adopted into this
process's view until the store took them all: a job that cannot be pickled,
or an id of its own the store holds already, leaves neither the store nor
this process with any job of the workflow.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from .._exceptions import UnknownJobError
from .._jobs import _json
from .._jobs._ids import id_number
from ._edging import set_flow

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from .._jobs._job import Job
    from .._workflows._inputs import Inputs
    from .._workflows._workflow import Workflow, WorkflowInfo
    from ..store._rows import Change, NewJob
    from ._link import StoreLink
    from ._outcomes import Outcomes
    from ._state import JobTable
    from ._submission import Submission


#: In place of a job's ``Inputs``: its markers are to be found again (a
#: submit hook ran on it after the checks).
FIND: Any = object()


async def enqueue(
    link: StoreLink,
    submission: Submission,
    table: JobTable,
    outcomes: Outcomes,
    workflow: Workflow,
    planned: Sequence[tuple[Job, float, Any, str | None, Inputs | None]],
) -> str:
    """Write ``workflow``'s jobs (checked: ``planned``, each job with its
    delay, its edges, its own id and its markers as the checks found them,
    or :data:`FIND`) in one add; its id.

    :raises TypeError: a job cannot be pickled (nothing written).
    :raises ValueError: the store holds an id of one of its jobs already.
    """
    from .._workflows._inputs import Inputs, find_inputs
    from ..store._flowrows import NewWorkflow

    inside = workflow._ids
    # Each job's markers, found once (a scan of a fan-in's 10,000 targets
    # is not free); renamed in place below.
    found = [find_inputs(job) if inputs is FIND else inputs for job, *_, inputs in planned]
    # Registered jobs' arguments to encode again once their upstreams are
    # numbered, and their text before (put back if the store refuses).
    encode = {
        id(job): a
        for (job, *_), inputs in zip(planned, found, strict=True)
        if inputs is not None and (a := _name_by_jobs(inputs, inside)) is not None
    }
    texts = [(job, job.args_json) for job, *_ in planned if id(job) in encode]  # type: ignore[attr-defined]
    number = link.next_id()
    rows: list[NewJob] = []
    # Each job's number and workflow as Workflow.add left them, to put back
    # if the store does not take the workflow (it can then be enqueued again).
    before = [(job, job._jobsched_id) for job, *_ in planned]
    try:
        for (job, delay, edges, own, _), inputs in zip(planned, found, strict=True):
            # Numbers are known only now: an upstream inside the workflow got
            # its number when its row was built, just before (one named by
            # the id it had when added is that job).
            ids = [_upstream_id(edge.job, edge.job_id, inside) for edge in edges]
            deps = [id_number(job_id) for job_id in ids]
            lenient = [i for i, e in zip(ids, edges, strict=True) if e.on_failure == "run"]
            if id(job) in encode:
                job.args_json = _json.dumps_arguments(encode[id(job)], f"{job!r}'s arguments")  # type: ignore[attr-defined]
                inputs = find_inputs(job)  # its markers as the new text holds them
            elif inputs is not None:
                # The same markers, their upstreams' ids read again: a Job
                # target's id is its number, given just now.
                inputs = Inputs(inputs.kind, inputs.original, inputs.places)
            set_flow(job, inputs, lenient)
            job._flow.workflow = number  # type: ignore[union-attr]
            rows.append(submission.stored_row(job, delay, deps, own, adopt=False, workflow=number))
    except BaseException:
        _put_back(before, texts, workflow)
        raise
    new = NewWorkflow(number, workflow.name, time.time(), rows)
    write = link.add_workflow(new)
    try:
        changes = await write
    except BaseException:
        if write.error is not None:
            # Refused whole (a held id, a value the store cannot keep):
            # nothing of it was written.
            _put_back(before, texts, workflow)
        else:
            # An outage given up on, the caller cancelled, or another job's
            # refusal raised by the flush: the write stays queued and is made
            # later, so its jobs are this process's, as a submit's are whose
            # flush did not return.
            _adopt(table, before)
        raise
    _adopt(table, before)
    changed(table, outcomes, changes)
    return f"wf-{number}"


def changed(table: JobTable, outcomes: Outcomes, changes: Sequence[Change]) -> None:
    """Statuses the store set itself (a cascade): this process's view follows,
    as with the changes of the committer's writes."""
    jobs = table.jobs
    for change in changes:
        job = jobs.get(change.id)
        if job is not None and not job.status._terminal:  # type: ignore[attr-defined]
            outcomes.finish_one(job, change.status, change.error)


def _adopt(table: JobTable, built: Sequence[tuple[Job, int]]) -> None:
    jobs = table.jobs
    for job, _ in built:
        # A claim may have brought a job of it here first (the commit wakes
        # the claimer): that view stands.
        if job._jobsched_id not in jobs:
            jobs[job._jobsched_id] = job
            table.unfinished += 1


def _put_back(
    before: Sequence[tuple[Job, int]], texts: Sequence[tuple[Job, str]], workflow: Workflow
) -> None:
    for job, text in texts:
        job.args_json = text  # type: ignore[attr-defined]
    for job, number in before:
        job._jobsched_id, job.seq = number, 0
        if job._flow is not None:
            job._flow.workflow = workflow


def _upstream_id(upstream: str | Job, job_id: str, inside: Mapping[str, Job]) -> str:
    if type(upstream) is str and upstream in inside:
        return inside[upstream].job_id
    return job_id


def _name_by_jobs(inputs: Inputs, inside: Mapping[str, Job]) -> Any:
    """Make a job's markers (``inputs``) that name a job of the workflow by
    the id it had when added name that Job: the store numbers it anew as
    its row is built, and a marker encodes its target's id when it is
    pickled or written. For a registered job, whose arguments are JSON text
    already, its decoded arguments to encode again once the upstreams are
    numbered; else None."""
    from .._jobs._markers import ResultOf

    renamed = False
    for *_, marker in inputs.places:
        if type(marker) is ResultOf:
            if type(marker.target) is str and marker.target in inside:
                marker.target, renamed = inside[marker.target], True
        elif any(type(t) is str and t in inside for t in marker.targets):
            marker.targets = tuple(
                inside.get(t, t) if type(t) is str else t for t in marker.targets
            )
            renamed = True
    return inputs.original if renamed and inputs.kind == "json" else None


def workflow_number(workflow_id: object) -> int:
    """The store's number of ``"wf-<n>"``, 0 for anything else."""
    if isinstance(workflow_id, str) and workflow_id.startswith("wf-"):
        return id_number("job-" + workflow_id[3:])
    return 0


async def info(link: StoreLink, workflow_id: str) -> WorkflowInfo:
    """The store's workflow (every member's jobs of it), as ``WorkflowInfo``.

    :raises UnknownJobError: the store holds no such workflow.
    """
    from datetime import datetime, timezone

    from .._workflows._workflow import WorkflowInfo

    number = workflow_number(workflow_id)
    if not number:
        raise UnknownJobError(_unknown(workflow_id))
    await link.flush()  # this process's enqueues first
    store = link.store
    row = await link.read("reading a workflow", lambda: store.workflow(number), patience=None)
    if row is None:
        raise UnknownJobError(_unknown(workflow_id))
    counts = {status: n for status, n in row.counts.items() if n}
    created = datetime.fromtimestamp(row.created_at, timezone.utc)
    return WorkflowInfo(f"wf-{number}", row.name, counts, row.finished, created, row.size)


async def cancel(link: StoreLink, table: JobTable, outcomes: Outcomes, workflow_id: str) -> int:
    """Cancel the workflow's unfinished jobs in the store; how many.

    :raises UnknownJobError: the store holds no such workflow.
    """
    number = workflow_number(workflow_id)
    if not number:
        raise UnknownJobError(_unknown(workflow_id))
    await link.flush()
    store = link.store
    row = await link.read("reading a workflow", lambda: store.workflow(number), patience=None)
    if row is None:
        raise UnknownJobError(_unknown(workflow_id))
    done, changes = await link.read(
        "cancelling a workflow",
        lambda: store.cancel_workflow(number, time.time()),
        patience=None,
    )
    changed(table, outcomes, changes)
    # A running job of it held here is flagged in the store: it is stopped
    # as a cancel from another member is (by its lease's renewal). Dependents
    # outside it on "run" edges may be claimable now.
    link.wake_claimer()
    return done


def _unknown(workflow_id: object) -> str:
    return (
        f"no workflow {workflow_id!r} in the store: it was never enqueued, or "
        "all of its jobs were pruned"
    )
