"""The workers: take the next job, run its attempt, hand the outcome over."""

from __future__ import annotations

import math
import types
from collections.abc import Coroutine, Generator
from typing import Any

import anyio

from ._attempts import SHUTDOWN_SCOPE, Attempt
from ._enums import JobStatus
from ._exceptions import NonRetryableError
from ._jobs import Job
from ._log import logger
from ._resume import Abandoned, Resume
from ._state import _describe
from ._timers import Timers

_RUNNING = JobStatus.RUNNING
_COMPLETED = JobStatus.COMPLETED

_Coroutine = types.CoroutineType

# A worker that keeps finding jobs that complete without suspending never
# yields to the event loop; every this many jobs it does, so the ticker,
# other workers and cross-thread submits are not starved.
_YIELD_EVERY = 64


class Dispatch(Timers):
    """N worker tasks, each running attempts inline in one long-lived cancel scope."""

    async def _worker(self) -> None:
        try:
            while not self._stopping:
                # One scope serves every attempt this worker runs; cancel()
                # and timeouts cancel it, and only then is a new one made.
                # Entering a scope per attempt would cost more than a no-op
                # job itself.
                with anyio.CancelScope() as scope:
                    await self._work(scope)
        finally:
            self._task_exited()

    async def _work(self, scope: anyio.CancelScope) -> None:
        """Run attempts inside ``scope`` until one of them is cancelled or times out."""
        from anyio.lowlevel import checkpoint

        take = self._take_next
        idle = self._idle_workers
        executors = self._executors
        clock = self._clock
        transition = self._transition
        finish_one = self._finish_one
        streak = 0
        while not self._stopping:
            job = take()
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
                self.peak_running: int = self._in_flight
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
                if self._early_cancels:
                    self._settle(job, None, stop.value, None)
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
            except Exception as exc:
                self._in_flight -= 1
                self._settle(job, None, None, exc)
                streak += 1
                if streak == _YIELD_EVERY:
                    streak = 0
                    await checkpoint()
                continue
            except BaseException as exc:
                # KeyboardInterrupt and the like from the job's own code: record
                # it as the job's failure, then let it propagate.
                self._in_flight -= 1
                self._settle(job, None, None, NonRetryableError(f"{type(exc).__name__}: {exc}"))
                raise
            streak = 0
            if not await self._continue_attempt(job, scope, it, first):
                return

    async def _continue_attempt(
        self, job: Job, scope: anyio.CancelScope, it: Any, first: Any
    ) -> bool:
        """Finish an attempt that suspended; False if it cancelled the worker's scope."""
        timeout = job.timeout
        attempt = Attempt(scope)
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
            logger.warning("%s %s", _describe(job), exc)
            error = exc
        except Exception as exc:
            error = exc
        except BaseException:
            # Either our scope's cancellation (cancel() or the timeout), which
            # the scope absorbs, or the worker being torn down.
            if not scope.cancel_called:
                attempt.reason = attempt.reason or "scheduler shut down"
                attempt.scope = SHUTDOWN_SCOPE
            self._end_attempt(job, attempt, None, None)
            raise
        if scope.cancel_called:
            self._end_attempt(job, attempt, result, error)
            return False
        if on_scope:
            scope.deadline = math.inf
        self._end_attempt(job, attempt, result, error)
        return True

    def _end_attempt(
        self, job: Job, attempt: Attempt, result: Any, error: BaseException | None
    ) -> None:
        del self._attempts[job._jobsched_id]
        self._deadlines.ended(attempt)
        self._in_flight -= 1
        self._settle(job, attempt, result, error)
