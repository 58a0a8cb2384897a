"""A stored job's arguments, options and result, shown without unpickling them.

The dashboard and ``jobsched show`` hold no secret (or must not need one)
and must never run a stored pickle's code:
anyone who can write to the store could make that code anything. So a
payload is *read*, not loaded: :class:`_Reader` is an unpickler whose
``find_class`` imports nothing and returns a stand-in class named after the
global, so every object in the pickle becomes a stand-in that records its
constructor arguments and state, and plain values (numbers, strings,
containers) come out as themselves. What the page shows is a bounded text
rendering of that.
"""

from __future__ import annotations

import hashlib
import io
import pickle
from dataclasses import dataclass
from typing import Any

from .._jobs._job import Job
from ._codec import KEY_ID_SIZE, KEYED

#: The payload formats (see jobsched.store._codec): header bytes before the pickle.
_HEADERS = {
    KEYED: 1 + KEY_ID_SIZE + hashlib.sha256().digest_size,
    b"S": 1 + hashlib.sha256().digest_size,
    b"P": 1,
}
#: A payload larger than this is not read (a page must stay cheap).
MAX_BYTES = 1 << 20
#: The rendering's limits: characters of one value, items of a container,
#: nesting depth, characters of a string.
MAX_TEXT = 2_000
MAX_ITEMS = 20
MAX_DEPTH = 6
MAX_STRING = 200
#: What a job's stored form pickles as (see jobsched._jobs._form.StoredForm).
_STORED_FORM = "jobsched._jobform.restore"
#: Job fields every job has; the page shows them elsewhere, so not as arguments.
_JOB_FIELDS = frozenset(Job.__slots__)


class _Opaque:
    """An object of a class this process never imported: its name, arguments and state."""

    _qualname = "?"

    def __new__(cls, *args: Any, **kwargs: Any) -> _Opaque:
        self = object.__new__(cls)
        self.__dict__["_args"] = args
        self.__dict__["_kwargs"] = kwargs
        self.__dict__["_state"] = None
        return self

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __setstate__(self, state: Any) -> None:
        self.__dict__["_state"] = state

    # BUILD's fallbacks and list/dict extension on a stand-in: record, never fail.
    def __setitem__(self, key: Any, value: Any) -> None:
        self.__dict__.setdefault("_items", []).append((key, value))

    def append(self, value: Any) -> None:
        self.__dict__.setdefault("_items", []).append(value)

    def extend(self, values: Any) -> None:
        self.__dict__.setdefault("_items", []).extend(values)


class _Reader(pickle.Unpickler):
    """An unpickler that imports nothing: every global becomes a stand-in class."""

    def find_class(self, module: str, name: str) -> Any:
        qualname = f"{module}.{name}"
        return type(name, (_Opaque,), {"_qualname": qualname, "__module__": __name__})

    def persistent_load(self, pid: Any) -> Any:
        raise pickle.UnpicklingError("persistent ids are not shown")


@dataclass(slots=True)
class Shown:
    """What the job page shows of a stored job: the call, or why it can't."""

    #: The class of the job (``jobsched._function_job.FunctionJob``), or None.
    kind: str | None = None
    #: The function a FunctionJob calls.
    func: str | None = None
    args: list[str] | None = None
    kwargs: list[tuple[str, str]] | None = None
    #: A job class's own fields (not FunctionJob's), as name -> value.
    fields: list[tuple[str, str]] | None = None
    #: Why nothing could be read, when so.
    problem: str | None = None


def read(blob: bytes | None) -> tuple[Any, str | None]:
    """The value in a stored blob as stand-ins and plain values; or (None, why not)."""
    if blob is None:
        return None, "nothing stored"
    header = _HEADERS.get(bytes(blob[:1]))
    if header is None:
        return None, "not a jobsched payload (unknown format)"
    if len(blob) > MAX_BYTES:
        return None, f"{len(blob):,} bytes: too large to show here"
    try:
        return _Reader(io.BytesIO(bytes(blob[header:]))).load(), None
    except Exception as exc:  # a malformed pickle may fail any way; say so, never raise
        return None, f"cannot be read ({type(exc).__name__})"


def job(payload: bytes | None) -> Shown:
    """A stored job's call: the class, the function, its args and kwargs (or its fields)."""
    value, problem = read(payload)
    if problem is not None:
        return Shown(problem=problem)
    if not isinstance(value, _Opaque):
        return Shown(problem="not a job object")
    kind = type(value)._qualname
    args = value.__dict__["_args"]
    if kind == _STORED_FORM and len(args) >= 8:
        # restore(cls, name, priority, timeout, retry, options, slots, state):
        # the stored form (jobsched._jobs._form) keeps only a job's own fields.
        cls, slots, extra = args[0], args[6], args[7]
        kind = cls._qualname if isinstance(cls, type) and issubclass(cls, _Opaque) else text(cls)
        state = {**(slots if isinstance(slots, dict) else {})}
        state.update(extra if isinstance(extra, dict) else {})
        state = {str(k): v for k, v in state.items()}
    else:
        state = _state_dict(value)
    shown = Shown(kind=kind)
    if "func" in state and "args" in state:
        shown.func = text(state["func"])
        args = state.get("args")
        shown.args = [text(a) for a in args] if isinstance(args, tuple) else [text(args)]
        kwargs = state.get("kwargs") or {}
        shown.kwargs = (
            [(str(k), text(v)) for k, v in kwargs.items()]
            if isinstance(kwargs, dict)
            else [("**", text(kwargs))]
        )
    else:
        shown.fields = [(str(k), text(v)) for k, v in state.items() if k not in _JOB_FIELDS]
    return shown


