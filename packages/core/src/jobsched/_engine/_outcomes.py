"""How an attempt ended: the outcome, a retry or the end, and the dependency cascade."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from .._enums import JobStatus
from .._exceptions import NonRetryableError
from .._jobs._job import Job
from .._jobs._text import storable
from .._log import INFO, logger
from ._state import _describe, _extra, _format

if TYPE_CHECKING:
    from collections.abc import Callable

    from ._attempts import Attempt
    from ._backing import Backing
    from ._completion import Completions
    from ._dispatch import Dispatcher
    from ._flowgraph import FlowGraph
    from ._link import StoreLink
    from ._state import FinishOne, JobTable, RunState, Settings

_RUNNING = JobStatus.RUNNING
_RETRY_WAIT = JobStatus.RETRY_WAIT
_COMPLETED = JobStatus.COMPLETED
_FAILED = JobStatus.FAILED
_TIMED_OUT = JobStatus.TIMED_OUT
_CANCELLED = JobStatus.CANCELLED

#: The cancel reason of an attempt whose job goes back to its durable store
#: (``jobsched worker`` past its grace) instead of ending CANCELLED.
HANDED_BACK = "handed back to the store"


class Outcomes:
    """Records outcomes: cancellation beats timeout beats error beats result.

    It owns the dependency graph of the jobs submitted here (``blocked``,
    ``dependents``): a job waits in it for its upstreams, and its end
    releases or cancels its dependents. The backing is told what to write
    (a retry, an end) and releases a runnable dependent.
    """

    __slots__ = (
        "_backing",
        "_clock",
        "_completed_in",
        "_completions",
        "_ending",
        "_graph",
        "_held",
        "_link",
        "_run",
        "_settings",
        "_table",
        "_tasks",
        "blocked",
        "dependents",
        "dispatcher",
        "early_cancels",
        "finish_one",
    )

    def __init__(
        self,
        table: JobTable,
        run: RunState,
        settings: Settings,
        backing: Backing,
        *,
        completed_in: dict[int, tuple[int, Any]],
        link: StoreLink | None,
        held: dict[int, int],
        tasks: tuple[Callable[[], None], Callable[[], None]],
    ) -> None:
        # completed_in, link, held, tasks: for complete_in's Completions
        # (see _completing), which settles an attempt that wrote one.
        self._table = table
        self._run = run
        self._settings = settings
        self._clock = settings.clock
        self._backing = backing
        self._completed_in = completed_in
        self._link = link
        self._held = held
        self._tasks = tasks
        self._completions: Completions | None = None
        self._graph: FlowGraph | None = None
        #: job -> its unmet upstreams; job -> the jobs waiting on it.
        self.blocked: dict[int, set[int]] = {}
        self.dependents: dict[int, list[int]] = {}
        #: The workers' part and its early cancels, bound once it is built
        #: (see bind: it takes settle and finish_one).
        self.dispatcher: Dispatcher | None = None
        self.early_cancels: set[int] = set()
        # The one choice: jobs are finished directly unless the backing
        # writes first (a durable store's fenced outcome).
        self._ending = ending = backing.ending
        #: Finish one job: ``_finish_here`` (memory) or ``_finish_recorded``.
        self.finish_one: FinishOne = self._finish_here if ending is None else self._finish_recorded

    def bind(self, dispatcher: Dispatcher) -> None:
        """The workers' part, made after this one (it takes settle and finish_one)."""
        self.dispatcher = dispatcher
        # Read per settled attempt: the set itself, not through the dispatcher.
        self.early_cancels = dispatcher.early_cancels

    def _completing(self) -> Completions:
        """The scheduler's side of ``complete_in`` (see ``_completion``); a
        worker's ``js.current_job()`` cell reaches it here."""
        completions = self._completions
        if completions is None:
            from ._completion import Completions

            assert self.dispatcher is not None
            completions = self._completions = Completions(
                self, self.dispatcher, self._link, self._held, self._completed_in, self._tasks
            )
        return completions

    def settle(
        self, job: Job, attempt: Attempt | None, result: Any, error: BaseException | None
    ) -> None:
        """Record how an attempt ended. Cancellation beats timeout beats error.

        Whatever a cancelled or timed-out job did afterwards (returned,
        raised, swallowed the cancellation) the outcome is the scheduler's.
        An attempt that completed in a transaction of its own
        (``complete_in``) is settled once the store says whether that
        transaction committed (see ``_completion``).
        """
        if self._completed_in:
            made = self._completed_in.pop(job._jobsched_id, None)
            if (
                made is not None
                and made[0] == job.attempts
                and self._completing().settle_later(job, attempt, result, error, made[1])
            ):
                return
        try:
            early = self.early_cancels
            if attempt is None and early and job._jobsched_id in early:
                early.discard(job._jobsched_id)
                self.finish(job, _CANCELLED, "cancelled")
            elif attempt is not None and attempt.scope.cancel_called:
                if attempt.reason == HANDED_BACK and self._backing.hand_back(job):
                    return  # back to the store, to run again
                if attempt.reason is not None:
                    self.finish(job, _CANCELLED, attempt.reason)
                else:
                    self.after_failure(job, f"timed out after {job.timeout}s", True, True)
            elif error is not None:
                self.after_failure(
                    job,
                    f"{type(error).__name__}: {error}",
                    isinstance(error, Exception) and not isinstance(error, NonRetryableError),
                    False,
                    error,
                )
            else:
                job.result = result
                # An earlier attempt's error ("worker lost", a retried
                # failure) would read as this job's: the attempts keep it.
                job.last_error = job.last_traceback = None
                self.finish(job, _COMPLETED, None)
        except Exception as exc:  # a bug in our own bookkeeping must not kill a worker
            self.recording_failed(job, exc)

    def after_failure(
        self,
        job: Job,
        error: str,
        retryable: bool,
        timed_out: bool,
        exc: BaseException | None = None,
    ) -> None:
        """Retry a failed or timed-out attempt, or finish the job FAILED / TIMED_OUT.

        :param exc: the exception the attempt raised, for ``last_traceback``
            and the log; None for a timeout.
        """
        # The exception's text is the job's, and may hold what no store can
        # keep (a parser quoting a NUL): escaped here, for every store alike.
        job.last_error = error = storable(error)
        job.last_traceback = None if exc is None else _format(exc)
        retry = job.retry
        attempts = job.attempts
        # A stopping scheduler retries nothing itself, but a durable store
        # keeps the retry for the next member to run: ending the job FAILED
        # there would make stop() cost it its retries.
        if (
            retryable
            and attempts <= retry.max_retries
            and self._backing.may_retry(self._run.stopping)
        ):
            now = self._clock()
            wait = retry.delay(attempts, self._settings.rng)
            if not 0 <= wait < math.inf:  # NaN too: it would park the job for ever
                raise ValueError(
                    f"{type(retry).__name__}.delay({attempts}) returned {wait!r}, "
                    "not a finite number of seconds >= 0"
                )
            job.run_at = now + wait
            # Written before the transition (listeners see RETRY_WAIT once
            # the store's write is queued); queued here only after it.
            self._backing.record_retry(job, wait)
            logger.warning(
                "%s: attempt %d of %d %s; retrying in %.3gs",
                _describe(job),
                attempts,
                retry.max_retries + 1,
                error if timed_out else f"failed ({error})",
                wait,
                extra=_extra(job),
            )
            self._table.transition(job, _RETRY_WAIT)
            self._backing.retry(job, now)
        else:
            logger.error(
                "%s: attempt %d %s; it ends %s",
                _describe(job),
                attempts,
                error if timed_out else f"failed ({error})",
                "TIMED_OUT" if timed_out else "FAILED",
                exc_info=exc,
                extra=_extra(job),
            )
            self.finish(job, _TIMED_OUT if timed_out else _FAILED, None)

    def recording_failed(self, job: Job, exc: Exception) -> None:
        """Our own bookkeeping raised while recording ``job``'s outcome: end it FAILED anyway.

        A job left RUNNING or RETRY_WAIT would never finish and join() would
        wait for it for ever; FAILED with the internal error is visible.
        """
        from ._anyway import end_failed

        end_failed(self, self._table, self._backing, self._clock, job, exc)

    def finish(self, job: Job, status: JobStatus, error: str | None) -> None:
        """Make ``job`` terminal, release or cancel its dependents, trim history."""
        todo = self.finish_one(job, status, error)
        # A worklist, not recursion: a failure can cascade down a long chain.
        # Only a failure with dependents builds one; a plain finish allocates nothing.
        while todo:
            dependent, reason = todo.pop()
            more = self.finish_one(dependent, _CANCELLED, reason)
            if more:
                todo.extend(more)

    def block(self, job: Job, deps: list[int]) -> None:
        """A submitted job with upstreams (``deps``): it waits in the graph for
        those not COMPLETED yet, is released at once if none, or is cancelled
        if one ended otherwise."""
        jobs = self._table.jobs
        number = job._jobsched_id
        # One loop, not a set comprehension (3.10 and 3.11 give it a frame):
        # an upstream that ended other than COMPLETED cancels the job unless
        # its edge is "run". An edge to an ended upstream pins it (see evict).
        unmet = set()
        for dep in deps:
            status = jobs[dep].status
            if status is not _COMPLETED:
                if status._terminal:  # type: ignore[attr-defined]
                    if not (job._flow and jobs[dep].job_id in job._flow.lenient):
                        self.finish(job, _CANCELLED, f"upstream job-{dep} {status.value}")
                        return
                    self.dependents.setdefault(dep, []).append(number)
                else:
                    unmet.add(dep)
            else:
                self.dependents.setdefault(dep, []).append(number)
        if not unmet:
            self._backing.release(job, self._clock())
            return
        self.blocked[number] = unmet
        for dep in unmet:
            self.dependents.setdefault(dep, []).append(number)

    def graph(self) -> FlowGraph:
        """The graph's cold side (``"run"`` edges, the guard), made on first need."""
        graph = self._graph
        if graph is None:
            from ._flowgraph import FlowGraph

            graph = self._graph = FlowGraph(self, self._table, self._backing, self._clock)
        return graph

    def evict(self, old: int) -> None:
        """Drop the history's oldest job, unless an unfinished job depends on it."""
        table = self._table
        for dep in self.dependents.get(old, ()):
            dependent = table.jobs.get(dep)
            if dependent is not None and not dependent.status._terminal:  # type: ignore[attr-defined]
                self.graph().evict(old)
                return
        self.dependents.pop(old, None)
        table.jobs.pop(old, None)
        if len(table.finished) > table.history_limit:  # past the bound since a pin
            self.graph().evict(table.finished.popleft())

    def _finish_here(
        self, job: Job, status: JobStatus, error: str | None, now: float | None = None
    ) -> list[tuple[Job, str]] | None:
        """Finish ``job`` alone (``finish_one`` in memory; after the store's
        write on a durable store); the dependents its failure cancels, if any.

        :param now: the scheduler's clock, if the caller has just read it.
        """
        if job.status._terminal:  # type: ignore[attr-defined]
            return None
        table = self._table
        try:  # costs nothing unless it raises (zero-cost exceptions)
            if error is not None:
                # Only cancellations pass a reason: failures set last_error before.
                job.last_error = error
                job.last_traceback = None
                if status is _CANCELLED and logger.isEnabledFor(INFO):
                    logger.info(
                        "%s cancelled%s",
                        _describe(job),
                        "" if error == "cancelled" else f": {error}",
                        extra=_extra(job),
                    )
            if now is None:
                now = self._clock()
            job.finished_at = now
            table.transition(job, status)
        except Exception as exc:
            self.recording_failed(job, exc)
            return None
        # Counted as soon as it is terminal, so nothing below can leave join()
        # waiting for it.
        table.unfinished -= 1
        if not table.unfinished and table.join_waiters:
            table.wake_joiners()
        number = job._jobsched_id
        if table.outcome_waiters:
            for event in table.outcome_waiters.pop(number, ()):
                event.set()
        if self.blocked:
            self.blocked.pop(number, None)
        cascade: list[tuple[Job, str]] | None = None
        if self.dependents:
            # Kept, not popped: the list pins this job in the history while
            # one of them is unfinished (see evict).
            dependents = self.dependents.get(number)
            if dependents:
                if status is not _COMPLETED:
                    # Cancel edges cascade, "run" edges are counted off: cold.
                    cascade = self.graph().ended_otherwise(job, number, status, dependents)
                else:
                    jobs = table.jobs
                    for dep in dependents:
                        dependent = jobs.get(dep)
                        if dependent is None or dependent.status._terminal:  # type: ignore[attr-defined]
                            continue
                        unmet = self.blocked.get(dep)
                        if unmet is not None:
                            unmet.discard(number)
                            if not unmet:
                                del self.blocked[dep]
                                try:
                                    self._backing.release(dependent, now)
                                except Exception as exc:
                                    self.recording_failed(dependent, exc)
        finished = table.finished
        table.remember(number)
        if len(finished) > table.history_limit:
            old = finished.popleft()
            if old in self.dependents:
                self.evict(old)
            else:
                table.jobs.pop(old, None)
        return cascade

    def _finish_recorded(
        self, job: Job, status: JobStatus, error: str | None, now: float | None = None
    ) -> list[tuple[Job, str]] | None:
        """``finish_one`` on a durable store: the backing's ``ending`` first
        (the fenced write, which may turn COMPLETED into FAILED), then
        ``_finish_here``."""
        if job.status._terminal:  # type: ignore[attr-defined]
            return None
        ending = self._ending
        assert ending is not None
        try:
            # The clock read once: the attempt's time and finished_at agree.
            if now is None and job.started_at is not None and job.status is _RUNNING:
                now = self._clock()
            status = ending(job, status, error, now)
        except Exception as exc:
            self.recording_failed(job, exc)
            return None
        return self._finish_here(job, status, error, now)
