"""Result markers: what ``js.result_of`` and ``js.results_of`` put in a job's arguments.

A marker stands for an upstream's result until the job runs; the engine
finds the markers at submit (:func:`find_inputs`), makes each target an
upstream, and binds the results in their place before the attempt starts
(``_bind``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._jobs._ids import id_number
from .._jobs._job import Job

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
    return (
        f"{marker!r} is too deep in the job's arguments to be found: markers are found "
        "at their top level and one level into a list, tuple or dict; move it up "
        "(e.g. a separate argument)"
    )


class Inputs:
    """Where a job's markers are, and its arguments as submitted (to bind from).

    :ivar kind: ``"call"`` (a FunctionJob's args and kwargs), ``"json"`` (a
        registered job's arguments) or ``"attrs"`` (a subclass job's attributes).
    :ivar original: for ``"call"`` ``(func, args, kwargs)``, for ``"json"``
        the decoded arguments, for ``"attrs"`` the attributes holding markers.
    :ivar places: ``(where, key, inner, marker)`` for each marker: ``where``
        is ``"args"``, ``"kwargs"``, ``"json"`` or ``"attrs"``; ``key`` the
        argument's index or name; ``inner`` None at the top level, else the
        index or key inside the list, tuple or dict there.
    :ivar upstreams: every target's id, once each, in the order first found.
    :ivar targets: the same upstreams as the markers name them (a Job or an id).
    """

    __slots__ = ("kind", "original", "places", "targets", "upstreams")

    def __init__(self, kind: str, original: Any, places: list[tuple[str, Any, Any, Any]]) -> None:
        self.kind = kind
        self.original = original
        self.places = places
        found: dict[str, str | Job] = {}
        for *_, marker in places:
            targets = (marker.target,) if type(marker) is ResultOf else marker.targets
            for target in targets:
                found.setdefault(target.job_id if isinstance(target, Job) else target, target)
        self.upstreams = tuple(found)
        #: The targets as the markers give them (a Job or an id), aligned with upstreams.
        self.targets = tuple(found.values())

    def __repr__(self) -> str:
        return f"Inputs({self.kind}, upstreams={list(self.upstreams)})"


_MARKERS = (ResultOf, ResultsOf)


def find_inputs(job: Job) -> Inputs | None:
    """Where ``job``'s markers are, or None when it holds none.

    Looks at the top level of a FunctionJob's ``args`` and ``kwargs``, a
    registered job's arguments or a subclass job's attributes (its
    ``__dict__`` and the slots its class adds), and one level into a list,
    tuple or dict there. Every marker found is marked seen, so that it may
    be pickled (with the job, into a store or a worker).

    :raises TypeError: a registered job holds a marker deeper than that
        (a JSON job's arguments are decoded here anyway, so it is said now).
    """
    places: list[tuple[str, Any, Any, Any]] = []
    if getattr(type(job), "_jobsched_json", False):
        text = job.args_json  # type: ignore[attr-defined]
        if '"$result' not in text:
            return None
        from .._jobs import _json

        arguments = _json.loads(text)
        _scan(arguments.items(), "json", places, deep_refused=True)
        return Inputs("json", arguments, places) if places else None
    from .._jobs._function import FunctionJob

    if isinstance(job, FunctionJob):
        _scan(enumerate(job.args), "args", places)
        _scan(job.kwargs.items(), "kwargs", places)
        original: Any = (job.func, job.args, job.kwargs)
        return Inputs("call", original, places) if places else None
    attrs = dict(getattr(job, "__dict__", None) or ())
    from .._jobs._form import _OWN_SLOTS, _slot_names

    for name in _slot_names(type(job)):
        if name not in _OWN_SLOTS and name not in attrs and hasattr(job, name):
            attrs[name] = getattr(job, name)
    _scan(attrs.items(), "attrs", places)
    if not places:
        return None
    return Inputs("attrs", {key: attrs[key] for _, key, _, _ in places}, places)


def _scan(
    items: Iterable[tuple[Any, Any]],
    where: str,
    places: list[tuple[str, Any, Any, Any]],
    deep_refused: bool = False,
) -> None:
    for key, value in items:
        kind = type(value)
        if kind in _MARKERS:
            value._seen = True
            places.append((where, key, None, value))
        elif kind is list or kind is tuple or kind is dict:
            inner = value.items() if kind is dict else enumerate(value)
            for sub, item in inner:
                if type(item) in _MARKERS:
                    item._seen = True
                    places.append((where, key, sub, item))
                elif deep_refused and _holds_marker(item):
                    raise TypeError(
                        f"the argument {key!r}[{sub!r}] holds a result marker more than one "
                        "level deep, where it would not be found: markers are found at an "
                        "argument's top level and one level into a list, tuple or dict"
                    )


def _holds_marker(value: Any) -> bool:
    kind = type(value)
    if kind in _MARKERS:
        return True
    if kind is list or kind is tuple or kind is set or kind is frozenset:
        return any(_holds_marker(v) for v in value)
    if kind is dict:
        return any(_holds_marker(v) for v in value.values())
    return False
