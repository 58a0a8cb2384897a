"""Tagged JSON: a registered job's arguments and result as text anyone can read.

Plain JSON types go as they are. ``datetime``, ``date``, ``time``,
``timedelta``, ``UUID``, ``Decimal``, ``bytes``, ``tuple`` and ``set`` (and
``frozenset``) become one-key objects (``{"$dt": "2026-01-02T03:04:05+00:00"}``)
so that they come back as such, and so do result markers
(``{"$result_of": "job-12"}``, ``{"$results_of": ["job-12", "job-13"]}``);
a dict of the caller's that itself has exactly one key starting with
``$`` is escaped as ``{"$obj": {...}}``.
Anything else is a ``TypeError`` naming what held it.

Text no store can keep is a ``ValueError`` naming where it is: a lone
surrogate anywhere (it has no UTF-8 encoding), and in arguments NUL too,
which PostgreSQL's ``jsonb`` refuses (a result is kept as bytes, where
JSON's ``\\u0000`` escape is fine).
"""

from __future__ import annotations

import json
import re
from typing import Any

# The decoders by tag. datetime, uuid and decimal are imported on the first
# tagged value (not at `import jobsched`: see tests/test_import_cost.py).
_DECODERS: dict[str, Any] = {}


# One encoder for every call: json.dumps with options builds one each time.
_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def dumps(value: Any, what: str) -> str:
    """``value`` as tagged JSON text.

    :raises TypeError: a value does not encode (naming ``what`` and where).
    :raises ValueError: a string holds a lone surrogate.
    """
    text = _dumps(value, what)
    # ensure_ascii=False leaves a lone surrogate in the text as it is.
    if not text.isascii() and _SURROGATE.search(text) is not None:
        _refuse_text(value, what, _SURROGATE)
    return text


def dumps_arguments(value: Any, what: str) -> str:
    """:func:`dumps` for a row's arguments, which PostgreSQL keeps as ``jsonb``:
    a NUL is a ``ValueError`` there too, on every store alike."""
    text = dumps(value, what)
    if "\\u0000" in text and _NUL_ESCAPE.search(text) is not None:
        _refuse_text(value, what, _NUL)
    return text


# A lone surrogate as the text holds it, and NUL as JSON escapes it: \u0000
# after an even number of backslashes (JSON's \\u0000 is a backslash, then u0000).
_SURROGATE = re.compile("[\ud800-\udfff]")
_NUL = re.compile("\x00")
_NUL_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")


def _refuse_text(value: Any, what: str, char: re.Pattern[str]) -> None:
    where = _find_text(value, char, "")
    problem = (
        "NUL ('\\x00'), which PostgreSQL's JSON cannot keep: drop or replace the character, "
        "or pass the data as bytes (kept as base64)"
        if char is _NUL
        else "a lone surrogate, which has no UTF-8 encoding: decode the bytes it came from "
        "with errors='replace'"
    )
    raise ValueError(f"{what} cannot be stored: the string{_at(where or '')} holds {problem}")


