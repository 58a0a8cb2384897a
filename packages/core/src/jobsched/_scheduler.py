"""The scheduler: queues, workers, retries, dependencies, recurring jobs, shutdown.

Every piece of scheduler state is owned by the event-loop thread, and every
check-then-act on it runs without an ``await`` in the middle, so no other task
can interleave and no lock is needed. Work that leaves the loop (threads,
processes) only returns a value; it never touches scheduler state. Other
threads reach the scheduler through :meth:`JobScheduler.submit_threadsafe`.
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
import time
import types
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from datetime import tzinfo
from types import TracebackType
from typing import Any

import anyio
from anyio.abc import TaskGroup
from anyio.lowlevel import checkpoint

from . import _plugins, _resume
from ._admission import (
    Admission,
    check_executor_limits,
    check_rate_limits,
    executor_capacity,
    with_capacities,
)
from ._attempts import SHUTDOWN_SCOPE, Attempt, Deadlines
from ._cron import CronTrigger
from ._enums import JobStatus
from ._exceptions import (
    InvalidTransitionError,
    NonRetryableError,
    SchedulerError,
    SchedulerStoppedError,
    UnknownJobError,
)
from ._executor import Executor
from ._jobs import Job, id_number, next_number
from ._queue import queue_for
from ._ratelimit import RateLimit
from ._recurring import CronSchedule, RecurringSchedule, Schedule
from ._resume import Abandoned, Resume
from ._strategies import PriorityStrategy, SchedulingStrategy

logger = logging.getLogger("jobsched")

JobListener = Callable[[Job, JobStatus, JobStatus], None]

_PENDING = JobStatus.PENDING
_RUNNING = JobStatus.RUNNING
_RETRY_WAIT = JobStatus.RETRY_WAIT
_COMPLETED = JobStatus.COMPLETED
_FAILED = JobStatus.FAILED
_TIMED_OUT = JobStatus.TIMED_OUT
_CANCELLED = JobStatus.CANCELLED

_Coroutine = types.CoroutineType

# Lifecycle of the scheduler itself.
_NEW, _RUNNING_STATE, _STOPPED = range(3)

# What a worker does after an attempt that suspended: go on in its scope, make
# a new scope (the attempt cancelled it), or exit (it was replaced while it
# carried an abandoned job).
_KEEP, _NEW_SCOPE, _RETIRE = object(), object(), object()

# A worker that keeps finding jobs that complete without suspending never
# yields to the event loop; every this many jobs it does, so the ticker,
# other workers and cross-thread submits are not starved.
_YIELD_EVERY = 64


class JobScheduler:
    """Runs jobs on a pool of worker tasks, in the order a strategy gives.

    :param strategy: orders runnable jobs; :class:`PriorityStrategy` by default.
    :param num_workers: the most attempts in flight at once.
    :param executors: name -> :class:`Executor`, overriding or adding to the
        installed plugins. The scheduler shuts every executor it used down
        when it stops.
    :param rng: randomness for retry jitter (seed it for repeatable runs).
    :param history_limit: how many finished jobs :meth:`get` still knows.
    :param clock: seconds as a float; ``time.monotonic`` by default. Tests on
        virtual time pass ``anyio.current_time`` under a mock clock.
    :param rate_limits: rate key -> :class:`RateLimit`: limits the starts of
        jobs whose ``rate_key`` is that key. A job without a token waits in the
        delayed queue, not on a worker.
    :param executor_limits: executor name -> the most attempts on it at once.
        A job held back waits off the workers; other jobs keep running.

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
    ) -> None:
        if not isinstance(num_workers, int) or num_workers < 1:
            raise ValueError(f"num_workers must be an integer >= 1, got {num_workers!r}")
        if not isinstance(history_limit, int) or history_limit < 0:
            raise ValueError(f"history_limit must be an integer >= 0, got {history_limit!r}")
        if strategy is not None and not isinstance(strategy, SchedulingStrategy):
            raise TypeError(f"strategy must be a jobsched.SchedulingStrategy, got {strategy!r}")
        for name, executor in (executors or {}).items():
            if not isinstance(executor, Executor):
                raise TypeError(
                    f"executors[{name!r}] must be a jobsched.Executor instance, got {executor!r}"
                )
        self._strategy = strategy if strategy is not None else PriorityStrategy()
        self._num_workers = num_workers
        self._executors: dict[str, Executor] = dict(executors or {})
        self._rng = rng if rng is not None else random.Random()
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
        if rates or gates:
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
        self._finished: deque[int] = deque()  # terminal jobs, oldest first
        self._recurring: dict[str, Schedule] = {}
        self._listeners: list[JobListener] = []
        self._unfinished = 0
        self._in_flight = 0
        #: The most attempts that were ever in flight at once.
        self.peak_running = 0

        self._state = _NEW
        self._stopping = False
        self._idle_workers: deque[anyio.Event] = deque()
        self._join_waiters: list[anyio.Event] = []
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
        self._call_soon_threadsafe: Callable[..., Any] | None = None

    # ── Public API (call on the event-loop thread unless noted) ───────────

    def add_listener(self, listener: JobListener) -> None:
        """Call ``listener(job, old_status, new_status)`` on every transition.

        A listener that raises is logged and ignored.
        """
        if not callable(listener):
            raise TypeError(f"listener must be callable, got {listener!r}")
        self._listeners.append(listener)

    def submit(self, job: Job, *, delay: float = 0.0, depends_on: Iterable[str] = ()) -> str:
        """Queue ``job`` and return its id. Works before and after :meth:`start`.

        :param delay: seconds before the job may start.
        :param depends_on: ids of jobs that must complete first. They must
            already be submitted, which makes cycles impossible.
        :raises SchedulerStoppedError: :meth:`stop` has begun.
        :raises SchedulerError: the job was already submitted.
        :raises UnknownJobError: a dependency is unknown.
        :raises ExecutorNotFoundError: the job's executor is not installed.
        """
        if self._stopping:
            raise SchedulerStoppedError(
                f"cannot submit {_describe(job)}: the scheduler is stopping or stopped; "
                "submit before stop(), or create a new JobScheduler"
            )
        deps = self._check_submit(job, delay, depends_on)
        now = self._clock()
        seq = job.seq = next_number()
        number = job._jobsched_id
        if not number:
            # First needed now: the id and seq are one int object.
            number = job._jobsched_id = seq
        job.submitted_at = now
        job.run_at = now + delay if delay > 0 else now
        try:
            if deps or delay > 0:
                # The key is otherwise computed later (on release or
                # promotion), where an error could no longer reach the caller.
                self._strategy.key(job)
            self._jobs[number] = job
            self._unfinished += 1
            if deps:
                self._block_on(job, deps)
            else:
                self._push(job, now)
        except Exception as exc:
            if self._jobs.get(number) is job:
                del self._jobs[number]
                self._unfinished -= 1
            job.seq = 0
            raise TypeError(
                f"{_describe(job)} cannot be queued: the strategy "
                f"{type(self._strategy).__name__} failed on it ({type(exc).__name__}: {exc}); "
                "check the fields it orders by (priority, deadline, tenant)"
            ) from exc
        return f"job-{number}"

    def submit_threadsafe(
        self, job: Job, *, delay: float = 0.0, depends_on: Iterable[str] = ()
    ) -> str:
        """Submit from any thread once the scheduler has started; returns the job id.

        The submit itself runs on the event-loop thread soon after, so errors
        that depend on scheduler state (an unknown dependency, say) are logged
        there instead of raised here.
        """
        call_soon = self._call_soon_threadsafe
        if call_soon is None:
            raise SchedulerError(
                "submit_threadsafe() needs a started scheduler: start() it first, "
                "or call submit() from the event-loop thread"
            )
        if self._stopping:
            raise SchedulerStoppedError(
                f"cannot submit {_describe(job)}: the scheduler is stopping or stopped"
            )
        if not isinstance(job, Job):
            raise TypeError(f"submit_threadsafe() takes a jobsched.Job, got {job!r}")
        if job.seq:
            raise SchedulerError(_resubmit_message(job))
        deps = (depends_on,) if isinstance(depends_on, str) else tuple(depends_on)
        call_soon(self._submit_from_thread, job, delay, deps)
        return job.job_id

    def schedule_recurring(
        self,
        factory: Callable[[], Job],
        interval: float,
        *,
        start_in: float = 0.0,
        allow_overlap: bool = False,
    ) -> str:
        """Submit ``factory()`` every ``interval`` seconds; returns the schedule id.

        Fixed-rate: missed fires coalesce into one. Unless ``allow_overlap``,
        a fire is skipped while the previous job from this schedule runs.
        """
        if self._stopping:
            raise SchedulerStoppedError("cannot add a schedule: the scheduler is stopping")
        if not (start_in >= 0 and math.isfinite(start_in)):
            raise ValueError(f"start_in must be a number of seconds >= 0, got {start_in!r}")
        schedule = RecurringSchedule(factory, interval, self._clock() + start_in, allow_overlap)
        self._recurring[schedule.schedule_id] = schedule
        self._wake_ticker()
        return schedule.schedule_id

    def schedule_cron(
        self,
        factory: Callable[[], Job],
        cron: str | CronTrigger,
        *,
        timezone: str | tzinfo | None = None,
        allow_overlap: bool = False,
    ) -> str:
        """Submit ``factory()`` at the fire times of a cron expression; returns the schedule id.

        :param cron: a five-field expression or alias, or a :class:`CronTrigger`.
        :param timezone: the zone of an expression (IANA name or ``tzinfo``;
            local by default); a :class:`CronTrigger` carries its own.

        Missed fires coalesce into one and, unless ``allow_overlap``, a fire is
        skipped while the previous job from this schedule runs, as for
        :meth:`schedule_recurring`. :meth:`cancel_recurring` stops it.

        :raises ValueError: the expression or zone is not valid, or both a
            :class:`CronTrigger` and ``timezone`` were given.
        """
        if self._stopping:
            raise SchedulerStoppedError("cannot add a schedule: the scheduler is stopping")
        if isinstance(cron, CronTrigger):
            if timezone is not None:
                raise ValueError(
                    f"timezone={timezone!r} was given with {cron!r}, which has its own zone; "
                    "pass the zone to CronTrigger, or pass the expression as a string"
                )
            trigger = cron
        elif isinstance(cron, str):
            trigger = CronTrigger(cron, timezone)
        else:
            raise TypeError(f"cron must be an expression string or a CronTrigger, got {cron!r}")
        clock = self._clock
        now = clock()
        if clock is time.monotonic:
            # Re-read at every fire, so a stepped wall clock or a suspend is
            # caught up with.
            def wall_offset() -> float:
                return time.time() - time.monotonic()

        else:
            # A custom (virtual) clock: wall time advances with it from now on.
            fixed = time.time() - now

            def wall_offset() -> float:
                return fixed

        schedule = CronSchedule(factory, trigger, now, wall_offset, allow_overlap)
        self._recurring[schedule.schedule_id] = schedule
        self._wake_ticker()
        return schedule.schedule_id

    def cancel_recurring(self, schedule_id: str) -> bool:
        """Stop a schedule; False if it is unknown or already cancelled.

        A job it already submitted keeps running; cancel it by its id.
        """
        schedule = self._recurring.pop(schedule_id, None)
        if schedule is None or not schedule.active:
            return False
        schedule.active = False
        return True

    def cancel(self, job_id: str) -> bool:
        """Cancel a job; False if it is unknown or already finished.

        A queued or retry-waiting job is CANCELLED at once. A running async
        job is cancelled at its next await; a running thread or process job is
        CANCELLED and its executor stops the work where it can.
        """
        number = id_number(job_id)
        job = self._jobs.get(number)
        if job is None or job.status._terminal:  # type: ignore[attr-defined]
            return False
        if job.status is _RUNNING:
            attempt = self._attempts.get(number)
            if attempt is None:
                # Cancelled from inside its own first step or from a listener
                # of its start: the attempt sees it as soon as it can.
                self._early_cancels.add(number)
            else:
                attempt.cancel("cancelled")
        else:
            self._finish(job, _CANCELLED, "cancelled")
            if self._admission is not None:
                self._admission.cancelled(job)
        return True

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

        :raises SchedulerStoppedError: the scheduler stopped with jobs still
            queued, which will then never finish.
        """
        while self._unfinished:
            if self._state == _STOPPED:
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
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._state = _NEW
            raise SchedulerError(
                "start() by hand runs on asyncio only; under trio use "
                "`async with JobScheduler(...) as s:`"
            ) from None
        started = anyio.Event()
        self._standalone = loop.create_task(self._serve_standalone(started))
        self._standalone.add_done_callback(_log_crash)
        await started.wait()

    async def stop(self, *, cancel_running: bool = False) -> None:
        """Stop: reject new work, let running attempts finish (or cancel them), stop workers.

        Queued jobs stay PENDING. Every executor the scheduler used is shut
        down. Calling it again waits for the first call to finish.
        """
        if self._state == _NEW:
            self._stopping = True
            self._state = _STOPPED
            await self._shutdown_executors(cancel_running)
            return
        if cancel_running:
            for attempt in list(self._attempts.values()):
                attempt.cancel("scheduler shut down")
        if self._stopping:
            # Another stop() is under way: wait until it has finished.
            while self._state != _STOPPED:
                event = anyio.Event()
                self._join_waiters.append(event)
                await event.wait()
            return
        self._stopping = True
        self._wake_all()
        assert self._done is not None
        try:
            await self._done.wait()
            if self._standalone is not None:
                task, self._standalone = self._standalone, None
                await task
        finally:
            try:
                await self._shutdown_executors(cancel_running)
            finally:
                self._state = _STOPPED
                self._wake_joiners()

    async def __aenter__(self) -> JobScheduler:
        self._begin_start()
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
            # jobs: cancel them, and shield the clean-up from that cancellation.
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

    # ── Submitting ────────────────────────────────────────────────────────

    def _check_submit(self, job: Job, delay: float, depends_on: Iterable[str]) -> list[int]:
        """Every check submit() makes, before it changes any state."""
        # Job is an ABC, whose isinstance() runs Python code; a look along the
        # MRO answers for every real subclass at a fraction of the cost.
        if Job not in type(job).__mro__ and not isinstance(job, Job):
            raise TypeError(f"submit() takes a jobsched.Job, got {job!r}")
        if job.seq or job.status is not _PENDING:
            raise SchedulerError(_resubmit_message(job))
        if not delay >= 0 or delay == math.inf:
            raise ValueError(f"delay must be a finite number of seconds >= 0, got {delay!r}")
        if isinstance(depends_on, str):
            depends_on = (depends_on,)
        deps: list[int] = []
        if depends_on:
            jobs = self._jobs
            unknown = []
            for dep_id in dict.fromkeys(depends_on):
                number = id_number(dep_id)
                if number in jobs:
                    deps.append(number)
                else:
                    unknown.append(dep_id)
            if unknown:
                raise UnknownJobError(
                    f"{_describe(job)} depends on unknown job(s) {unknown}: submit "
                    "dependencies first (finished jobs are forgotten after history_limit)"
                )
        name = job.executor
        if name not in self._executors:
            executor = _plugins.create(name)
            self._executor_loaded(name, executor)
            self._executors[name] = executor
        return deps

    def _executor_loaded(self, name: str, executor: Executor) -> None:
        """An executor plugin was loaded on first use: hold jobs to its capacity."""
        capacity = executor_capacity(name, executor)
        if capacity is None:
            return
        if self._admission is None:
            # Workers read _take_next before each job, so they use it at once.
            self._admission = Admission(
                self._queue, self._strategy.key, self._push, self._clock, {}, {}
            )
            self._take_next = self._admission.take
        self._admission.limit(name, capacity)

    def _submit_from_thread(self, job: Job, delay: float, deps: tuple[str, ...]) -> None:
        try:
            self.submit(job, delay=delay, depends_on=deps)
        except Exception:
            logger.exception("submit_threadsafe of %s failed", _describe(job))

    def _block_on(self, job: Job, deps: list[int]) -> None:
        jobs = self._jobs
        for dep in deps:
            status = jobs[dep].status
            if status._terminal and status is not _COMPLETED:  # type: ignore[attr-defined]
                self._finish(job, _CANCELLED, f"upstream job-{dep} {status.value}")
                return
        unmet = {d for d in deps if jobs[d].status is not _COMPLETED}
        if not unmet:
            self._push(job, self._clock())
            return
        number = job._jobsched_id
        self._blocked[number] = unmet
        for dep in unmet:
            self._dependents.setdefault(dep, []).append(number)

    def _push(self, job: Job, now: float) -> None:
        """Queue a runnable job: ready now, or delayed until ``job.run_at``."""
        if job.run_at > now:
            if self._queue.push_delayed(job):
                self._wake_ticker()
        else:
            self._queue.push_ready(job)
            if self._idle_workers:
                self._idle_workers.popleft().set()

    # ── Running ───────────────────────────────────────────────────────────

    def _begin_start(self) -> None:
        if self._state != _NEW:
            raise SchedulerError("the scheduler was already started; a scheduler starts once")
        self._state = _RUNNING_STATE
        self._done = anyio.Event()
        try:
            self._call_soon_threadsafe = asyncio.get_running_loop().call_soon_threadsafe
        except RuntimeError:
            import trio  # the only other backend anyio runs on

            self._call_soon_threadsafe = trio.lowlevel.current_trio_token().run_sync_soon

    def _spawn(self, task_group: TaskGroup) -> None:
        self._workers_group = task_group
        # The ticker watches attempt deadlines from now on, also those of
        # attempts that start before it first runs (trio starts tasks in no
        # fixed order); it reads the heap when it starts.
        self._watching = True
        self._live_tasks = self._num_workers + 1
        for i in range(self._num_workers):
            task_group.start_soon(self._worker, name=f"jobsched-worker-{i}")
        task_group.start_soon(self._ticker, name="jobsched-ticker")

    async def _serve_standalone(self, started: anyio.Event) -> None:
        async with anyio.create_task_group() as task_group:
            self._spawn(task_group)
            started.set()

    def _task_exited(self) -> None:
        self._live_tasks -= 1
        if self._live_tasks == 0:
            assert self._done is not None
            self._done.set()

    async def _worker(self) -> None:
        try:
            while not self._stopping:
                # One scope serves every attempt this worker runs; cancel()
                # and timeouts cancel it, and only then is a new one made.
                # Entering a scope per attempt would cost more than a no-op
                # job itself.
                with anyio.CancelScope() as scope:
                    if await self._work(scope) is _RETIRE:
                        break
        finally:
            self._task_exited()

    async def _work(self, scope: anyio.CancelScope) -> object:
        """Run attempts inside ``scope`` until one of them is cancelled or times out.

        :returns: ``_RETIRE`` if this worker was replaced while it carried an
            abandoned job, which has now ended.
        """
        idle = self._idle_workers
        executors = self._executors
        clock = self._clock
        transition = self._transition
        finish_one = self._finish_one
        streak = 0
        while not self._stopping:
            # Read each time: admission starts when an executor with a
            # capacity is first loaded, possibly by the job that just ran.
            job = self._take_next()
            if job is None:
                streak = 0
                wakeup = anyio.Event()
                idle.append(wakeup)
                await wakeup.wait()
                continue
            # Counted before the transition, so listeners told of RUNNING see
            # this attempt's number and start time.
            job.attempts += 1
            job.started_at = clock()
            transition(job, _RUNNING)
            self._in_flight += 1
            if self._in_flight > self.peak_running:
                self.peak_running = self._in_flight
            # Step the attempt once by hand: most jobs that never suspend need
            # no cancel handle and no timer at all.
            try:
                it = executors[job.executor].run(job)
                if type(it) is not _Coroutine:
                    # A coroutine steps directly; its __await__ wrapper would
                    # cost an allocation and a call layer per send.
                    it = it.__await__()
                first = it.send(None)
            except StopIteration as stop:
                self._in_flight -= 1
                timeout = job.timeout
                if self._early_cancels:
                    self._settle(job, None, stop.value, None)
                elif timeout is not None and clock() - job.started_at >= timeout:  # type: ignore[operator]
                    self._overran(job)
                else:
                    # The common case, without _settle's checks for outcomes
                    # that cannot happen to an attempt that never suspended.
                    job.result = stop.value
                    try:
                        # Only a failure cascades to dependents: finish_one is all of _finish.
                        finish_one(job, _COMPLETED, None)
                    except Exception:  # as in _settle: a worker must survive our bugs
                        logger.exception("jobsched failed to record the outcome of %s", job)
                streak += 1
                if streak == _YIELD_EVERY:
                    streak = 0
                    await checkpoint()
                continue
            except BaseException as exc:
                self._in_flight -= 1
                if _worker_cancelled(exc, scope):
                    # The worker is being torn down (a trio checkpoint that
                    # raised before suspending): the job did not fail.
                    self._settle(job, _shut_down(), None, None)
                    raise
                # The job's error, or its own SystemExit and the like: the
                # attempt fails, the scheduler goes on.
                timeout = job.timeout
                if (
                    timeout is not None
                    and not self._early_cancels
                    and clock() - job.started_at >= timeout  # type: ignore[operator]
                ):
                    self._overran(job)
                else:
                    self._settle(job, None, None, exc)
                streak += 1
                if streak == _YIELD_EVERY:
                    streak = 0
                    await checkpoint()
                continue
            streak = 0
            outcome = await self._continue_attempt(job, scope, it, first)
            if outcome is not _KEEP:
                return outcome
        return _KEEP

    async def _continue_attempt(
        self, job: Job, scope: anyio.CancelScope, it: Any, first: Any
    ) -> object:
        """Finish an attempt that suspended.

        :returns: ``_KEEP`` to go on in ``scope``, ``_NEW_SCOPE`` if the attempt
            cancelled it, ``_RETIRE`` if the attempt was abandoned and this
            worker replaced.
        """
        timeout = job.timeout
        attempt = Attempt(scope, job, self._start_grace)
        on_scope = False  # the timeout is the scope's own deadline (ticker gone)
        if timeout is not None:
            assert job.started_at is not None
            deadline = job.started_at + timeout
            if self._watching:
                self._deadlines.watch(attempt, deadline)
                if deadline < self._ticker_sleeps_until:
                    self._wake_ticker()
            else:
                scope.deadline = anyio.current_time() + (deadline - self._clock())
                on_scope = True
        number = job._jobsched_id
        self._attempts[number] = attempt
        if self._early_cancels and number in self._early_cancels:
            self._early_cancels.discard(number)
            attempt.cancel("cancelled")
        result: Any = None
        error: BaseException | None = None
        try:
            result = await Resume(it, first, scope, self._clock)
        except Abandoned as exc:
            if not attempt.abandoned:
                logger.warning("%s %s", _describe(job), exc)
            error = exc
        except Exception as exc:
            error = exc
        except BaseException as exc:
            if attempt.abandoned:
                # Already recorded, and a new worker took this one's place:
                # how the job ended concerns no one, and this task exits.
                return _RETIRE
            if _worker_cancelled(exc, scope):
                # Our scope's cancellation (cancel() or the timeout), which the
                # scope absorbs, or the worker being torn down.
                if not scope.cancel_called:
                    attempt.reason = attempt.reason or "scheduler shut down"
                    attempt.scope = SHUTDOWN_SCOPE
                if not attempt.abandoned:
                    self._end_attempt(job, attempt, None, None)
                raise
            # The job's own SystemExit, KeyboardInterrupt, GeneratorExit, or a
            # group of them: its outcome, never the worker's.
            error = exc
        if attempt.abandoned:
            return _RETIRE
        if on_scope:
            scope.deadline = math.inf
        if timeout is not None and not scope.cancel_called and self._clock() >= deadline:
            self._overran(job, attempt)
            return _KEEP
        self._end_attempt(job, attempt, result, error)
        return _NEW_SCOPE if scope.cancel_called else _KEEP

    def _end_attempt(
        self, job: Job, attempt: Attempt, result: Any, error: BaseException | None
    ) -> None:
        del self._attempts[job._jobsched_id]
        self._deadlines.ended(attempt)
        self._in_flight -= 1
        self._settle(job, attempt, result, error)

    def _overran(self, job: Job, attempt: Attempt | None = None) -> None:
        """Record an attempt that ended past its deadline, unseen by the timeout.

        Nothing could time it out: the event loop was blocked (by this job, or
        another one) until it ended. Whatever it returned, it timed out.
        """
        assert job.started_at is not None
        logger.warning(
            "%s blocked the event loop: it ended %.3gs after it started, past its %ss "
            "timeout, which could not fire while the loop was blocked; recorded as timed "
            "out. Run blocking code on the thread or process executor",
            _describe(job),
            self._clock() - job.started_at,
            job.timeout,
        )
        late = Attempt(SHUTDOWN_SCOPE, job, None)  # type: ignore[arg-type]
        if attempt is None:
            self._settle(job, late, None, None)
        else:
            attempt.scope = late.scope
            self._end_attempt(job, attempt, None, None)

    def _start_grace(self, attempt: Attempt) -> None:
        """``attempt`` was just cancelled: give it CANCEL_GRACE seconds to end."""
        if self._watching:  # else stop() is under way, and waits for it anyway
            deadline = self._deadlines.grace(attempt, self._clock())
            if deadline < self._ticker_sleeps_until:
                self._wake_ticker()

    def _abandon(self, attempt: Attempt) -> None:
        """``attempt`` outlived its grace: record it, and replace its worker.

        Its job cannot leave the worker's task (its own cancel scopes and task
        groups are on it), so the worker leaves its place instead: a new
        worker starts, and the old task only drives the job to its end, then
        exits. The scheduler no longer waits for it, but ``stop()`` does (a
        task group ends when all of its tasks have).
        """
        job = attempt.job
        logger.warning(
            "%s still running %ss after it was %s; abandoned: its worker goes on with other "
            "jobs, and it finishes unwinding on its own task (a clean-up that awaits past the "
            "grace, or a job that ignores its cancellation)",
            _describe(job),
            _resume.CANCEL_GRACE,
            "timed out" if attempt.reason is None else attempt.reason,
        )
        attempt.abandoned = True
        self._end_attempt(job, attempt, None, None)
        group = self._workers_group
        if group is not None and not self._stopping:
            self._live_tasks += 1
            group.start_soon(self._worker, name="jobsched-worker")

    def _settle(
        self, job: Job, attempt: Attempt | None, result: Any, error: BaseException | None
    ) -> None:
        """Record how an attempt ended. Cancellation beats timeout beats error.

        Whatever a cancelled or timed-out job did afterwards (returned,
        raised, swallowed the cancellation) the outcome is the scheduler's.
        """
        try:
            if attempt is None and self._early_cancels and job._jobsched_id in self._early_cancels:
                self._early_cancels.discard(job._jobsched_id)
                self._finish(job, _CANCELLED, "cancelled")
            elif attempt is not None and attempt.scope.cancel_called:
                if attempt.reason is not None:
                    self._finish(job, _CANCELLED, attempt.reason)
                else:
                    self._after_failure(job, f"timed out after {job.timeout}s", True, True)
            elif error is not None:
                self._after_failure(
                    job,
                    f"{type(error).__name__}: {error}",
                    isinstance(error, Exception) and not isinstance(error, NonRetryableError),
                    False,
                )
            else:
                job.result = result
                self._finish(job, _COMPLETED, None)
        except Exception:  # a bug in our own bookkeeping must not kill a worker
            logger.exception("jobsched failed to record the outcome of %s", _describe(job))

    def _after_failure(self, job: Job, error: str, retryable: bool, timed_out: bool) -> None:
        job.last_error = error
        if retryable and job.attempts <= job.retry.max_retries and not self._stopping:
            now = self._clock()
            job.run_at = now + job.retry.delay(job.attempts, self._rng)
            self._transition(job, _RETRY_WAIT)
            self._push(job, now)
        else:
            self._finish(job, _TIMED_OUT if timed_out else _FAILED, None)

    # ── Delayed jobs and recurring schedules ──────────────────────────────

    async def _ticker(self) -> None:
        """Promotes due delayed jobs, fires schedules, times attempts out; sleeps in between."""
        self._watching = True
        deadlines = self._deadlines
        try:
            while not self._stopping:
                now = self._clock()
                deadlines.expire(now)
                if self._recurring:
                    self._fire_due(now)
                self._promote_due(now)
                next_at = self._queue.next_due()
                for schedule in self._recurring.values():
                    if next_at is None or schedule.next_run < next_at:
                        next_at = schedule.next_run
                timeout_at = deadlines.next_at()
                if timeout_at is not None and (next_at is None or timeout_at < next_at):
                    next_at = timeout_at
                wakeup = self._ticker_wakeup = anyio.Event()
                if next_at is None:
                    self._ticker_sleeps_until = math.inf
                    await wakeup.wait()
                else:
                    self._ticker_sleeps_until = next_at
                    with anyio.move_on_after(max(0.0, next_at - self._clock())):
                        await wakeup.wait()
                self._ticker_wakeup = None
        finally:
            # Attempts still running keep their timeouts: on their own scopes.
            self._watching = False
            deadlines.hand_back(self._clock)
            self._task_exited()

    def _promote_due(self, now: float) -> None:
        moved = self._queue.promote_due(now)
        idle = self._idle_workers
        while moved and idle:
            idle.popleft().set()
            moved -= 1

    def _fire_due(self, now: float) -> None:
        for schedule in list(self._recurring.values()):
            if schedule.next_run > now:
                continue
            schedule.advance(now)
            previous = self._jobs.get(id_number(schedule.last_job_id))
            if (
                previous is not None
                and not previous.status.is_terminal
                and not schedule.allow_overlap
            ):
                schedule.skipped += 1
                continue
            try:
                job = schedule.factory()
                schedule.last_job_id = self.submit(job)
                schedule.fired += 1
            except Exception:  # a broken factory must not kill the ticker
                logger.exception("recurring schedule %s failed to fire", schedule.schedule_id)

    def _wake_ticker(self) -> None:
        if self._ticker_wakeup is not None:
            self._ticker_wakeup.set()

    def _wake_all(self) -> None:
        while self._idle_workers:
            self._idle_workers.popleft().set()
        self._wake_ticker()

    def _wake_joiners(self) -> None:
        waiters, self._join_waiters = self._join_waiters, []
        for event in waiters:
            event.set()

    # ── State changes ─────────────────────────────────────────────────────

    def _transition(self, job: Job, new: JobStatus) -> None:
        old = job.status
        if not old._allowed & new._bit:  # type: ignore[attr-defined]
            raise InvalidTransitionError(
                f"{_describe(job)}: {old.value} -> {new.value} is not a legal transition"
            )
        job.status = new
        if self._listeners:
            self._notify(job, old, new)

    def _notify(self, job: Job, old: JobStatus, new: JobStatus) -> None:
        for listener in self._listeners:
            try:
                listener(job, old, new)
            except Exception:  # a bad listener must not break the scheduler
                logger.exception("listener %r failed on %s", listener, _describe(job))

    def _finish(self, job: Job, status: JobStatus, error: str | None) -> None:
        """Make ``job`` terminal, release or cancel its dependents, trim history."""
        todo = self._finish_one(job, status, error)
        # A worklist, not recursion: a failure can cascade down a long chain.
        # Only a failure with dependents builds one; a plain finish allocates nothing.
        while todo:
            dependent, reason = todo.pop()
            more = self._finish_one(dependent, _CANCELLED, reason)
            if more:
                todo.extend(more)

    def _finish_one(
        self, job: Job, status: JobStatus, error: str | None
    ) -> list[tuple[Job, str]] | None:
        """Finish ``job`` alone; the dependents its failure cancels, if any."""
        if job.status._terminal:  # type: ignore[attr-defined]
            return None
        if error is not None:
            job.last_error = error
        job.finished_at = now = self._clock()
        self._transition(job, status)
        number = job._jobsched_id
        if self._blocked:
            self._blocked.pop(number, None)
        cascade: list[tuple[Job, str]] | None = None
        if self._dependents:
            dependents = self._dependents.pop(number, None)
            if dependents:
                for dep in dependents:
                    dependent = self._jobs.get(dep)
                    if dependent is None or dependent.status._terminal:  # type: ignore[attr-defined]
                        continue
                    if status is _COMPLETED:
                        unmet = self._blocked.get(dep)
                        if unmet is not None:
                            unmet.discard(number)
                            if not unmet:
                                del self._blocked[dep]
                                self._push(dependent, now)
                    else:
                        if cascade is None:
                            cascade = []
                        cascade.append((dependent, f"upstream job-{number} {status.value}"))
        self._unfinished -= 1
        if not self._unfinished and self._join_waiters:
            self._wake_joiners()
        finished = self._finished
        finished.append(number)
        if len(finished) > self._history_limit:
            self._jobs.pop(finished.popleft(), None)
        return cascade

    async def _shutdown_executors(self, cancel_running: bool) -> None:
        for name, executor in list(self._executors.items()):
            try:
                await executor.shutdown(cancel_running=cancel_running)
            except Exception:
                logger.exception("executor %r failed to shut down", name)


def _worker_cancelled(exc: BaseException, scope: anyio.CancelScope) -> bool:
    """True if ``exc`` is the worker's cancellation, not something the job raised.

    Our scope's cancellation, or the worker's task being cancelled from outside
    (the loop's clock of the cancelled scopes: an effective deadline of -inf).
    """
    if not isinstance(exc, anyio.get_cancelled_exc_class()):
        return False
    return scope.cancel_called or anyio.current_effective_deadline() == -math.inf


def _shut_down() -> Attempt:
    attempt = Attempt(SHUTDOWN_SCOPE, None, None)  # type: ignore[arg-type]
    attempt.reason = "scheduler shut down"
    return attempt


def _log_crash(task: asyncio.Task[None]) -> None:
    # Without `async with` nobody awaits the workers until stop(): say at once.
    if not task.cancelled() and task.exception() is not None:
        logger.error(
            "jobsched's workers stopped on an internal error; stop() raises it",
            exc_info=task.exception(),
        )


def _describe(job: object) -> str:
    if isinstance(job, Job):
        return f"{job.job_id} ({job.name!r})"
    return repr(job)


def _resubmit_message(job: Job) -> str:
    return (
        f"{_describe(job)} was already submitted (status {job.status.value}); "
        "a job runs once: create a new job object to run the work again"
    )
