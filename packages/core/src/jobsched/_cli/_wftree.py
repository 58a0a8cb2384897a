"""How ``jobsched workflow show`` draws a workflow: a tree, a table, JSON.

Pure functions of a :class:`~jobsched.store.WorkflowGraph`. The tree puts
each job under its lowest-numbered upstream among the jobs read, names its
other upstreams on its line (``also after job-7, job-9``), and marks a
``[run]`` edge (the job runs however that upstream ends). Past
``FOLD_SIBLINGS`` siblings, those of one name fold into one line that counts
their statuses, and their children hang under it: a 10,000-job fan-out is a
few lines. It is drawn with a stack, not recursion: a chain of thousands of
jobs is as deep as a tree gets.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .._enums import JobStatus
from ..store._flowrows import GraphJob, WorkflowGraph, WorkflowRow
from ..store._rows import ON_FAILURE_RUN
from . import _format as fmt

#: A job's siblings past this many fold by name.
FOLD_SIBLINGS = 20
#: The most other upstreams a tree line names.
ALSO_SHOWN = 5
#: The statuses in the order the CLI counts them (``jobsched queues``' first).
ORDER = (
    JobStatus.PENDING,
    JobStatus.RUNNING,
    JobStatus.RETRY_WAIT,
    JobStatus.COMPLETED,
    JobStatus.FAILED,
    JobStatus.TIMED_OUT,
    JobStatus.CANCELLED,
)


def workflow_id(number: int) -> str:
    """A workflow's id as users see it: ``wf-<n>``."""
    return f"wf-{number}"


def counts_text(counts: dict[JobStatus, int]) -> str:
    """``990 completed, 10 failed``, in the CLI's order; ``none`` for no job."""
    return ", ".join(f"{counts[s]} {s.value}" for s in ORDER if counts.get(s)) or "none"


def row_json(row: WorkflowRow) -> dict[str, Any]:
    """A workflow as ``--json`` prints it."""
    return {
        "id": workflow_id(row.id),
        "name": row.name,
        "created_at": fmt.iso_time(row.created_at),
        "size": row.size,
        "counts": {s.value: n for s, n in row.counts.items() if n},
        "finished": row.finished,
    }


def upstreams(graph: WorkflowGraph) -> dict[int, list[tuple[int, int]]]:
    """Each job's upstreams with their policy, by upstream."""
    found: dict[int, list[tuple[int, int]]] = {job.id: [] for job in graph.jobs}
    for up, down, on_failure in graph.edges:
        if down in found:
            found[down].append((up, on_failure))
    for ups in found.values():
        ups.sort()
    return found


def label(number: int, held: dict[int, GraphJob]) -> str:
    """A job by the id the scheduler gave it: ``job-<n>``, or the one given
    at submit when the graph read it (an upstream not read shows by number)."""
    job = held.get(number)
    own = job.own_id if job is not None else None
    return own if own is not None else fmt.job_id(number)


def graph_json(graph: WorkflowGraph) -> dict[str, Any]:
    """The workflow and every job read with its upstreams, for ``--json``."""
    ups = upstreams(graph)
    held = {job.id: job for job in graph.jobs}
    return {
        **row_json(graph.workflow),
        "truncated": graph.truncated,
        "jobs": [
            {
                "job_id": label(job.id, held),
                "name": job.name,
                "status": job.status.value,
                "progress": job.progress,
                "progress_message": job.progress_message,
                "attempts": job.attempts,
                "finished_at": fmt.iso_time(job.finished_at),
                "upstreams": [
                    {"job_id": label(u, held), "on_failure": policy(p)} for u, p in ups[job.id]
                ],
            }
            for job in graph.jobs
        ],
    }


def policy(on_failure: int) -> str:
    """An edge's policy by the name ``js.After`` takes: ``cancel`` or ``run``."""
    return "run" if on_failure == ON_FAILURE_RUN else "cancel"


def run_mark(on_failure: int) -> str:
    """`` [run]`` after an upstream whose edge runs its dependent however it ends."""
    return " [run]" if on_failure == ON_FAILURE_RUN else ""


def state(job: GraphJob) -> str:
    """``running 40% reading page 4``: the status, and the progress if any."""
    text = job.status.value
    if job.progress is not None:
        text += f" {job.progress * 100:.0f}%"
    if job.progress_message:
        text += f" {fmt.one_line(job.progress_message, 60)}"
    return text


