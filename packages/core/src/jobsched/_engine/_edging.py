"""What a submit's ``depends_on`` and result markers stand for: upstream numbers,
and the job's ``_flow`` (its markers, its ``on_failure="run"`` upstreams).

The cold side of ``Submission.check``: reached only when ``depends_on``
holds something other than ids of jobs known here (a Job, a ``js.After``,
an unknown id) or once a result marker exists in this process.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from .._exceptions import UnknownJobError
from .._jobs import _markers
from .._jobs._flow import flow_of
from .._jobs._ids import id_number
from .._jobs._job import Job
from ._state import _describe

if TYPE_CHECKING:
    from .._workflows._edges import After, DependsOn
    from .._workflows._inputs import Inputs


def edges_of(job: Job, depends_on: DependsOn) -> tuple[list[After], Inputs | None]:
    """``depends_on`` as After edges plus a cancel edge per marker target not
    named there, and where the job's markers are (None: none).

    :raises TypeError, ValueError: as ``_workflows._edges.edges`` says.
    """
    from .._workflows._edges import edges, with_inputs
    from .._workflows._inputs import find_inputs

    afters = edges(depends_on)
    inputs = find_inputs(job) if _markers.MARKERS_MADE else None
    return with_inputs(afters, inputs), inputs


def resolve(job: Job, depends_on: DependsOn, jobs: Mapping[int, Job], elsewhere: bool) -> list[int]:
    """The upstream numbers of a job submitted alone (not in a Workflow); sets
    its ``_flow`` when it has markers or ``"run"`` edges.

    :param jobs: the jobs this process knows, by number.
    :param elsewhere: a durable store may hold a job unknown here.
    :raises UnknownJobError: an upstream is unknown, or a Job never submitted.
    """
    from .._workflows._edges import After

    if isinstance(depends_on, str):
        depends_on = [depends_on]  # one id: unknown if no id, as in a list
    if not isinstance(depends_on, (Job, After)):
        # Anything but a Job, an After or a job id names no job anywhere:
        # unknown, as it always was (an unhashable one a TypeError, as ever).
        depends_on = list(depends_on)
        nowhere = [d for d in depends_on if _nowhere(d)]
        if nowhere:
            raise UnknownJobError(_unknown(job, nowhere))
    afters, inputs = edges_of(job, depends_on)
    deps: list[int] = []
    lenient: set[str] = set()
    unknown: list[str] = []
    for edge in afters:
        upstream = edge.job
        if type(upstream) is not str and not upstream.seq:  # type: ignore[union-attr]
            raise UnknownJobError(
                f"{_describe(job)} depends on {upstream!r}, which was never submitted: "
                "submit it first, or add both to one js.Workflow"
            )
        number = id_number(edge.job_id)
        if number in jobs or (elsewhere and number):
            deps.append(number)
            if edge.on_failure == "run":
                lenient.add(edge.job_id)
        else:
            unknown.append(edge.job_id)
    if unknown:
        raise UnknownJobError(_unknown(job, unknown))
    set_flow(job, inputs, lenient)
    return deps


def set_flow(job: Job, inputs: Inputs | None, lenient: Iterable[str]) -> None:
    """Record the job's markers and ``"run"`` upstreams (ids) in its ``_flow``,
    which Outcomes reads when it waits the job on its upstreams."""
    if inputs is None and not lenient and job._flow is None:
        return  # most jobs: no Flow made
    flow = flow_of(job)
    flow.inputs = inputs
    flow.lenient = frozenset(lenient)


def _nowhere(item: object) -> bool:
    from .._workflows._edges import After

    if isinstance(item, (Job, After)) or (type(item) is str and id_number(item)):
        return False
    hash(item)
    return True


def _unknown(job: Job, ids: Sequence[object]) -> str:
    return (
        f"{_describe(job)} depends on unknown job(s) {ids}: submit "
        "dependencies first (finished jobs are forgotten after history_limit)"
    )
