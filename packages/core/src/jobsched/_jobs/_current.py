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

from collections.abc import Awaitable, Callable, Generator
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeVar

from .._enums import JobStatus

if TYPE_CHECKING:
    from ._job import Job

T = TypeVar("T")

_RUNNING = JobStatus.RUNNING


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
    :meth:`complete_in` records its completion in a transaction of yours.
    """

    __slots__ = ("_completed", "_job", "_source", "attempt", "job_id")

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

    def __repr__(self) -> str:
        return f"CurrentJob({self.job_id!r}, attempt={self.attempt})"

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
