"""Running attempts: the book of them (what cancel() reaches, what a set-up pauses), and
one deadline heap for their timeouts and graces."""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import math
from collections.abc import Callable, Collection, Iterator
from heapq import heapify, heappop, heappush
from typing import TYPE_CHECKING, Any

import anyio

from .._enums import JobStatus
from .._jobs._current import Running
from .._jobs._job import Job
from . import _resume

if TYPE_CHECKING:
    from ._dispatch import Dispatcher
    from ._state import JobTable
    from ._timers import Ticker

_RUNNING = JobStatus.RUNNING

# The dispatchers whose worker task (and so whose running job) the current
# context belongs to (see Dispatcher.start_workers): stop() from there would
# wait for its own worker; setting_up() finds the attempt's dispatcher here.
inside_workers_of: contextvars.ContextVar[tuple[Dispatcher, ...]] = contextvars.ContextVar(
    "jobsched_inside_workers_of", default=()
)


class _CancelledScope:
    """Stands in for the scope of an attempt that is over as cancelled or timed out:
    the worker itself was cancelled (shutdown), or the attempt ended past its deadline."""

    cancel_called = True


SHUTDOWN_SCOPE: Any = _CancelledScope()


class Attempt:
    """A running attempt that suspended: what cancel() needs to reach it."""

    __slots__ = (
        "abandoned",
        "cell",
        "deadline",
        "job",
        "live",
        "owner",
        "reason",
        "scope",
        "seq",
    )

    def __init__(
        self,
        scope: anyio.CancelScope,
        job: Job,
        owner: Attempts,
    ) -> None:
        self.scope: anyio.CancelScope = scope
        self.job = job
        self.reason: str | None = None
        self.live = True
        #: The scheduler stopped waiting for it (see Dispatcher.abandon).
        self.abandoned = False
        #: When it times out, or its grace ends (scheduler clock), while
        #: Deadlines watches it; ``seq`` tells its one live heap entry.
        self.deadline: float | None = None
        self.seq = 0
        #: The book it is in: told when it is cancelled, asked to abandon it.
        self.owner = owner
        #: Its worker's js.current_job() cell (see _jobs._current.Running).
        self.cell: Running | None = None

    def cancel(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason
        if not self.scope.cancel_called:
            self.scope.cancel()
            self.owner.start_grace(self)


def abandon(attempt: Attempt) -> None:
    """What the ticker's deadlines call for an attempt past its grace: its
    dispatcher abandons it (the ticker is built before the dispatcher)."""
    attempt.owner.abandon(attempt)


class Attempts:
    """The Dispatcher's book of running attempts that suspended, by job:
    what cancel() reaches, what the ticker times out, what an executor's
    set-up pauses; and the cancels that came before an attempt suspended."""

    __slots__ = ("_by_job", "_clock", "_table", "_ticker", "abandon", "early", "setting_up")

    def __init__(
        self,
        table: JobTable,
        ticker: Ticker,
        clock: Callable[[], float],
        abandon: Callable[[Attempt], None],
    ) -> None:
        self._table = table
        self._ticker = ticker
        self._clock = clock
        self._by_job: dict[int, Attempt] = {}
        #: Running jobs cancelled before their attempt suspended: the attempt
        #: sees it as soon as it can (``begin``, or Outcomes' settle).
        self.early: set[int] = set()
        #: Running jobs whose executor's set-up is not over.
        self.setting_up: set[int] = set()
        #: The dispatcher's: an attempt outlived its grace.
        self.abandon = abandon

    def begin(self, attempt: Attempt) -> bool:
        """``attempt`` suspended: watch its timeout; cancel it if a cancel came first.

        :returns: True if its timeout is its scope's own deadline (no ticker
            watches it).
        """
        job = attempt.job
        number = job._jobsched_id
        timeout = job.timeout
        on_scope = False
        if timeout is not None and not (self.setting_up and number in self.setting_up):
            assert job.started_at is not None
            deadline = job.started_at + timeout
            if not self._ticker.watch(attempt, deadline):
                attempt.scope.deadline = anyio.current_time() + (deadline - self._clock())
                on_scope = True
        self._by_job[number] = attempt
        if self.early and number in self.early:
            self.early.discard(number)
            attempt.cancel("cancelled")
        return on_scope

    def end(self, attempt: Attempt) -> None:
        """``attempt`` is over: no longer cancellable, its deadline forgotten."""
        del self._by_job[attempt.job._jobsched_id]
        self._ticker.deadlines.ended(attempt)

    def start_grace(self, attempt: Attempt) -> None:
        """``attempt`` was just cancelled: give it CANCEL_GRACE seconds to end."""
        self._ticker.grace(attempt)

    def cancel(self, number: int) -> None:
        """Cancel the running attempt of job ``number``."""
        attempt = self._by_job.get(number)
        if attempt is None:
            # Cancelled from inside its own first step or from a listener
            # of its start: the attempt sees it as soon as it can.
            self.early.add(number)
        else:
            attempt.cancel("cancelled")

    def running(self) -> Collection[Attempt]:
        """The attempts running now that suspended at least once (a live view)."""
        return self._by_job.values()

    def ages(self, now: float) -> Iterator[float]:
        """How long each of them has run, at ``now`` (scheduler clock)."""
        for attempt in self._by_job.values():
            started = attempt.job.started_at
            if started is not None:
                yield now - started

    def runs(self, job: Job) -> bool:
        """Whether ``job`` is this scheduler's and running (its set-up is ours)."""
        return self._table.jobs.get(job._jobsched_id) is job and job.status is _RUNNING

    def setup_begins(self, job: Job) -> None:
        """``job``'s executor waits for a set-up: its timeout stops counting."""
        number = job._jobsched_id
        self.setting_up.add(number)
        attempt = self._by_job.get(number)
        if attempt is None or attempt.scope.cancel_called:
            return  # not suspended yet (no deadline yet), or being cancelled (a grace runs)
        self._ticker.deadlines.unwatch(attempt)
        attempt.scope.deadline = math.inf

    def setup_ends(self, job: Job) -> None:
        """The set-up is over: the attempt starts now, and its timeout counts from here."""
        number = job._jobsched_id
        self.setting_up.discard(number)
        attempt = self._by_job.get(number)
        if job.status is not _RUNNING or (attempt is not None and attempt.scope.cancel_called):
            # Recorded already (abandoned), or cancelled or timed out during
            # the set-up (its grace runs): it never started its work.
            return
        job.started_at = now = self._clock()
        timeout = job.timeout
        if timeout is None or attempt is None:
            return  # not suspended yet: begin() sets the deadline from started_at
        deadline = now + timeout
        if not self._ticker.watch(attempt, deadline):
            attempt.scope.deadline = anyio.current_time() + timeout


def worker_cancelled(exc: BaseException, scope: anyio.CancelScope) -> bool:
    """True if ``exc`` is the worker's cancellation, not something the job raised.

    Our scope's cancellation, or the worker's task being cancelled from outside
    (the loop's clock of the cancelled scopes: an effective deadline of -inf).
    """
    if not isinstance(exc, anyio.get_cancelled_exc_class()):
        return False
    return scope.cancel_called or anyio.current_effective_deadline() == -math.inf


def shut_down(reason: str) -> Attempt:
    """An attempt the teardown cut short, ending for ``reason`` (the backing's)."""
    attempt = Attempt(SHUTDOWN_SCOPE, None, None)  # type: ignore[arg-type]
    attempt.reason = reason
    return attempt


class Deadlines:
    """The timeouts and cancel graces of every suspended attempt, in one heap
    the ticker watches.

    A timer per attempt (setting and resetting the worker scope's deadline)
    cost about 4 µs, as much as the rest of an attempt that suspends: anyio
    makes and cancels an event-loop timer each time. Here an attempt's
    timeout is a heap push; the ticker sleeps until the earliest deadline and
    cancels the scope of an attempt still running then (its ``reason`` stays
    None: it timed out). A cancelled attempt gets a second entry,
    :data:`~jobsched._engine._resume.CANCEL_GRACE` later: if it is still running
    then, ``abandon`` is called with it. An attempt has one live entry at a
    time (the one whose ``seq`` it holds); the others, and those of attempts
    that ended, are removed lazily: at once when they head the heap (with one
    timeout for all jobs they nearly always do), otherwise when the stale
    entries outnumber the live ones.
    """

    __slots__ = ("_abandon", "_heap", "_seq", "_stale")

    def __init__(self, abandon: Callable[[Attempt], None]) -> None:
        self._heap: list[tuple[float, int, Attempt]] = []
        self._seq = itertools.count(1)
        self._stale = 0
        self._abandon = abandon

    def watch(self, attempt: Attempt, deadline: float) -> None:
        if attempt.deadline is not None:
            self._stale += 1  # its earlier entry
        attempt.deadline = deadline
        attempt.seq = seq = next(self._seq)
        heappush(self._heap, (deadline, seq, attempt))

    def unwatch(self, attempt: Attempt) -> None:
        """Stop watching ``attempt``'s deadline, for now (it may be watched again)."""
        if attempt.deadline is not None:
            attempt.deadline = None
            attempt.seq = 0  # no entry has it: the one in the heap is stale
            self._stale += 1

    def grace(self, attempt: Attempt, now: float) -> float:
        """``attempt`` was just cancelled: watch for it outliving the grace; when that is."""
        deadline = now + _resume.CANCEL_GRACE
        self.watch(attempt, deadline)
        return deadline

    def ended(self, attempt: Attempt) -> None:
        """``attempt`` is over: forget its deadline."""
        attempt.live = False
        if attempt.deadline is None:
            return
        attempt.deadline = None
        self._stale += 1
        heap = self._heap
        while heap and not _is_live(heap[0]):
            heappop(heap)
            self._stale -= 1
        if self._stale > 64 and self._stale * 2 > len(heap):
            self._heap = [entry for entry in heap if _is_live(entry)]
            heapify(self._heap)
            self._stale = 0

    def next_at(self) -> float | None:
        """The earliest deadline watched, or None."""
        return self._heap[0][0] if self._heap else None

    def expire(self, now: float) -> None:
        """Time out every attempt past its deadline; abandon those past their grace."""
        # self._heap, not a local: abandoning runs listeners, which may cancel
        # other attempts (a push) while this loop runs.
        while self._heap and self._heap[0][0] <= now:
            entry = heappop(self._heap)
            if not _is_live(entry):
                self._stale -= 1
                continue
            attempt = entry[2]
            attempt.deadline = None
            if attempt.scope.cancel_called:
                self._abandon(attempt)
            else:
                attempt.scope.cancel()
                self.grace(attempt, now)

    def hand_back(self, clock: Callable[[], float]) -> None:
        """The ticker is exiting: put each live timeout back on its attempt's scope.

        Graces are dropped: during shutdown the scheduler waits for every
        attempt anyway.
        """
        heap, self._heap, self._stale = self._heap, [], 0
        for entry in heap:
            deadline, _, attempt = entry
            if _is_live(entry):
                attempt.deadline = None
                if not attempt.scope.cancel_called:
                    attempt.scope.deadline = anyio.current_time() + (deadline - clock())


def _is_live(entry: tuple[float, int, Attempt]) -> bool:
    attempt = entry[2]
    return attempt.live and attempt.seq == entry[1]


@contextlib.contextmanager
def setting_up(job: Job) -> Iterator[None]:
    """For executors: around what an attempt waits for before its work can start.

    An executor wraps in it a wait that is not the job's work, such as a
    worker process starting. Meanwhile the job's timeout does not run, and
    when the block exits, ``job.started_at`` is set to that moment and the
    timeout counts from there. Cancelling still reaches the attempt. Outside
    an attempt run by a :class:`~jobsched.JobScheduler` it does nothing.
    """
    dispatchers = inside_workers_of.get()
    # The innermost one is the dispatcher whose worker runs this attempt.
    attempts = dispatchers[-1].attempts if dispatchers else None
    if attempts is None or not attempts.runs(job):
        yield
        return
    attempts.setup_begins(job)
    try:
        yield
    finally:
        attempts.setup_ends(job)
