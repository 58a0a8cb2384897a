"""Jobs and results as stored bytes: pickled by reference, signed with HMAC-SHA256.

A durable store outlives the process that wrote it, so what it holds must be
loadable by another process: the job's class (or a FunctionJob's function)
is pickled by reference to its module and name, never by value as the
process executor's cloudpickle would. A row is signed with ``secret`` and
never unpickled unless its signature verifies: unpickling runs code, so a
store that anyone else can write to must not be trusted blindly.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import pickle
from collections.abc import Callable
from typing import Any

_MAC_SIZE = hashlib.sha256().digest_size
#: Signed payloads start with this; unsigned ones (no secret) with _PLAIN.
_SIGNED = b"S"
_PLAIN = b"P"


class BadSignature(Exception):
    """A stored payload whose signature does not verify; it was not unpickled."""


def secret_from(secret: str | bytes | None) -> bytes | None:
    """The secret as bytes: the argument, else ``JOBSCHED_SECRET``, else None."""
    if secret is None:
        secret = os.environ.get("JOBSCHED_SECRET") or None
    if secret is None:
        return None
    if isinstance(secret, str):
        secret = secret.encode()
    if not isinstance(secret, bytes):
        raise TypeError(f"secret must be a str or bytes, got {type(secret).__name__}")
    if not secret:
        raise ValueError("secret must not be empty")
    return secret


class Codec:
    """Dumps and loads signed payloads under one secret (or none)."""

    __slots__ = ("_mac", "_secret")

    def __init__(self, secret: bytes | None) -> None:
        self._secret = secret
        # Keyed once: a copy per payload skips re-keying (a third of the cost).
        self._mac = hmac.new(secret, digestmod=hashlib.sha256) if secret is not None else None

    def _sign(self, data: bytes) -> bytes:
        assert self._mac is not None
        mac = self._mac.copy()
        mac.update(data)
        return mac.digest()

    @property
    def signed(self) -> bool:
        """True when payloads are signed."""
        return self._secret is not None

    def dumps(self, obj: Any, what: str | Callable[[], str]) -> bytes:
        """Pickle ``obj`` by reference and sign it.

        :param what: names ``obj`` in the error, or makes that name (called
            only on an error: a job's description costs more than its pickle).
        :raises TypeError: it does not pickle by reference; the message names
            ``what`` and the fix.
        """
        # The standard pickler stores functions and classes by reference
        # (module and qualified name) and refuses lambdas and local ones.
        try:
            data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:
            if callable(what):
                what = what()
            raise TypeError(
                f"{what} cannot be stored: it does not pickle by reference "
                f"({type(exc).__name__}: {exc}); a durable store keeps jobs across "
                "restarts, so define the job class, or a FunctionJob's function, at "
                "module level in an importable module (not a lambda or a local)"
            ) from exc
        if self._secret is None:
            return _PLAIN + data
        return _SIGNED + self._sign(data) + data

    def loads(self, blob: bytes) -> Any:
        """Verify and unpickle a payload.

        :raises BadSignature: it is unsigned while a secret is set, signed while
            none is, or signed with another secret. Nothing was unpickled.
        """
        kind = blob[:1]
        if kind == _SIGNED:
            if self._secret is None:
                raise BadSignature(
                    "the payload is signed but this store was opened without a secret; "
                    "pass secret=... or set JOBSCHED_SECRET"
                )
            mac, data = blob[1 : 1 + _MAC_SIZE], blob[1 + _MAC_SIZE :]
            expected = self._sign(data)
            if not hmac.compare_digest(mac, expected):
                raise BadSignature(
                    "the payload's signature does not verify: it was written with "
                    "another secret, or altered"
                )
        elif kind == _PLAIN:
            if self._secret is not None:
                raise BadSignature(
                    "the payload is unsigned but this store requires signatures; "
                    "it was written without a secret"
                )
            data = blob[1:]
        else:
            raise BadSignature("the payload is not a jobsched payload")
        return pickle.loads(data)
