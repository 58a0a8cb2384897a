"""What a durable store keeps of a job: what defines it, not how it ran.

A job's status, attempts, result, errors and times live in the store's own
columns, so its payload needs only what a member must have to run it: its
class (by reference), its options and its subclass's own fields. Pickling the
whole object wrote every run-state slot too, and the names of all of them:
459 bytes for a no-op job instead of about 70, in every row, every claim and
every WAL page. A class that pickles itself its own way (``__reduce__``,
``__reduce_ex__``, ``__getstate__`` or ``__setstate__``) is stored as it
pickles, whole.
"""

from __future__ import annotations

from typing import Any

from .._enums import JobPriority, JobStatus
from ._job import _DEFAULT_RETRY, Job

_PENDING = JobStatus.PENDING
_UNSET: Any = object()
_MEDIUM = JobPriority.MEDIUM
_OWN_SLOTS = frozenset(Job.__slots__)
_NO_GETSTATE = getattr(object, "__getstate__", None)  # Python 3.11+ has one

#: Job class -> the slots its subclasses add, or None when it pickles its own way.
_extra_slots: dict[type, tuple[str, ...] | None] = {}


def _added_slots(cls: type) -> tuple[str, ...] | None:
    try:
        return _extra_slots[cls]
    except KeyError:
        pass
    custom = (
        cls.__reduce_ex__ is not Job.__reduce_ex__  # type: ignore[comparison-overlap]
        or cls.__reduce__ is not object.__reduce__  # type: ignore[comparison-overlap]
        or getattr(cls, "__getstate__", None) is not _NO_GETSTATE
        or hasattr(cls, "__setstate__")
    )
    added = None if custom else tuple(n for n in _slot_names(cls) if n not in _OWN_SLOTS)
    _extra_slots[cls] = added
    return added


def _slot_names(cls: type) -> list[str]:
    """Every slot of ``cls``, private names mangled: what pickle stores (as
    ``copyreg._slotnames`` finds them)."""
    names = []
    for klass in cls.__mro__:
        slots = klass.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name in ("__dict__", "__weakref__"):
                continue
            if name.startswith("__") and not name.endswith("__"):
                stripped = klass.__name__.lstrip("_")
                if stripped:
                    name = f"_{stripped}{name}"
            names.append(name)
    return names


class StoredForm:
    """Pickles as ``restore(...)`` of a job's defining fields."""

    __slots__ = ("_job",)

    def __init__(self, job: Job) -> None:
        self._job = job

    def __reduce__(self) -> tuple[Any, ...]:
        job = self._job
        cls = type(job)
        added = _added_slots(cls)
        assert added is not None  # see stored_form
        slots = {}
        for name in added:
            value = getattr(job, name, _UNSET)
            if value is not _UNSET:  # an unset slot stays unset, as in a pickle
                slots[name] = value
        priority = job.priority
        retry = job.retry
        return (
            restore,
            (
                cls,
                job.name,
                # The defaults, as None: a few bytes instead of a reference.
                None if priority is _MEDIUM else priority,
                job.timeout,
                None if retry is _DEFAULT_RETRY else retry,
                job._options,
                slots or None,
                getattr(job, "__dict__", None) or None,
            ),
        )


def stored_form(job: Job) -> Job | StoredForm:
    """What to pickle for ``job``'s payload: its stored form, or itself."""
    return job if _added_slots(type(job)) is None else StoredForm(job)


def restore(
    cls: type[Job],
    name: str,
    priority: int | None,
    timeout: float | None,
    retry: Any,
    options: Any,
    slots: dict[str, Any] | None,
    state: dict[str, Any] | None,
) -> Job:
    """A job from its stored form: fresh run state, id 0 (the loader sets the row's)."""
    job = cls.__new__(cls)
    job._jobsched_id = 0
    job.name = name
    job.priority = _MEDIUM if priority is None else priority
    job.timeout = timeout
    job.retry = _DEFAULT_RETRY if retry is None else retry
    job._options = options
    job.status = _PENDING
    job.attempts = 0
    job.result = None
    job.last_error = None
    job.last_traceback = None
    job.submitted_at = 0.0
    job.run_at = 0.0
    job.seq = 0
    job.started_at = None
    job.finished_at = None
    job._flow = None
    if slots:
        for key, value in slots.items():
            setattr(job, key, value)  # as pickle's BUILD sets slot state
    if state:
        job.__dict__.update(state)
    return job


# Rows pickle it by this name (the stored format; see that module).
restore.__module__ = "jobsched._jobform"
