"""The running attempt as its job sees it: ``js.current_job()``.

A worker task keeps one :class:`Running` cell in its context for its whole
life and points it at each attempt it runs: a store into a slot per
attempt, where setting a context variable per attempt would cost a no-op
job a seventh of its time. What leaves the worker task copies the context
(a job's child tasks, anyio's threads, the thread executor's), and so finds
the cell. A thread of an attempt that the scheduler abandoned (timed out)
must not find the worker's *next* job there, so a
:class:`~jobsched.CancelToken` remembers the attempt it was made for, and
that wins over the cell. An executor that runs the job in another process
ships the handle (it pickles) and calls the job through
:meth:`CurrentJob.run` there.

What ``complete_in`` does is the scheduler's (``_engine._completion``),
reached through the cell's scheduler, or, in another process, through the
ticket the handle was shipped with.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Generator
from contextvars import ContextVar
from threading import Lock
from typing import TYPE_CHECKING, Any, TypeVar

from .._enums import JobStatus
from ._flow import flow_of
from ._text import storable

if TYPE_CHECKING:
    from ._job import Job

T = TypeVar("T")

_RUNNING = JobStatus.RUNNING

#: The longest progress message kept: a status line, not a log.
MESSAGE_LIMIT = 1_000
#: Held while a job's Flow is made by progress() (see CurrentJob.progress).
_FLOW_LOCK = Lock()


class Running:
    """A worker task's cell: its scheduler, and the job whose attempt it runs."""

    __slots__ = ("attempt", "host", "job")

    def __init__(self, host: Any) -> None:
        #: What the worker's scheduler answers complete_in with (its Outcomes:
        #: ``_completing()``).
        self.host = host
        #: The job of the attempt under way, or the last one (then no longer RUNNING).
        self.job: Job | None = None
        #: None while the cell follows the worker's attempts. Pinned to the
        #: attempt once it ended abandoned, failed or cancelled after it
        #: suspended: what it started may outlive it (a thread it no longer
        #: waits for) holding this cell, so the worker moves on to a new one,
        #: and this one keeps naming that attempt.
        self.attempt: int | None = None


#: Set once per worker task (see ``Dispatcher._worker``).
running: ContextVar[Running | None] = ContextVar("jobsched_running", default=None)
#: The cancel token of the thread job running in this thread (see CancelToken.run).
current_token: ContextVar[Any] = ContextVar("jobsched_cancel_token", default=None)
#: A handle shipped to another process and entered there (CurrentJob.run).
_shipped: ContextVar[CurrentJob | None] = ContextVar("jobsched_current_job", default=None)


def snapshot() -> tuple[Job, int, Any] | None:
    """The attempt of this context: (job, attempt, scheduler), or None outside one."""
    cell = running.get()
    if cell is None:
        return None
    job = cell.job
    if job is None:
        return None
    if cell.attempt is not None:
        return job, cell.attempt, cell.host
    if job.status is not _RUNNING:
        return None
    return job, job.attempts, cell.host


