"""The scheduler's lifecycle: start, stop, and ``async with``.

Starting spawns the workers, the ticker and (on a durable store) the link's
tasks; stopping rejects new work, gives running attempts their grace, hands
back or cancels what is left, closes the store and shuts the executors down.
``JobScheduler``'s ``start``, ``stop``, ``__aenter__`` and ``__aexit__`` call
the :class:`Lifecycle` it holds.
"""

from __future__ import annotations

from _thread import get_ident  # threading's, without importing threading
from collections import deque
from collections.abc import Callable, Coroutine
from types import TracebackType
from typing import TYPE_CHECKING, Any

import anyio

from .._exceptions import SchedulerError, StoreUnavailableError
from .._log import logger
from ._dispatch import inside_workers_of
from ._state import NEW, STARTED, STOPPED

if TYPE_CHECKING:
    # Imported where they are used, not here: asyncio, anyio.abc and
    # anyio.lowlevel would add to the cost of `import jobsched`.
    import asyncio

    from anyio.abc import TaskGroup

    from ._backing import Backing
    from ._cancel import Canceller
    from ._dispatch import Dispatcher
    from ._executors import ExecutorSet
    from ._state import JobTable, RunState
    from ._timers import Ticker


class LiveTasks:
    """The scheduler's tasks still running (workers, the ticker, completions
    being settled): ``done`` is set when the last one exits, which stop()
    waits for.

    Made before the parts that count on it (the ticker, the dispatcher),
    which the :class:`Lifecycle` that holds it needs in turn.
    """

    __slots__ = ("count", "done")

    def __init__(self) -> None:
        self.count = 0
        #: Made when the scheduler starts (an anyio.Event belongs to a loop).
        self.done: anyio.Event | None = None

    def started(self) -> None:
        self.count += 1

    def exited(self) -> None:
        self.count -= 1
        if self.count == 0:
            assert self.done is not None
            self.done.set()


