"""JobScheduler: the public face of the parts below it.

Its construction (arguments checked, parts built and wired) is
``_compose.py``; the lifecycle (start, stop, ``async with``) is
``_lifecycle.py``; see ``_state.py`` for how the parts stack.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, TypeVar

from .._exceptions import SchedulerError, SchedulerStoppedError
from .._jobs._executor import Executor
from .._jobs._ids import check_own_id, own_number
from .._jobs._job import Job
from .._ordering._ratelimit import RateLimit
from .._ordering._strategies import SchedulingStrategy
from .._retention import Retention
from ._compose import compose
from ._results import ResultCalls
from ._schedules import ScheduleCalls
from ._seams import Seams
from ._state import NEW, JobListener, SubmitHook, _describe
from ._submission import Submission, delay_until
from ._workflowing import WorkflowCalls

if TYPE_CHECKING:
    # Imported where they are used, not here: asyncio, anyio.abc,
    # anyio.lowlevel, anyio.from_thread, logging, traceback and the cron
    # module (datetime) would triple the cost of `import jobsched`.
    import random
    from datetime import datetime

    from .._queueinfo import QueueInfo

    # Only a store given by URL or object loads the store seam (_store_for).
    from .._workflows._edges import DependsOn
    from ..store._base import JobStore
    from ._outcomes import Outcomes

_Self = TypeVar("_Self", bound="JobScheduler")


class JobScheduler(ScheduleCalls, ResultCalls, WorkflowCalls, Seams):
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
    :param retention: a :class:`Retention`: how long finished jobs are kept
        per outcome, and at most how many (in place of ``history_limit``).
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
        retention: Retention | None = None,
        clock: Callable[[], float] | None = None,
        rate_limits: Mapping[str, RateLimit] | None = None,
        executor_limits: Mapping[str, int] | None = None,
        store: str | JobStore = "memory",
        queues: Collection[str] | None = None,
        queue_limits: Mapping[str, int] | None = None,
        load_grace: float = 600.0,
    ) -> None:
        compose(
            self,
            strategy,
            num_workers=num_workers,
            executors=executors,
            rng=rng,
            history_limit=history_limit,
            retention=retention,
            clock=clock,
            rate_limits=rate_limits,
            executor_limits=executor_limits,
            store=store,
            queues=queues,
            queue_limits=queue_limits,
            load_grace=load_grace,
        )

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
        self._hooks.append(hook)

    def remove_submit_hook(self, hook: SubmitHook) -> None:
        """Stop calling ``hook``; nothing happens if it was never added."""
        if hook in self._hooks:
            self._hooks.remove(hook)

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

    # Step 7, E1: the lifecycle, an object the scheduler holds (_lifecycle.py).
    async def start(self) -> None:
        """Start the workers in a background task (asyncio only).

        Under trio, use ``async with JobScheduler() as s:`` instead.

        :raises SchedulerError: already started.
        """
        await self._lifecycle.start()

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
        await self._lifecycle.stop(cancel_running=cancel_running, grace=grace)

    async def __aenter__(self: _Self) -> _Self:
        await self._lifecycle.enter()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        return await self._lifecycle.exit(exc_type, exc, tb)

    # ── E2: the store's view (the backing's) ──

    async def flush(self) -> None:
        """Return once everything submitted so far is committed to the store."""
        await self._backing.flush()

    async def enqueue(
        self,
        job: Job,
        *,
        delay: float = 0.0,
        depends_on: DependsOn = (),
        at: datetime | None = None,
        job_id: str | None = None,
        connection: object = None,
    ) -> str:
        """Submit ``job`` and return its id once it is committed (same checks as submit).

        Unlike ``submit``, it checks that the store holds every dependency
        this process doesn't know before accepting the job.

        :param connection: a database connection with a transaction open
            (an async driver's too): the job is written in that transaction
            and exists if and only if it commits; the id is returned once
            it is written there.
        :raises UnknownJobError: a dependency is in neither this process nor the store.
        """
        if connection is not None:
            from ._joined import enqueue_joined

            return await enqueue_joined(self, job, connection, delay, depends_on, at, job_id)
        depends_on = await self._backing.check_dependencies(job, depends_on)
        job_id = self.submit(job, delay=delay, depends_on=depends_on, at=at, job_id=job_id)
        await self._backing.flush()
        return job_id

    # ── queues (issue 38: their views in _queueviews) ──

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

    # Step 7e (E3): submit's orchestration stays here (a delegate would cost
    # the hot path a frame); its checks are Submission's, its last step the
    # backing's, each bound once (_check, _add, _hooks: see _compose).

    _outcomes: Outcomes
    _submission: Submission
    _check: Callable[[Job, float, DependsOn], list[int]]
    _add: Callable[[Job, float, list[int], str | None], str]
    _hooks: list[SubmitHook]

    def submit(
        self,
        job: Job,
        *,
        delay: float = 0.0,
        depends_on: DependsOn = (),
        at: datetime | None = None,
        job_id: str | None = None,
        connection: object = None,
    ) -> str:
        """Queue ``job`` and return its id. Works before and after :meth:`start`.

        :param delay: seconds before the job may start.
        :param at: an aware datetime before which the job may not start,
            instead of ``delay`` (a time in the past runs now).
        :param job_id: an id of your own instead of a numbered ``job-<n>``:
            a non-empty str of at most 200 characters not starting with
            ``job-``. Idempotent: if the store already holds a job with this
            id (unfinished, or finished and kept under ``history_limit``),
            nothing is added and that job stands; the id is returned either
            way. On a durable store the store decides, so exactly one job
            has the id whichever members submit it at once.
        :param depends_on: the jobs it waits for: ids, jobs, or
            ``js.After(job, on_failure="run")`` edges (it then runs however
            that job ends; an id or a job must complete, or this job is
            cancelled). They must already be submitted, which makes cycles
            impossible. The targets of ``js.result_of`` / ``js.results_of``
            markers in the job's arguments are upstreams too.
        :param connection: a synchronous database connection with a
            transaction open (on a durable store): the job is written in
            that transaction, and exists if and only if it commits
            (docs/stores.md, "Enqueue in your own transaction").
        :raises SchedulerStoppedError: :meth:`stop` has begun.
        :raises SchedulerError: the job was already submitted.
        :raises UnknownJobError: a dependency is unknown.
        :raises ExecutorNotFoundError: the job's executor is not installed.
        :raises ValueError: ``at`` is naive, or given with a non-zero ``delay``.
        """
        if connection is not None:
            from ._joined import submit_joined

            return submit_joined(self, job, connection, delay, depends_on, at, job_id)
        if at is not None:
            delay = delay_until(at, delay)
        if job_id is not None:
            check_own_id(job_id)
        if self._run.stopping:
            raise SchedulerStoppedError(
                f"cannot submit {_describe(job)}: the scheduler is stopping or stopped; "
                "submit before stop(), or create a new JobScheduler"
            )
        deps = self._check(job, delay, depends_on)
        if job_id is not None and own_number(job_id) in self._table.jobs:
            return job_id  # held here already: that job stands
        if self._hooks:
            self._submission.run_hooks(job)
        return self._add(job, delay, deps, job_id)

    def submit_threadsafe(
        self,
        job: Job,
        *,
        delay: float = 0.0,
        depends_on: DependsOn = (),
        at: datetime | None = None,
        job_id: str | None = None,
    ) -> str:
        """Submit from another thread once the scheduler has started; returns the job id.

        It runs :meth:`submit` on the event-loop thread and waits for it, so
        when it returns :meth:`get` knows the id, and it raises in the calling
        thread whatever :meth:`submit` raises.

        :raises SchedulerError: not started yet, or called on the event-loop
            thread itself (where it would wait for itself: call :meth:`submit`).
        """
        return self._submission.threadsafe(
            job,
            lambda: self.submit(job, delay=delay, depends_on=depends_on, at=at, job_id=job_id),
        )