def _find_text(value: Any, char: re.Pattern[str], where: str) -> str | None:
    """The path of the first string (or dict key) in ``value`` that holds ``char``."""
    if isinstance(value, str):
        return where if char.search(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and char.search(key):
                return f"{where}[{key!r}] (the key)"
            found = _find_text(item, char, f"{where}[{key!r}]")
            if found is not None:
                return found
    elif isinstance(value, (list, tuple, set, frozenset)):
        for i, item in enumerate(value):
            found = _find_text(item, char, f"{where}[{i}]")
            if found is not None:
                return found
    return None


def _dumps(value: Any, what: str) -> str:
    try:
        try:
            tagged = _encode(value, None)
        except _Refused:
            # Again, saying where this time: the paths cost more than the
            # encoding of a few arguments, so they are made on errors only.
            tagged = _encode(value, "")
        return _ENCODER.encode(tagged)
    except _Refused as exc:
        raise TypeError(f"{what} cannot be stored as JSON: {exc.args[0]}") from None
    except ValueError:  # allow_nan=False
        raise TypeError(
            f"{what} cannot be stored as JSON: it holds a float NaN or infinity, which JSON "
            "has no word for; pass None or a string instead"
        ) from None


def loads(text: str) -> Any:
    """The value tagged JSON text stands for (tags decoded)."""
    value = json.loads(text)
    if '"$' not in text:
        return value  # no tag anywhere: the usual case costs one json.loads
    return _decode(value)


class _Refused(Exception):
    """A value that does not encode; args[0] says where and what it is."""


_PLAIN = (str, int, float, type(None), bool)


def _encode(value: Any, where: str | None) -> Any:
    """``value`` with its tags; ``where`` is None on the first try (no paths made)."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is list:
        if where is None:
            return [_encode(v, None) for v in value]
        return [_encode(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if kind is dict:
        out = {}
        for key, item in value.items():
            if type(key) is not str:
                if where is None:
                    raise _Refused("")
                raise _Refused(
                    f"the dict{_at(where)} has a key {key!r} of type {type(key).__name__}; "
                    "JSON keys are strings only: convert the keys to str"
                )
            out[key] = _encode(item, None if where is None else f"{where}[{key!r}]")
        if len(out) == 1 and next(iter(out)).startswith("$"):
            return {"$obj": out}  # would read as a tag: escaped
        return out
    if kind is tuple:
        if where is None:
            return {"$tuple": [_encode(v, None) for v in value]}
        return {"$tuple": [_encode(v, f"{where}[{i}]") for i, v in enumerate(value)]}
    if kind is set or kind is frozenset:
        items = [_encode(v, None if where is None else f"{where}{{...}}") for v in value]
        items.sort(key=json.dumps)  # the same set, the same text (items are plain now)
        return {"$set": items}
    if kind is bytes:
        from base64 import b64encode

        return {"$b64": b64encode(value).decode("ascii")}
    tag = _TAGS.get(kind)
    if tag is not None:
        return tag(value)
    name = kind.__module__ + "." + kind.__qualname__
    if name in _TAG_NAMES:
        _TAGS[kind] = _TAG_NAMES[name]  # found by type from now on
        return _TAG_NAMES[name](value)
    if where is None:
        raise _Refused("")
    raise _Refused(
        f"{_at(where, 'it').strip()} is a {name} ({_short(value)}); JSON keeps str, int, "
        "float, bool, None, list, dict (str keys), tuple, set, bytes, datetime, date, time, "
        'timedelta, UUID and Decimal: convert it, or use serializer="pickle" for this job'
    )


# By the type's full name: datetime, uuid and decimal are not imported here
# (see tests/test_import_cost.py); a type seen once is then found in _TAGS.
_TAG_NAMES: dict[str, Any] = {
    "datetime.datetime": lambda v: {"$dt": v.isoformat()},
    "datetime.date": lambda v: {"$date": v.isoformat()},
    "datetime.time": lambda v: {"$time": v.isoformat()},
    "datetime.timedelta": lambda v: {"$td": v.total_seconds()},
    "uuid.UUID": lambda v: {"$uuid": str(v)},
    "decimal.Decimal": lambda v: {"$dec": str(v)},
    # Result markers (js.result_of / js.results_of) stand for an upstream's
    # result: kept as tags a reader of the row (SQL, the dashboard) can see.
    "jobsched._jobs._markers.ResultOf": lambda v: {"$result_of": v.job_id},
    "jobsched._jobs._markers.ResultsOf": lambda v: {"$results_of": list(v.job_ids)},
}
_TAGS: dict[type, Any] = {}


def _at(where: str, default: str = "") -> str:
    return f" at {where}" if where else default


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _decode(value: Any) -> Any:
    kind = type(value)
    if kind is list:
        return [_decode(v) for v in value]
    if kind is not dict:
        return value
    if len(value) == 1:
        ((key, item),) = value.items()
        if key.startswith("$"):
            if key == "$obj":
                return {k: _decode(v) for k, v in item.items()}
            decoder = _DECODERS.get(key) or _decoders().get(key)
            if decoder is not None:
                return decoder(item)
    return {k: _decode(v) for k, v in value.items()}


def _decoders() -> dict[str, Any]:
    if not _DECODERS:
        import datetime
        import decimal
        import uuid
        from base64 import b64decode

        from . import _markers

        decoders: dict[str, Any] = {
            "$dt": datetime.datetime.fromisoformat,
            "$date": datetime.date.fromisoformat,
            "$time": datetime.time.fromisoformat,
            "$td": lambda s: datetime.timedelta(seconds=s),
            "$uuid": uuid.UUID,
            "$dec": decimal.Decimal,
            "$b64": lambda s: b64decode(s.encode("ascii")),
            "$tuple": lambda items: tuple(_decode(v) for v in items),
            "$set": lambda items: {_decode(v) for v in items},
            "$result_of": _markers.ResultOf,
            "$results_of": _markers.ResultsOf,
        }
        _DECODERS.update(decoders)
    return _DECODERS
