"""The ``thread`` executor: ``run_sync()`` in a worker thread, cancelled cooperatively."""

from __future__ import annotations

import asyncio
import logging
import math
import threading
from collections.abc import Awaitable, Callable
from contextvars import ContextVar, copy_context
from typing import Any

import anyio
import anyio.to_thread

import jobsched
from jobsched._engine import _resume

from ._pool import DaemonPool, Raised

__all__ = ["ThreadExecutor"]

logger = logging.getLogger("jobsched.thread")

_async_library: ContextVar[str | None] | None
try:
    from sniffio import current_async_library_cvar as _async_library
except ImportError:  # anyio does without sniffio, and so do we
    _async_library = None


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
    new ones. A thread still running its job the scheduler's cancel grace
    (one second) after the cancellation is logged as a warning on the
    ``jobsched.thread`` logger with the number of abandoned threads still
    running; a job that polled its token and stopped within the grace is
    not. :attr:`abandoned_threads` reads that number.

    On asyncio the calls go to a pool of daemon threads of this executor's
    own: anyio's ``to_thread`` costs the event loop about twice as much per
    call (two extra passes through the loop, a cancel scope, a limiter), and
    with short thread jobs the loop's time per call is what bounds throughput.
    The pool grows when no thread is idle (an abandoned thread keeps its
    thread, never a slot); :meth:`shutdown` lets its threads go. Its threads
    are not anyio worker threads: ``anyio.from_thread`` calls in a job need an
    explicit ``token``. On trio the calls go through ``anyio.to_thread`` with
    an unlimited limiter of our own: the default one has 40 tokens shared with
    everything else on the loop, and under trio an abandoned thread keeps its
    token until it returns.

    On both backends the threads are daemon threads, so an abandoned thread
    does not hold the process open: the interpreter exits without waiting for
    it, and its job stops wherever it is. Whatever a job raises, even
    ``SystemExit`` or ``KeyboardInterrupt``, :meth:`run` raises it to the
    caller as that type, and the thread goes on serving the next job.

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
        # The scheduler holds jobs beyond it off its workers: a job's timeout
        # never counts a wait for a free thread.
        self.capacity: int | None = max_threads
        # Limiters belong to an event loop: made on first use, dropped by
        # shutdown() so the executor can serve a later loop. The pool is
        # loop-agnostic but shut down likewise, and made again when needed.
        self._slots: anyio.CapacityLimiter | None = None
        self._unbounded: anyio.CapacityLimiter | None = None
        self._pool: DaemonPool | None = None
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
        slots = None
        if self._max_threads is not None:
            slots = self._slots
            if slots is None:
                slots = self._slots = anyio.CapacityLimiter(self._max_threads)
            # A free slot is taken without the pass through the loop that
            # `async with` costs; a waiter queued before us still goes first.
            try:
                slots.acquire_nowait()
            except anyio.WouldBlock:
                await slots.acquire()
        try:
            call = _Call(self, run_sync)
            self._running.add(call)
            try:
                result = await self._dispatch(call)
            except BaseException:
                if call.abandon():
                    # Warn only if the job is still running once the grace is
                    # over: one that polls its token usually stops well before.
                    timer = threading.Timer(
                        _resume.CANCEL_GRACE, self._outlived_grace, (call, job.job_id, job.name)
                    )
                    timer.daemon = True
                    call.timer = timer
                    timer.start()
                raise
            finally:
                self._running.discard(call)
        finally:
            if slots is not None:
                slots.release()
        if result.__class__ is not Raised:
            return result
        error = result.error
        try:
            if isinstance(error, StopIteration):
                # A coroutine may not raise StopIteration (PEP 479): say who did.
                raise RuntimeError("run_sync() raised StopIteration") from error
            raise error
        finally:
            del result, error  # no frame -> traceback -> frame cycle

    def _dispatch(self, call: _Call) -> Awaitable[Any]:
        """Hand ``call`` to a thread; the awaitable gives its result (a
        :class:`Raised` if it raised), and cancelling it returns at once
        whatever the thread is doing.

        A plain function, not a coroutine: no extra coroutine per call.
        """
        try:
            loop = asyncio.get_running_loop()
            on_asyncio = asyncio.current_task(loop) is not None
        except RuntimeError:
            on_asyncio = False
        if on_asyncio:
            pool = self._pool
            if pool is None:
                # No cap of its own: max_threads (or the scheduler's workers)
                # bounds the calls, and abandoned threads must not block new ones.
                pool = self._pool = DaemonPool()
            # A fresh copy of the caller's context per call, as to_thread
            # gives: what one job sets does not leak into the next.
            return pool.submit(loop, call, copy_context())
        unbounded = self._unbounded
        if unbounded is None:
            unbounded = self._unbounded = anyio.CapacityLimiter(math.inf)
        return anyio.to_thread.run_sync(call, abandon_on_cancel=True, limiter=unbounded)

    async def shutdown(self, *, cancel_running: bool = False) -> None:
        """Forget the limiters and the pool; with ``cancel_running``, set every
        running job's token.

        Never waits for threads: idle ones exit, busy ones exit when their job
        returns, and stragglers are logged. None of them holds the process
        open at exit.
        """
        if cancel_running:
            for call in list(self._running):
                call.token.cancel()
        self._slots = self._unbounded = None
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
        if self._abandoned:
            logger.warning(
                "thread executor shut down with %d abandoned thread(s) still running; "
                "they are daemon threads: the interpreter will not wait for them at exit",
                self._abandoned,
            )

    def _outlived_grace(self, call: _Call, job_id: str | None, name: str) -> None:
        """On a timer thread, the grace after ``call`` was abandoned: warn if its
        job still runs."""
        with self._lock:
            if call.state != _STARTED:
                return  # it stopped in time
            call.warned = True
            still = self._abandoned
        logger.warning(
            "job %s (%r) was cancelled or timed out while running in a thread and is "
            "still running %ss later; a thread cannot be killed, so it runs on until "
            "run_sync() returns (%d abandoned thread(s) still running). Poll "
            "jobsched.cancel_requested() in long loops to stop early.",
            job_id,
            name,
            _resume.CANCEL_GRACE,
            still,
        )

    def _thread_finished(self, call: _Call) -> None:
        """Called (under the lock) when an abandoned call's job returns."""
        self._abandoned -= 1
        if call.timer is not None:
            call.timer.cancel()
        if call.warned:
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

    __slots__ = ("abandoned", "executor", "func", "state", "timer", "token", "warned")

    def __init__(self, executor: ThreadExecutor, func: Callable[[], Any]) -> None:
        self.executor = executor
        self.func = func
        self.token = jobsched.CancelToken()
        self.state = _NEW
        self.abandoned = False
        self.timer: threading.Timer | None = None
        self.warned = False  # outlived the grace, and was logged

    def __call__(self) -> Any:
        """Runs in the worker thread, in a copy of the caller's context; what the
        job raises comes back as a :class:`Raised`."""
        lock = self.executor._lock
        with lock:
            if self.abandoned:
                # Cancelled before the thread picked it up: don't start it.
                return None
            self.state = _STARTED
        if _async_library is not None:
            # The copy says "asyncio" under anyio.run(); this thread runs no
            # event loop (what to_thread does too).
            _async_library.set(None)
        try:
            return self.token.run(self.func)
        except BaseException as exc:  # raised again by run(), in the caller's frame
            return Raised(exc)
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
