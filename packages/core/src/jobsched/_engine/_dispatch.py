"""The workers: take the next job, run its attempt, hand the outcome over."""

from __future__ import annotations

import contextlib
import contextvars
import math
import types
from collections.abc import Coroutine, Generator, Iterator
from typing import TYPE_CHECKING, Any

import anyio

from .._enums import JobStatus
from .._jobs._current import Running, running
from .._jobs._job import Job
from .._log import logger
from . import _resume
from ._attempts import SHUTDOWN_SCOPE, Attempt
from ._resume import Abandoned, Resume
from ._state import _describe
from ._timers import Timers

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

_RUNNING = JobStatus.RUNNING
_COMPLETED = JobStatus.COMPLETED

_Coroutine = types.CoroutineType

# What a worker does after an attempt that suspended: go on in its scope, make
# a new scope (the attempt cancelled it), or exit (it was replaced while it
# carried an abandoned job).
_KEEP, _NEW_SCOPE, _RETIRE = object(), object(), object()

# The schedulers whose worker task (and so whose running job) the current
# context belongs to: stop() from there would wait for its own worker.
inside_workers_of: contextvars.ContextVar[tuple[object, ...]] = contextvars.ContextVar(
    "jobsched_inside_workers_of", default=()
)

# A worker that keeps finding jobs that complete without suspending never
# yields to the event loop; every this many jobs it does, so the ticker,
# other workers and cross-thread submits are not starved.
_YIELD_EVERY = 64


class Dispatch(Timers):
    """N worker tasks, each running attempts inline in one long-lived cancel scope."""

    async def _worker(self) -> None:
        # Once per task: js.current_job() reads the attempt from this cell.
        running.set(Running(self))
        try:
            while not self._run.stopping:
                # One scope serves every attempt this worker runs; cancel()
                # and timeouts cancel it, and only then is a new one made.
                # Entering a scope per attempt would cost more than a no-op
                # job itself.
                with anyio.CancelScope() as scope:
                    if await self._work(scope) is _RETIRE:
                        break
        finally:
            if self._claimed and self._idle_workers:
                self._idle_workers.popleft().set()  # claimed jobs it would have taken
            self._task_exited()

    async def _work(self, scope: anyio.CancelScope) -> object:
        """Run attempts inside ``scope`` until one of them is cancelled or times out.

        :returns: ``_RETIRE`` if this worker was replaced while it carried an
            abandoned job, which has now ended.
        """
        from anyio.lowlevel import checkpoint

        idle = self._idle_workers
        executors = self._executors
        clock = self._clock
        run = self._run
        transition = self._table.transition
        finish_one = self._finish_one
        cell = running.get()
        assert cell is not None
        streak = 0
        while not run.stopping:
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
            job.started_at = started = clock()
            transition(job, _RUNNING)
            self._in_flight += 1
            if self._in_flight > self.peak_running:
                self.peak_running: int = self._in_flight
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
                if self._early_cancels or self._completed_in:
                    # Cancelled before it suspended, or it completed in a
                    # transaction of its own: _settle sorts it out.
                    self._settle(job, None, stop.value, None)
                elif timeout is not None and ended - started >= timeout:
                    self._overran(job)
                else:
                    # The common case, without _settle's checks for outcomes
                    # that cannot happen to an attempt that never suspended.
                    job.result = stop.value
                    try:
                        # Only a failure cascades to dependents: finish_one is all of _finish.
                        finish_one(job, _COMPLETED, None, ended)
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
                    self._settle(job, _shut_down(self._backing.shutdown_reason), None, None)
                    raise
                # The job's error, or its own SystemExit and the like: the
                # attempt fails, the scheduler goes on.
                timeout = job.timeout
                if timeout is not None and not self._early_cancels and clock() - started >= timeout:
                    self._overran(job)
                else:
                    self._settle(job, None, None, exc)
                streak += 1
                if streak == _YIELD_EVERY:
                    streak = 0
                    await checkpoint()
                continue
            streak = 0
            if self._claimed and idle:
                # Suspended: the next claimed job goes to another worker.
                idle.popleft().set()
            outcome = await self._continue_attempt(job, scope, it, first, cell)
            if outcome is not _KEEP:
                return outcome
            cell = running.get()  # a new one if the attempt did not end well
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
        number = job._jobsched_id
        attempt = Attempt(scope, job, self._start_grace)
        attempt.cell = cell
        tried = job.attempts
        on_scope = False  # the timeout is the scope's own deadline (ticker gone)
        if timeout is not None and not (self._setting_up and number in self._setting_up):
            assert job.started_at is not None
            deadline = job.started_at + timeout
            if not self._timers.watch(attempt, deadline):
                scope.deadline = anyio.current_time() + (deadline - self._clock())
                on_scope = True
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
                self._new_cell(cell, tried)
                if not scope.cancel_called:
                    # On a durable store the job goes back to it, never cancelled.
                    attempt.reason = attempt.reason or self._backing.shutdown_reason
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
        running.set(Running(self))

    def _end_attempt(
        self, job: Job, attempt: Attempt, result: Any, error: BaseException | None
    ) -> None:
        del self._attempts[job._jobsched_id]
        self._timers.deadlines.ended(attempt)
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
        self._timers.grace(attempt)

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
        if attempt.cell is not None:
            # Its worker task retires with the job: the cell names this attempt
            # for good, whatever attempt of the job runs next elsewhere.
            attempt.cell.attempt = job.attempts
        self._end_attempt(job, attempt, None, None)
        group = self._workers_group
        if group is not None and not self._run.stopping:
            self._live_tasks += 1
            self._start_workers(group, 1, "jobsched-worker")

    def _setup_begins(self, job: Job) -> None:
        """``job``'s executor waits for a set-up: its timeout stops counting."""
        number = job._jobsched_id
        self._setting_up.add(number)
        attempt = self._attempts.get(number)
        if attempt is None or attempt.scope.cancel_called:
            return  # not suspended yet (no deadline yet), or being cancelled (a grace runs)
        self._timers.deadlines.unwatch(attempt)
        attempt.scope.deadline = math.inf

    def _setup_ends(self, job: Job) -> None:
        """The set-up is over: the attempt starts now, and its timeout counts from here."""
        number = job._jobsched_id
        self._setting_up.discard(number)
        attempt = self._attempts.get(number)
        if job.status is not _RUNNING or (attempt is not None and attempt.scope.cancel_called):
            # Recorded already (abandoned), or cancelled or timed out during
            # the set-up (its grace runs): it never started its work.
            return
        job.started_at = now = self._clock()
        timeout = job.timeout
        if timeout is None or attempt is None:
            return  # not suspended yet: _continue_attempt sets the deadline from started_at
        deadline = now + timeout
        if not self._timers.watch(attempt, deadline):
            attempt.scope.deadline = anyio.current_time() + timeout

    def _start_workers(self, group: TaskGroup, count: int, name: str) -> None:
        """Start ``count`` workers in ``group``, marked as this scheduler's."""
        # A task copies the context it is started in: the workers' (and so
        # their jobs' and the jobs' child tasks') say whose workers they are.
        inside = inside_workers_of.set((*inside_workers_of.get(), self))
        try:
            for i in range(count):
                group.start_soon(self._worker, name=name if count == 1 else f"{name}-{i}")
        finally:
            inside_workers_of.reset(inside)


