"""The messages between the parent and a worker: framing and streamed pickles.

Both ends are this package, over one Unix socket pair, so the format is ours:
a header (a kind byte and the body's length) and the body, a cloudpickle.
Shared by the parent and the worker; stdlib and cloudpickle only.

Big bodies never go through one big buffer. The pickler writes into a list
of chunks (it hands over a big ``bytes`` as it is, without a copy), and the
chunks are sent one after another. The receiver unpickles straight from the
socket: the unpickler makes each big ``bytes`` and has :class:`BodyReader`
fill it with ``recv_into``, which releases the GIL while it waits and copies.
So moving hundreds of megabytes costs no long hold of the GIL, on either
side, and threads of the parent (its event loop) keep running.
"""

from __future__ import annotations

import struct
import time

# What a worker imports to start is what its start costs, so this module
# (which it imports) takes the C pickler without the pickle module (which
# imports re), and neither typing, socket nor cloudpickle: a worker's job
# loads with plain pickle, which imports cloudpickle only for what
# cloudpickle wrote by value (and replies, see _worker.dumps).
try:
    from _pickle import Pickler, Unpickler, UnpicklingError, loads
except ImportError:  # not CPython
    from pickle import Pickler, Unpickler, UnpicklingError, loads

TYPE_CHECKING = False
if TYPE_CHECKING:
    # What both ends pass (the parent's socket.socket is one).
    from _socket import socket as Socket
    from typing import Any

__all__ = [
    "JOB",
    "PATH",
    "PROGRESS",
    "READY",
    "REPLY",
    "BodyReader",
    "Chunks",
    "OverBudget",
    "dumps",
    "loads",
    "plain_dumps",
    "read_header",
    "send",
]

#: Message kinds: a job to run, a new ``sys.path``, a worker's reply, and
#: the worker's first message, once it is ready for jobs (an empty body).
JOB, PATH, REPLY, READY = b"J", b"P", b"R", b"Y"
#: A running job's progress, ``(fraction, message)``: any number of them
#: before its reply, the worker's last values last.
PROGRESS = b"G"

_HEADER = struct.Struct("!cQ")
#: A body up to this size is read whole and unpickled from memory: fewer
#: calls than streaming it, and the copy is too small to matter.
_READ_WHOLE = 1024 * 1024


class OverBudget(Exception):
    """Pickling ran past its deadline (see :func:`dumps`)."""


class Chunks:
    """A file for the pickler that keeps what it is given, and minds a deadline."""

    __slots__ = ("deadline", "parts", "size")

    def __init__(self, deadline: float | None = None) -> None:
        self.parts: list[Any] = []
        self.size = 0
        self.deadline = deadline

    def write(self, data: Any) -> int:
        # The pickler writes every 64 KiB frame, and each big bytes object on
        # its own, so this check comes often enough to bound the time taken.
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise OverBudget
        self.parts.append(data)
        n: int = memoryview(data).nbytes
        self.size += n
        return n


def dumps(obj: Any, deadline: float | None = None) -> Chunks:
    """Pickle ``obj`` with cloudpickle into chunks.

    :raises OverBudget: ``time.perf_counter()`` passed ``deadline`` meanwhile.
    """
    import cloudpickle  # type: ignore[import-untyped]

    out = Chunks(deadline)
    cloudpickle.Pickler(out, protocol=cloudpickle.DEFAULT_PROTOCOL).dump(obj)
    return out


def plain_dumps(obj: Any) -> Chunks:
    """Pickle ``obj`` with plain pickle into chunks (no cloudpickle: it may refuse)."""
    out = Chunks()
    Pickler(out, protocol=-1).dump(obj)
    return out


def send(sock: Socket, kind: bytes, body: Chunks) -> None:
    """Send one message (blocking)."""
    parts = body.parts
    if body.size <= _READ_WHOLE:
        # One system call for the common small message.
        sock.sendall(b"".join([_HEADER.pack(kind, body.size), *parts]))
        return
    sock.sendall(_HEADER.pack(kind, body.size))
    for part in parts:
        sock.sendall(part)


def read_header(sock: Socket) -> tuple[bytes, int]:
    """The next message's kind and body length (blocking).

    :raises EOFError: the other end closed the socket (or died).
    """
    kind, size = _HEADER.unpack(_read_exact(sock, _HEADER.size))
    return kind, size


def _read_exact(sock: Socket, n: int) -> bytearray:
    data = bytearray(n)
    view = memoryview(data)
    got = 0
    while got < n:
        count = sock.recv_into(view[got:])
        if not count:
            raise EOFError("the other end of the pipe closed")
        got += count
    return data


class BodyReader:
    """A file over the next ``size`` bytes of ``sock``, for :class:`pickle.Unpickler`.

    No ``peek``: the unpickler then reads no further than the pickle.
    """

    __slots__ = ("left", "sock")

    def __init__(self, sock: Socket, size: int) -> None:
        self.sock = sock
        self.left = size

    def load(self) -> Any:
        """Unpickle the body; what it does not read is skipped, so the stream stays in step."""
        try:
            if self.left <= _READ_WHOLE:
                data = _read_exact(self.sock, self.left)
                self.left = 0
                return loads(data)
            return Unpickler(self).load()
        finally:
            self.skip()

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        n = min(len(view), self.left)
        got = 0
        while got < n:
            count = self.sock.recv_into(view[got:n])
            if not count:
                raise EOFError("the other end of the pipe closed")
            got += count
        self.left -= got
        return got

    def read(self, n: int = -1) -> bytes:
        n = self.left if n < 0 else min(n, self.left)
        data = _read_exact(self.sock, n)
        self.left -= n
        return bytes(data)

    def readline(self) -> bytes:
        # Only protocol 0 reads lines; cloudpickle never writes it.
        raise UnpicklingError("unexpected line-based pickle")

    def skip(self) -> None:
        while self.left:
            self.left -= len(self.read(min(self.left, 1 << 20)))
