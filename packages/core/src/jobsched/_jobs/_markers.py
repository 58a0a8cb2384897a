"""Result markers: what ``js.result_of`` and ``js.results_of`` put in a job's arguments.

A marker stands for an upstream's result until the job runs; the engine
finds the markers at submit (``_workflows._inputs.find_inputs``), makes
each target an upstream, and binds the results in their place before the
attempt starts (``_workflows._bind``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ._ids import id_number
from ._job import Job

#: How many markers this process has made (by ``result_of``/``results_of``,
#: by unpickling or by decoding one). While it is 0 no job can hold a marker,
#: so a submit need not look for any: a global load and a test.
MARKERS_MADE = 0


def _made() -> None:
    global MARKERS_MADE
    MARKERS_MADE += 1


class ResultOf:
    """``js.result_of(job)``: stands for one upstream's result."""

    __slots__ = ("_seen", "target")

    def __init__(self, target: str | Job) -> None:
        #: The upstream: its id, or the Job itself.
        self.target = _check_target(target, "result_of")
        # Set by find_inputs: a marker it did not find is refused by pickle.
        self._seen = False
        _made()

    @property
    def job_id(self) -> str:
        """The upstream's id."""
        target = self.target
        return target if type(target) is str else target.job_id  # type: ignore[union-attr]

    def __reduce__(self) -> tuple[Any, ...]:
        if not self._seen:
            raise TypeError(_deep_message(self))
        # The id, never the upstream job itself: the dependent's payload
        # would otherwise carry a copy of every upstream.
        return (ResultOf, (self.job_id,))

    def __copy__(self) -> ResultOf:
        return self  # a marker never changes: copies of a job share it

    def __deepcopy__(self, memo: dict[int, Any]) -> ResultOf:
        return self  # and it names its upstream, which a copy must not duplicate

    def __eq__(self, other: object) -> bool:
        return type(other) is ResultOf and other.job_id == self.job_id

    def __hash__(self) -> int:
        return hash(("result_of", self.job_id))

    def __repr__(self) -> str:
        return f"js.result_of({self.job_id!r})"


class ResultsOf:
    """``js.results_of(jobs)``: stands for the list of the upstreams' results, in order."""

    __slots__ = ("_seen", "targets")

    def __init__(self, targets: Iterable[str | Job]) -> None:
        if isinstance(targets, (str, Job)):
            raise TypeError(
                f"results_of takes a list of jobs or job ids, got the single {targets!r}: "
                "use js.result_of for one upstream, or pass [it]"
            )
        try:
            items = tuple(targets)
        except TypeError:
            raise TypeError(
                f"results_of takes a list of jobs or job ids, got {targets!r}"
            ) from None
        if not items:
            raise ValueError(
                "results_of needs at least one job: an empty list has no upstream to wait "
                "for; pass [] as the argument itself if the job should get an empty list"
            )
        #: The upstreams, in the order their results are listed: ids or Jobs.
        self.targets = tuple(_check_target(t, "results_of") for t in items)
        self._seen = False
        _made()

    @property
    def job_ids(self) -> tuple[str, ...]:
        """The upstreams' ids, in order (an upstream named twice is listed twice)."""
        return tuple(t if type(t) is str else t.job_id for t in self.targets)  # type: ignore[union-attr]

    def __reduce__(self) -> tuple[Any, ...]:
        if not self._seen:
            raise TypeError(_deep_message(self))
        return (ResultsOf, (self.job_ids,))

    def __copy__(self) -> ResultsOf:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> ResultsOf:
        return self

    def __eq__(self, other: object) -> bool:
        return type(other) is ResultsOf and other.job_ids == self.job_ids

    def __hash__(self) -> int:
        return hash(("results_of", self.job_ids))

    def __repr__(self) -> str:
        return f"js.results_of({list(self.job_ids)!r})"


def result_of(job: str | Job) -> Any:
    """Stand for ``job``'s result in another job's arguments.

    The job whose arguments hold it depends on ``job`` (as ``depends_on``
    says; pass ``js.After(job, on_failure="run")`` there to run even if
    ``job`` does not complete) and receives ``job``'s result in the
    marker's place when it runs, on every store and executor: a process
    job gets it pickled into its worker, a registered job as JSON.

    Markers are found at the top level of a job's arguments (a
    ``FunctionJob``'s ``args`` and ``kwargs``, a registered job's
    arguments, a subclass job's attributes) and one level into a list,
    tuple or dict there; deeper ones are not found (a durable store
    refuses them at submit).

    A registered job's arguments are encoded when the job is made, so a
    Job named there is named by its id at that moment: give it an id of
    its own (``wf.add(job, job_id=...)``) before naming it.

    If ``job`` ended other than COMPLETED (on a ``"run"`` edge), the job
    raises :class:`~jobsched.UpstreamFailedError` before its body runs:
    FAILED, not retried.

    :param job: the upstream: a job id, or a :class:`~jobsched.Job`
        (submitted, or added earlier to the same :class:`~jobsched.Workflow`).
    :raises TypeError: ``job`` is neither a str nor a Job.
    :raises ValueError: ``job`` is a str no job id can be.
    """
    return ResultOf(job)


def results_of(jobs: Iterable[str | Job]) -> Any:
    """Stand for the list of ``jobs``' results, in their order.

    As :func:`result_of`, for many upstreams at once (a fan-in). An upstream
    that did not complete (on a ``"run"`` edge) has its slot hold an
    :class:`~jobsched.UpstreamFailedError` instead of a result, so the job
    runs over whatever succeeded.

    :raises TypeError: ``jobs`` is a single job or id, or holds something
        that is neither a str nor a Job.
    :raises ValueError: ``jobs`` is empty, or holds a str no job id can be.
    """
    return ResultsOf(jobs)


def _check_target(target: object, what: str) -> str | Job:
    if isinstance(target, Job):
        return target
    if type(target) is not str:
        kind = type(target).__name__
        hint = " (an After belongs in depends_on)" if kind == "After" else ""
        raise TypeError(f"{what} takes a job or a job id (str), got {target!r}{hint}")
    if not id_number(target):
        raise ValueError(
            f"{what}({target!r}): that is no job id: pass the id submit() returned "
            '("job-<n>" or one of your own), or the Job'
        )
    return target


def _deep_message(marker: ResultOf | ResultsOf) -> str:
    # Pickled before a submit found it: it is too deep to be found, or the
    # job holding it is pickled before it was submitted.
    return (
        f"{marker!r} cannot be pickled where it is: markers are found (and then may be "
        "pickled with their job) at the top level of a submitted job's arguments and one "
        "level into a list, tuple or dict there; a deeper one is too deep to be found: "
        "move it up (e.g. a separate argument)"
    )
