"""BackgroundScheduler: a JobScheduler on a thread of its own, for synchronous code.

The scheduler's event loop runs in a daemon thread. A call from another
thread runs on the loop (a synchronous method as one callback, through
:func:`anyio.from_thread.run_sync`; one that awaits as a task of an anyio
:class:`~anyio.from_thread.BlockingPortal`), and its return value, or the
very exception it raised, comes back to the caller. Calls made on the loop's
own thread (a listener, an async job) run directly where they can and are
refused where they would wait for the loop they block.

When the interpreter begins to exit with a scheduler still running, a hook
stops it as ``shutdown(cancel_running=True)`` would, before any executor's own
exit hook runs, so its worker processes end cleanly and nothing hangs.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from concurrent.futures import CancelledError, Future
from contextlib import contextmanager, suppress
from functools import partial
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import anyio.from_thread
from anyio.from_thread import BlockingPortal
from anyio.lowlevel import EventLoopToken, current_token

from ._dispatch import inside_workers_of
from ._exceptions import SchedulerError, SchedulerStoppedError, StoreUnavailableError
from ._jobs import Job
from ._log import logger
from ._scheduler import JobScheduler
from ._state import JobListener
from ._store import JobStore
from ._stores import open_store
from ._strategies import SchedulingStrategy

if TYPE_CHECKING:
    import random
    from datetime import tzinfo

    from ._cron import CronTrigger
    from ._executor import Executor
    from ._ratelimit import RateLimit

__all__ = ["BackgroundScheduler"]

T = TypeVar("T")

# The lifecycle of a BackgroundScheduler (its JobScheduler has its own).
_NEW, _STARTING, _RUNNING, _STOPPING, _STOPPED = "new", "starting", "running", "stopping", "stopped"

#: Seconds the exit hook waits for a scheduler to stop before the interpreter
#: goes on exiting without it (a job that ignores its cancellation must not
#: hold the process open).
EXIT_TIMEOUT = 10.0

_BACKENDS = ("asyncio", "trio")

# Schedulers whose thread runs, kept alive until it ends (as a running thread
# is), so the exit hook can reach each one.
_live: set[BackgroundScheduler] = set()
_live_lock = threading.Lock()
_exit_hook_registered = False


class BackgroundScheduler:
    """A :class:`JobScheduler` on its own thread and event loop, for synchronous code.

    It takes :class:`JobScheduler`'s arguments, plus the event loop to run:

    :param backend: ``"asyncio"`` (the default) or ``"trio"``.
    :param backend_options: passed to :func:`anyio.run`, e.g.
        ``{"use_uvloop": True}`` on asyncio.

    Use it as ``with BackgroundScheduler() as s:``, or call :meth:`start` and
    :meth:`shutdown`. Every method may be called from any thread; each waits
    for the scheduler's answer and raises what the :class:`JobScheduler`
    method raises, in the calling thread. With a durable store, a method that
    changes something (:meth:`submit`, :meth:`cancel`, the schedules) returns
    once the change is committed.

    If the interpreter exits while it runs, it is shut down as
    ``shutdown(cancel_running=True)`` would (for at most ``EXIT_TIMEOUT``
    seconds), as the main thread ends.
    """

    def __init__(
        self,
        strategy: SchedulingStrategy | None = None,
        *,
        num_workers: int = 4,
        executors: Mapping[str, Executor] | None = None,
        rng: random.Random | None = None,
        history_limit: int = 10_000,
        clock: Callable[[], float] | None = None,
        rate_limits: Mapping[str, RateLimit] | None = None,
        executor_limits: Mapping[str, int] | None = None,
        store: str | JobStore = "memory",
        backend: str = "asyncio",
        backend_options: Mapping[str, Any] | None = None,
    ) -> None:
        if backend not in _BACKENDS:
            raise ValueError(f"backend must be 'asyncio' or 'trio', got {backend!r}")
        if isinstance(store, str) and store != "memory":
            store = open_store(store)  # held here too: join() asks it (see _join)
        self._store = store if isinstance(store, JobStore) else None
        self._scheduler = JobScheduler(
            strategy,
            num_workers=num_workers,
            executors=executors,
            rng=rng,
            history_limit=history_limit,
            clock=clock,
            rate_limits=rate_limits,
            executor_limits=executor_limits,
            store=store,
        )
        self._durable = self._store is not None
        self._backend = backend
        self._backend_options = dict(backend_options or {})
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
        # What ended the loop's thread with an error, once; shutdown() raises it.
        self._error: BaseException | None = None
        self._error_reported = False

    # ── lifecycle ────────────────────────────────────────────────────────

    @property
    def scheduler(self) -> JobScheduler:
        """The :class:`JobScheduler` it runs.

        Use it only on the scheduler's own thread (from a listener or an
        async job), where its methods need no portal; from other threads,
        call this object's methods.
        """
        return self._scheduler

    @property
    def running(self) -> bool:
        """True from :meth:`start` until :meth:`shutdown` begins."""
        return self._state == _RUNNING

    def start(self) -> None:
        """Start the event loop's thread and the scheduler on it; returns once it runs.

        :raises SchedulerError: already started (a scheduler starts once).
        :raises StoreUnavailableError: the store can't be opened; the
            scheduler can then be started again.
        """
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
        _register(self)
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

    def shutdown(self, wait: bool = True, *, cancel_running: bool = False) -> None:
        """Stop the scheduler and its thread.

        The scheduler stops taking work; running attempts finish (or, with
        ``cancel_running``, are cancelled and end CANCELLED); queued jobs stay
        PENDING (with a durable store they run when a scheduler next runs on
        it); every executor it used is shut down.

        :param wait: wait until the scheduler and its thread have stopped;
            False returns at once and lets it stop in the background.
        :param cancel_running: cancel the running attempts instead of waiting
            for them. A later call with it set cancels those of a shutdown
            already under way.

        Calling it again is harmless. The context manager calls
        ``shutdown(cancel_running=<the body raised>)``.

        :raises SchedulerError: never started; or, with ``wait``, called from
            one of its own jobs (or on its thread), which the shutdown would
            wait for.
        :raises Exception: what stopping the scheduler raised (a store that
            failed to close), once.
        """
        self._check_process("shutdown()")
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
        if state == _RUNNING or (state == _STOPPING and cancel_running):
            self._request_stop(cancel_running)
        if wait:
            thread = self._thread
            assert thread is not None
            thread.join()
            if self._error is not None and not self._error_reported:
                self._error_reported = True
                raise self._error

    def __enter__(self) -> BackgroundScheduler:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        # As `async with JobScheduler()`: if the body failed, don't wait for
        # running jobs.
        self.shutdown(cancel_running=exc_type is not None)

    # ── jobs ─────────────────────────────────────────────────────────────

    def submit(self, job: Job, *, delay: float = 0.0, depends_on: Iterable[str] = ()) -> str:
        """Submit ``job``; returns its id once the scheduler has it.

        With a durable store it returns once the job is committed, so any
        reader of the store sees it. Arguments and errors are those of
        :meth:`JobScheduler.submit`.
        """
        return self._write(
            "submit()", partial(self._scheduler.submit, job, delay=delay, depends_on=depends_on)
        )

    def get(self, job_id: str) -> Job:
        """The job with this id, as this process knows it (also after :meth:`shutdown`).

        The object is the scheduler's own: read it, don't change it.

        :raises UnknownJobError: never submitted here, or evicted from history.
        """
        if self._stopped():
            return self._scheduler.get(job_id)
        return self._read("get()", partial(self._scheduler.get, job_id))

    def jobs(self) -> list[Job]:
        """Every job this process still knows (also after :meth:`shutdown`)."""
        if self._stopped():
            return self._scheduler.jobs()
        return self._read("jobs()", self._scheduler.jobs)

    def fetch(self, job_id: str) -> Job:
        """The job as the store has it, whichever process ran it (see :meth:`JobScheduler.fetch`).

        :raises UnknownJobError: the store does not hold it.
        """
        return self._await("fetch()", partial(self._scheduler.fetch, job_id))

    def cancel(self, job_id: str) -> bool:
        """Cancel a job; False if it is unknown or already finished.

        See :meth:`JobScheduler.cancel`.
        """
        return self._write("cancel()", partial(self._scheduler.cancel, job_id))

    def join(self, timeout: float | None = None) -> bool:
        """Wait until every submitted job is terminal.

        :param timeout: the most seconds to wait; None waits for as long as it
            takes. With a durable store it looks at the store at least once,
            so ``join(timeout=0)`` answers whether every job has ended.
        :returns: True once every job is terminal, False if ``timeout`` passed first.
        :raises SchedulerStoppedError: the scheduler was shut down with jobs
            still queued, which will then never finish here.
        :raises SchedulerError: called from inside one of its own jobs, which
            would wait for itself.
        """
        on_loop = threading.get_ident() == self._loop_thread  # refused below, as such
        if not on_loop and self._scheduler in inside_workers_of.get():
            raise SchedulerError(
                "join() was called from inside one of this scheduler's jobs: it waits for "
                "every job to end, this one's too, so it could never answer True. Wait for "
                "the jobs you need by their ids (get(job_id).status), or use depends_on"
            )
        if timeout is not None:
            try:
                if not timeout >= 0:  # NaN too
                    raise ValueError(f"timeout must be a number of seconds >= 0, got {timeout!r}")
            except TypeError:
                raise TypeError(
                    f"timeout must be a number of seconds or None, got {timeout!r}"
                ) from None
        return self._await("join()", partial(self._join, timeout))

    async def _join(self, seconds: float | None) -> bool:
        store = self._store
        if store is not None:
            # The first look at the store is not cut short by the timeout: it
            # takes a round trip, and join(timeout=0) must still be able to
            # answer True.
            await self._scheduler.flush()
            if not await store.unfinished():
                return True
        with anyio.move_on_after(math.inf if seconds is None else seconds):
            await self._scheduler.join()
            return True
        return False

    def add_listener(self, listener: JobListener) -> None:
        """Call ``listener(job, old_status, new_status)`` on every transition.

        It runs on the scheduler's thread, so it must be quick and must not
        block; one that raises is logged and ignored.
        """
        self._read("add_listener()", partial(self._scheduler.add_listener, listener))

    # ── schedules ────────────────────────────────────────────────────────

    def schedule_recurring(
        self,
        factory: Callable[[], Job],
        interval: float,
        *,
        start_in: float = 0.0,
        allow_overlap: bool = False,
        id: str | None = None,
    ) -> str:
        """Submit ``factory()`` every ``interval`` seconds; returns the schedule id.

        See :meth:`JobScheduler.schedule_recurring`. ``factory`` runs on the
        scheduler's thread.
        """
        return self._write(
            "schedule_recurring()",
            partial(
                self._scheduler.schedule_recurring,
                factory,
                interval,
                start_in=start_in,
                allow_overlap=allow_overlap,
                id=id,
            ),
        )

    def schedule_cron(
        self,
        factory: Callable[[], Job],
        cron: str | CronTrigger,
        *,
        timezone: str | tzinfo | None = None,
        allow_overlap: bool = False,
        id: str | None = None,
    ) -> str:
        """Submit ``factory()`` at a cron expression's fire times; returns the schedule id.

        See :meth:`JobScheduler.schedule_cron`. ``factory`` runs on the
        scheduler's thread.
        """
        return self._write(
            "schedule_cron()",
            partial(
                self._scheduler.schedule_cron,
                factory,
                cron,
                timezone=timezone,
                allow_overlap=allow_overlap,
                id=id,
            ),
        )

    def cancel_recurring(self, schedule_id: str) -> bool:
        """Stop a schedule (see :meth:`JobScheduler.cancel_recurring`)."""
        return self._write(
            "cancel_recurring()", partial(self._scheduler.cancel_recurring, schedule_id)
        )

    # ── calls into the loop ──────────────────────────────────────────────

    def _stopped(self) -> bool:
        """True once the scheduler has stopped: its state no longer changes, so any
        thread may read it."""
        return self._portal is None and self._state in (_STOPPING, _STOPPED)

    def _read(self, what: str, func: Callable[[], T]) -> T:
        """Run a synchronous scheduler method on the loop; directly if already there."""
        if threading.get_ident() == self._loop_thread:
            return func()
        return self._call_sync(what, func)

    def _write(self, what: str, func: Callable[[], T]) -> T:
        """Run a method that changes something; with a durable store, return once committed."""
        if threading.get_ident() == self._loop_thread:
            if self._durable:
                raise SchedulerError(
                    f"{what} on a durable store waits for the commit, which can't happen on the "
                    "scheduler's own thread (from a listener or an async job) while it waits: "
                    "call the JobScheduler's method there (BackgroundScheduler.scheduler), whose "
                    "change is written in the next group commit"
                )
            return func()
        if not self._durable:
            return self._call_sync(what, func)
        return self._call_async(what, partial(_then_flush, self._scheduler, func))

    def _await(self, what: str, func: Callable[[], Awaitable[T]]) -> T:
        """Run a coroutine method on the loop and wait for it."""
        if threading.get_ident() == self._loop_thread:
            raise SchedulerError(
                f"{what} waits for the scheduler's event loop, so it can't be called on that "
                "loop's own thread (from a listener or an async job): await the JobScheduler's "
                "method there (BackgroundScheduler.scheduler)"
            )
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
        state = self._state
        if state in (_NEW, _STARTING):
            return SchedulerError(
                f"{what} needs a started scheduler: call start() first, or use "
                "`with BackgroundScheduler(...) as s:`"
            )
        return self._stopped_error(what)

    def _stopped_error(self, what: str) -> SchedulerStoppedError:
        error = self._error
        if error is not None:
            # The scheduler's task group wraps it: name the error itself.
            while len(getattr(error, "exceptions", ())) == 1:
                error = error.exceptions[0]  # type: ignore[attr-defined,union-attr]
            return SchedulerStoppedError(
                f"{what}: the scheduler's thread ended on an error "
                f"({type(error).__name__}: {error}); create a new BackgroundScheduler"
            )
        return SchedulerStoppedError(
            f"{what}: the scheduler was shut down; create a new BackgroundScheduler"
        )

    def _check_process(self, what: str) -> None:
        if self._pid is not None and self._pid != os.getpid():
            raise SchedulerError(
                f"{what} in a forked child of the process that started this scheduler: its "
                "thread did not survive the fork. Start a scheduler in each worker process "
                "(e.g. in gunicorn's post_fork hook), not before the fork"
            )

    def _refuse_own_wait(self, what: str) -> None:
        if threading.get_ident() == self._loop_thread:
            raise SchedulerError(
                f"{what} with wait=True was called on the scheduler's own thread (from a "
                "listener or an async job), which it would wait for: use wait=False"
            )
        if self._scheduler in inside_workers_of.get():
            raise SchedulerError(
                f"{what} with wait=True was called from inside one of this scheduler's jobs, "
                "whose attempt must end before the shutdown can: use wait=False, or shut "
                "down from the code that owns the scheduler"
            )

    def _request_stop(self, cancel_running: bool) -> None:
        if threading.get_ident() == self._loop_thread:
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
            _unregister(self)

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
            await scheduler.stop(cancel_running=cancel.is_set())
            group.cancel_scope.cancel()

    def _stop_at_exit(self) -> None:
        """The exit hook's part: stop, cancelling what runs, for at most EXIT_TIMEOUT seconds."""
        thread = self._thread
        if self._pid != os.getpid() or thread is None:
            return  # not started (or not in this process)
        try:
            self.shutdown(wait=False, cancel_running=True)
        except Exception:
            logger.exception("jobsched's background scheduler failed to shut down at exit")
            return
        thread.join(EXIT_TIMEOUT)
        if thread.is_alive():
            logger.warning(
                "jobsched's background scheduler did not stop within %ss at exit (a job "
                "ignores its cancellation); the interpreter exits without waiting for it",
                EXIT_TIMEOUT,
            )


async def _then_flush(scheduler: JobScheduler, func: Callable[[], T]) -> T:
    """``func()``, then wait until what it changed is committed to the store."""
    result = func()
    await scheduler.flush()
    return result


def _register(scheduler: BackgroundScheduler) -> None:
    global _exit_hook_registered
    with _live_lock:
        _live.add(scheduler)
        if not _exit_hook_registered:
            # threading's own exit hook (what concurrent.futures uses), not
            # atexit: it runs as the main thread ends, before every atexit
            # handler. Executors clean up in atexit handlers (the process
            # executor's kills its workers), and those registered after this
            # one would run first, under a scheduler still running.
            register = getattr(threading, "_register_atexit", None)
            if register is None:  # not CPython
                import atexit

                register = atexit.register
            register(_at_exit)
            _exit_hook_registered = True


def _unregister(scheduler: BackgroundScheduler) -> None:
    with _live_lock:
        _live.discard(scheduler)


def _at_exit() -> None:
    with _live_lock:
        running = list(_live)
    for scheduler in running:
        scheduler._stop_at_exit()
