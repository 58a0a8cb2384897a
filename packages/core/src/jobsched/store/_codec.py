"""Jobs and results as stored bytes: pickled by reference, signed with HMAC-SHA256.

A durable store outlives the process that wrote it, so what it holds must be
loadable by another process: the job's class (or a FunctionJob's function)
is pickled by reference to its module and name, never by value as the
process executor's cloudpickle would. A row is signed with ``secret`` and
never unpickled unless its signature verifies: unpickling runs code, so a
store that anyone else can write to must not be trusted blindly.

A payload's first byte says its format:

- ``K`` + key id (8 bytes) + MAC (32) + pickle: signed with the key whose id
  it names. The key id lets a store hand a row only to members that hold
  its key (the claim filters on these bytes), and lets a member verify
  under the one key that signed, whichever of its keys that is.
- ``S`` + MAC + pickle: the legacy signed format (before key ids), still
  read: verified against every key held.
- ``P`` + pickle: unsigned (a store opened without a secret).

Several keys may be held at once (``secret=[new, old]``): the first signs,
every one verifies, so a fleet rotates its key without downtime.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import os
import pickle
from collections.abc import Callable, Iterable, Sequence
from typing import Any

_MAC_SIZE = hashlib.sha256().digest_size
#: Payloads signed with a key id start with this; legacy signed ones with
#: _SIGNED; unsigned ones (no secret) with _PLAIN.
KEYED = b"K"
_SIGNED = b"S"
_PLAIN = b"P"
#: Bytes of a key id in a payload's header, after KEYED.
KEY_ID_SIZE = 8
#: Where a key id sits in a payload (1-based, as SQL's substring counts).
KEY_ID_START = 2
_HEADER = 1 + KEY_ID_SIZE + _MAC_SIZE
#: A result or payload at least this big (bytes, or items of a container)
#: is pickled straight into the payload's buffer and signed where it lies:
#: the usual pickle-then-prepend copies it twice more.
BIG = 1 << 20
#: Separates a key id's derivation from any other use of the key: the id is
#: a hash of this and the key, never the key or its MAC of anything.
_KEY_ID_DOMAIN = b"jobsched key id v1\x00"

Secret = str | bytes


class BadSignature(Exception):
    """A stored payload whose signature does not verify; it was not unpickled."""


class UnknownKey(BadSignature):
    """A payload signed with a key this member does not hold; not unpickled."""

    def __init__(self, message: str, key_id: bytes) -> None:
        super().__init__(message)
        #: The id of the key that signed it.
        self.key_id = key_id


class Unloadable(Exception):
    """A verified payload that does not unpickle here (a module or class gone)."""


def key_id(secret: bytes) -> bytes:
    """The short id a payload signed with ``secret`` carries: one-way, never the key."""
    return hashlib.sha256(_KEY_ID_DOMAIN + secret).digest()[:KEY_ID_SIZE]


def key_name(kid: bytes) -> str:
    """How logs and the CLI show a key id."""
    return kid.hex()


def secrets_from(secret: Secret | Sequence[Secret] | None) -> tuple[bytes, ...]:
    """The keys as bytes, the signing one first: the argument (one key or a
    list), else ``JOBSCHED_SECRET`` (keys separated by commas), else none.

    :raises TypeError: a key is neither str nor bytes.
    :raises ValueError: a key is empty, or the list is.
    """
    from_env = secret is None
    if from_env:
        env = os.environ.get("JOBSCHED_SECRET") or None
        if env is None:
            return ()
        parts: list[Any] = env.split(",")
        if len(parts) > 1 and any(p != p.strip() for p in parts):
            raise ValueError(
                "JOBSCHED_SECRET holds a key with spaces around it: separate its keys "
                "with commas alone (JOBSCHED_SECRET=new,old)"
            )
    elif isinstance(secret, (str, bytes)):
        parts = [secret]
    elif isinstance(secret, (list, tuple)):
        parts = list(secret)
        if not parts:
            raise ValueError(
                "secret must hold at least one key: the first signs, every one verifies"
            )
    else:
        raise TypeError(
            f"secret must be a str or bytes, or a list of them, got {type(secret).__name__}"
        )
    keys: list[bytes] = []
    for part in parts:
        if isinstance(part, str):
            part = part.encode()
        if not isinstance(part, bytes):
            raise TypeError(f"secret must be a str or bytes, got {type(part).__name__}")
        if not part:
            raise ValueError(
                "JOBSCHED_SECRET holds an empty key" if from_env else "secret must not be empty"
            )
        if part not in keys:
            keys.append(part)
    return tuple(keys)


def secret_from(secret: Secret | Sequence[Secret] | None) -> bytes | None:
    """The signing key as bytes (see :func:`secrets_from`), or None."""
    keys = secrets_from(secret)
    return keys[0] if keys else None


def _keyed(key: bytes) -> Any:
    mac = hmac.new(key, digestmod=hashlib.sha256)
    inner = getattr(mac, "_hmac", None)
    return inner if inner is not None and hasattr(inner, "copy") else mac


class Codec:
    """Dumps payloads signed with the first of its keys; loads those of any."""

    __slots__ = ("_id", "_macs", "_secret")

    def __init__(self, secret: bytes | Iterable[bytes] | None) -> None:
        keys: tuple[bytes, ...]
        if secret is None:
            keys = ()
        elif isinstance(secret, bytes):
            keys = (secret,)
        else:
            keys = tuple(secret)
        self._secret = keys[0] if keys else None
        # Keyed once: a copy per payload skips re-keying (a third of the cost).
        # The OpenSSL HMAC inside hmac.HMAC where there is one: its copy is
        # the C object's, without hmac.HMAC's Python-level copy around it
        # (about half the cost of signing or verifying a small payload,
        # paid per result by a fan-in); the same digest either way.
        self._macs = {key_id(k): _keyed(k) for k in keys}
        self._id = key_id(keys[0]) if keys else b""

    def _sign(self, kid: bytes, data: bytes | memoryview) -> bytes:
        mac = self._macs[kid].copy()
        mac.update(data)
        digest: bytes = mac.digest()
        return digest

    @property
    def signed(self) -> bool:
        """True when payloads are signed."""
        return self._secret is not None

    @property
    def key_ids(self) -> tuple[bytes, ...]:
        """The ids of the keys held, the signing one first."""
        return tuple(self._macs)

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
            if _looks_big(obj):
                return self._dumps_in_place(obj)
            data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:
            if callable(what):
                what = what()
            raise TypeError(_unpicklable(obj, what, exc)) from exc
        if self._secret is None:
            return _PLAIN + data
        return KEYED + self._id + self._sign(self._id, data) + data

    def _dumps_in_place(self, obj: Any) -> bytes:
        """``dumps`` for a big object: one copy of its pickle, not three.

        The pickle is written after a header left blank, signed through a
        memoryview, and the MAC written into the blank; BytesIO then hands
        its buffer over as the bytes without copying it.
        """
        out = io.BytesIO()
        signed = self._secret is not None
        out.write(KEYED + self._id + bytes(_MAC_SIZE) if signed else _PLAIN)
        pickle.Pickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
        if signed:
            with out.getbuffer() as view:
                with view[_HEADER:] as data:
                    mac = self._sign(self._id, data)
                view[1 + KEY_ID_SIZE : _HEADER] = mac
        return out.getvalue()

    def verify(self, blob: bytes) -> bytes:
        """The pickle inside a payload, once its signature verified.

        :raises UnknownKey: it is signed with a key this codec does not hold.
        :raises BadSignature: it is unsigned while a secret is set, signed
            while none is, or altered.
        """
        with self._verified(blob) as data:
            return bytes(data)

    def _verified(self, blob: bytes) -> memoryview:
        """:meth:`verify`'s pickle as a view into ``blob``: a big result is
        checked and loaded where it lies, not copied out first."""
        kind = blob[:1]
        whole = memoryview(blob)
        if kind == KEYED:
            kid = blob[1 : 1 + KEY_ID_SIZE]
            if kid not in self._macs:
                if not self._macs:
                    raise UnknownKey(
                        f"the payload is signed (key id {key_name(kid)}) but this store was "
                        "opened without a secret; pass secret=... or set JOBSCHED_SECRET",
                        kid,
                    )
                held = ", ".join(key_name(k) for k in self._macs)
                raise UnknownKey(
                    f"the payload is signed with key id {key_name(kid)}, which this member "
                    f"does not hold (its key ids: {held}); add that key to secret=[...] or "
                    "JOBSCHED_SECRET (the first key signs, every one verifies)",
                    kid,
                )
            mac, data = blob[1 + KEY_ID_SIZE : _HEADER], whole[_HEADER:]
            if not hmac.compare_digest(mac, self._sign(kid, data)):
                raise BadSignature(
                    f"the payload's signature does not verify under key id {key_name(kid)}, "
                    "which signed it: it was altered"
                )
            return data
        if kind == _SIGNED:
            if self._secret is None:
                raise BadSignature(
                    "the payload is signed but this store was opened without a secret; "
                    "pass secret=... or set JOBSCHED_SECRET"
                )
            # The legacy format names no key: any key held may have signed it.
            mac, data = blob[1 : 1 + _MAC_SIZE], whole[1 + _MAC_SIZE :]
            if not any(hmac.compare_digest(mac, self._sign(k, data)) for k in self._macs):
                raise BadSignature(
                    "the payload's signature does not verify: it was written with "
                    "another secret, or altered"
                )
            return data
        if kind == _PLAIN:
            if self._secret is not None:
                raise BadSignature(
                    "the payload is unsigned but this store requires signatures; "
                    "it was written without a secret"
                )
            return whole[1:]
        raise BadSignature("the payload is not a jobsched payload")

    def loads(self, blob: bytes) -> Any:
        """Verify and unpickle a payload.

        :raises BadSignature: see :meth:`verify`; nothing was unpickled.
        :raises Unloadable: it verified but does not unpickle here; the
            message names the module or attribute that is missing.
        """
        with self._verified(blob) as data:
            try:
                return pickle.loads(data)
            except Exception as exc:
                raise Unloadable(_why_unloadable(data, exc)) from exc


class _Diagnose(pickle.Unpickler):
    """Unpickles again only to name the global a failed load could not find."""

    def find_class(self, module: str, name: str) -> Any:
        try:
            __import__(module)
        except Exception as exc:
            raise Unloadable(
                f"module {module!r} cannot be imported here ({type(exc).__name__}: {exc}), "
                f"so its attribute {name!r} cannot be loaded"
            ) from None
        try:
            return super().find_class(module, name)
        except AttributeError:
            raise Unloadable(f"module {module!r} has no attribute {name!r}") from None


def _looks_big(obj: object) -> bool:
    """Whether ``obj`` is worth pickling in place: told at a glance (a long
    str or bytes, a long container), so small payloads keep the faster path."""
    if isinstance(obj, (bytes, bytearray, str, memoryview, list, tuple, dict, set)):
        return len(obj) >= (
            BIG if isinstance(obj, (bytes, bytearray, str, memoryview)) else BIG >> 6
        )
    return False


def _why_unloadable(data: bytes | memoryview, exc: Exception) -> str:
    # The fast C unpickler's errors do not always say which global is gone
    # ("Can't get attribute ..."): a second, slower pass asks for each one,
    # only on this rare failure path.
    import io

    try:
        _Diagnose(io.BytesIO(data)).load()
    except Unloadable as named:
        return str(named)
    except Exception:
        pass
    return f"{type(exc).__name__}: {exc}"


#: How much of a payload's pickle :func:`own_id_in` reads: a job's options
#: (with the id) come before its own fields in the stored form.
OWN_ID_SCAN = 64 * 1024
#: How much of a payload a read of many jobs takes to find their own ids (a
#: workflow's graph): the header and the pickle's first 4 KiB, which hold a
#: job's name and options, its id among them, unless the name is very long
#: (then the id is not found, and the job shows by its number).
OWN_ID_HEAD = _HEADER + 4096


def own_id_in(blob: bytes, number: int) -> str | None:
    """The id given at submit (``job_id="receipt-42"``) of the job stored as
    ``number``, read from its payload without unpickling it; None when it is
    not found (a numbered job, a pickle the scan cannot read).

    Nothing is loaded or run, and no secret is needed: the pickle's opcodes are
    only parsed, and a string counts only if it hashes to ``number`` itself
    (``own_number``), which a forged payload cannot arrange for another text.
    """
    import io
    import pickletools

    from .._jobs._ids import MAX_OWN_ID, own_number

    if number >= 0:
        return None
    kind = blob[:1]
    start = {KEYED: _HEADER, _SIGNED: 1 + _MAC_SIZE, _PLAIN: 1}.get(kind)
    if start is None:
        return None
    try:
        for _, arg, _ in pickletools.genops(io.BytesIO(blob[start : start + OWN_ID_SCAN])):
            if type(arg) is str and 0 < len(arg) <= MAX_OWN_ID and own_number(arg) == number:
                return arg
    except Exception:  # cut by the scan's bound, or not a pickle: say nothing
        pass
    return None


def _unpicklable(obj: Any, what: str, exc: Exception) -> str:
    """Why ``obj`` cannot be stored, naming the part at fault: an argument
    (a lock, a connection) is not a function to move to module level."""
    from ._culprit import by_reference, culprit

    found = culprit(obj)
    if found is not None and not by_reference(found[1]):
        path, value = found
        part = "argument" if path.startswith(("args", "kwargs")) else "field"
        kind = f"{type(value).__module__}.{type(value).__qualname__}".removeprefix("builtins.")
        return (
            f"{what} cannot be stored: its {part} {path} ({kind}) does not pickle "
            f"({type(exc).__name__}: {exc}); a durable store pickles a job's arguments "
            "and fields, so pass what pickles (a name, an id, a path) and make the "
            f"{kind} inside the job"
        )
    return (
        f"{what} cannot be stored: it does not pickle by reference "
        f"({type(exc).__name__}: {exc}); a durable store keeps jobs across "
        "restarts, so define the job class, or a FunctionJob's function, at "
        "module level in an importable module (not a lambda or a local)"
    )
