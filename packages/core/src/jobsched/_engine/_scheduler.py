"""JobScheduler: the lifecycle and the public face of the parts below it.

See ``_state.py`` for how the parts stack.
"""

from __future__ import annotations

import math
import time
from _thread import get_ident  # threading's, without importing threading
from collections import deque
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import TYPE_CHECKING

import anyio

from .._exceptions import (
    SchedulerError,
    SchedulerStoppedError,
    UnknownJobError,
)
from .._jobs._executor import Executor
from .._jobs._job import Job, id_number
from .._log import logger
from .._ordering._admission import (
    Admission,
    check_executor_limits,
    check_rate_limits,
    with_capacities,
)
from .._ordering._fairshare import FairShareStrategy
from .._ordering._queue import queue_for
from .._ordering._ratelimit import RateLimit
from .._ordering._strategies import PriorityStrategy, SchedulingStrategy
from .._time._recurring import Schedule
from ._attempts import Attempt, Deadlines
from ._dispatch import inside_workers_of
from ._results import Results
from ._state import NEW, STARTED, STOPPED, JobListener, SubmitHook

if TYPE_CHECKING:
    # Imported where they are used, not here: asyncio, anyio.abc,
    # anyio.lowlevel, anyio.from_thread, logging, traceback and the cron
    # module (datetime) would triple the cost of `import jobsched`.
    import asyncio
    import random

    from anyio.abc import TaskGroup
    from anyio.lowlevel import EventLoopToken

    # Only a store given by URL or object loads the store seam (_store_for).
    from ..store._base import JobStore


