"""The workers: take the next job, run its attempt, hand the outcome over."""

from __future__ import annotations

import math
import types
from collections.abc import Callable, Coroutine, Generator, Mapping
from typing import TYPE_CHECKING, Any

import anyio

from .._enums import JobStatus
from .._jobs._current import Running
from .._jobs._current import running as current
from .._jobs._job import Job
from .._log import logger
from . import _resume
from ._attempts import SHUTDOWN_SCOPE, Attempt, Attempts, shut_down, worker_cancelled
from ._attempts import inside_workers_of as inside_workers_of  # _lifecycle's and _sync's
from ._resume import Abandoned, Resume
from ._state import _describe

if TYPE_CHECKING:
    from collections import deque

    from anyio.abc import TaskGroup

    from ._backing import WorkSource
    from ._executors import ExecutorSet
    from ._state import FinishOne, JobTable, RunState
    from ._timers import Ticker

    #: ``Outcomes.settle``: how an attempt ended (its stand-in, result, error).
    Settle = Callable[[Job, Attempt | None, Any, BaseException | None], None]

_RUNNING = JobStatus.RUNNING
_COMPLETED = JobStatus.COMPLETED

_Coroutine = types.CoroutineType

# What a worker does after an attempt that suspended: go on in its scope, make
# a new scope (the attempt cancelled it), or exit (it was replaced while it
# carried an abandoned job).
_KEEP, _NEW_SCOPE, _RETIRE = object(), object(), object()

# A worker that keeps finding jobs that complete without suspending never
# yields to the event loop; every this many jobs it does, so the ticker,
# other workers and cross-thread submits are not starved.
_YIELD_EVERY = 64


