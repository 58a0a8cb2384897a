"""Moving pickles across a worker's pipe without stalling the event loop.

A small job is pickled, sent, and its reply received and loaded right on the
loop: that costs microseconds, less than a hop to a thread. A big one would
stall the loop for as long as pickling and copying hundreds of megabytes
takes (seconds), so:

- pickling starts on the loop, into a list of chunks (the pickler hands over
  big ``bytes`` as they are, without a copy), and gives up after a couple of
  milliseconds to start over in a thread;
- a pickle above :data:`~._worker.INLINE_LIMIT` is joined and sent in a
  thread;
- the worker announces a big reply with :data:`~._worker.LARGE_MESSAGE`, and
  the parent receives and loads that reply in a thread.

A thread works on its own duplicate of the pipe's descriptor, so the loop may
close the pipe (ending a cancelled worker) while the thread is still in a
send or a receive: the thread then fails on a dead pipe, never on a
descriptor number reused by something else.
"""

from __future__ import annotations

import os
import pickle
import time
from multiprocessing.connection import Connection
from typing import Any

import anyio
import anyio.to_thread
import cloudpickle  # type: ignore[import-untyped]

from . import _worker

__all__ = ["UNLOADABLE", "Pickled", "dumps", "receive", "send"]

#: How long pickling may run on the event loop before it starts over in a thread.
_LOOP_BUDGET = 0.002

#: First item of what :func:`receive` returns when the reply cannot be loaded
#: here: ``(UNLOADABLE, exception)``. Not one of the worker's reply kinds.
UNLOADABLE = -1


class Pickled:
    """A pickle as the chunks the pickler wrote, and their total size."""

    __slots__ = ("chunks", "size")

    def __init__(self, chunks: list[Any], size: int) -> None:
        self.chunks = chunks
        self.size = size

    def join(self) -> bytes | Any:
        return self.chunks[0] if len(self.chunks) == 1 else b"".join(self.chunks)


class _OverBudget(Exception):
    pass


class _Chunks:
    """A file for the pickler that keeps what it is given, and minds the clock."""

    __slots__ = ("chunks", "deadline", "size")

    def __init__(self, deadline: float) -> None:
        self.chunks: list[Any] = []
        self.size = 0
        self.deadline = deadline

    def write(self, data: Any) -> int:
        # The pickler writes every 64 KiB frame, and a big bytes object on its
        # own, so this check comes often enough to bound the time on the loop.
        if time.perf_counter() > self.deadline:
            raise _OverBudget
        self.chunks.append(data)
        n: int = memoryview(data).nbytes
        self.size += n
        return n


def _pickle(obj: Any, deadline: float) -> Pickled:
    out = _Chunks(deadline)
    cloudpickle.Pickler(out, protocol=cloudpickle.DEFAULT_PROTOCOL).dump(obj)
    return Pickled(out.chunks, out.size)


async def dumps(obj: Any) -> Pickled:
    """Pickle ``obj`` with cloudpickle: on the loop if quick, else in a thread."""
    try:
        return _pickle(obj, time.perf_counter() + _LOOP_BUDGET)
    except _OverBudget:
        pass
    return await anyio.to_thread.run_sync(_pickle, obj, float("inf"))


async def send(conn: Connection, payload: Pickled) -> None:
    """Send ``payload`` as one message; a big one from a thread."""
    if payload.size <= _worker.INLINE_LIMIT:
        # A plain blocking send: the idle worker is already blocked in
        # recv_bytes(), so this costs one copy, not a wait.
        conn.send_bytes(payload.join())
        return
    # Abandoned on cancellation: the caller then ends the worker, which
    # breaks the pipe under the thread.
    await anyio.to_thread.run_sync(_send, _duplicate(conn), payload, abandon_on_cancel=True)


def _send(conn: Connection, payload: Pickled) -> None:
    with conn:
        data = payload.join()
        payload.chunks = []  # the join is a copy: let the parts go
        conn.send_bytes(data)


async def receive(conn: Connection) -> Any:
    """Wait for the worker's reply and load it; a big one in a thread.

    :returns: the reply tuple, or ``(UNLOADABLE, exception)``.
    :raises EOFError: the worker died (``OSError`` if the pipe broke first).
    """
    await anyio.wait_readable(conn.fileno())
    data = conn.recv_bytes()
    if data == _worker.LARGE_MESSAGE:
        return await anyio.to_thread.run_sync(_receive, _duplicate(conn), abandon_on_cancel=True)
    return _loads(data)


def _receive(conn: Connection) -> Any:
    with conn:
        data = conn.recv_bytes()
    return _loads(data)


def _loads(data: bytes) -> Any:
    try:
        return pickle.loads(data)
    except Exception as exc:
        return (UNLOADABLE, exc)


def _duplicate(conn: Connection) -> Connection:
    """A connection on a new descriptor for the same pipe, for a thread to own."""
    return Connection(os.dup(conn.fileno()))
