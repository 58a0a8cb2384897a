"""JobScheduler: its construction, and the public face of the parts below it.

The lifecycle (start, stop, ``async with``) is ``_lifecycle.py``; see
``_state.py`` for how the parts stack.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING

import anyio

from .._exceptions import SchedulerError
from .._jobs._executor import Executor
from .._jobs._job import Job
from .._ordering._admission import (
    Admission,
    check_executor_limits,
    check_queue_limits,
    check_queues,
    check_rate_limits,
)
from .._ordering._fairshare import FairShareStrategy
from .._ordering._queue import queue_for
from .._ordering._ratelimit import RateLimit
from .._ordering._strategies import PriorityStrategy, SchedulingStrategy
from ._attempts import abandon
from ._cancel import Canceller
from ._dispatch import Dispatcher
from ._executors import ExecutorSet
from ._lifecycle import Lifecycle
from ._memory import MemoryBacking
from ._seams import Seams
from ._state import NEW, JobListener, JobTable, RunState, Settings, SubmitHook
from ._stored import check_stored_options
from ._timers import Ticker

if TYPE_CHECKING:
    # Imported where they are used, not here: asyncio, anyio.abc,
    # anyio.lowlevel, anyio.from_thread, logging, traceback and the cron
    # module (datetime) would triple the cost of `import jobsched`.
    import asyncio
    import random

    from anyio.abc import TaskGroup

    from .._queueinfo import QueueInfo

    # Only a store given by URL or object loads the store seam (_store_for).
    from ..store._base import JobStore
    from ._backing import Backing


class JobScheduler(Lifecycle, Seams):
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
    :param queues: the named queues whose jobs this scheduler runs (None:
        every queue). On the memory store a job of another queue is refused
        at submit; on a durable store it waits for a member that serves it.
    :param queue_limits: queue name -> the most attempts of that queue at
        once (in this scheduler), held back off the workers like
        ``executor_limits``.
    :param load_grace: on a durable store, seconds a stored job whose
        payload does not load in this member (its module or function is
        missing here: a deploy under way) is handed back to the store,
        its attempts unchanged, for a member that can load it, counted from
        when this member first could not; after that it ends FAILED with
        the load error. 0 fails it at once.
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
        queues: Collection[str] | None = None,
        queue_limits: Mapping[str, int] | None = None,
        load_grace: float = 600.0,
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
        if (
            isinstance(load_grace, bool)
            or not isinstance(load_grace, (int, float))
            or not load_grace >= 0
            or load_grace == math.inf
        ):
            raise ValueError(
                f"load_grace must be a finite number of seconds >= 0 (how long a job "
                f"this member cannot load waits for one that can), got {load_grace!r}"
            )
        if strategy is not None and not isinstance(strategy, SchedulingStrategy):
            raise TypeError(f"strategy must be a jobsched.SchedulingStrategy, got {strategy!r}")
        for name, executor in (executors or {}).items():
            if not isinstance(executor, Executor):
                raise TypeError(
                    f"executors[{name!r}] must be a jobsched.Executor instance, got {executor!r}"
                )
        in_memory = store == "memory" or _is_memory(store)
        clock = clock if clock is not None else time.monotonic
        # The records first: a durable backing's reads take them.
        self._run = RunState()
        self._table = JobTable(history_limit)
        # The settings' clock, on self too: submit and the workers read it
        # per job, and a record's field is one attribute load more.
        self._clock = clock
        self._link = None
        self._held = {}
        durable: Backing | None = None
        if not in_memory:
            # Loaded here, not at import: the link brings the codec (hashlib,
            # hmac, pickle) and the members module (socket), which an
            # in-memory scheduler never needs (`import jobsched` stays cheap).
            from ._durable import DurableBacking
            from ._held import ClaimedQueue, Held
            from ._link import StoreLink
            from ._linkhost import LinkHost

            held = Held()
            claims = ClaimedQueue(held)
            link = StoreLink(_store_for(store), LinkHost(self, held, claims), history_limit)
            self._link = claims.link = link
            self._held = held.fences  # complete_in checks an attempt is still held
            durable = DurableBacking(self, link, held, claims)
            check_stored_options(strategy)
            link.producer = num_workers == 0
        self._registry = None
        self._completed_in = {}
        strategy = strategy if strategy is not None else PriorityStrategy()
        self._executors = ExecutorSet(executors or {})
        if rng is None:
            import random  # here: `import jobsched` skips random (and hashlib's sha512)

            rng = random.Random()

        self._queue = queue_for(strategy)
        # Limits live in the take-next step; without them workers pop the
        # queue directly and pay nothing for the feature.
        rates = check_rate_limits(rate_limits)
        gates = self._executors.bounds(check_executor_limits(executor_limits, self._executors))
        served = check_queues(queues)
        queue_gates = check_queue_limits(queue_limits)
        unserved = sorted(set(queue_gates) - served) if served is not None else []
        if unserved:
            raise ValueError(
                f"queue_limits names {', '.join(map(repr, unserved))}, which queues= "
                f"leaves out, so the limit could never apply: add it to queues=, or drop it"
            )
        self._settings = Settings(
            strategy,
            clock,
            rng,
            num_workers,
            history_limit,
            float(load_grace),
            served,
            queue_gates,
            gates,
        )
        self._admission: Admission | None = None
        self._blocked: dict[int, set[int]] = {}  # job -> unmet dependencies
        self._dependents: dict[int, list[int]] = {}  # job -> jobs waiting on it
        self._submit_hooks: list[SubmitHook] = []

        self._idle_workers: deque[anyio.Event] = deque()
        # The ticker owns the attempts' deadlines; it fires what _due says
        # is due and sleeps until _next_due (the memory queue's, schedules').
        # (Attempts past their grace go to the dispatcher that runs them.)
        self._timers = Ticker(
            self._run, clock, abandon, self._due, self._next_due, self._task_exited
        )
        # The one choice of backing: every part after this asks it, not which it is.
        self._backing: Backing = (
            MemoryBacking(
                self._settings,
                self._run,
                self._table,
                self._queue,
                self._idle_workers,
                self._timers,
                self._block_on,
                self._executor_loaded,
                self.submit,
            )
            if durable is None
            else durable
        )
        # Outcomes finishes jobs directly unless the backing writes first.
        self._ending = self._backing.ending
        self._finish_one = self._finish_here if self._ending is None else self._finish_recorded
        if self._link is not None:
            # The store applies the limits in its claims (see LinkHost.claim_capacity).
            self._link.rates = rates or None
            self._link.queues = served
            if isinstance(strategy, FairShareStrategy):
                self._link.tenants = dict(strategy.weights)
        elif rates or gates or queue_gates:
            self._admission = Admission(
                self._queue,
                strategy.key,
                self._backing.release,
                clock,
                rates,
                gates,
                queue_gates,
            )
        # Bound once: submit calls them per job.
        self._add = self._backing.add
        self._served_here = self._backing.served(served)
        if self._admission is not None:
            # Limits live in the take-next step (the memory backing's).
            self._backing.take_next = self._admission.take
        self._live_tasks = 0
        self._dispatcher = Dispatcher(
            self._backing,
            self._settle,
            self._finish_one,
            self._table,
            self._timers,
            self._executors,
            self._run,
            clock=clock,
            idle=self._idle_workers,
            completed_in=self._completed_in,
            tasks=(self._task_started, self._task_exited),
            host=self,
        )
        self._cancelling = Canceller(
            self._table, self._backing, self._dispatcher, self._finish, self._admission
        )
        self._done: anyio.Event | None = None
        self._task_group: TaskGroup | None = None
        self._standalone: asyncio.Task[None] | None = None

    @property
    def peak_running(self) -> int:
        """The most attempts that were ever in flight at once."""
        return self._dispatcher.peak_running

    @peak_running.setter
    def peak_running(self, value: int) -> None:
        self._dispatcher.peak_running = value

    def _use_registry(self, registry: Mapping[str, object]) -> None:
        """The app's hook (``js.App``): the registered functions, by name,
        that this scheduler runs; its claims take only those names."""
        self._registry = registry
        self._backing.use_registry(registry)

    def add_listener(self, listener: JobListener) -> None:
        """Call ``listener(job, old_status, new_status)`` on every transition.

        A listener that raises is logged and ignored.
        """
        if not callable(listener):
            raise TypeError(f"listener must be callable, got {listener!r}")
        self._table.listeners.append(listener)

    def remove_listener(self, listener: JobListener) -> None:
        """Stop calling ``listener``; nothing happens if it was never added."""
        if listener in self._table.listeners:
            self._table.listeners.remove(listener)

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

    def cancel(self, job_id: str) -> bool:
        """Cancel a job; False if it is unknown or already finished.

        A queued or retry-waiting job is CANCELLED at once. A running async
        job is cancelled at its next await; a running thread or process job is
        CANCELLED and its executor stops the work where it can.
        """
        return self._cancelling.cancel(job_id)

    def get(self, job_id: str) -> Job:
        """The job with this id.

        :raises UnknownJobError: never submitted, or evicted from history.
        """
        return self._table.get(job_id)

    def jobs(self) -> list[Job]:
        """Every job still known: unfinished ones and the recent finished ones."""
        return list(self._table.jobs.values())

    async def join(self) -> None:
        """Wait until every submitted job is terminal.

        :raises SchedulerError: the scheduler was never started, so nothing
            would run the jobs.
        :raises SchedulerStoppedError: the scheduler stopped with jobs still
            queued, which will then never finish.
        """
        if self._run.phase == NEW:
            raise SchedulerError(
                "join() waits for the workers to run the jobs, but this scheduler was never "
                "started: use `async with JobScheduler(...) as s:` or `await s.start()` first"
            )
        await self._backing.join()

    # ── queues (see _queueviews) ──────────────────────────────────────────

    async def queues(self) -> list[QueueInfo]:
        """Every queue with unfinished jobs, paused, or served by a live member
        (the fleet's, on a durable store): counts, pause, who serves it."""
        return await self._backing.queues()

    async def pause_queue(self, name: str) -> None:
        """No member claims ``name``'s jobs until :meth:`resume_queue`
        (running ones finish); idempotent, and a queue no job used may be paused.

        :raises ValueError: ``name`` is not a queue's name.
        """
        await self._backing.pause_queue(name)

    async def resume_queue(self, name: str) -> None:
        """Let members claim ``name``'s jobs again (a queue not paused: no change)."""
        await self._backing.resume_queue(name)


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
