"""A BackgroundScheduler's event-loop thread: its start and stop, and calls into it.

The scheduler's event loop runs in a daemon thread. A call from another
thread runs on the loop (a synchronous method as one callback, through
:func:`anyio.from_thread.run_sync`; one that awaits as a task of an anyio
:class:`~anyio.from_thread.BlockingPortal`), and its return value, or the
very exception it raised, comes back to the caller. Calls made on the loop's
own thread (a listener, an async job) run directly where they can and are
refused where they would wait for the loop they block.

While its thread runs, the loop is registered with the interpreter-exit hook
(``_exithook.py``), which stops it as ``shutdown(cancel_running=True)`` would.

:class:`LoopThread` serves :class:`~jobsched.BackgroundScheduler` alone, so
its error messages (``_misuse``) name that class and its public methods.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Awaitable, Callable, Iterator, Mapping
from concurrent.futures import CancelledError, Future
from contextlib import contextmanager, suppress
from functools import partial
from typing import Any, TypeVar

import anyio
import anyio.from_thread
from anyio.from_thread import BlockingPortal
from anyio.lowlevel import EventLoopToken, current_token

from .._engine._dispatch import inside_workers_of
from .._engine._lifecycle import DEFAULT_GRACE, check_grace
from .._engine._scheduler import JobScheduler
from .._exceptions import SchedulerError, SchedulerStoppedError, StoreUnavailableError
from .._log import logger
from . import _misuse as misuse
from ._exithook import register, unregister

T = TypeVar("T")

# The lifecycle of a BackgroundScheduler (its JobScheduler has its own).
_NEW, _STARTING, _RUNNING, _STOPPING, _STOPPED = "new", "starting", "running", "stopping", "stopped"

#: Seconds the exit hook waits for a scheduler to stop before the interpreter
#: goes on exiting without it (a job that ignores its cancellation must not
#: hold the process open).
EXIT_TIMEOUT = 10.0


class LoopThread:
    """Runs ``scheduler`` on an event loop in a daemon thread; runs calls on that loop.

    :param durable: the scheduler has a durable store, so :meth:`write`
        returns once the change is committed.
    :param backend: ``"asyncio"`` or ``"trio"``.
    :param backend_options: passed to :func:`anyio.run`.
    """

    def __init__(
        self,
        scheduler: JobScheduler,
        *,
        durable: bool,
        backend: str,
        backend_options: Mapping[str, Any],
    ) -> None:
        self._scheduler = scheduler
        self._durable = durable
        self._backend = backend
        self._backend_options = dict(backend_options)
        self._lock = threading.Lock()  # over the lifecycle below
        self._state = _NEW
        # Set while calls are accepted (see _admitted): the portal, and the loop's token.
        self._portal: BlockingPortal | None = None
        self._token: EventLoopToken | None = None
        self._calls = 0  # calls on their way to the loop
        self._thread: threading.Thread | None = None
        self._loop_thread: int | None = None
        self._pid: int | None = None
        # Set on the loop: stop the scheduler, and (maybe later) cancel what runs.
        self._stop_requested: anyio.Event | None = None
        self._cancel_requested: anyio.Event | None = None
        #: shutdown()'s grace, for the scheduler's stop().
        self._grace: float | None = None
        # What ended the loop's thread with an error, once; shutdown() raises it.
        self._error: BaseException | None = None
        self._error_reported = False

    # ── lifecycle ────────────────────────────────────────────────────────

    @property
    def running(self) -> bool:
        """True from :meth:`start` until :meth:`shutdown` begins."""
        return self._state == _RUNNING

    def start(self) -> None:
        """Start the thread and the scheduler on it; returns once it runs."""
        with self._lock:
            if self._state != _NEW:
                raise SchedulerError(
                    "this BackgroundScheduler was already started; a scheduler starts "
                    "once: create a new one"
                )
            self._state = _STARTING
            ready: Future[None] = Future()
            thread = threading.Thread(
                target=self._run, args=(ready,), name="jobsched-background", daemon=True
            )
            self._thread = thread
            self._pid = os.getpid()
        register(self)
        thread.start()
        try:
            ready.result()
        except BaseException:
            with self._lock:
                if ready.cancel():
                    # Interrupted while it started (Ctrl-C): it stops as soon
                    # as it has started (see _serve).
                    self._state = _STOPPING
                    raise
                if ready.exception() is None:  # interrupted just after it started
                    if self._state == _STARTING:
                        self._state = _RUNNING
                    raise
            # It failed to start (the store could not be opened): its thread
            # is ending, and it may be started again.
            thread.join()
            with self._lock:
                self._state = _NEW
                self._thread = None
            raise
        with self._lock:
            if self._state == _STARTING:  # not if its thread already ended
                self._state = _RUNNING

    def shutdown(self, wait: bool, cancel_running: bool, grace: float | None = None) -> None:
        """Stop the scheduler and its thread (see ``BackgroundScheduler.shutdown``)."""
        self._check_process("shutdown()")
        check_grace(grace)
        if self._state in (_NEW, _STARTING):
            raise SchedulerError(
                "shutdown() on a BackgroundScheduler that was never started: there is "
                "nothing to stop"
            )
        if wait:
            self._refuse_own_wait("shutdown()")
        with self._lock:
            state = self._state
            if state == _RUNNING:
                self._state = _STOPPING
        if state == _RUNNING:
            self._grace = grace
        if state == _RUNNING or (state == _STOPPING and cancel_running):
            self._request_stop(cancel_running)
        if wait:
            thread = self._thread
            assert thread is not None
            thread.join()
            if self._error is not None and not self._error_reported:
                self._error_reported = True
                raise self._error

    # ── calls into the loop ──────────────────────────────────────────────

    def stopped(self) -> bool:
        """True once the scheduler has stopped: its state no longer changes, so any
        thread may read it."""
        return self._portal is None and self._state in (_STOPPING, _STOPPED)

    def on_loop(self) -> bool:
        """True on the loop's own thread (in a listener or an async job)."""
        return threading.get_ident() == self._loop_thread

    def read(self, what: str, func: Callable[[], T]) -> T:
        """Run a synchronous scheduler method on the loop; directly if already there."""
        if self.on_loop():
            return func()
        return self._call_sync(what, func)

    def write(self, what: str, func: Callable[[], T]) -> T:
        """Run a method that changes something; with a durable store, return once committed."""
        if self.on_loop():
            if self._durable:
                raise misuse.commit_on_loop(what)
            return func()
        if not self._durable:
            return self._call_sync(what, func)
        return self._call_async(what, partial(_then_flush, self._scheduler, func))

    def wait_for(self, what: str, func: Callable[[], Awaitable[T]]) -> T:
        """Run a coroutine method on the loop and wait for it."""
        if self.on_loop():
            raise misuse.wait_on_loop(what)
        return self._call_async(what, func)

    def _call_sync(self, what: str, func: Callable[[], T]) -> T:
        """Run a synchronous ``func`` on the loop from another thread: one callback, no task."""
        with self._admitted(what):
            return anyio.from_thread.run_sync(func, token=self._token)

    def _call_async(self, what: str, func: Callable[[], Awaitable[T]]) -> T:
        """Run a coroutine function on the loop from another thread, as a portal task.

        The shutdown cancels it if it still waits (a join()).
        """
        with self._admitted(what) as portal:
            try:
                future = portal.start_task_soon(func)
            except RuntimeError:
                raise self._stopped_error(what) from None  # the portal stopped meanwhile
            try:
                return future.result()
            except CancelledError:
                raise self._stopped_error(what) from None
            except StoreUnavailableError:
                if self._state in (_STOPPING, _STOPPED):
                    # The shutdown closed the store under this call (a join()).
                    raise self._stopped_error(what) from None
                raise
            except BaseException:
                # Interrupted while waiting (Ctrl-C during join()): the call must
                # not go on without its caller. A no-op if it raised by itself.
                future.cancel()
                raise

    @contextmanager
    def _admitted(self, what: str) -> Iterator[BlockingPortal]:
        """A call from another thread, admitted while the scheduler runs."""
        self._check_process(what)  # before the lock, which a fork may have left held
        with self._lock:
            portal = self._portal
            if portal is None:
                raise self._not_running_error(what)
            # Counted until it returns: the loop does not end while a call is
            # on its way to it (see _serve).
            self._calls += 1
        try:
            yield portal
        finally:
            with self._lock:
                self._calls -= 1

    def _not_running_error(self, what: str) -> SchedulerError:
        if self._state in (_NEW, _STARTING):
            return misuse.not_started(what)
        return self._stopped_error(what)

    def _stopped_error(self, what: str) -> SchedulerStoppedError:
        return misuse.stopped(what, self._error)

    def _check_process(self, what: str) -> None:
        if self._pid is not None and self._pid != os.getpid():
            raise misuse.forked(what)

    def _refuse_own_wait(self, what: str) -> None:
        if self.on_loop():
            raise misuse.own_wait_on_loop(what)
        if self._scheduler._dispatcher in inside_workers_of.get():
            raise misuse.own_wait_in_job(what)

    def _request_stop(self, cancel_running: bool) -> None:
        if self.on_loop():
            self._on_stop_request(cancel_running)
            return
        with suppress(SchedulerStoppedError):  # its thread ended: so has the scheduler
            self._call_sync("shutdown()", partial(self._on_stop_request, cancel_running))

    def _on_stop_request(self, cancel_running: bool) -> None:
        assert self._stop_requested is not None and self._cancel_requested is not None
        self._stop_requested.set()
        if cancel_running:
            self._cancel_requested.set()

    # ── the loop's thread ────────────────────────────────────────────────

    def _run(self, ready: Future[None]) -> None:
        try:
            anyio.run(
                self._serve, ready, backend=self._backend, backend_options=self._backend_options
            )
        except BaseException as exc:
            with self._lock:
                starting = not ready.done()
                if starting:
                    ready.set_exception(exc)  # start() raises it
            if not starting:
                self._error = exc
                logger.error("jobsched's background scheduler stopped on an error", exc_info=exc)
        finally:
            with self._lock:
                self._state = _STOPPED
                self._portal = None
                # A later thread may get this thread's ident.
                self._loop_thread = None
            unregister(self)

    async def _serve(self, ready: Future[None]) -> None:
        # The scheduler outside the portal: an error opening its store comes
        # out of start() as itself, not wrapped in the portal's task group.
        async with self._scheduler, BlockingPortal() as portal:
            try:
                self._stop_requested = anyio.Event()
                self._cancel_requested = anyio.Event()
                with self._lock:
                    if ready.cancelled():  # start() was interrupted
                        return
                    self._token = current_token()
                    self._portal = portal
                    self._loop_thread = threading.get_ident()
                    ready.set_result(None)
                await self._stop_requested.wait()
                await self._stop()
            finally:
                with self._lock:
                    self._portal = None  # no new calls
                # Calls still waiting (a join()) end now: their callers get
                # SchedulerStoppedError.
                await portal.stop(cancel_remaining=True)
                with anyio.CancelScope(shield=True):
                    # A call that got in before the gate closed may not have
                    # reached the loop yet. It must find the loop running: on
                    # asyncio, a callback sent just before the loop closes is
                    # never run, and its caller would wait for ever. It takes
                    # an iteration or two, so polling costs nothing.
                    while self._calls:  # noqa: ASYNC110
                        await anyio.sleep(0.001)

    async def _stop(self) -> None:
        scheduler = self._scheduler
        cancel = self._cancel_requested
        assert cancel is not None

        async def cancel_when_asked() -> None:
            await cancel.wait()
            await scheduler.stop(cancel_running=True)

        async with anyio.create_task_group() as group:
            group.start_soon(cancel_when_asked)
            await scheduler.stop(cancel_running=cancel.is_set(), grace=self._grace)
            group.cancel_scope.cancel()

    def stop_at_exit(self) -> None:
        """The exit hook's part: stop as ``shutdown()`` does, and wait a bounded time.

        On a durable store running jobs get the default grace and are then
        handed back (never cancelled: they run again elsewhere); in memory
        they are cancelled at once, as nothing could run them after the exit.
        """
        thread = self._thread
        if self._pid != os.getpid() or thread is None:
            return  # not started (or not in this process)
        durable = self._scheduler._link is not None
        try:
            self.shutdown(wait=False, cancel_running=not durable)
        except Exception:
            logger.exception("jobsched's background scheduler failed to shut down at exit")
            return
        limit = EXIT_TIMEOUT + (DEFAULT_GRACE if durable else 0.0)
        thread.join(limit)
        if thread.is_alive():
            logger.warning(
                "jobsched's background scheduler did not stop within %ss at exit (a job "
                "ignores its cancellation); the interpreter exits without waiting for it",
                limit,
            )


async def _then_flush(scheduler: JobScheduler, func: Callable[[], T]) -> T:
    """``func()``, then wait until what it changed is committed to the store."""
    result = func()
    await scheduler.flush()
    return result
