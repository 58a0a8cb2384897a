"""Passwords in store URLs: masked wherever a URL is shown or logged."""

from __future__ import annotations

import re


def mask_password(url: str) -> str:
    """``url`` with every password in it replaced by ``***``: the user part's
    (``//user:secret@``), a query option's (``?password=secret``,
    ``&sslpassword=...``) and a libpq keyword's (``host=h password=secret``)."""
    # The user part starts the URL, or follows its "//" (malformed URLs too).
    masked = re.sub(r"(^|//)([^:/@]*):[^@/]*@", r"\1\2:***@", url, count=1)
    return _OPTION_PASSWORD.sub(r"\1***", masked)


def passwords_in(url: str) -> list[str]:
    """The passwords ``url`` holds, as written and percent-decoded, longest
    first: what a driver's error message may quote, to be masked there too."""
    from urllib.parse import unquote

    found = [m.group(1) for m in re.finditer(r"(?:^|//)[^:/@]*:([^@/]*)@", url)][:1]
    found += [m.group(2) for m in _OPTION_PASSWORD.finditer(url)]
    values = {v for text in found for v in (text, text.strip("'"), unquote(text)) if v}
    return sorted(values, key=len, reverse=True)


# ``password=`` and ``sslpassword=`` as a URL query option or a keyword of a
# libpq connection string, whose value may be quoted ('a b', 'it\'s').
_OPTION_PASSWORD = re.compile(
    r"(\b(?:ssl)?password\s*=\s*)('(?:[^'\\]|\\.)*'?|[^\s&#]*)", re.IGNORECASE
)
