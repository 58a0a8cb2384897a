"""Errors the process executor raises, and exceptions brought back from a worker."""

from __future__ import annotations

import functools
import pickle
import signal

from jobsched import NonRetryableError

__all__ = ["RemoteTraceback", "WorkerDiedError", "describe_exit", "rebuild_exception"]


class WorkerDiedError(Exception):
    """The worker process running an attempt died before it replied.

    The attempt fails and is retried like any other failure; the executor
    replaces the process and goes on serving.
    """


class RemoteTraceback(Exception):
    """The traceback text of an exception raised in a worker process.

    Attached as the ``__cause__`` of the rebuilt exception, so logged
    tracebacks show where the job failed in the worker.
    """

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return f'\n"""\n{self.text}"""'


class _StandIn(Exception):
    """Base of stand-ins for worker exceptions that cannot be rebuilt here."""


#: The BaseExceptions a job's own code may raise that reach the scheduler as
#: themselves (it records them as the attempt's non-retryable failure).
#: Any other BaseException from a worker (a stray ``asyncio.CancelledError``,
#: say) comes back as a stand-in ``Exception``: it must not pass for a
#: cancellation in this process.
_OWN_BASE_EXCEPTIONS = (SystemExit, KeyboardInterrupt, GeneratorExit)


def rebuild_exception(
    blob: bytes | None,
    qualname: str,
    module: str,
    message: str,
    text: str,
    non_retryable: bool,
) -> BaseException:
    """The exception a job raised in a worker, as an exception of this process.

    The original is unpickled when possible. ``SystemExit``,
    ``KeyboardInterrupt`` and ``GeneratorExit`` come back as themselves (the
    scheduler fails the attempt without retrying it). When the original
    cannot be unpickled, or is another ``BaseException``, a stand-in
    ``Exception`` class of the same name carries the message, so
    ``last_error`` still reads ``"Name: message"``; it stays a
    :class:`jobsched.NonRetryableError` if the original was one.

    The worker's traceback text is the ``__cause__``, so formatting the
    exception shows where the job failed in the worker.
    """
    exc: object = None
    if blob is not None:
        try:
            exc = pickle.loads(blob)
        except Exception:
            exc = None
    if not isinstance(exc, (Exception, *_OWN_BASE_EXCEPTIONS)):
        exc = _stand_in(qualname, module, non_retryable)(message)
    exc.__cause__ = RemoteTraceback(text)
    return exc


@functools.lru_cache(maxsize=256)
def _stand_in(qualname: str, module: str, non_retryable: bool) -> type[Exception]:
    bases: tuple[type[Exception], ...] = (
        (_StandIn, NonRetryableError) if non_retryable else (_StandIn,)
    )
    return type(
        qualname.rpartition(".")[2],
        bases,
        {"__qualname__": qualname, "__module__": module},
    )


def describe_exit(exitcode: int | None) -> str:
    """How a process ended, in words: ``"killed by signal SIGKILL"``."""
    if exitcode is None:
        return "it stopped replying and could not be reaped"
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        else:
            name = f"signal {name}"
        return f"killed by {name}"
    return f"exited with code {exitcode}"