def options(payload: bytes | None) -> list[tuple[str, str]] | None:
    """A stored job's priority, timeout and retry policy, as text; None when
    the payload holds none to read (a registered job's come from its app's
    registration where it runs; an unreadable payload).

    The stored form keeps the defaults as None (see jobsched._jobs._form):
    they read as the defaults they stand for.
    """
    value, problem = read(payload)
    if problem is not None or not isinstance(value, _Opaque):
        return None
    args = value.__dict__["_args"]
    if type(value)._qualname == _STORED_FORM and len(args) >= 8:
        # restore(cls, name, priority, timeout, retry, options, slots, state)
        priority, timeout, retry = args[2], args[3], args[4]
    else:
        state = _state_dict(value)
        if "timeout" not in state:
            return None
        priority, timeout, retry = state.get("priority"), state["timeout"], state.get("retry")
    return [
        ("priority", _priority(priority)),
        ("timeout", "none" if timeout is None else f"{_number(timeout)} s"),
        ("retry", _retry(retry)),
    ]


def _priority(value: Any) -> str:
    from .._enums import JobPriority

    if value is None:
        return f"{JobPriority.MEDIUM.name} ({int(JobPriority.MEDIUM)})"
    if isinstance(value, _Opaque) and value.__dict__["_args"]:
        value = value.__dict__["_args"][0]  # JobPriority(2): its number
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            return f"{JobPriority(value).name} ({value})"
        except ValueError:
            return str(value)
    return text(value)


def _retry(value: Any) -> str:
    if value is None:
        from .._jobs._retry import RetryPolicy

        return f"{RetryPolicy()!r} (the default)"
    if isinstance(value, _Opaque):
        fields = _state_dict(value)
        if fields:
            shown = ", ".join(f"{k}={_render(v, 1)}" for k, v in fields.items())
            return f"RetryPolicy({shown})"
    return text(value)


def _number(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else text(value)


def result(blob: bytes | None) -> str | None:
    """A stored result as text, or None when there is none or it can't be read."""
    if blob is None:
        return None
    value, problem = read(blob)
    return f"({problem})" if problem is not None else text(value)


def _state_dict(obj: _Opaque) -> dict[str, Any]:
    """An object's attributes from its pickled state: a dict, or (dict, slots)."""
    state = obj.__dict__.get("_state")
    merged: dict[str, Any] = {}
    parts = state if isinstance(state, tuple) else (state,)
    for part in parts:
        if isinstance(part, dict):
            merged.update({str(k): v for k, v in part.items()})
    return merged


def text(value: Any) -> str:
    """A bounded, repr-like rendering of a read value (never calls user code)."""
    out = _render(value, 0)
    return out if len(out) <= MAX_TEXT else out[: MAX_TEXT - 1] + "…"


def _render(value: Any, depth: int) -> str:
    if depth > MAX_DEPTH:
        return "…"
    if isinstance(value, type) and issubclass(value, _Opaque):
        return value._qualname
    if isinstance(value, _Opaque):
        return _render_opaque(value, depth)
    if isinstance(value, str):
        shown = value if len(value) <= MAX_STRING else value[:MAX_STRING] + "…"
        return repr(shown)
    if isinstance(value, (bytes, bytearray)):
        head = bytes(value[:MAX_STRING])
        return repr(head) + ("…" if len(value) > MAX_STRING else "")
    if value is None or isinstance(value, (bool, int, float, complex)):
        return repr(value)
    if isinstance(value, dict):
        items = [f"{_render(k, depth + 1)}: {_render(v, depth + 1)}" for k, v in _first(value)]
        return "{" + _join(items, len(value)) + "}"
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [_render(v, depth + 1) for v in _first(value)]
        if isinstance(value, list):
            return "[" + _join(items, len(value)) + "]"
        if isinstance(value, tuple):
            return "(" + _join(items, len(value)) + ("," if len(value) == 1 else "") + ")"
        return "{" + _join(items, len(value)) + "}" if value else "set()"
    return f"<{type(value).__name__}>"


def _render_opaque(obj: _Opaque, depth: int) -> str:
    name = type(obj)._qualname
    args: list[str] = [_render(a, depth + 1) for a in obj.__dict__["_args"][:MAX_ITEMS]]
    args += [f"{k}={_render(v, depth + 1)}" for k, v in _first(obj.__dict__["_kwargs"])]
    state = _state_dict(obj)
    args += [f"{k}={_render(v, depth + 1)}" for k, v in list(state.items())[:MAX_ITEMS]]
    if obj.__dict__.get("_state") is not None and not state:
        args.append(f"state={_render(obj.__dict__['_state'], depth + 1)}")
    if "_items" in obj.__dict__:
        args.append(f"items={_render(obj.__dict__['_items'], depth + 1)}")
    return f"{name}({', '.join(args)})"


def _first(values: Any) -> list[Any]:
    items = values.items() if isinstance(values, dict) else values
    out = []
    for i, item in enumerate(items):
        if i >= MAX_ITEMS:
            break
        out.append(item)
    return out


def _join(items: list[str], total: int) -> str:
    more = total - len(items)
    return ", ".join(items) + (f", … {more} more" if more > 0 else "")
