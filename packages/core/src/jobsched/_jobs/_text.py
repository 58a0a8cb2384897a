"""Text a store can keep: the check at the door, and the escape for error text.

Two characters a Python str may hold have no place in a database's text:
NUL (``\\x00``), which PostgreSQL's text type refuses, and lone surrogates
(``\\ud800``-``\\udfff``), which have no UTF-8 encoding, so neither driver
can send them. A label or id holding one is refused at submit on every store,
the memory store included, so code that works in tests works in production.
Error text and tracebacks are the program's own words, not the caller's
choice: they are kept with those characters escaped instead.
"""

from __future__ import annotations

import re

#: The characters no store can keep.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def check_text(field: str, value: str) -> str:
    """``value``, which names ``field`` (a job's ``name``, ``tenant``, ...), if a
    store can keep it.

    :raises ValueError: it holds NUL or a lone surrogate; the message names
        the field, shows the value escaped and says what to do.
    """
    # Most text is short and plain: two scans in C, before the regex.
    if "\x00" not in value and (value.isascii() or _UNSTORABLE.search(value) is None):
        return value
    found = _UNSTORABLE.search(value)
    assert found is not None
    char = found.group()
    what = "NUL" if char == "\x00" else "a lone surrogate"
    shown = repr(value) if len(value) <= 80 else f"{value[:80]!r}..."
    raise ValueError(
        f"{field} must not hold {what} ({char!r}), which no store can keep: got {shown}; "
        "drop or replace the character (a surrogate usually comes from bytes decoded "
        "with errors='surrogateescape': decode them with errors='replace')"
    )


def storable(text: str) -> str:
    """``text`` with NUL and lone surrogates written as their backslash escapes
    (``\\x00``, ``\\udc80``), so a store keeps it and a reader still sees them.

    An error message or traceback goes through here before a store or a
    reader sees it.
    """
    if "\x00" not in text and (text.isascii() or _UNSTORABLE.search(text) is None):
        return text
    return _UNSTORABLE.sub(_escape, text)


def _escape(found: re.Match[str]) -> str:
    char = found.group()
    return "\\x00" if char == "\x00" else f"\\u{ord(char):04x}"