def _worker_cancelled(exc: BaseException, scope: anyio.CancelScope) -> bool:
    """True if ``exc`` is the worker's cancellation, not something the job raised.

    Our scope's cancellation, or the worker's task being cancelled from outside
    (the loop's clock of the cancelled scopes: an effective deadline of -inf).
    """
    if not isinstance(exc, anyio.get_cancelled_exc_class()):
        return False
    return scope.cancel_called or anyio.current_effective_deadline() == -math.inf


def _shut_down(reason: str) -> Attempt:
    """An attempt the teardown cut short, ending for ``reason`` (the backing's)."""
    attempt = Attempt(SHUTDOWN_SCOPE, None, None)  # type: ignore[arg-type]
    attempt.reason = reason
    return attempt


@contextlib.contextmanager
def setting_up(job: Job) -> Iterator[None]:
    """For executors: around what an attempt waits for before its work can start.

    An executor wraps in it a wait that is not the job's work, such as a
    worker process starting. Meanwhile the job's timeout does not run, and
    when the block exits, ``job.started_at`` is set to that moment and the
    timeout counts from there. Cancelling still reaches the attempt. Outside
    an attempt run by a :class:`~jobsched.JobScheduler` it does nothing.
    """
    schedulers = inside_workers_of.get()
    # The innermost scheduler is the one whose worker runs this attempt.
    dispatch = schedulers[-1] if schedulers else None
    if (
        not isinstance(dispatch, Dispatch)
        or dispatch._table.jobs.get(job._jobsched_id) is not job
        or job.status is not _RUNNING
    ):
        yield
        return
    dispatch._setup_begins(job)
    try:
        yield
    finally:
        dispatch._setup_ends(job)
