"""Finding a job's result markers: where they are, and its arguments as submitted.

Called at submit for a job that may hold markers (only once a marker
exists in this process: ``_markers.MARKERS_MADE``), and after loading a
stored job; what it returns is what ``_bind`` binds from.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._jobs._job import Job
from .._jobs._markers import ResultOf, ResultsOf


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
                    _refuse_deep(f"{key!r}[{sub!r}]")
        elif deep_refused and _holds_marker(value):
            _refuse_deep(repr(key))  # in a set: not looked into


def _refuse_deep(where: str) -> None:
    raise TypeError(
        f"the argument {where} holds a result marker where it would not be found: "
        "markers are found at an argument's top level and one level into a list, "
        "tuple or dict"
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
