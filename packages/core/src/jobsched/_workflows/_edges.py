"""Edges: what ``depends_on`` takes (ids, jobs, ``js.After``), and the edges a
job's result markers add to it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from .._jobs._ids import id_number
from .._jobs._job import Job

if TYPE_CHECKING:
    from ._inputs import Inputs

#: The failure policies an edge can have.
POLICIES = ("cancel", "run")


@dataclass(frozen=True, slots=True)
class After:
    """An edge in ``depends_on`` with its failure policy.

    ``js.After(job)`` is the same as ``job`` itself (or its id): the
    dependent runs once ``job`` completed, and is cancelled if ``job``
    ends any other way (FAILED, TIMED_OUT, CANCELLED). With
    ``on_failure="run"`` the dependent runs once ``job`` has finished
    however it ended: a cleanup, a "finally", a report over whatever
    succeeded; a ``js.result_of(job)`` in its arguments then raises
    :class:`~jobsched.UpstreamFailedError` inside it, and in a
    ``js.results_of`` list that upstream's slot holds the error.

    :param job: the upstream: a job id, or a :class:`~jobsched.Job`
        (submitted, or added earlier to the same :class:`~jobsched.Workflow`).
    :param on_failure: ``"cancel"`` (the default) or ``"run"``.
    :raises TypeError: ``job`` is neither a str nor a Job.
    :raises ValueError: ``job`` is a str no job id can be, or
        ``on_failure`` is neither ``"cancel"`` nor ``"run"``.
    """

    job: str | Job
    on_failure: Literal["cancel", "run"] = "cancel"

    def __post_init__(self) -> None:
        job: object = self.job  # whatever the caller passed, typed or not
        if not isinstance(job, Job):
            if type(job) is not str:
                hint = ": pass the upstream itself" if type(job) is After else ""
                raise TypeError(f"After takes a job or a job id (str), got {job!r}{hint}")
            if not id_number(job):
                raise ValueError(
                    f"After({job!r}): that is no job id: pass the id submit() returned "
                    '("job-<n>" or one of your own), or the Job'
                )
        if self.on_failure not in POLICIES:
            raise ValueError(
                f"on_failure must be 'cancel' (the dependent is cancelled unless the upstream "
                f"completes) or 'run' (it runs however the upstream ends), got "
                f"{self.on_failure!r}"
            )

    @property
    def job_id(self) -> str:
        """The upstream's id."""
        job = self.job
        return job if type(job) is str else job.job_id  # type: ignore[union-attr]


#: What ``depends_on`` takes (submit, enqueue, ``Workflow.add``, ``f.options``).
DependsOn = str | Job | After | Iterable[str | Job | After]


def edges(depends_on: DependsOn) -> list[After]:
    """``depends_on`` as After edges, in order; an upstream named twice is one
    edge, with the policy an After gives it (plain ids and jobs are ``"cancel"``).

    :raises TypeError: an item is neither a str, a Job nor an After.
    :raises ValueError: a str is no job id, or two Afters give one upstream
        different policies.
    """
    if isinstance(depends_on, (str, Job, After)):
        depends_on = (depends_on,)
    found: dict[str, After] = {}
    explicit: set[str] = set()  # named by an After: its policy wins over a plain mention
    try:
        items = list(depends_on)
    except TypeError:
        raise TypeError(
            f"depends_on takes job ids, jobs or js.After edges (one, or a list), got {depends_on!r}"
        ) from None
    for item in items:
        if type(item) is After:
            key = item.job_id
            held = found.get(key)
            if key in explicit and held is not None and held.on_failure != item.on_failure:
                raise ValueError(
                    f"depends_on names {key} with both on_failure={held.on_failure!r} and "
                    f"on_failure={item.on_failure!r}: keep the one you mean"
                )
            found[key] = item
            explicit.add(key)
        else:
            edge = _edge(item)
            found.setdefault(edge.job_id, edge)
    return list(found.values())


def _edge(item: object) -> After:
    if isinstance(item, (str, Job)):
        return After(item)
    raise TypeError(
        f"depends_on takes job ids (str), jobs or js.After edges, got {item!r} "
        f"(a {type(item).__name__})"
    )


def with_inputs(deps: list[After], inputs: Inputs | None) -> list[After]:
    """``deps`` plus a ``"cancel"`` edge to every marker's target that
    ``deps`` does not name already (an After there keeps its policy)."""
    if inputs is None:
        return deps
    named = {edge.job_id for edge in deps}
    extra = [
        After(target)
        for job_id, target in zip(inputs.upstreams, inputs.targets, strict=True)
        if job_id not in named
    ]
    return deps + extra if extra else deps