def table(graph: WorkflowGraph) -> str:
    """One row per job read, by id, with its upstreams (``--table``)."""
    ups = upstreams(graph)
    held = {job.id: job for job in graph.jobs}
    rows = [
        [
            label(job.id, held),
            fmt.one_line(job.name, 30),
            job.status.value,
            "-" if job.progress is None else f"{job.progress * 100:.0f}%",
            str(job.attempts),
            fmt.utc_time(job.finished_at),
            fmt.one_line(", ".join(f"{label(u, held)}{run_mark(p)}" for u, p in ups[job.id]), 60),
        ]
        for job in graph.jobs
    ]
    headers = ["JOB", "NAME", "STATUS", "PROGRESS", "ATTEMPTS", "FINISHED", "UPSTREAMS"]
    return fmt.table(headers, rows, right=[3, 4])


@dataclass(slots=True)
class _Item:
    """A line of the tree: one job, or siblings of one name folded."""

    jobs: list[int]
    #: The policy of each job's edge from the line above (None: a root).
    via: list[int | None]
    children: list[int] = field(default_factory=list)


def tree(graph: WorkflowGraph) -> list[str]:
    """The tree's lines (see the module's doc)."""
    held = {job.id: job for job in graph.jobs}
    ups = upstreams(graph)
    parent: dict[int, tuple[int, int] | None] = {}
    children: dict[int, list[int]] = {i: [] for i in held}
    roots = []
    for job in graph.jobs:
        inside = [(u, p) for u, p in ups[job.id] if u in held]
        parent[job.id] = min(inside) if inside else None
        if inside:
            children[min(inside)[0]].append(job.id)
        else:
            roots.append(job.id)
    lines: list[str] = []
    # (items of one level, the prefix their lines start with), deepest last.
    stack: list[tuple[list[_Item], str]] = [(_items(roots, held, parent, children), "")]
    while stack:
        items, prefix = stack[-1]
        if not items:
            stack.pop()
            continue
        item = items.pop(0)
        last = not items
        top = prefix == "" and len(stack) == 1
        connector = "" if top else ("└── " if last else "├── ")
        lines.append(prefix + connector + _line(item, held, ups, parent))
        if item.children:
            deeper = prefix + ("" if top else ("    " if last else "│   "))
            stack.append((_items(item.children, held, parent, children), deeper))
    return lines


def _items(
    ids: Sequence[int],
    held: dict[int, GraphJob],
    parent: dict[int, tuple[int, int] | None],
    children: dict[int, list[int]],
) -> list[_Item]:
    """The lines for sibling jobs ``ids``: one each, or folded by name past FOLD_SIBLINGS."""

    def via(i: int) -> int | None:
        edge = parent[i]
        return None if edge is None else edge[1]

    ordered = sorted(ids)
    if len(ordered) <= FOLD_SIBLINGS:
        return [_Item([i], [via(i)], children[i]) for i in ordered]
    by_name: dict[str, _Item] = {}
    for i in ordered:
        item = by_name.setdefault(held[i].name, _Item([], []))
        item.jobs.append(i)
        item.via.append(via(i))
        item.children += children[i]
    for item in by_name.values():
        item.children.sort()
    return list(by_name.values())


def _line(
    item: _Item,
    held: dict[int, GraphJob],
    ups: dict[int, list[tuple[int, int]]],
    parent: dict[int, tuple[int, int] | None],
) -> str:
    run = all(v == ON_FAILURE_RUN for v in item.via) and item.via[0] is not None
    mark = "[run] " if run else ""
    if len(item.jobs) > 1:
        first, last = label(item.jobs[0], held), label(item.jobs[-1], held)
        tally: dict[JobStatus, int] = {}
        for i in item.jobs:
            tally[held[i].status] = tally.get(held[i].status, 0) + 1
        name = fmt.one_line(held[item.jobs[0]].name, 40)
        return f"{mark}{first}..{last} {name} x{len(item.jobs)}: {counts_text(tally)}"
    job = held[item.jobs[0]]
    edge = parent[job.id]
    others = [(u, p) for u, p in ups[job.id] if edge is None or u != edge[0]]
    also = ""
    if others:
        named = ", ".join(f"{label(u, held)}{run_mark(p)}" for u, p in others[:ALSO_SHOWN])
        more = len(others) - ALSO_SHOWN
        named += f" and {more} more" if more > 0 else ""
        also = f"  ({'also after' if edge is not None else 'after'} {named})"
    return f"{mark}{label(job.id, held)} {fmt.one_line(job.name, 40)}  {state(job)}{also}"