class CurrentJob:
    """The attempt that is running, as its job sees it (``js.current_job()``).

    :attr:`job_id` and :attr:`attempt` (1 for the first) name the attempt;
    :meth:`progress` reports how far it got; :meth:`complete_in` records its
    completion in a transaction of yours.
    """

    __slots__ = ("_completed", "_job", "_shipped_progress", "_sink", "_source", "attempt", "job_id")

    def __init__(self, job_id: str, attempt: int, job: Job | None, source: Any) -> None:
        #: The job's id, as ``submit`` returned it.
        self.job_id: str = job_id
        #: The attempt's number: 1 for the first, 2 for the first retry...
        self.attempt: int = attempt
        # In the scheduler's process: the job and its scheduler. Shipped to
        # another process: None and the ticket made for it there.
        self._job = job
        self._source = source
        self._completed: tuple[Any] | None = None
        # Shipped to another process: the last progress there, and where the
        # executor sends it (see forward_progress).
        self._shipped_progress: tuple[float | None, str | None] = (None, None)
        self._sink: Callable[[float | None, str | None], None] | None = None

    def __repr__(self) -> str:
        return f"CurrentJob({self.job_id!r}, attempt={self.attempt})"

    def progress(self, fraction: float | None = None, message: str | None = None) -> None:
        """Report how far the attempt got: the job's ``progress`` and
        ``progress_message`` show it at once in this process, and in a
        durable store within about a second (the attempt's outcome keeps the
        last values). None leaves that value as it was. Cheap enough to call
        in a loop: what reaches the store is throttled to one write a second
        per job. Callable from any thread of the job.

        :param fraction: the part done, a real number from 0 to 1.
        :param message: a line saying what the job is doing; NUL and lone
            surrogates are escaped, and it is cut to 1,000 characters.
        :raises ValueError: ``fraction`` is not a number in [0, 1] (a bool is
            refused), or ``message`` is not a str.
        """
        fraction, message = _checked(fraction, message)
        job = self._job
        if job is None:
            self._progress_shipped(fraction, message)
            return
        if job.status is not _RUNNING or job.attempts != self.attempt:
            # An attempt that ended (a thread job's, abandoned at its
            # timeout) must not speak for the job's next one.
            return
        flow = job._flow
        if flow is None:
            # A thread job's first call races nothing but a second thread of
            # the same job; the lock keeps either from losing the other's Flow.
            with _FLOW_LOCK:
                flow = flow_of(job)
        if fraction is not None:
            flow.progress = fraction
        if message is not None:
            flow.message = message
        # The store's writer (durable) or nothing (memory): see Completions.progressed.
        self._source._completing().progressed(job, self.attempt)

    def forward_progress(self, sink: Callable[[float | None, str | None], None] | None) -> None:
        """For executors that run a job in another process: from now on each
        :meth:`progress` of this handle (shipped with the job) calls
        ``sink(fraction, message)`` with the values as they stand, for the
        executor to carry to the scheduler's process, where calling the
        scheduler's handle's :meth:`progress` with them shows them. Without
        a sink, progress there goes nowhere."""
        self._sink = sink

    def _progress_shipped(self, fraction: float | None, message: str | None) -> None:
        last_fraction, last_message = self._shipped_progress
        values = (
            last_fraction if fraction is None else fraction,
            last_message if message is None else message,
        )
        self._shipped_progress = values
        sink = self._sink
        if sink is not None:
            sink(*values)

    def complete_in(self, conn: Any, result: Any = None) -> Awaitable[None]:
        """Record this attempt's completion, with ``result``, in ``conn``'s open
        transaction: if that transaction commits, the job is ``COMPLETED``
        with ``result`` whatever the function does after (raises, times out,
        or its member dies); if it rolls back, nothing was recorded.

        ``await`` it. With a synchronous connection (in a thread or process
        job) it writes before it returns, so a plain call does too. The
        result is stored as the job's own would be: JSON for a registered
        job, the signed pickle for the others.

        :param conn: a psycopg 3 ``AsyncConnection`` or ``Connection`` to
            the store's database, inside a READ COMMITTED transaction.
        :raises LeaseLostError: this member no longer holds the attempt
            (another member took it over, or it ended here already): nothing
            was written; roll your transaction back.
        :raises TypeError: ``conn`` is no connection the store takes, or
            ``result`` cannot be stored as the job's result.
        :raises ValueError: ``conn`` would commit the completion on its own
            (autocommit outside a transaction), its transaction is not READ
            COMMITTED, or it is not to the store's database.
        :raises SchedulerError: the job's store cannot write in your
            transaction (the memory store, SQLite): PostgreSQL can.
        """
        pending: Awaitable[None] = self._via().complete_in(self, conn, result)
        return pending

    def run(self, func: Callable[..., T], /, *args: Any) -> T:
        """For executors that run a job in another process: call
        ``func(*args)`` there with this handle (shipped with the job) as the
        current job. Send :attr:`completed` back with the job's result, for
        :meth:`note_completed` in the scheduler's process."""
        reset = _shipped.set(self)
        try:
            return func(*args)
        finally:
            _shipped.reset(reset)

    @property
    def completed(self) -> tuple[Any] | None:
        """``(result,)`` once :meth:`complete_in` wrote through this handle
        (the caller's transaction may still have rolled back); None before."""
        return self._completed

    def note_completed(self, completed: tuple[Any] | None) -> None:
        """For executors: the copy of this handle shipped with the job
        reports ``completed`` (its :attr:`completed`); None changes nothing.
        The scheduler then looks whether that completion committed before
        it records the attempt's outcome."""
        if completed is not None:
            self._done(completed[0])

    def _done(self, result: Any) -> None:
        """A completion was written through this handle (or its shipped copy)."""
        self._completed = (result,)
        if self._job is not None:
            self._source._completing().completed(self._job, self.attempt, result)

    def _via(self) -> Any:
        if self._job is not None:
            return self._source._completing()
        return self._source

    def __reduce__(self) -> tuple[Any, ...]:
        # Shipped to another process: what complete_in needs there (the
        # store's writer, the fence, the encoding), not the scheduler.
        return (_restore, (self.job_id, self.attempt, self._via().portable(self)))


