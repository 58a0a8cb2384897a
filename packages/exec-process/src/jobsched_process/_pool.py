"""One worker process seen from the parent: start it, talk to it, end it.

Waiting never blocks the event loop: a reply is awaited with
:func:`anyio.wait_readable` on the pipe, and a process's exit by polling its
exit code with short sleeps (a few polls at most: an ended pipe or a signal
is nearly instant).

How death is detected: the parent closes its copy of the child's end of the
pipe right after the start, so the child's copy is the only one left. When
the child dies, for whatever reason (``os._exit``, a signal, a segfault), the
kernel closes it and the parent's end turns readable with end-of-file. No
heartbeat, no polling of a busy worker.
"""

from __future__ import annotations

import os
import sys
from multiprocessing.connection import Connection
from multiprocessing.context import BaseContext
from multiprocessing.process import BaseProcess

import anyio
import anyio.to_thread

from . import _worker

__all__ = ["WorkerProcess"]

# How often a process's exit code is polled while it winds down.
_EXIT_POLL = 0.002
# How long a SIGKILLed process may take to be reaped before we give up on it.
_KILL_WAIT = 5.0


class WorkerProcess:
    """A worker process and the parent's end of its pipe."""

    __slots__ = ("conn", "pid", "process", "stopped_by_shutdown", "sys_path")

    def __init__(self, process: BaseProcess, conn: Connection, sys_path: list[str]) -> None:
        self.process = process
        self.conn = conn
        self.pid: int = process.pid  # type: ignore[assignment]
        #: The ``sys.path`` the worker last received.
        self.sys_path = sys_path
        #: Set by ``shutdown(cancel_running=True)`` before it signals the process.
        self.stopped_by_shutdown = False

    @classmethod
    def start(cls, context: BaseContext) -> WorkerProcess:
        """Start a worker (blocking: the first forkserver start takes a while)."""
        if context.get_start_method() == "forkserver":
            _preload_in_forkserver(context)
        parent_conn, child_conn = context.Pipe(duplex=True)
        sys_path = list(sys.path)
        process = context.Process(  # type: ignore[attr-defined]
            target=_worker.main,
            args=(child_conn, sys_path),
            name="jobsched-process-worker",
        )
        try:
            process.start()
        except BaseException:
            parent_conn.close()
            raise
        finally:
            # Only the child's copy may remain, or its death would never
            # reach us as end-of-file.
            child_conn.close()
        return cls(process, parent_conn, sys_path)

    def alive(self) -> bool:
        return self.process.exitcode is None

    async def request(self, payload: bytes) -> bytes:
        """Send a pickled job and wait for the pickled reply.

        :raises EOFError: the process died (``OSError`` if the pipe broke first).
        """
        conn = self.conn
        if sys.path != self.sys_path:
            # A module the job needs may live on a path added since the start.
            self.sys_path = list(sys.path)
            conn.send_bytes(_worker.PATH_MESSAGE + _worker.dumps(self.sys_path))
        # A plain blocking send: the idle worker is already blocked in
        # recv_bytes(), so this costs one copy, not a wait.
        conn.send_bytes(payload)
        await _wait_readable(conn)
        return conn.recv_bytes()

    async def end(self, grace: float, *, polite: bool) -> int | None:
        """Make sure the process is gone; returns its exit code (None: still there).

        ``polite`` gives it ``grace`` seconds to exit on its own (it was told
        to, or is dying already) before SIGTERM; then SIGTERM, ``grace``
        seconds, SIGKILL. Call it shielded from cancellation.
        """
        process = self.process
        try:
            if polite and await self._exited_within(grace):
                return process.exitcode
            process.terminate()
            if await self._exited_within(grace):
                return process.exitcode
            process.kill()
            await self._exited_within(_KILL_WAIT)
            return process.exitcode
        except BaseException:
            # Interrupted before the process was seen to go (the scheduler
            # closes an attempt that is still cleaning up a second after its
            # cancellation): no more waiting, but no survivor either.
            if process.exitcode is None:
                process.kill()
            raise
        finally:
            self.conn.close()
            if process.exitcode is not None:
                process.close()  # releases its sentinel fd; it is reaped already

    async def _exited_within(self, seconds: float) -> bool:
        process = self.process
        with anyio.move_on_after(seconds):
            # A process's end is no event anyio can wait for on every platform
            # (the sentinel is a handle on Windows); it takes a few polls.
            while process.exitcode is None:  # noqa: ASYNC110
                await anyio.sleep(_EXIT_POLL)
        return process.exitcode is not None

    def abandon(self) -> None:
        """At exit or garbage collection: no loop to wait on, so SIGKILL and go.

        Not SIGTERM: a job that ignores it would keep the process alive, and
        multiprocessing joins every child at exit.
        """
        self.conn.close()
        if self.process.exitcode is None:
            self.process.kill()


def _preload_in_forkserver(context: BaseContext) -> None:
    """Have the fork server import the worker's modules before it forks any.

    Each worker then starts with jobsched and cloudpickle already imported
    (a fork, a few ms) instead of importing them itself (0.2 s or more): a
    killed worker is replaced at once. The server is shared by everything in
    this process, so the modules are added to its preload list, never put in
    place of it; the list is only readable through a private attribute, and
    without it nothing is preloaded. It takes effect if the server is not
    running yet.
    """
    from multiprocessing import forkserver

    current = getattr(getattr(forkserver, "_forkserver", None), "_preload_modules", None)
    if isinstance(current, list) and _PRELOAD not in current:
        context.set_forkserver_preload([*current, _PRELOAD])


_PRELOAD = "jobsched_process._worker"


async def _wait_readable(conn: Connection) -> None:
    if os.name == "posix":
        await anyio.wait_readable(conn.fileno())
    else:
        # Windows pipes are not sockets, which is all wait_readable takes there.
        await anyio.to_thread.run_sync(conn.poll, None, abandon_on_cancel=True)