class Lifecycle:
    """``start``, ``stop`` and ``async with``: the scheduler's tasks, begun and ended.

    Not slotted: tests replace :meth:`wake_all` and :attr:`ticker` on the
    instance (through the scheduler's ``_wake_all`` and ``_ticker`` seams).
    """

    def __init__(
        self,
        tasks: LiveTasks,
        run: RunState,
        table: JobTable,
        num_workers: int,
        idle: deque[anyio.Event],
        ticker: Ticker,
        dispatcher: Dispatcher,
        cancelling: Canceller,
        executors: ExecutorSet,
        backing: Backing,
    ) -> None:
        # idle: the idle workers' events, which wake_all sets.
        self.tasks = tasks
        self._run = run
        self._table = table
        self._num_workers = num_workers
        self._idle = idle
        self._timers = ticker
        self._dispatcher = dispatcher
        self._cancelling = cancelling
        self._executors = executors
        self._backing = backing
        #: The ticker's task, spawned with the workers.
        self.ticker: Callable[[], Coroutine[Any, Any, None]] = ticker.run
        #: The ``async with`` task group, while inside it.
        self.task_group: TaskGroup | None = None
        #: start()'s background task, until stop() awaits it.
        self.standalone: asyncio.Task[None] | None = None

    def wake_all(self) -> None:
        """Wake every idle worker and the ticker: stopping has begun."""
        while self._idle:
            self._idle.popleft().set()
        self._timers.wake()

    async def start(self) -> None:
        """``JobScheduler.start``."""
        self._begin_start()
        import asyncio

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._run.phase = NEW
            raise SchedulerError(
                "start() by hand runs on asyncio only; under trio use "
                "`async with JobScheduler(...) as s:`"
            ) from None
        try:
            await self._backing.open()
        except BaseException:
            self._run.phase = NEW
            raise
        started = anyio.Event()
        self.standalone = loop.create_task(self._serve_standalone(started))
        self.standalone.add_done_callback(_log_crash)
        await started.wait()

    async def stop(self, *, cancel_running: bool = False, grace: float | None = None) -> None:
        """``JobScheduler.stop``."""
        if self._dispatcher in inside_workers_of.get():
            raise SchedulerError(
                "stop() was called from inside a job of this scheduler: stop() waits for "
                "every running attempt to end, this job's own too, so it would never "
                "return. Stop from the code that owns the scheduler (a job can set an "
                "anyio.Event that code awaits before calling stop())"
            )
        check_grace(grace)
        if cancel_running:
            grace = 0.0
        elif grace is None:
            grace = self._backing.default_grace
        if self._run.phase == NEW:
            self._run.stopping = True
            self._run.phase = STOPPED
            await self._executors.shutdown(cancel_running)
            await self._backing.close_unstarted()
            return
        if self._run.stopping:
            # Another stop() is under way: cut its grace short if asked, and
            # wait until it has finished.
            if cancel_running:
                self._cancelling.cut_short_running()
            while self._run.phase != STOPPED:
                event = anyio.Event()
                self._table.join_waiters.append(event)
                await event.wait()
            return
        self._run.stopping = True
        self.wake_all()
        done = self.tasks.done
        assert done is not None
        cut = 0
        try:
            if grace is not None:
                with anyio.move_on_after(grace):
                    await done.wait()
                if not done.is_set():
                    # Durable: back to the store; in memory: CANCELLED.
                    cut = self._cancelling.cut_short_running()
                    if cut:
                        logger.info(
                            "stopping: %d running job(s) %s after a grace of %ss",
                            cut,
                            self._backing.cut_wording,
                            f"{grace:g}",
                        )
            await done.wait()
            await self._backing.close()
            if self.standalone is not None:
                task, self.standalone = self.standalone, None
                await task
        finally:
            try:
                await self._executors.shutdown(cancel_running or cut > 0)
            finally:
                self._run.phase = STOPPED
                self._table.wake_joiners()

    async def enter(self) -> None:
        """``async with``'s entry: open the backing, start the tasks in a group."""
        self._begin_start()
        try:
            await self._backing.open()
        except BaseException:
            self._run.phase = NEW
            raise
        task_group = anyio.create_task_group()
        await task_group.__aenter__()
        self.task_group = task_group
        self._spawn(task_group)

    async def exit(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        """``async with``'s exit: stop, then leave the group (see JobScheduler.__aexit__)."""
        task_group, self.task_group = self.task_group, None
        assert task_group is not None
        try:
            # If the body failed or was cancelled, don't wait for running
            # jobs: cut them short at once (on a durable store handed back,
            # not cancelled), and shield the clean-up from that cancellation.
            with anyio.CancelScope(shield=exc_type is not None):
                await self.stop(cancel_running=exc_type is not None)
        except BaseException as stop_error:
            # The group cancels what stop() left running, and wraps
            # stop_error with whatever else a task raised.
            try:
                await task_group.__aexit__(type(stop_error), stop_error, stop_error.__traceback__)
            except BaseException as group:
                error = alone(group)
            else:
                error = stop_error
            if exc is not None and isinstance(exc, Exception) and error is stop_error:
                # The body's error is what the caller catches (an enqueue()
                # that gave up on the store, say); the stop that failed in its
                # wake (that store still away) is logged, not put in its place.
                logger.error(
                    "stop() failed while leaving `async with` on %s: %s",
                    type(exc).__name__,
                    stop_error,
                    exc_info=not isinstance(stop_error, StoreUnavailableError),
                )
                return None
            raise error
        # The workers have exited, so the group has nothing left to wait for.
        # Exiting it clean lets the body's own exception propagate as itself
        # instead of wrapped in an ExceptionGroup; an error of a task's is
        # raised alone when it is the only one.
        failed: BaseException | None = None
        try:
            await task_group.__aexit__(None, None, None)
        except BaseException as group:
            failed = alone(group)
        if failed is not None:
            # Outside the except clause: chained to the group it was in, the
            # traceback would show the group after all.
            raise failed
        return None

    def _begin_start(self) -> None:
        if self._run.phase != NEW:
            raise SchedulerError("the scheduler was already started; a scheduler starts once")
        self._run.phase = STARTED
        self.tasks.done = anyio.Event()
        from anyio.lowlevel import current_token

        self._run.loop_token = current_token()
        self._run.loop_thread = get_ident()

    def _spawn(self, task_group: TaskGroup) -> None:
        # The ticker watches attempt deadlines from now on, also those of
        # attempts that start before it first runs (trio starts tasks in no
        # fixed order); it reads the heap when it starts.
        self._timers.watching = True
        self.tasks.count = self._num_workers + 1
        self._dispatcher.start_workers(task_group, self._num_workers)
        task_group.start_soon(self.ticker, name="jobsched-ticker")
        self._backing.spawn(task_group)

    async def _serve_standalone(self, started: anyio.Event) -> None:
        async with anyio.create_task_group() as task_group:
            self._spawn(task_group)
            started.set()


#: Seconds stop() gives running attempts on a durable store before it hands
#: them back (``stop(grace=...)``, ``jobsched worker --grace``).
DEFAULT_GRACE = 30.0


def check_grace(grace: object) -> None:
    """stop()'s and shutdown()'s check of ``grace``."""
    if grace is None:
        return
    try:
        if not grace >= 0:  # type: ignore[operator]  # NaN too; math.inf waits as long as it takes
            raise ValueError(f"grace must be a number of seconds >= 0, got {grace!r}")
    except TypeError:
        raise TypeError(f"grace must be a number of seconds or None, got {grace!r}") from None


def alone(error: BaseException) -> BaseException:
    """``error`` itself, or the one error inside an exception group of one.

    A task group wraps even a single error; the caller of ``async with``
    catches the error it knows (``except StoreUnavailableError``), so only
    genuine multi-errors stay grouped.
    """
    while True:
        inner = getattr(error, "exceptions", None)  # BaseExceptionGroup, also the 3.10 backport
        if not inner or len(inner) != 1:
            return error
        error = inner[0]


def _log_crash(task: asyncio.Task[None]) -> None:
    # Without `async with` nobody awaits the workers until stop(): say at once.
    if not task.cancelled() and task.exception() is not None:
        logger.error(
            "jobsched's workers stopped on an internal error; stop() raises it",
            exc_info=task.exception(),
        )
