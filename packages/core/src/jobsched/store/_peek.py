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
            shown = ", ".join(f"{k}={text(v)}" for k, v in fields.items())
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
    """A bounded, repr-like rendering of a read value (never calls user code).

    The bound is on the work as well as the text: a payload of a few hundred
    bytes can nest shared references whose full rendering would take hours
    (20 lists of the same 20 lists, six deep), so every part spends one
    budget of characters and a container stops once it is spent.
    """
    try:
        out = _Render().value(value, 0)
    except Exception as exc:  # a value no rendering foresaw: say so, don't fail the page
        return f"(can't be shown: {type(exc).__name__})"
    return out if len(out) <= MAX_TEXT else out[: MAX_TEXT - 1] + "…"


class _Render:
    """One rendering: the characters it may still write, spent as it goes."""

    __slots__ = ("left",)

    def __init__(self) -> None:
        self.left = MAX_TEXT

    def value(self, value: Any, depth: int) -> str:
        if self.left <= 0 or depth > MAX_DEPTH:
            out = "…"
        elif isinstance(value, type) and issubclass(value, _Opaque):
            out = value._qualname
        elif isinstance(value, _Opaque):
            return self.opaque(value, depth)
        elif isinstance(value, str):
            out = repr(value if len(value) <= MAX_STRING else value[:MAX_STRING] + "…")
        elif isinstance(value, (bytes, bytearray)):
            out = repr(bytes(value[:MAX_STRING])) + ("…" if len(value) > MAX_STRING else "")
        elif isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 256:
            # repr() of an int past 4,300 digits raises, and is slow long before.
            out = f"<int of {value.bit_length()} bits>"
        elif value is None or isinstance(value, (bool, int, float, complex)):
            out = repr(value)
        elif isinstance(value, dict):
            return "{" + self.items(value, len(value), depth, pairs=True) + "}"
        elif isinstance(value, list):
            return "[" + self.items(value, len(value), depth) + "]"
        elif isinstance(value, tuple):
            inner = self.items(value, len(value), depth)
            return "(" + inner + ("," if len(value) == 1 else "") + ")"
        elif isinstance(value, (set, frozenset)):
            if not value:
                out = f"{type(value).__name__}()"
            else:
                return "{" + self.items(value, len(value), depth) + "}"
        else:
            out = f"<{type(value).__name__}>"
        self.left -= len(out)
        return out

    def items(self, values: Any, total: int, depth: int, pairs: bool = False) -> str:
        shown: list[str] = []
        self.left -= 2  # the brackets: empty containers nest and fan out too
        for item in _first(values):
            if self.left <= 0:
                break
            self.left -= 2
            if pairs:
                key, value = item
                shown.append(f"{self.value(key, depth + 1)}: {self.value(value, depth + 1)}")
            else:
                shown.append(self.value(item, depth + 1))
        return _join(shown, total)

    def named(self, name: str, value: Any, depth: int) -> str:
        return f"{name}={self.value(value, depth + 1)}"

    def opaque(self, obj: _Opaque, depth: int) -> str:
        name = type(obj)._qualname
        self.left -= len(name) + 2
        if depth > MAX_DEPTH:
            return f"{name}(…)"
        fields = obj.__dict__
        args = [self.value(a, depth + 1) for a in fields["_args"][:MAX_ITEMS] if self.left > 0]
        args += [self.named(str(k), v, depth) for k, v in _first(fields["_kwargs"])]
        state = _state_dict(obj)
        args += [self.named(k, v, depth) for k, v in list(state.items())[:MAX_ITEMS]]
        if fields.get("_state") is not None and not state:
            args.append(self.named("state", fields["_state"], depth))
        if "_items" in fields:
            args.append(self.named("items", fields["_items"], depth))
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
