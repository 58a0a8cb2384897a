"""Moving jobs and replies across a worker's socket without stalling the event loop.

A small job is pickled, sent, and its reply received and unpickled right on
the loop: microseconds, less than a hop to a thread. A big one would stall
the loop for as long as pickling and copying hundreds of megabytes takes
(seconds), so:

- pickling starts on the loop and gives up after a couple of milliseconds,
  to start over in a thread;
- a message above :data:`INLINE_LIMIT` is sent, or received and unpickled,
  in a thread, and :mod:`._wire` does that without long holds of the GIL,
  which would stall the loop from a thread just as well.

A thread works on its own duplicate of the socket, so the loop may close the
socket (ending a cancelled worker) while the thread is still in a send or a
receive: the thread then fails on a dead socket, never on a descriptor
number reused by something else.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from typing import Any

import anyio
import anyio.to_thread

# Every job is pickled with it here: imported with the executor, not in the
# first job's time (_wire imports it only when used, for the workers' sake).
import cloudpickle  # type: ignore[import-untyped]  # noqa: F401

from . import _wire

__all__ = ["INLINE_LIMIT", "UNLOADABLE", "dumps", "receive", "send"]

#: Messages up to this size are sent, received and unpickled on the event loop.
INLINE_LIMIT = 256 * 1024

#: How long pickling may run on the event loop before it starts over in a thread.
_LOOP_BUDGET = 0.002

#: First item of what :func:`receive` returns when the reply cannot be loaded
#: here: ``(UNLOADABLE, exception)``. Not one of the worker's reply kinds.
UNLOADABLE = -1


async def dumps(obj: Any) -> _wire.Chunks:
    """Pickle ``obj`` with cloudpickle: on the loop if quick, else in a thread."""
    try:
        return _wire.dumps(obj, time.perf_counter() + _LOOP_BUDGET)
    except _wire.OverBudget:
        pass
    return await anyio.to_thread.run_sync(_wire.dumps, obj)


async def send(sock: socket.socket, kind: bytes, body: _wire.Chunks) -> None:
    """Send one message; a big one from a thread."""
    if body.size <= INLINE_LIMIT:
        # A plain blocking send: the idle worker is already waiting to read,
        # so this costs a copy, not a wait.
        _wire.send(sock, kind, body)
        return
    # Abandoned on cancellation: the caller then ends the worker, which
    # breaks the socket under the thread.
    await anyio.to_thread.run_sync(_send, sock.dup(), kind, body, abandon_on_cancel=True)


def _send(sock: socket.socket, kind: bytes, body: _wire.Chunks) -> None:
    with sock:
        _wire.send(sock, kind, body)


async def receive(sock: socket.socket, on_progress: Callable[[Any], None] | None = None) -> Any:
    """Wait for the worker's reply and unpickle it; a big one in a thread.
    The job's progress messages before it go to ``on_progress`` (its
    ``(fraction, message)``), or nowhere.

    :returns: the reply tuple, or ``(UNLOADABLE, exception)``.
    :raises EOFError: the worker died (``OSError`` if the socket broke first).
    """
    while True:
        await anyio.wait_readable(sock)
        kind, size = _wire.read_header(sock)
        if kind != _wire.PROGRESS:
            break
        values = _load(_wire.BodyReader(sock, size))  # a float and a short str
        if on_progress is not None and values[:1] != (UNLOADABLE,):
            on_progress(values)
    if size <= INLINE_LIMIT:
        return _load(_wire.BodyReader(sock, size))
    return await anyio.to_thread.run_sync(_receive, sock.dup(), size, abandon_on_cancel=True)


def _receive(sock: socket.socket, size: int) -> Any:
    with sock:
        return _load(_wire.BodyReader(sock, size))


def _load(body: _wire.BodyReader) -> Any:
    try:
        return body.load()
    except (EOFError, OSError):
        raise
    except Exception as exc:
        return (UNLOADABLE, exc)
