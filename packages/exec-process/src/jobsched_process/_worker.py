"""The loop a worker process runs: receive a job, run it, send back one reply.

This module runs in the child. It speaks to the parent over one duplex pipe,
one message each way per job, both pickled with cloudpickle (so job classes
defined inside functions and lambdas in a ``FunctionJob`` travel by value).
Every way a job can end is turned into a reply here, so the only way a
worker stops replying is by dying, which the parent sees as end-of-file.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import threading
import traceback
from multiprocessing.connection import Connection
from typing import Any

import cloudpickle  # type: ignore[import-untyped]

from jobsched import NonRetryableError

# Reply kinds, the first item of every reply tuple:
# (OK, result)
# (RAISED, pickled exception or None, qualname, module, message, traceback, non_retryable)
# (BAD_JOB, "Type: message", traceback): the job could not be unpickled here
# (BAD_RESULT, result type name, "Type: message"): the result could not be pickled
OK, RAISED, BAD_JOB, BAD_RESULT = range(4)


def dumps(obj: Any) -> bytes:
    """Pickle with cloudpickle: by value what plain pickle can only name."""
    return cloudpickle.dumps(obj)  # type: ignore[no-any-return]


#: Prefix of a message that replaces ``sys.path`` before the next job.
#: Job messages are plain pickles, which never start with this byte.
PATH_MESSAGE = b"P"


def main(conn: Connection, sys_path: list[str]) -> None:
    """Serve jobs until the parent closes its end of the pipe (or dies)."""
    sys.path[:] = sys_path
    # Ctrl-C in a terminal reaches the whole process group; the parent
    # decides what happens to running jobs, not a KeyboardInterrupt here.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = multiprocessing.parent_process()
    if parent is not None:
        threading.Thread(
            target=_exit_with_parent,
            args=(parent.sentinel,),
            name="jobsched-parent-watch",
            daemon=True,
        ).start()
    while True:
        try:
            data = conn.recv_bytes()
        except (EOFError, OSError):
            return
        if data[:1] == PATH_MESSAGE:
            sys.path[:] = pickle.loads(data[1:])
            continue
        reply = serve(data)
        try:
            conn.send_bytes(reply)
        except OSError:  # the parent went away mid-job
            return


def _exit_with_parent(sentinel: int) -> None:
    """End this worker when the parent process ends, even in the middle of a job.

    An idle worker sees end-of-file on its pipe anyway; a busy one would run
    its job to the end (forever, for a runaway loop) with nobody to take the
    result, if the parent died without ending it (SIGKILL, ``os._exit``).
    """
    multiprocessing.connection.wait([sentinel])
    os._exit(1)


def serve(data: bytes) -> bytes:
    """Run one pickled job and return the pickled reply; never raises."""
    try:
        job = pickle.loads(data)
    except BaseException as exc:
        return dumps((BAD_JOB, _describe(exc), traceback.format_exc()))
    try:
        result = job.run_sync()
    except BaseException as exc:
        return _raised(exc)
    try:
        return dumps((OK, result))
    except Exception as exc:
        return dumps((BAD_RESULT, _type_name(type(result)), _describe(exc)))


def _raised(exc: BaseException) -> bytes:
    text = traceback.format_exc()
    try:
        blob: bytes | None = dumps(exc)
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
            isinstance(exc, NonRetryableError),
        )
    )


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
