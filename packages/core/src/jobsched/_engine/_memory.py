"""MemoryBacking: the jobs kept in this process (the memory store)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING

import anyio

from .._exceptions import SchedulerError, SchedulerStoppedError
from .._jobs._ids import next_number
from .._ordering._admission import Admission, executor_capacity
from ._state import NEW, STOPPED, _describe

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from .._jobs._executor import Executor
    from .._jobs._job import Job
    from .._ordering._queue import JobQueue
    from .._ordering._ratelimit import RateLimit
    from .._queueinfo import QueueInfo
    from .._workflows._edges import DependsOn
    from ._attempts import Attempt
    from ._link import StoreLink
    from ._memschedules import MemorySchedules
    from ._queueviews import MemoryPauses
    from ._state import JobTable, Parts, RunState, Settings
    from ._timers import Ticker


class MemoryBacking:
    """The backing of the memory store: nothing to open or close; reads and
    waits answer from the job table, woken by its events."""

    __slots__ = (
        "_block",
        "_book",
        "_clock",
        "_idle",
        "_pauses",
        "_queue",
        "_run",
        "_served",
        "_strategy",
        "_submit",
        "_table",
        "_timers",
        "admission",
        "push",
        "release",
        "take_next",
    )

    link: StoreLink | None = None
    cut_wording = "cancelled"
    #: Why an attempt the teardown cut short ends (CANCELLED).
    shutdown_reason = "scheduler shut down"
    default_grace: float | None = None  # stop() waits for running attempts
    #: Nothing to write before a job finishes: Outcomes finishes it directly.
    ending = None
    #: No claimed jobs wait here: the workers take from the queue.
    waiting: tuple[()] = ()
    #: A dependency submit does not know is unknown: nothing else holds jobs.
    dependencies_elsewhere = False
    push: Callable[[Job, float], None]
    release: Callable[[Job, float], None]

    def __init__(
        self,
        settings: Settings,
        run: RunState,
        table: JobTable,
        queue: JobQueue,
        idle: deque[anyio.Event],
        timers: Ticker,
        submit: Callable[[Job], str],
        rates: dict[str, RateLimit],
    ) -> None:
        self._pauses: MemoryPauses | None = None  # made by the first pause_queue()
        self._served: frozenset[str] | None = None
        self._clock = settings.clock
        self._strategy = settings.strategy
        self._run = run
        self._table = table
        self._queue = queue
        self._idle = idle  # idle workers' events
        self._timers = timers
        #: The dependency graph's (Outcomes.block): wait for unmet upstreams.
        self._block: Callable[[Job, list[int]], None] = _unbound
        #: Queue a runnable job (``push``); a dependent whose upstreams all
        #: completed (``release``). Attributes, not methods: one frame per
        #: release, and a test may replace both (the ``_push`` seam).
        self.push = self.release = self.put
        #: The workers' take-next: the queue's, or admission's in front of
        #: it under limits (see limit).
        self.take_next: Callable[[], Job | None] = queue.pop_next
        #: The limits (rate, executor, queue), if any (see limit).
        self.admission: Admission | None = None
        gates, queue_gates = settings.executor_limits, settings.queue_limits
        if rates or gates or queue_gates:
            # Limits live in the take-next step; without them workers pop
            # the queue directly and pay nothing for the feature.
            self.limit(
                Admission(
                    queue, self._strategy.key, self.release, self._clock, rates, gates, queue_gates
                )
            )
        self._submit = submit  # the public submit: a schedule's fire is one
        self._book: MemorySchedules | None = None
        # The ticker promotes due delayed jobs (and fires the schedules, once made).
        timers.sources = (DelayedJobs(queue, idle),)

    def bind(self, parts: Parts) -> None:
        """The parts made after the backing: a job with upstreams waits in
        Outcomes' graph."""
        self._block = parts.outcomes.block

    def limit(self, admission: Admission) -> None:
        """Limits from now on: workers read take_next before each job, so
        they use admission's at once."""
        self.admission = admission
        self.take_next = admission.take

    def executor_loaded(self, name: str, executor: Executor) -> None:
        """An executor plugin was loaded on first use: admission holds jobs to
        its capacity from then on."""
        capacity = executor_capacity(name, executor)
        if capacity is None:
            return
        admission = self.admission
        if admission is None:
            admission = Admission(
                self._queue, self._strategy.key, self.release, self._clock, {}, {}
            )
            self.limit(admission)
        admission.limit(name, capacity)

    @property
    def schedules(self) -> MemorySchedules:
        """Made on the first schedule, and from then on fired by the ticker."""
        book = self._book
        if book is None:
            from ._memschedules import MemorySchedules

            book = self._book = MemorySchedules(
                self._clock, self._table, self._timers, self._submit
            )
            self._timers.sources = (book, *self._timers.sources)
        return book

    def put(self, job: Job, now: float) -> None:
        """Queue a runnable job: ready now, or delayed until ``job.run_at``;
        a job with result markers gets its upstreams' results first."""
        if job._flow:
            from ._flowgraph import bind_inputs

            bind_inputs(job, self._table.jobs)
        if job.run_at > now:
            if self._queue.push_delayed(job):
                self._timers.wake()
        else:
            self._queue.push_ready(job)
            if self._idle:
                self._idle.popleft().set()

    def cancel_elsewhere(self, number: int, job: Job | None) -> bool | None:
        """False for a job unknown or finished; None: cancel() goes on here."""
        if job is None or job.status._terminal:  # type: ignore[attr-defined]
            return False
        return None

    def withdraw(self, job: Job) -> None:
        """A cancelled queued job leaves the queue (and admission's holds)."""
        self._queue.discard(job)
        if self.admission is not None:
            self.admission.cancelled(job)

    def attempts_to_cut(self, attempts: Collection[Attempt]) -> list[Attempt]:
        """Every running attempt, one its timeout already cut short too: in
        memory the job dies with the scheduler, CANCELLED, as it always did,
        and never waits for a retry no scheduler will make."""
        return list(attempts)

    def may_retry(self, stopping: bool) -> bool:
        """A stopping scheduler retries nothing itself."""
        return not stopping

    def failed_anyway(self, job: Job) -> None:
        pass  # nothing else holds the job

    def record_retry(self, job: Job, wait: float) -> None:
        # Nothing to write (retry() queues it) but the failed attempt's
        # progress, which the next attempt must not show as its own.
        if (flow := job._flow) is not None:
            flow.progress = flow.message = None

    def retry(self, job: Job, now: float) -> None:
        """A failed job waits here for its next attempt (after its transition
        to RETRY_WAIT, which listeners see first)."""
        self.push(job, now)

    def hand_back(self, job: Job) -> bool:
        """False: no store to hand a job back to (an attempt cut short ends here)."""
        return False

    def served(self, queues: frozenset[str] | None) -> frozenset[str] | None:
        """What submit refuses other queues' jobs for: nothing else would run them."""
        self._served = queues
        return queues

    def __setattr__(self, name: str, value: object) -> None:
        # Admission put in front of the take-next while a queue is paused
        # goes behind the pause's filter, which stays in front.
        if name == "take_next":
            pauses = getattr(self, "_pauses", None)
            if pauses is not None and pauses.paused:
                pauses.inner = value
                return
        object.__setattr__(self, name, value)

    async def queues(self) -> list[QueueInfo]:
        """The queues of the jobs here, paused or served here."""
        from ._queueviews import memory_infos

        pauses = self._pauses
        paused = pauses.paused if pauses is not None else set()
        return memory_infos(self._table.jobs.values(), paused, self._served)

    async def pause_queue(self, name: str) -> None:
        """The take-next sets the queue's jobs aside until it is resumed."""
        from .._jobs._options import check_queue
        from ._queueviews import MemoryPauses

        check_queue(name)
        pauses = self._pauses
        if pauses is None:
            clock = self._clock
            pauses = self._pauses = MemoryPauses(self.take_next, lambda j: self.push(j, clock()))
        if not pauses.paused:
            # The filter goes in front only while a queue is paused: none costs nothing.
            pauses.inner = self.take_next
            object.__setattr__(self, "take_next", pauses.take)
        pauses.paused.add(name)

    async def resume_queue(self, name: str) -> None:
        """Its jobs set aside are queued again."""
        from .._jobs._options import check_queue

        check_queue(name)
        pauses = self._pauses
        if pauses is not None and pauses.resume(name) and not pauses.paused:
            object.__setattr__(self, "take_next", pauses.inner)

    def add(self, job: Job, delay: float, deps: list[int], job_id: str | None) -> str:
        """submit()'s last step: number and stamp a checked job, then wait it on
        its upstreams or queue it (ready: an idle worker woken; delayed: the ticker)."""
        if job_id is not None:
            job._set_own_id(job_id)
        now = self._clock()
        seq = job.seq = next_number()
        number = job._jobsched_id
        if not number:
            # First needed now: the id and seq are one int object.
            number = job._jobsched_id = seq
        job.submitted_at = now
        job.run_at = now + delay if delay > 0 else now
        table = self._table
        try:
            if deps or delay > 0:
                # The key is otherwise computed later (on release or
                # promotion), where an error could no longer reach the caller.
                self._strategy.key(job)
            table.jobs[number] = job
            table.unfinished += 1
            if deps:
                self._block(job, deps)
            elif job.run_at > now:
                if self._queue.push_delayed(job):
                    self._timers.wake()
            else:
                # put(), inline: a call less per job.
                self._queue.push_ready(job)
                if self._idle:
                    self._idle.popleft().set()
        except Exception as exc:
            if table.jobs.get(number) is job:
                del table.jobs[number]
                table.unfinished -= 1
            job.seq = 0
            raise TypeError(
                f"{_describe(job)} cannot be queued: the strategy "
                f"{type(self._strategy).__name__} failed on it ({type(exc).__name__}: {exc}); "
                "check the fields it orders by (priority, deadline, tenant)"
            ) from exc
        return f"job-{number}" if job_id is None else job_id

    async def open(self) -> None:
        pass

    def spawn(self, group: TaskGroup) -> None:
        pass

    async def close(self) -> None:
        pass

    async def close_unstarted(self) -> None:
        pass

    def use_registry(self, registry: Mapping[str, object]) -> None:
        pass

    async def flush(self) -> None:
        pass

    async def fetch(self, job_id: str) -> Job:
        return self._table.get(job_id)

    async def check_dependencies(self, job: Job, depends_on: DependsOn) -> DependsOn:
        return depends_on  # submit checks them here

    async def join(self) -> None:
        table, run = self._table, self._run
        while table.unfinished:
            if run.phase == STOPPED:
                raise SchedulerStoppedError(
                    f"{table.unfinished} job(s) will never finish: the scheduler stopped "
                    "with them still queued"
                )
            event = anyio.Event()
            table.join_waiters.append(event)
            await event.wait()

    async def wait(self, job_id: str, seconds: float | None) -> Job:
        with anyio.fail_after(seconds):
            job = self._table.get(job_id)
            if self._run.phase == NEW and not job.status._terminal:  # type: ignore[attr-defined]
                raise SchedulerError(
                    "wait() waits for the workers to run the job, but this scheduler was "
                    "never started: use `async with JobScheduler(...) as s:` or "
                    "`await s.start()` first"
                )
            while not job.status._terminal:  # type: ignore[attr-defined]
                if self._run.phase == STOPPED:
                    raise SchedulerStoppedError(
                        f"{_describe(job)} will never finish: the scheduler stopped with it "
                        f"{job.status.value}"
                    )
                event = anyio.Event()
                self._table.outcome_waiters.setdefault(job._jobsched_id, []).append(event)
                await event.wait()
            return job


class DelayedJobs:
    """The memory queue's delayed jobs as the ticker's due source: a job due
    moves to the ready heap and wakes an idle worker."""

    __slots__ = ("_idle", "_queue")

    def __init__(self, queue: JobQueue, idle: deque[anyio.Event]) -> None:
        self._queue = queue
        self._idle = idle  # idle workers' events

    def fire_due(self, now: float) -> None:
        moved = self._queue.promote_due(now)
        idle = self._idle
        while moved and idle:
            idle.popleft().set()
            moved -= 1

    def next_at(self) -> float | None:
        return self._queue.next_due()


def _unbound(job: Job, deps: list[int]) -> None:
    raise AssertionError("MemoryBacking.bind() was not called: no dependency graph")
