"""The ``thread`` executor: ``run_sync()`` in a worker thread, cancelled cooperatively."""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable
from typing import Any

import anyio
import anyio.to_thread

import jobsched

__all__ = ["ThreadExecutor"]

logger = logging.getLogger("jobsched.thread")


class ThreadExecutor(jobsched.Executor):
    """Runs ``job.run_sync()`` in a worker thread, one thread per running attempt.

    Python cannot kill a thread. When the awaiting task is cancelled (the job
    was cancelled or timed out) the executor sets the attempt's
    :class:`jobsched.CancelToken`, so :func:`jobsched.cancel_requested` turns
    True inside the job, and returns control to the scheduler at once: the
    thread is *abandoned*. A job that polls the token stops soon after; one
    that ignores it runs on to its end, and whatever it then returns or
    raises is dropped (the attempt keeps the status the scheduler gave it).

    An abandoned thread does not hold a slot: ``max_threads`` counts only
    attempts the scheduler still waits for, so a few stuck jobs cannot starve
    new ones. (That is why the limit is our own :class:`anyio.CapacityLimiter`
    around the call and not the one handed to ``to_thread``: under trio that
    one stays held until the thread really returns.) Each abandonment is
    logged as a warning on the ``jobsched.thread`` logger with the number of
    abandoned threads still running; :attr:`abandoned_threads` reads it.

    :param max_threads: the most attempts running at once in this executor;
        ``None`` leaves the limit to the scheduler's ``num_workers``.
    """

    name = "thread"

    def __init__(self, max_threads: int | None = None) -> None:
        if max_threads is not None and (
            not isinstance(max_threads, int) or isinstance(max_threads, bool) or max_threads < 1
        ):
            raise ValueError(
                f"max_threads must be an integer >= 1 or None (no limit of its own), "
                f"got {max_threads!r}"
            )
        self._max_threads = max_threads
        # Limiters belong to an event loop: made on first use, dropped by
        # shutdown() so the executor can serve a later loop.
        self._slots: anyio.CapacityLimiter | None = None
        self._unbounded: anyio.CapacityLimiter | None = None
        self._lock = threading.Lock()  # guards the _Call states and the count below
        self._abandoned = 0
        self._running: set[_Call] = set()

    @property
    def abandoned_threads(self) -> int:
        """Threads whose attempt was cancelled but whose job has not returned yet."""
        return self._abandoned

    async def run(self, job: jobsched.Job) -> Any:
        """Run ``job.run_sync()`` in a thread; on cancellation, abandon the thread."""
        try:
            run_sync = job.run_sync  # type: ignore[attr-defined]
        except AttributeError:
            raise TypeError(
                f"{type(job).__qualname__} has no `def run_sync(self)`; the thread executor "
                "runs BlockingJob subclasses and FunctionJobs of plain functions"
            ) from None
        if self._slots is None or self._unbounded is None:
            self._slots = anyio.CapacityLimiter(self._max_threads or math.inf)
            # The default thread limiter has 40 tokens, shared with everything
            # else on the loop, and under trio an abandoned thread keeps its
            # token: our own limiter above does the limiting.
            self._unbounded = anyio.CapacityLimiter(math.inf)
        unbounded = self._unbounded
        async with self._slots:
            call = _Call(self, run_sync)
            self._running.add(call)
            try:
                return await anyio.to_thread.run_sync(
                    call, abandon_on_cancel=True, limiter=unbounded
                )
            except BaseException:
                if call.abandon():
                    logger.warning(
                        "job %s (%r) was cancelled while running in a thread; a thread cannot "
                        "be killed, so it runs on until run_sync() returns (%d abandoned "
                        "thread(s) still running). Poll jobsched.cancel_requested() in long "
                        "loops to stop early.",
                        job.job_id,
                        job.name,
                        self._abandoned,
                    )
                raise
            finally:
                self._running.discard(call)

    async def shutdown(self, *, cancel_running: bool = False) -> None:
        """Forget the limiters; with ``cancel_running``, set every running job's token.

        Never waits for threads: stragglers are logged and left to finish.
        """
        if cancel_running:
            for call in list(self._running):
                call.token.cancel()
        self._slots = self._unbounded = None
        if self._abandoned:
            logger.warning(
                "thread executor shut down with %d abandoned thread(s) still running; "
                "the interpreter waits for them at exit",
                self._abandoned,
            )

    def _thread_finished(self, call: _Call) -> None:
        """Called (under the lock) when an abandoned call's job returns."""
        self._abandoned -= 1
        logger.info(
            "an abandoned thread job returned (%d abandoned thread(s) still running)",
            self._abandoned,
        )


_NEW, _STARTED, _DONE = range(3)


class _Call:
    """One attempt's trip to a thread; knows whether the thread was abandoned.

    The event loop (``abandon``) and the worker thread (``__call__``) race to
    update it, hence the executor's lock.
    """

    __slots__ = ("abandoned", "executor", "func", "state", "token")

    def __init__(self, executor: ThreadExecutor, func: Callable[[], Any]) -> None:
        self.executor = executor
        self.func = func
        self.token = jobsched.CancelToken()
        self.state = _NEW
        self.abandoned = False

    def __call__(self) -> Any:
        """Runs in the worker thread, in a copy of the caller's context."""
        lock = self.executor._lock
        with lock:
            if self.abandoned:
                # Cancelled before the thread picked it up: don't start it.
                return None
            self.state = _STARTED
        try:
            return self.token.run(self.func)
        finally:
            with lock:
                self.state = _DONE
                if self.abandoned:
                    self.executor._thread_finished(self)

    def abandon(self) -> bool:
        """Tell the job to stop; True if its thread is still running it."""
        self.token.cancel()
        with self.executor._lock:
            if self.abandoned:
                return False
            # Also stops a call the thread has not picked up yet from starting.
            self.abandoned = True
            if self.state != _STARTED:
                return False
            self.executor._abandoned += 1
            return True
