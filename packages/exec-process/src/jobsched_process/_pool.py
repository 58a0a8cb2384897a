"""One worker process seen from the parent: start it, talk to it, end it.

Waiting never blocks the event loop: a reply is awaited with
:func:`anyio.wait_readable` on the socket, big messages move in a thread
(:mod:`._transfer`), and a process's exit is seen by polling with short
sleeps (a few polls at most: an ended socket or a signal is nearly instant).

How death is detected: the parent closes its copy of the child's end of the
socket pair right after the start, so the child's copy is the only one left. When
the child dies, for whatever reason (``os._exit``, a signal, a segfault), the
kernel closes it and the parent's end turns readable with end-of-file. No
heartbeat, no polling of a busy worker.

Each worker leads a process group of its own, which every process its jobs
start joins, and ending a worker ends the group: a job's
``subprocess.Popen("sleep 60")`` does not outlive a cancel or a timeout.
The worker is reaped only after its group is signalled, so its pid (the
group's id) cannot have been reused by an unrelated process meanwhile.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

import anyio

from . import _transfer, _wire, _worker

__all__ = ["WorkerProcess"]

# How often a process's exit is polled while it winds down.
_EXIT_POLL = 0.002
# How long a SIGKILLed process may take to exit before we give up on it.
_KILL_WAIT = 5.0
# A process group of its own, set before the exec where Python can (3.11+);
# on 3.10 the worker sets it itself as it starts. Not a session of its own:
# on Linux each session is a scheduling group, which on a busy machine made
# every job's round trip several times slower.
_OWN_GROUP: dict[str, Any] = {"process_group": 0} if sys.version_info >= (3, 11) else {}


class WorkerProcess:
    """A worker process and the parent's end of its socket."""

    __slots__ = ("alive_w", "pid", "process", "sock", "stopped_by_shutdown", "sys_path")

    def __init__(
        self,
        process: subprocess.Popen[bytes],
        sock: socket.socket,
        alive_w: int,
        sys_path: list[str],
    ) -> None:
        self.process = process
        self.sock = sock
        #: The write end of the pipe the worker watches to end with us.
        self.alive_w = alive_w
        self.pid: int = process.pid
        #: The ``sys.path`` the worker last received.
        self.sys_path = sys_path
        #: Set by ``shutdown(cancel_running=True)`` before it signals the process.
        self.stopped_by_shutdown = False

    @classmethod
    def start(cls, preload: tuple[str, ...] = ()) -> WorkerProcess:
        """Start a worker (blocking: it forks and execs a fresh interpreter).

        :param preload: modules the worker imports before it says it is ready.
        """
        parent_sock, child_sock = socket.socketpair()
        alive_r, alive_w = os.pipe()
        sys_path = list(sys.path)
        try:
            process = subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    _worker.ENTRY,
                    str(child_sock.fileno()),
                    str(alive_r),
                    ",".join(preload),
                    *sys_path,
                ],
                pass_fds=(child_sock.fileno(), alive_r),
                stdin=subprocess.DEVNULL,
                **_OWN_GROUP,
            )
        except BaseException:
            parent_sock.close()
            os.close(alive_w)
            raise
        finally:
            # Only the child's copies may remain, or its death would never
            # reach us as end-of-file (nor ours reach it).
            child_sock.close()
            os.close(alive_r)
        return cls(process, parent_sock, alive_w, sys_path)

    async def wait_ready(self) -> None:
        """Wait for the worker's first message: it has started and waits for jobs.

        :raises EOFError: the process died first (``OSError`` if the socket broke).
        """
        await anyio.wait_readable(self.sock)
        kind, size = _wire.read_header(self.sock)
        if kind != _wire.READY or size:
            raise OSError(f"worker process {self.pid} sent {kind!r} before it was ready")

    def alive(self) -> bool:
        return not self._exited()

    def signal_group(self, signum: int) -> None:
        """Send ``signum`` to the worker and every process its jobs started."""
        if self.process.returncode is not None:
            return  # reaped: the group id is no longer ours to signal
        try:
            os.killpg(self.pid, signum)
        except ProcessLookupError:
            # No such group yet: a worker on Python 3.10 that has not set it
            # (nor started anything); it is the only process to signal.
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signum)
        except PermissionError:
            pass

    async def request(
        self, job: _wire.Chunks, on_progress: Callable[[Any], None] | None = None
    ) -> Any:
        """Send a pickled job and wait for the worker's reply, loaded; the
        job's progress on its way goes to ``on_progress`` (see _transfer.receive).

        :raises EOFError: the process died (``OSError`` if the socket broke first).
        """
        sock = self.sock
        if sys.path != self.sys_path:
            # A module the job needs may live on a path added since the start.
            self.sys_path = list(sys.path)
            _wire.send(sock, _wire.PATH, _wire.dumps(self.sys_path))
        await _transfer.send(sock, _wire.JOB, job)
        return await _transfer.receive(sock, on_progress)

    async def end(self, grace: float, *, polite: bool) -> int | None:
        """Make sure the process is gone; returns its exit code (None: still there).

        ``polite`` gives it ``grace`` seconds to exit on its own (it was told
        to, or is dying already) before SIGTERM; then SIGTERM, ``grace``
        seconds, SIGKILL, each to the whole process group. Whatever the
        worker's jobs started and left behind is SIGKILLed. Call it shielded
        from cancellation.
        """
        try:
            if not (polite and await self._exited_within(grace)):
                self.signal_group(signal.SIGTERM)
                if not await self._exited_within(grace):
                    self.signal_group(signal.SIGKILL)
                    await self._exited_within(_KILL_WAIT)
        except BaseException:
            # Interrupted before the process was seen to go (the scheduler
            # closes an attempt that is still cleaning up a second after its
            # cancellation): no more waiting, but no survivor either.
            self.signal_group(signal.SIGKILL)
            raise
        finally:
            self._close()
        return self.process.returncode

    def _close(self) -> None:
        """Clear the group and reap the worker once it has exited; close our ends."""
        if self._exited():
            self._reap()
        else:
            # Given up on (it was SIGKILLed): a thread reaps it when it goes,
            # so it does not stay a zombie.
            threading.Thread(target=self._reap, name="jobsched-reaper", daemon=True).start()
        self.sock.close()
        if self.alive_w >= 0:
            os.close(self.alive_w)
            self.alive_w = -1

    def _reap(self) -> None:
        """Wait for the worker to exit, SIGKILL what is left of its group, reap it."""
        if self.process.returncode is None:
            # WNOWAIT leaves it a zombie, which keeps its pid, the group's id.
            with contextlib.suppress(ChildProcessError):
                os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOWAIT)
        self.signal_group(signal.SIGKILL)
        self.process.wait()

    def _exited(self) -> bool:
        """True once the worker has exited, without reaping it."""
        if self.process.returncode is not None:
            return True
        try:
            # WNOWAIT leaves it a zombie, which keeps its pid, the group's id.
            info = os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:  # reaped behind our back (a waitpid(-1) elsewhere)
            self.process.wait()
            return True
        return info is not None

    async def _exited_within(self, seconds: float) -> bool:
        with anyio.move_on_after(seconds):
            # A process's end is no event anyio can wait for on every backend;
            # it takes a few polls.
            while not self._exited():  # noqa: ASYNC110
                await anyio.sleep(_EXIT_POLL)
        return self._exited()

    def abandon(self) -> None:
        """At exit or garbage collection: no loop to wait on, so SIGKILL and go.

        Not SIGTERM: a job that ignores it would keep the process alive.
        """
        self.signal_group(signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=_KILL_WAIT)
        self._close()
