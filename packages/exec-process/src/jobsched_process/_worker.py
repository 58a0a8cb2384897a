"""The loop a worker process runs: receive a job, run it, send back one reply.

This module runs in the child, started as its own entry point (:data:`ENTRY`)
rather than through multiprocessing, so the child never imports the parent's
``__main__``: a script without an ``if __name__ == "__main__":`` guard runs
its module-level code once, in the parent. Nothing is lost by it, because
everything travels with cloudpickle, which ships what ``__main__`` defines
(and job classes defined inside functions, and lambdas) by value.

It speaks to the parent over a socket pair: one message once it is ready,
then one message each way per job (:mod:`._wire`).
Every way a job can end is turned into a reply here, so the only way a
worker stops replying is by dying, which the parent sees as end-of-file.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # signal's stub-less C half
import _socket
import _thread
import os
import sys
import time

from . import _wire

# What a worker imports is what its start costs, and the interpreter's own
# start aside, the imports were most of it: the C halves of signal, socket
# and threading serve as well as the modules, which import enum, selectors
# and more; typing, traceback and cloudpickle are left out (cloudpickle is
# imported when a job or a reply needs it, see dumps).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Reply kinds, the first item of every reply tuple (``completed``: what the
# job's complete_in() wrote, CurrentJob.completed, or None):
# (OK, result, completed)
# (RAISED, pickled exception or None, qualname, module, message, traceback, non_retryable,
#  completed)
# (BAD_JOB, "Type: message", traceback): the job could not be unpickled here
# (BAD_RESULT, result type name, "Type: message", completed): the result could not be pickled
OK, RAISED, BAD_JOB, BAD_RESULT = range(4)

#: What the parent runs, ``python -c ENTRY SOCKET_FD ALIVE_FD PRELOAD *SYS_PATH``.
#: The parent's ``sys.path`` comes first, so this module imports wherever
#: the parent found it.
ENTRY = (
    "import sys; sys.path[:] = sys.argv[4:]; from jobsched_process._worker import main; "
    "main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3])"
)


class Call:
    """What a plain ``FunctionJob`` runs, sent instead of the job itself.

    It unpickles without jobsched, so a worker that only ever runs functions
    never imports it: most of what a start used to cost.
    """

    __slots__ = ("args", "func", "kwargs")

    def __init__(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self.func = func
        self.args = args
        self.kwargs = kwargs

    def __reduce__(self) -> tuple[Any, ...]:
        return (Call, (self.func, self.args, self.kwargs))

    def run_sync(self) -> Any:
        return self.func(*self.args, **self.kwargs)


def main(sock_fd: int, alive_fd: int, preload: str = "") -> None:
    """Serve jobs until the parent closes its end of the socket (or dies).

    :param sock_fd: this worker's end of the socket pair to the parent.
    :param alive_fd: the read end of a pipe whose write end only the parent
        holds: it reads end-of-file when the parent is gone.
    :param preload: comma-separated modules to import before saying it is
        ready (``jobsched``, which a job class unpickles from).
    """
    # The group the parent ends this worker and its jobs' processes by. Set
    # before the exec on Python 3.11+ (then this changes nothing).
    os.setpgid(0, 0)
    # Ctrl-C in a terminal is for the parent, which decides what happens to
    # running jobs (and this group is not the terminal's foreground one).
    _signal.signal(_signal.SIGINT, _signal.SIG_IGN)
    # A daemon thread: the interpreter's exit does not wait for it.
    _thread.start_new_thread(_exit_with_parent, (alive_fd,))
    _preload(preload)
    sock = _socket.socket(fileno=sock_fd)
    # Everything a start costs is paid by now, so the parent starts the
    # job's clock only from here.
    _wire.send(sock, _wire.READY, _wire.Chunks())
    while True:
        try:
            kind, size = _wire.read_header(sock)
            body = _wire.BodyReader(sock, size)
            if kind == _wire.PATH:
                # A module a job needs may live on a path added since the start.
                sys.path[:] = body.load()
                continue
            reply = serve(body)
            _wire.send(sock, _wire.REPLY, reply)
        except (EOFError, OSError):  # the parent closed the socket, or went away
            return


def _preload(modules: str) -> None:
    """Import ``modules`` as part of the start, so the first job does not pay for them."""
    for name in filter(None, modules.split(",")):
        # A failure is the job's own load's to report, in its attempt.
        try:  # noqa: SIM105 (contextlib costs the start a module more)
            __import__(name)
        except BaseException:
            pass


def _exit_with_parent(alive_fd: int) -> None:
    """End this worker and its process group when the parent process ends.

    An idle worker sees end-of-file on its pipe anyway; a busy one would run
    its job to the end (forever, for a runaway loop) with nobody to take the
    result, if the parent died without ending it (SIGKILL, ``os._exit``).
    Processes the job started are in this worker's group and end with it.
    """
    while os.read(alive_fd, 4096):
        pass
    os.killpg(0, _signal.SIGKILL)


def serve(body: _wire.BodyReader) -> _wire.Chunks:
    """Run the job in ``body`` and return the pickled reply.

    :raises EOFError: the parent went away mid-message (``OSError`` too).
    """
    try:
        job, current = body.load()
    except (EOFError, OSError):
        raise
    except BaseException as exc:
        return dumps((BAD_JOB, _describe(exc), _format_exc()))
    handle = _handle(current)
    progress = None
    if handle is not None and hasattr(handle, "forward_progress"):
        progress = Progress(body.sock)
        handle.forward_progress(progress)
    # Each reply ends with what the job's complete_in() wrote (CurrentJob.completed).
    try:
        result = job.run_sync() if handle is None else handle.run(job.run_sync)
    except BaseException as exc:
        _close(progress)
        return _raised(exc, _completed(handle))
    _close(progress)
    try:
        return dumps((OK, result, _completed(handle)))
    except Exception as exc:
        return dumps((BAD_RESULT, _type_name(type(result)), _describe(exc), _completed(handle)))


class Progress:
    """A job's progress, sent to the parent at most once a second
    (``CurrentJob.forward_progress``), from whichever thread of the job
    reports it. A value held back is sent by a timer thread when the second
    is up, or by :meth:`close` before the reply: after that, nothing is sent
    (the parent reads progress only before its job's reply)."""

    __slots__ = ("_closed", "_lock", "_pending", "_sent", "_sock", "_timer")

    #: Seconds between two progress messages, at least.
    EVERY = 1.0

    def __init__(self, sock: Any) -> None:
        self._sock = sock
        self._lock = _thread.allocate_lock()
        self._sent: float | None = None
        self._pending: tuple[Any, Any] | None = None
        self._closed = False
        self._timer = False

    def __call__(self, fraction: Any, message: Any) -> None:
        with self._lock:
            if self._closed:
                return
            now = time.monotonic()
            sent = self._sent
            if sent is None or now - sent >= self.EVERY:
                self._send((fraction, message), now)
                return
            self._pending = (fraction, message)
            if not self._timer:
                self._timer = True
                _thread.start_new_thread(self._later, (sent + self.EVERY - now,))

    def _later(self, delay: float) -> None:
        time.sleep(delay)
        with self._lock:
            self._timer = False
            if not self._closed and self._pending is not None:
                self._send(self._pending, time.monotonic())

    def close(self) -> None:
        """The job ended: its last values go now, before the reply; no more after."""
        with self._lock:
            if not self._closed and self._pending is not None:
                self._send(self._pending, time.monotonic())
            self._closed = True

    def _send(self, values: tuple[Any, Any], now: float) -> None:
        self._pending = None
        self._sent = now
        try:
            _wire.send(self._sock, _wire.PROGRESS, _wire.plain_dumps(values))
        except OSError:
            self._closed = True  # the parent is gone: the reply's send says so


def _close(progress: Progress | None) -> None:
    if progress is not None:
        progress.close()


def _handle(current: bytes | None) -> Any:
    """The attempt's handle (``js.current_job()`` in the job), loaded only if
    jobsched is: a job that never imported it cannot ask for it, and
    loading it would import jobsched (most of a start's cost)."""
    if current is None or "jobsched" not in sys.modules:
        return None
    try:
        return _wire.loads(current)
    except Exception:
        return None  # the job runs; js.current_job() there says it is outside one


def _completed(handle: Any) -> Any:
    return None if handle is None else handle.completed


def dumps(obj: Any) -> _wire.Chunks:
    """Pickle a reply (or an exception): with plain pickle where it can, else cloudpickle.

    Plain pickle writes what it can pickle as cloudpickle would: it refuses
    what cloudpickle would write by value (a lambda, a class made in a
    function or brought here by value), and writes the rest by reference or
    by its own ``__reduce__``, as cloudpickle does. So only what it refuses
    needs cloudpickle, and a worker need not import cloudpickle to start.
    Once imported (a job that came by value loads it), cloudpickle writes
    everything, so nothing is pickled twice.
    """
    if "cloudpickle" not in sys.modules:
        try:
            return _wire.plain_dumps(obj)
        except Exception:
            pass
    return _wire.dumps(obj)


def _format_exc() -> str:
    import traceback

    return traceback.format_exc()


def _raised(exc: BaseException, completed: Any = None) -> _wire.Chunks:
    text = _format_exc()
    try:
        blob: bytes | None = b"".join(dumps(exc).parts)
    except Exception:
        blob = None
    cls = type(exc)
    return dumps(
        (
            RAISED,
            blob,
            cls.__qualname__,
            cls.__module__,
            _safe_str(exc),
            text,
            _is_non_retryable(exc),
            completed,
        )
    )


def _is_non_retryable(exc: BaseException) -> bool:
    # Without jobsched imported here, nothing can be one of its exceptions.
    jobsched = sys.modules.get("jobsched")
    return jobsched is not None and isinstance(exc, jobsched.NonRetryableError)


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {_safe_str(exc)}"


def _type_name(cls: type[Any]) -> str:
    module = cls.__module__
    return cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"


def _safe_str(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:
        return f"<{type(exc).__name__} whose str() failed>"
