"""Which part of a job does not pickle: what a failed store names in its error.

Run only after a pickle failed, so its cost (a pickle per part) never falls
on a job that stores. A lock passed as an argument used to get "define the
job class at module level", which pointed at the wrong thing; the part's path
(``args[0]``, ``kwargs['lock']``, ``.conn``) points at the right one.
"""

from __future__ import annotations

import pickle
import types
from collections.abc import Iterator
from typing import Any

#: How deep into containers and attributes the search goes: far enough for
#: ``kwargs['options']['lock']``, bounded for a cyclic or deep structure.
_DEPTH = 4
#: Parts of one container looked at, at most: a huge argument list costs
#: no more than this many pickles.
_WIDTH = 200


def culprit(obj: Any) -> tuple[str, Any] | None:
    """The path (``args[1]``, ``kwargs['n'][0]``) and value of the innermost
    part of ``obj`` that does not pickle, or None when no part alone fails
    (``obj`` itself is the problem, or it pickles)."""
    return _search(_unwrap(obj), 0)


def by_reference(value: Any) -> bool:
    """True for what pickle stores by name: a function, class or method,
    which fails when it is a lambda, a local or defined in ``__main__``."""
    return isinstance(
        value, (type, types.FunctionType, types.BuiltinFunctionType, types.MethodType)
    )


def _unwrap(obj: Any) -> Any:
    # A job is stored as its StoredForm (see jobsched._jobs._form): its
    # fields are the job's.
    from .._jobs._form import StoredForm

    return obj._job if isinstance(obj, StoredForm) else obj


def _search(obj: Any, depth: int) -> tuple[str, Any] | None:
    for label, part in _parts(obj):
        try:
            pickle.dumps(part, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:
            inner = _search(part, depth + 1) if depth < _DEPTH else None
            return (label + inner[0], inner[1]) if inner else (label, part)
    return None


def _parts(obj: Any) -> Iterator[tuple[str, Any]]:
    """The labelled parts pickle would store of ``obj``: items of a
    container, else its slots and attributes."""
    if by_reference(obj) or isinstance(obj, (str, bytes, int, float, bool)):
        return
    if isinstance(obj, (tuple, list)):
        for i, item in enumerate(obj[:_WIDTH]):
            yield f"[{i}]", item
        return
    if isinstance(obj, dict):
        for n, (key, item) in enumerate(obj.items()):
            if n == _WIDTH:
                return
            yield f"[{key!r}]", item
        return
    from .._jobs._job import Job

    # A job's own slots (status, times) are not stored; its subclass's are.
    skip = frozenset(Job.__slots__) if isinstance(obj, Job) else frozenset()
    names: list[str] = []
    for klass in type(obj).__mro__:
        slots = klass.__dict__.get("__slots__", ())
        names += [slots] if isinstance(slots, str) else list(slots)
    names += list(getattr(obj, "__dict__", {}))
    seen = set()
    for name in names:
        if name in seen or name in skip or name in ("__dict__", "__weakref__"):
            continue
        seen.add(name)
        try:
            value = getattr(obj, name)
        except AttributeError:
            continue  # an unset slot is not stored
        # FunctionJob's fields read as they are called: args[0], kwargs['x'].
        yield (name if isinstance(obj, Job) else f".{name}"), value