class Dispatcher:
    """N worker tasks, each running attempts inline in one long-lived cancel scope.

    It owns what runs: the attempts (its ``Attempts`` book), how many are in
    flight and the most ever, and the group the workers run in. It takes
    work from a :class:`~._backing.WorkSource` and hands each outcome to
    ``settle``, or (an attempt that completed without suspending) straight to
    ``finish_one``. ``idle`` is shared by construction: a worker with nothing
    to take appends its event; whoever has work for it pops one and sets it.
    """

    __slots__ = (
        "_clock",
        "_completed_in",
        "_executors",
        "_finish_one",
        "_host",
        "_idle",
        "_in_flight",
        "_run",
        "_settle",
        "_source",
        "_table",
        "_task_exited",
        "_task_started",
        "attempt_ages",
        "attempts",
        "cancel_running",
        "early_cancels",
        "peak_running",
        "running",
        "workers_group",
    )

    def __init__(
        self,
        source: WorkSource,
        settle: Settle,
        finish_one: FinishOne,
        table: JobTable,
        ticker: Ticker,
        executors: ExecutorSet,
        run: RunState,
        *,
        clock: Callable[[], float],
        idle: deque[anyio.Event],
        completed_in: Mapping[int, object],
        tasks: tuple[Callable[[], None], Callable[[], None]],
        host: object,
    ) -> None:
        # settle, finish_one: Outcomes'. completed_in (read): jobs that completed
        # in a transaction of their own. tasks: the lifecycle's count of live
        # tasks. host: what a worker's js.current_job() cell names (Outcomes,
        # which answers complete_in).
        self._source = source
        self._settle = settle
        self._finish_one = finish_one
        self._table = table
        self._executors = executors
        self._run = run
        self._clock = clock
        self._idle = idle
        self._completed_in = completed_in
        self._task_started, self._task_exited = tasks
        self._host = host
        #: The running attempts that suspended, as others (setting_up()) reach them.
        self.attempts = attempts = Attempts(table, ticker, clock, self.abandon)
        self.cancel_running = attempts.cancel
        self.running = attempts.running
        self.attempt_ages = attempts.ages
        #: The book's early cancels, on self too: the workers test it per job.
        self.early_cancels = attempts.early
        self._in_flight = 0
        #: The most attempts that were ever in flight at once.
        self.peak_running = 0
        #: Where the workers run (and a replacement worker starts); None
        #: until they start.
        self.workers_group: TaskGroup | None = None

    def start_workers(self, group: TaskGroup, count: int) -> None:
        """Start ``count`` workers in ``group``, marked as this dispatcher's.

        The lifecycle counts them as live tasks before it calls this.
        """
        self.workers_group = group
        # A task copies the context it is started in: the workers' (and so
        # their jobs' and the jobs' child tasks') say whose workers they are.
        inside = inside_workers_of.set((*inside_workers_of.get(), self))
        try:
            for i in range(count):
                name = "jobsched-worker" if count == 1 else f"jobsched-worker-{i}"
                group.start_soon(self._worker, name=name)
        finally:
            inside_workers_of.reset(inside)

    async def _worker(self) -> None:
        # Once per task: js.current_job() reads the attempt from this cell.
        current.set(Running(self._host))
        try:
            while not self._run.stopping:
                # One scope serves every attempt this worker runs (one per
                # attempt would cost more than a no-op job); cancel() and
                # timeouts cancel it, and only then is a new one made.
                with anyio.CancelScope() as scope:
                    if await self._work(scope) is _RETIRE:
                        break
        finally:
            if self._source.waiting and self._idle:
                self._idle.popleft().set()  # claimed jobs it would have taken
            self._task_exited()

    async def _work(self, scope: anyio.CancelScope) -> object:
        """Run attempts inside ``scope`` until one of them is cancelled or times out.

        :returns: ``_RETIRE`` if this worker was replaced while it carried an
            abandoned job, which has now ended.
        """
        from anyio.lowlevel import checkpoint

        # Bound once per scope (plan: the worker loop reads no part per job
        # but the source's take_next, which admission may rebind).
        source = self._source
        waiting = source.waiting
        idle = self._idle
        executors = self._executors
        clock = self._clock
        run = self._run
        transition = self._table.transition
        finish_one = self._finish_one
        cell = current.get()
        assert cell is not None
        streak = 0
        while not run.stopping:
            # Read each time: admission starts when an executor with a
            # capacity is first loaded, possibly by the job that just ran.
            job = source.take_next()
            if job is None:
                streak = 0
                wakeup = anyio.Event()
                idle.append(wakeup)
                await wakeup.wait()
                continue
            # Counted before the transition, so listeners told of RUNNING see
            # this attempt's number and start time.
            job.attempts += 1
            job.started_at = started = clock()
            transition(job, _RUNNING)
            self._in_flight += 1
            if self._in_flight > self.peak_running:
                self.peak_running = self._in_flight
            cell.job = job
            # Step the attempt once by hand: most jobs that never suspend need
            # no cancel handle and no timer at all.
            try:
                it: Coroutine[Any, Any, Any] | Generator[Any, Any, Any]
                it = executors[job.executor].run(job)
                if type(it) is not _Coroutine:
                    # A coroutine steps directly; its __await__ wrapper would
                    # cost an allocation and a call layer per send.
                    it = it.__await__()
                first = it.send(None)
            except StopIteration as stop:
                self._in_flight -= 1
                # One clock read serves the blocked-loop check and finished_at.
                ended = clock()
                timeout = job.timeout
                if self.early_cancels or self._completed_in:
                    # Cancelled before it suspended, or it completed in a
                    # transaction of its own: settle sorts it out.
                    self._settle(job, None, stop.value, None)
                elif timeout is not None and ended - started >= timeout:
                    self._overran(job)
                else:
                    # The common case, without settle's checks for outcomes
                    # that cannot happen to an attempt that never suspended.
                    job.result = stop.value
                    try:
                        # Only a failure cascades to dependents: finish_one is all of _finish.
                        finish_one(job, _COMPLETED, None, ended)
                    except Exception:  # as in settle: a worker must survive our bugs
                        logger.exception("jobsched failed to record the outcome of %s", job)
                streak += 1
                if streak == _YIELD_EVERY:
                    streak = 0
                    await checkpoint()
                continue
            except BaseException as exc:
                self._in_flight -= 1
                if worker_cancelled(exc, scope):
                    # The worker is being torn down (a trio checkpoint that
                    # raised before suspending): the job did not fail.
                    self._settle(job, shut_down(source.shutdown_reason), None, None)
                    raise
                # The job's error, or its own SystemExit and the like: the
                # attempt fails, the scheduler goes on.
                timeout = job.timeout
                if timeout is not None and not self.early_cancels and clock() - started >= timeout:
                    self._overran(job)
                else:
                    self._settle(job, None, None, exc)
                streak += 1
                if streak == _YIELD_EVERY:
                    streak = 0
                    await checkpoint()
                continue
            streak = 0
            if waiting and idle:
                # Suspended: the next claimed job goes to another worker.
                idle.popleft().set()
            outcome = await self._continue_attempt(job, scope, it, first, cell)
            if outcome is not _KEEP:
                return outcome
            cell = current.get()  # a new one if the attempt did not end well
            assert cell is not None
        return _KEEP

    async def _continue_attempt(
        self, job: Job, scope: anyio.CancelScope, it: Any, first: Any, cell: Running
    ) -> object:
        """Finish an attempt that suspended.

        :returns: ``_KEEP`` to go on in ``scope``, ``_NEW_SCOPE`` if the attempt
            cancelled it, ``_RETIRE`` if the attempt was abandoned and this
            worker replaced.
        """
        timeout = job.timeout
        attempt = Attempt(scope, job, self.attempts)
        attempt.cell = cell
        tried = job.attempts
        on_scope = self.attempts.begin(attempt)  # True: the scope has the deadline
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
            if worker_cancelled(exc, scope):
                # Our scope's cancellation (cancel() or the timeout), which the
                # scope absorbs, or the worker being torn down.
                self._new_cell(cell, tried)
                if not scope.cancel_called:
                    # On a durable store the job goes back to it, never cancelled.
                    attempt.reason = attempt.reason or self._source.shutdown_reason
                    attempt.scope = SHUTDOWN_SCOPE
                if not attempt.abandoned:
                    self._end_attempt(job, attempt, None, None)
                raise
            # The job's own SystemExit, KeyboardInterrupt, GeneratorExit, or a
            # group of them: its outcome, never the worker's.
            error = exc
        if attempt.abandoned:
            return _RETIRE
        if error is not None or scope.cancel_called:
            self._new_cell(cell, tried)
        if on_scope or scope.deadline != math.inf:
            # Also a deadline set on the scope during the attempt (by
            # _setup_ends, or by the ticker exiting): the scope outlives it.
            scope.deadline = math.inf
        # From started_at as it is now: an executor's set-up may have moved it.
        if (
            timeout is not None
            and not scope.cancel_called
            and self._clock() >= job.started_at + timeout  # type: ignore[operator]
        ):
            self._overran(job, attempt)
            return _KEEP
        self._end_attempt(job, attempt, result, error)
        return _NEW_SCOPE if scope.cancel_called else _KEEP

    def _new_cell(self, cell: Running, tried: int) -> None:
        """An attempt that suspended ended failed or cancelled: a thread or task
        it no longer waits for may run on with its worker's cell, so the cell
        stays that attempt's (js.current_job() there names it) and the worker
        takes a new one. Not after a clean end, which waited for all it began:
        the hot path keeps its cell."""
        cell.attempt = tried
        current.set(Running(self._host))

    def _end_attempt(
        self, job: Job, attempt: Attempt, result: Any, error: BaseException | None
    ) -> None:
        self.attempts.end(attempt)
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
        if attempt is None:
            self._settle(job, Attempt(SHUTDOWN_SCOPE, job, None), None, None)  # type: ignore[arg-type]
        else:
            attempt.scope = SHUTDOWN_SCOPE
            self._end_attempt(job, attempt, None, None)

    def abandon(self, attempt: Attempt) -> None:
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
        if attempt.cell is not None:
            # Its worker task retires with the job: the cell names this attempt
            # for good, whatever attempt of the job runs next elsewhere.
            attempt.cell.attempt = job.attempts
        self._end_attempt(job, attempt, None, None)
        group = self.workers_group
        if group is not None and not self._run.stopping:
            self._task_started()
            self.start_workers(group, 1)