def _restore(job_id: str, attempt: int, ticket: Any) -> CurrentJob:
    return CurrentJob(job_id, attempt, None, ticket)


def _checked(fraction: Any, message: Any) -> tuple[float | None, str | None]:
    """The progress values as kept, or ValueError saying what is wrong."""
    if fraction is not None:
        kind = type(fraction)
        if kind is bool or not (kind is float or kind is int or _real(fraction)):
            raise ValueError(
                f"progress fraction must be a real number from 0 to 1 (or None to leave it), "
                f"got {fraction!r} ({kind.__name__})"
            )
        try:
            value = float(fraction)
        except OverflowError:  # an int past a float's range
            value = math.inf
        if not 0.0 <= value <= 1.0:  # NaN too
            raise ValueError(
                f"progress fraction must be from 0 to 1 (0.25 for a quarter done), got {fraction!r}"
            )
        fraction = value
    if message is not None:
        if not isinstance(message, str):
            raise ValueError(
                f"progress message must be a str (or None to leave it), "
                f"got {type(message).__name__}"
            )
        message = storable(message)[:MESSAGE_LIMIT]
    return fraction, message


def _real(value: Any) -> bool:
    # Loaded only for the rare fraction that is neither float nor int
    # (a numpy float, a Fraction): numbers is not worth a place in the import.
    import numbers

    return isinstance(value, numbers.Real)


def current_job() -> CurrentJob:
    """The attempt running in this context, inside a job.

    Works in async, thread and process jobs alike (a process job's module
    must import jobsched when it loads, as ``import jobsched as js`` at its
    top does), registered and ``FunctionJob`` alike.

    :raises RuntimeError: not inside a running job.
    """
    handle = _shipped.get()
    if handle is not None:
        return handle
    token = current_token.get()
    # A thread job: the attempt its token was made for, even once the
    # scheduler is done with it (then complete_in says the lease is lost).
    held = snapshot() if token is None or token._attempt is None else token._attempt
    if held is None:
        raise RuntimeError(
            "js.current_job() was called outside a running job: call it from the "
            "job's own code (its function, run() or run_sync()), or from a task or "
            "thread the job started (in a process job, the job's module must import "
            "jobsched when it loads)"
        )
    job, attempt, host = held
    return CurrentJob(job.job_id, attempt, job, host)


class Done:
    """What ``complete_in`` returns once it has written: awaiting it is a no-op."""

    __slots__ = ()

    def __await__(self) -> Generator[Any, None, None]:
        return
        yield  # a generator: awaiting it returns at once


DONE = Done()