class JobScheduler(Results):
    """Runs jobs on a pool of worker tasks, in the order a strategy gives.

    :param strategy: orders runnable jobs; :class:`PriorityStrategy` by default.
    :param num_workers: the most attempts in flight at once. 0 (on a durable
        store only) makes a producer: it submits, enqueues, registers
        schedules, fetches, waits and cancels, and never claims or runs a job
        or fires a stored schedule; workers elsewhere do.
    :param executors: name -> :class:`Executor`, overriding or adding to the
        installed plugins. The scheduler shuts every executor it used down
        when it stops.
    :param rng: randomness for retry jitter (seed it for repeatable runs).
    :param history_limit: how many finished jobs :meth:`get` still knows.
    :param clock: seconds as a float; ``time.monotonic`` by default. Tests on
        virtual time pass ``anyio.current_time`` under a mock clock.
    :param rate_limits: rate key -> :class:`RateLimit`: limits the starts of
        jobs whose ``rate_key`` is that key. A job without a token waits in the
        delayed queue (on a durable store: in the store), not on a worker. On
        a durable store each key's budget is shared by every scheduler on it.
    :param executor_limits: executor name -> the most attempts on it at once
        (in this scheduler). A job held back waits off the workers; other
        jobs keep running.
    :param store: where jobs live: ``"memory"`` (this process only, the
        default), a store URL such as ``"sqlite:///jobs.db"``, or a
        :class:`JobStore` from :func:`open_store`.

    Use it as ``async with JobScheduler() as s:`` (asyncio or trio), or call
    :meth:`start` and :meth:`stop` by hand on asyncio.
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
    ) -> None:
        if not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError(
                f"num_workers must be an integer >= 1 (or 0 for a producer on a durable "
                f"store), got {num_workers!r}"
            )
        if num_workers == 0 and store == "memory":
            raise ValueError(
                "num_workers=0 makes a producer, which only submits to a durable store for "
                "workers elsewhere to run; on the memory store nothing would ever run its "
                "jobs: give it workers, or a store such as store='sqlite:///jobs.db'"
            )
        if not isinstance(history_limit, int) or history_limit < 0:
            raise ValueError(f"history_limit must be an integer >= 0, got {history_limit!r}")
        if strategy is not None and not isinstance(strategy, SchedulingStrategy):
            raise TypeError(f"strategy must be a jobsched.SchedulingStrategy, got {strategy!r}")
        for name, executor in (executors or {}).items():
            if not isinstance(executor, Executor):
                raise TypeError(
                    f"executors[{name!r}] must be a jobsched.Executor instance, got {executor!r}"
                )
        in_memory = store == "memory" or _is_memory(store)
        self._link = None
        if not in_memory:
            # Loaded here, not at import: the link brings the codec (hashlib,
            # hmac, pickle) and the members module (socket), which an
            # in-memory scheduler never needs (`import jobsched` stays cheap).
            from ._storelink import StoreLink

            self._link = StoreLink(_store_for(store), self, history_limit)
            self._check_stored_options(strategy)
            self._link.producer = num_workers == 0
        self._held = {}
        self._lost_ended = {}
        self._released = []
        self._claimed = deque()
        self._strategy = strategy if strategy is not None else PriorityStrategy()
        self._num_workers = num_workers
        self._executors: dict[str, Executor] = dict(executors or {})
        if rng is None:
            import random  # here: `import jobsched` skips random (and hashlib's sha512)

            rng = random.Random()
        self._rng = rng
        self._history_limit = history_limit
        self._clock = clock if clock is not None else time.monotonic

        self._queue = queue_for(self._strategy)
        # Limits live in the take-next step; without them workers pop the
        # queue directly and pay nothing for the feature.
        rates = check_rate_limits(rate_limits)
        gates = with_capacities(
            check_executor_limits(executor_limits, self._executors), self._executors
        )
        self._admission: Admission | None = None
        self._take_next: Callable[[], Job | None] = self._queue.pop_next
        self._executor_limits = gates
        if self._link is not None:
            # The store applies the limits in its claims (see Stored.claim_capacity).
            self._take_next = self._take_claimed
            self._link.rates = rates or None
            if isinstance(self._strategy, FairShareStrategy):
                self._link.tenants = dict(self._strategy.weights)
        elif rates or gates:
            self._admission = Admission(
                self._queue, self._strategy.key, self._push, self._clock, rates, gates
            )
            self._take_next = self._admission.take
        # Jobs are known by the number in their id ("job-<n>" outside): the
        # int is the job's own (see _jobs._numbers), a str would be one more
        # object per job. Public methods convert with id_number().
        self._jobs: dict[int, Job] = {}
        self._blocked: dict[int, set[int]] = {}  # job -> unmet dependencies
        self._dependents: dict[int, list[int]] = {}  # job -> jobs waiting on it
        self._attempts: dict[int, Attempt] = {}  # suspended attempts, by job
        self._early_cancels: set[int] = set()  # running, cancelled before suspending
        self._setting_up: set[int] = set()  # running, their executor's set-up not over
        self._finished: deque[int] = deque()  # terminal jobs, oldest first
        self._recurring: dict[str, Schedule] = {}
        self._listeners: list[JobListener] = []
        self._submit_hooks: list[SubmitHook] = []
        self._unfinished = 0
        self._in_flight = 0
        #: The most attempts that were ever in flight at once.
        self.peak_running: int = 0

        self._state = NEW
        self._stopping = False
        self._idle_workers: deque[anyio.Event] = deque()
        self._join_waiters: list[anyio.Event] = []
        self._outcome_waiters: dict[int, list[anyio.Event]] = {}
        self._ticker_wakeup: anyio.Event | None = None
        # Attempt timeouts, while the ticker runs to watch them (see Deadlines),
        # and when the sleeping ticker wakes next (math.inf: when woken).
        self._deadlines = Deadlines(self._abandon)
        self._watching = False
        self._ticker_sleeps_until = math.inf
        self._live_tasks = 0
        self._workers_group: TaskGroup | None = None  # where a replacement worker starts
        self._done: anyio.Event | None = None
        self._task_group: TaskGroup | None = None
        self._standalone: asyncio.Task[None] | None = None
        self._loop_token: EventLoopToken | None = None
        self._loop_thread: int | None = None

    def add_listener(self, listener: JobListener) -> None:
        """Call ``listener(job, old_status, new_status)`` on every transition.

        A listener that raises is logged and ignored.
        """
        if not callable(listener):
            raise TypeError(f"listener must be callable, got {listener!r}")
        self._listeners.append(listener)

    def remove_listener(self, listener: JobListener) -> None:
        """Stop calling ``listener``; nothing happens if it was never added."""
        if listener in self._listeners:
            self._listeners.remove(listener)

    def add_submit_hook(self, hook: SubmitHook) -> None:
        """Call ``hook(job)`` in :meth:`submit`, after its checks and before the job is
        queued or written to a durable store.

        This is where an integration attaches what the submitting code knows to
        the job, in ``job.headers`` (jobsched-otel puts the trace context there).
        It runs in the submitting context (for :meth:`submit_threadsafe`, a copy
        of the calling thread's); a hook that raises is logged and ignored.
        """
        if not callable(hook):
            raise TypeError(f"submit hook must be callable, got {hook!r}")
        self._submit_hooks.append(hook)

    def remove_submit_hook(self, hook: SubmitHook) -> None:
        """Stop calling ``hook``; nothing happens if it was never added."""
        if hook in self._submit_hooks:
            self._submit_hooks.remove(hook)

    def get(self, job_id: str) -> Job:
        """The job with this id.

        :raises UnknownJobError: never submitted, or evicted from history.
        """
        try:
            return self._jobs[id_number(job_id)]
        except KeyError:
            raise UnknownJobError(
                f"no job {job_id!r}: it was never submitted here, or it finished long "
                f"enough ago to be evicted (history_limit={self._history_limit})"
            ) from None

    def jobs(self) -> list[Job]:
        """Every job still known: unfinished ones and the recent finished ones."""
        return list(self._jobs.values())

    async def join(self) -> None:
        """Wait until every submitted job is terminal.

        :raises SchedulerError: the scheduler was never started, so nothing
            would run the jobs.
        :raises SchedulerStoppedError: the scheduler stopped with jobs still
            queued, which will then never finish.
        """
        if self._state == NEW:
            raise SchedulerError(
                "join() waits for the workers to run the jobs, but this scheduler was never "
                "started: use `async with JobScheduler(...) as s:` or `await s.start()` first"
            )
        if self._link is not None:
            await self._join_stored()
            return
        while self._unfinished:
            if self._state == STOPPED:
                raise SchedulerStoppedError(
                    f"{self._unfinished} job(s) will never finish: the scheduler stopped "
                    "with them still queued"
                )
            event = anyio.Event()
            self._join_waiters.append(event)
            await event.wait()

    async def start(self) -> None:
        """Start the workers in a background task (asyncio only).

        Under trio, use ``async with JobScheduler() as s:`` instead.

        :raises SchedulerError: already started.
        """
        self._begin_start()
        import asyncio

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._state = NEW
            raise SchedulerError(
                "start() by hand runs on asyncio only; under trio use "
                "`async with JobScheduler(...) as s:`"
            ) from None
        try:
            await self._open_store()
        except BaseException:
            self._state = NEW
            raise
        started = anyio.Event()
        self._standalone = loop.create_task(self._serve_standalone(started))
        self._standalone.add_done_callback(_log_crash)
        await started.wait()

    async def stop(self, *, cancel_running: bool = False, grace: float | None = None) -> None:
        """Stop: reject new work, let running attempts finish, stop workers.

        Queued jobs stay PENDING. Every executor the scheduler used is shut
        down. Calling it again waits for the first call to finish.

        On a durable store stopping never cancels a job: running attempts
        get ``grace`` seconds (30 by default) to finish, and every job still
        running then goes back to the store, PENDING again with that attempt
        not counted, to run on another member or after a restart.
        ``cancel_running=True`` means a grace of 0. Only :meth:`cancel`
        makes a durable job CANCELLED.

        On the memory store running attempts are waited for (``grace=None``,
        the default there) or, past an explicit ``grace`` or with
        ``cancel_running``, cancelled: a job in memory can't outlive its
        scheduler.

        :raises SchedulerError: called from inside one of this scheduler's
            running jobs, whose attempt would have to end before stop() can.
        """
        if self in inside_workers_of.get():
            raise SchedulerError(
                "stop() was called from inside a job of this scheduler: stop() waits for "
                "every running attempt to end, this job's own too, so it would never "
                "return. Stop from the code that owns the scheduler (a job can set an "
                "anyio.Event that code awaits before calling stop())"
            )
        check_grace(grace)
        if cancel_running:
            grace = 0.0
        elif grace is None and self._link is not None:
            grace = DEFAULT_GRACE
        if self._state == NEW:
            self._stopping = True
            self._state = STOPPED
            await self._shutdown_executors(cancel_running)
            if self._link is not None:
                # Never started: what was submitted is written, then the store closed.
                try:
                    await self._link.flush()
                finally:
                    await self._link.store.close()
            return
        if self._stopping:
            # Another stop() is under way: cut its grace short if asked, and
            # wait until it has finished.
            if cancel_running:
                self._hand_back_running()
            while self._state != STOPPED:
                event = anyio.Event()
                self._join_waiters.append(event)
                await event.wait()
            return
        self._stopping = True
        self._wake_all()
        assert self._done is not None
        cut = 0
        try:
            if grace is not None:
                with anyio.move_on_after(grace):
                    await self._done.wait()
                if not self._done.is_set():
                    # Durable: back to the store; in memory: CANCELLED.
                    cut = self._hand_back_running()
                    if cut:
                        logger.info(
                            "stopping: %d running job(s) %s after a grace of %ss",
                            cut,
                            "handed back to the store" if self._link else "cancelled",
                            f"{grace:g}",
                        )
            await self._done.wait()
            await self._close_store()
            if self._standalone is not None:
                task, self._standalone = self._standalone, None
                await task
        finally:
            try:
                await self._shutdown_executors(cancel_running or cut > 0)
            finally:
                self._state = STOPPED
                self._wake_joiners()

    async def __aenter__(self) -> JobScheduler:
        self._begin_start()
        try:
            await self._open_store()
        except BaseException:
            self._state = NEW
            raise
        task_group = anyio.create_task_group()
        await task_group.__aenter__()
        self._task_group = task_group
        self._spawn(task_group)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        task_group, self._task_group = self._task_group, None
        assert task_group is not None
        try:
            # If the body failed or was cancelled, don't wait for running
            # jobs: cut them short at once (on a durable store handed back,
            # not cancelled), and shield the clean-up from that cancellation.
            with anyio.CancelScope(shield=exc_type is not None):
                await self.stop(cancel_running=exc_type is not None)
        except BaseException as stop_error:
            await task_group.__aexit__(type(stop_error), stop_error, stop_error.__traceback__)
            raise
        # The workers have exited, so the group has nothing left to wait for.
        # Exiting it clean lets the body's own exception propagate as itself
        # instead of wrapped in an ExceptionGroup.
        await task_group.__aexit__(None, None, None)
        return None

    def _begin_start(self) -> None:
        if self._state != NEW:
            raise SchedulerError("the scheduler was already started; a scheduler starts once")
        self._state = STARTED
        self._done = anyio.Event()
        from anyio.lowlevel import current_token

        self._loop_token = current_token()
        self._loop_thread = get_ident()

    def _spawn(self, task_group: TaskGroup) -> None:
        self._workers_group = task_group
        # The ticker watches attempt deadlines from now on, also those of
        # attempts that start before it first runs (trio starts tasks in no
        # fixed order); it reads the heap when it starts.
        self._watching = True
        self._live_tasks = self._num_workers + 1
        self._start_workers(task_group, self._num_workers, "jobsched-worker")
        task_group.start_soon(self._ticker, name="jobsched-ticker")
        link = self._link
        if link is not None:
            task_group.start_soon(link.committer, name="jobsched-store-committer")
            task_group.start_soon(link.claimer, self, name="jobsched-store-claimer")
            task_group.start_soon(link.heartbeat, self, name="jobsched-store-heartbeat")

    async def _serve_standalone(self, started: anyio.Event) -> None:
        async with anyio.create_task_group() as task_group:
            self._spawn(task_group)
            started.set()

    async def _shutdown_executors(self, cancel_running: bool) -> None:
        for name, executor in list(self._executors.items()):
            try:
                await executor.shutdown(cancel_running=cancel_running)
            except Exception:
                logger.exception("executor %r failed to shut down", name)


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


def _is_memory(store: object) -> bool:
    """Whether ``store`` is ``open_store("memory")``'s: the scheduler keeps its jobs."""
    from ..store._registry import MemoryStore

    return isinstance(store, MemoryStore)


def _store_for(store: object) -> JobStore:
    from ..store._base import JobStore
    from ..store._registry import open_store

    if isinstance(store, JobStore):
        return store
    if isinstance(store, str):
        return open_store(store)
    raise TypeError(f"store must be 'memory', a store URL or a jobsched.JobStore, got {store!r}")


def _log_crash(task: asyncio.Task[None]) -> None:
    # Without `async with` nobody awaits the workers until stop(): say at once.
    if not task.cancelled() and task.exception() is not None:
        logger.error(
            "jobsched's workers stopped on an internal error; stop() raises it",
            exc_info=task.exception(),
        )
