"""What runs on a Dask worker: one attempt of a job, with a cancel token that reads a Dask Event.

This module is imported by name on the workers, so they need
``jobsched-exec-dask`` installed (it comes with ``jobsched-core[dask]``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import distributed

import jobsched

logger = logging.getLogger("jobsched.dask")

#: Seconds between two reads of an attempt's cancel flag on the scheduler:
#: each read is a round trip, and jobs may poll in tight loops.
POLL_INTERVAL = 0.1


class EscapedBaseException(Exception):
    """Carries a job's own ``SystemExit``, ``KeyboardInterrupt`` or
    ``GeneratorExit`` out of the worker, where raising it would unwind Dask's
    thread instead of failing the task; the executor re-raises the original."""

    def __init__(self, kind: type[BaseException], args: tuple[Any, ...]) -> None:
        # Its type and args, not the exception: distributed pickles exceptions
        # through tblib, which rebuilds them without __init__ (a SystemExit
        # would come back without its code).
        super().__init__(kind, args)

    @property
    def original(self) -> BaseException:
        """The job's own exception, built afresh."""
        kind, args = self.args
        try:
            return kind(*args)  # type: ignore[no-any-return]
        except Exception:
            return RuntimeError(f"the job raised {kind.__qualname__}{args!r}")


class EventCancelToken(jobsched.CancelToken):
    """A cancel token whose flag lives on the Dask scheduler as a named
    :class:`distributed.Event`, set by the executor when the attempt ends.

    Reads go to the scheduler at most every :data:`POLL_INTERVAL` seconds; a
    flag once seen stays seen.
    """

    __slots__ = ("_name", "_next_read", "_warned")

    def __init__(self, name: str) -> None:
        super().__init__()
        self._name = name
        self._next_read = 0.0
        self._warned = False

    @property
    def cancelled(self) -> bool:
        if self._cancelled:
            return True
        now = time.monotonic()
        if now < self._next_read:
            return False
        self._next_read = now + POLL_INTERVAL
        flag = distributed.Event(self._name)
        client = flag.client
        if client is None or client.status in ("closing", "closed"):
            # The worker lost its cluster (it was shut down): nobody waits
            # for this result any more.
            self._cancelled = True
            return True
        try:
            flagged = flag.is_set()
        except Exception:
            # Out of reach for now: the job goes on, as it would without a
            # cancel, and the next read tries again.
            if not self._warned:
                self._warned = True
                logger.warning("could not read the cancel flag %r", self._name, exc_info=True)
            return False
        if flagged:
            self._cancelled = True
        return bool(flagged)

    def forget(self) -> None:
        """Remove the flag from the scheduler if this attempt saw it set."""
        if self._cancelled:
            try:
                distributed.Event(self._name).clear()
            except Exception:
                logger.debug("could not clear the cancel flag %r", self._name, exc_info=True)


class _Unreported:
    """The ticket of a Dask job's :func:`jobsched.current_job` handle. Its
    progress goes nowhere: nothing carries a message back from a running
    task (the result is the task's only reply), and the values are not
    worth a round trip to the Dask scheduler per report. A transaction of
    the job's cannot hold its completion either: the worker has no lease."""

    __slots__ = ("what",)

    def __init__(self, what: str) -> None:
        self.what = what

    def portable(self, handle: jobsched.CurrentJob) -> _Unreported:
        return self

    def complete_in(self, handle: jobsched.CurrentJob, conn: Any, result: Any) -> Any:
        raise jobsched.SchedulerError(
            f"{self.what} cannot complete_in(): it runs on a Dask worker, which holds no "
            "lease on the job's attempt; run the job on the thread or process executor "
            "to record its completion in your transaction"
        )


def as_attempt(job_id: str, attempt: int, what: str, func: Callable[[], Any]) -> Any:
    """``func()`` with :func:`jobsched.current_job` naming the attempt: its
    ``job_id`` and ``attempt`` are there, its ``progress()`` is taken and
    goes nowhere (see :class:`_Unreported`), never an error in the job."""
    handle = jobsched.CurrentJob(job_id, attempt, None, _Unreported(what))
    return handle.run(func)


def run_attempt(func: Callable[[], Any], cancel_flag: str) -> Any:
    """The Dask task of one attempt: ``func()`` with :func:`jobsched.cancel_requested`
    reading the attempt's flag ``cancel_flag``."""
    token = EventCancelToken(cancel_flag)
    try:
        return token.run(func)
    except StopIteration as exc:
        # A coroutine on the client side would turn it into a vaguer error.
        raise RuntimeError("run_sync() raised StopIteration") from exc
    except Exception:
        raise
    except BaseException as exc:
        raise EscapedBaseException(type(exc), exc.args) from None
    finally:
        token.forget()
