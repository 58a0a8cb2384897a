"""Binding: the upstreams' results put in place of a job's markers, before it runs.

Always from the arguments as submitted (kept in ``Inputs``), so that a job
bound twice (a durable retry claimed where it was submitted) is bound the
same way. A ``result_of`` whose upstream did not complete makes the job
raise ``UpstreamFailedError`` when it runs, with no test on the attempt's
path: a FunctionJob's ``func`` becomes a :class:`RaiseUpstream`, a
registered job raises its ``_flow.failed`` as it reads its arguments, a
subclass job's class becomes a cached failing subclass of it.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, NamedTuple

from .._enums import JobStatus
from .._exceptions import UpstreamFailedError
from .._jobs._flow import flow_of
from .._jobs._ids import id_number
from .._jobs._job import Job
from .._jobs._markers import ResultOf
from ._inputs import Inputs

_COMPLETED = JobStatus.COMPLETED


class Upstream(NamedTuple):
    """How an upstream ended, as a dependent receives it."""

    #: Its final status.
    status: JobStatus
    #: Its result (decoded), when COMPLETED.
    value: Any
    #: Its ``last_error``, or None.
    error: str | None


class RaiseUpstream:
    """A FunctionJob's ``func`` once an upstream it takes the result of failed:
    calling it raises that error. Picklable, so a process job raises it too."""

    __slots__ = ("error",)

    def __init__(self, error: UpstreamFailedError) -> None:
        self.error = error

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise self.error

    def __reduce__(self) -> tuple[Any, ...]:
        return (RaiseUpstream, (self.error,))

    def __repr__(self) -> str:
        return f"RaiseUpstream({self.error!r})"


def bind(job: Job, inputs: Inputs, ends: Mapping[int, Upstream]) -> None:
    """Put the upstreams' results in place of ``job``'s markers.

    :param ends: each upstream's end by its number (``id_number`` of its id);
        every id in ``inputs.upstreams`` must be there.
    :raises KeyError: an upstream's end is missing (the caller's error).
    """
    failed: UpstreamFailedError | None = None

    def value(marker: Any) -> Any:
        nonlocal failed
        if type(marker) is ResultOf:
            got = _received(marker.job_id, ends)
            if isinstance(got, UpstreamFailedError) and failed is None:
                failed = got
            return got
        return [_received(u, ends) for u in marker.job_ids]

    kind = inputs.kind
    if kind == "call":
        func, args, kwargs = inputs.original
        new_args, new_kwargs = list(args), dict(kwargs)
        for where, key, inner, marker in inputs.places:
            target = new_args if where == "args" else new_kwargs
            _put(target, key, inner, value(marker))
        job.args = tuple(new_args)  # type: ignore[attr-defined]
        job.kwargs = new_kwargs  # type: ignore[attr-defined]
        job.func = func if failed is None else RaiseUpstream(failed)  # type: ignore[attr-defined]
        return
    if kind == "json":
        arguments = dict(inputs.original)
        for _, key, inner, marker in inputs.places:
            _put(arguments, key, inner, value(marker))
        flow = flow_of(job)
        flow.bound = arguments
        flow.failed = failed
        return
    attrs = dict(inputs.original)
    for _, key, inner, marker in inputs.places:
        _put(attrs, key, inner, value(marker))
    for key, bound in attrs.items():
        setattr(job, key, bound)
    flow_of(job).failed = failed
    cls = type(job)
    if failed is not None:
        if not getattr(cls, "_jobsched_failing", False):
            job.__class__ = _failing(cls)
    elif getattr(cls, "_jobsched_failing", False):
        job.__class__ = cls.__bases__[0]


def _received(job_id: str, ends: Mapping[int, Upstream]) -> Any:
    end = ends[id_number(job_id)]
    if end.status is _COMPLETED:
        return end.value
    return UpstreamFailedError(job_id, end.status, end.error)


def _put(target: Any, key: Any, inner: Any, value: Any) -> None:
    # A list, tuple or dict holding markers is copied, never changed: it is
    # the submitted argument (kept in Inputs), and a second bind starts from it.
    if inner is None:
        target[key] = value
        return
    held = target[key]
    copy = list(held) if type(held) is tuple else type(held)(held)
    copy[inner] = value
    target[key] = tuple(copy) if type(held) is tuple else copy


@functools.cache
def _failing(cls: type[Job]) -> type[Job]:
    """A subclass of ``cls`` of the same layout whose run raises the job's
    ``_flow.failed``, so the attempt needs no test of its own."""

    async def run(self: Job) -> Any:
        raise self._flow.failed  # type: ignore[union-attr,misc]

    def run_sync(self: Job) -> Any:
        raise self._flow.failed  # type: ignore[union-attr,misc]

    namespace = {
        "__slots__": (),
        "__module__": cls.__module__,
        # Not findable by this name: cloudpickle carries the class by value.
        "__qualname__": f"{cls.__qualname__}[upstream failed]",
        "_jobsched_failing": True,
        "run": run,
        "run_sync": run_sync,
    }
    return type(cls.__name__, (cls,), namespace)
