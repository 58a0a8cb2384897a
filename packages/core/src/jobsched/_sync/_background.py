"""BackgroundScheduler: a JobScheduler on a thread of its own, for synchronous code.

This module is the public facade: the synchronous methods, their arguments
and documentation. What ``join()`` asks a durable store is ``_join.py``'s;
the thread that runs the scheduler's event loop, and the way a call from
another thread reaches that loop and comes back, are ``_loopthread.py``'s
(a :class:`~jobsched._sync._loopthread.LoopThread`, which the facade owns);
stopping a scheduler still running at interpreter exit is ``_exithook.py``'s.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from functools import partial
from types import TracebackType
from typing import TYPE_CHECKING, Any

from .._engine._dispatch import inside_workers_of
from .._engine._scheduler import JobScheduler
from .._engine._state import JobListener
from .._exceptions import SchedulerError
from .._jobs._job import Job
from .._ordering._strategies import SchedulingStrategy
from ._join import check_timeout, join_within
from ._loopthread import LoopThread
from ._workflows import WorkflowMethods

if TYPE_CHECKING:
    import random
    from datetime import datetime, tzinfo

    from .._jobs._executor import Executor
    from .._ordering._ratelimit import RateLimit
    from .._retention import Retention
    from .._time._cron import CronTrigger
    from .._time._scheduleinfo import ScheduleInfo
    from ..store._base import JobStore

__all__ = ["BackgroundScheduler"]

_BACKENDS = ("asyncio", "trio")


class BackgroundScheduler(WorkflowMethods):
    """A :class:`JobScheduler` on its own thread and event loop, for synchronous code.

    It takes :class:`JobScheduler`'s arguments, plus the event loop to run:

    :param backend: ``"asyncio"`` (the default) or ``"trio"``.
    :param backend_options: passed to :func:`anyio.run`, e.g.
        ``{"use_uvloop": True}`` on asyncio.

    Use it as ``with BackgroundScheduler() as s:``, or call :meth:`start` and
    :meth:`shutdown`. Every method may be called from any thread; each waits
    for the scheduler's answer and raises what the :class:`JobScheduler`
    method raises, in the calling thread. With a durable store, a method that
    changes something (:meth:`submit`, :meth:`cancel`, the schedules) returns
    once the change is committed.

    If the interpreter exits while it runs, it is shut down as
    ``shutdown(cancel_running=True)`` would (for at most ``EXIT_TIMEOUT``
    seconds), as the main thread ends.
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
        backend: str = "asyncio",
        backend_options: Mapping[str, Any] | None = None,
    ) -> None:
        if backend not in _BACKENDS:
            raise ValueError(f"backend must be 'asyncio' or 'trio', got {backend!r}")
        self._store: JobStore | None = None
        if store != "memory":
            # Here, not at import: the store seam is only for a durable store.
            from ..store._base import JobStore
            from ..store._registry import open_store

            if isinstance(store, str):
                store = open_store(store)  # held here too: join() asks it (see _join)
            self._store = store if isinstance(store, JobStore) else None
        self._scheduler = JobScheduler(
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
        self._loop = LoopThread(
            self._scheduler,
            durable=self._store is not None,
            backend=backend,
            backend_options=backend_options or {},
        )

    # ── lifecycle ────────────────────────────────────────────────────────

    @property
    def scheduler(self) -> JobScheduler:
        """The :class:`JobScheduler` it runs.

        Use it only on the scheduler's own thread (from a listener or an
        async job), where its methods need no portal; from other threads,
        call this object's methods.
        """
        return self._scheduler

    @property
    def running(self) -> bool:
        """True from :meth:`start` until :meth:`shutdown` begins."""
        return self._loop.running

    def start(self) -> None:
        """Start the event loop's thread and the scheduler on it; returns once it runs.

        :raises SchedulerError: already started (a scheduler starts once).
        :raises StoreUnavailableError: the store can't be opened; the
            scheduler can then be started again.
        """
        self._loop.start()

    def shutdown(
        self, wait: bool = True, *, cancel_running: bool = False, grace: float | None = None
    ) -> None:
        """Stop the scheduler and its thread.

        The scheduler stops taking work; queued jobs stay PENDING (with a
        durable store they run when a scheduler next runs on it); every
        executor it used is shut down. Running attempts are treated as
        :meth:`JobScheduler.stop` does: on a durable store they get
        ``grace`` seconds (30 by default) to finish and are then handed back
        to the store, never cancelled; on the memory store they are waited
        for, or cancelled past an explicit ``grace``.

        :param wait: wait until the scheduler and its thread have stopped;
            False returns at once and lets it stop in the background.
        :param cancel_running: a grace of 0: cut the running attempts short
            now (durable: handed back; memory: CANCELLED). A later call with
            it set cuts those of a shutdown already under way.
        :param grace: seconds running attempts get to finish.

        Calling it again is harmless. The context manager calls
        ``shutdown(cancel_running=<the body raised>)``; the interpreter's
        exit hook calls it with the default grace on a durable store.

        :raises SchedulerError: never started; or, with ``wait``, called from
            one of its own jobs (or on its thread), which the shutdown would
            wait for.
        :raises Exception: what stopping the scheduler raised (a store that
            failed to close), once.
        """
        self._loop.shutdown(wait, cancel_running, grace)

    def __enter__(self) -> BackgroundScheduler:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        # As `async with JobScheduler()`: if the body failed, don't wait for
        # running jobs (a durable store gets them back).
        self.shutdown(cancel_running=exc_type is not None)

    # ── jobs ─────────────────────────────────────────────────────────────

    def submit(
        self,
        job: Job,
        *,
        delay: float = 0.0,
        depends_on: Iterable[str] = (),
        at: datetime | None = None,
        job_id: str | None = None,
        connection: object = None,
    ) -> str:
        """Submit ``job``; returns its id once the scheduler has it.

        With a durable store it returns once the job is committed, so any
        reader of the store sees it. Arguments and errors are those of
        :meth:`JobScheduler.submit`; with ``connection`` (a synchronous
        driver's, a transaction open) the job is written in that
        transaction, on this thread, and exists if and only if it commits.
        """
        if connection is not None:
            from .._engine._joined import submit_joined

            return submit_joined(self._scheduler, job, connection, delay, depends_on, at, job_id)
        return self._loop.write(
            "submit()",
            partial(
                self._scheduler.submit,
                job,
                delay=delay,
                depends_on=depends_on,
                at=at,
                job_id=job_id,
            ),
        )

    def get(self, job_id: str) -> Job:
        """The job with this id, as this process knows it (also after :meth:`shutdown`).

        The object is the scheduler's own: read it, don't change it.

        :raises UnknownJobError: never submitted here, or evicted from history.
        """
        if self._loop.stopped():
            return self._scheduler.get(job_id)
        return self._loop.read("get()", partial(self._scheduler.get, job_id))

    def jobs(self) -> list[Job]:
        """Every job this process still knows (also after :meth:`shutdown`)."""
        if self._loop.stopped():
            return self._scheduler.jobs()
        return self._loop.read("jobs()", self._scheduler.jobs)

    def fetch(self, job_id: str) -> Job:
        """The job as the store has it, whichever process ran it (see :meth:`JobScheduler.fetch`).

        :raises UnknownJobError: the store does not hold it.
        """
        return self._loop.wait_for("fetch()", partial(self._scheduler.fetch, job_id))

    def wait(self, job_id: str, timeout: float | None = None) -> Job:
        """Block until the job is finished; the job as the store has it.

        See :meth:`JobScheduler.wait`.

        :raises TimeoutError: ``timeout`` seconds passed first.
        :raises UnknownJobError: the store does not hold the job.
        """
        return self._loop.wait_for("wait()", partial(self._scheduler.wait, job_id, timeout=timeout))

    def result(self, job_id: str, timeout: float | None = None) -> Any:
        """Block until the job is finished and return its result.

        See :meth:`JobScheduler.result`.

        :raises JobFailedError: it ended other than COMPLETED (``.job`` is the job).
        :raises TimeoutError: ``timeout`` seconds passed first.
        :raises UnknownJobError: the store does not hold the job.
        """
        return self._loop.wait_for(
            "result()", partial(self._scheduler.result, job_id, timeout=timeout)
        )

    def cancel(self, job_id: str) -> bool:
        """Cancel a job; False if it is unknown or already finished.

        See :meth:`JobScheduler.cancel`.
        """
        return self._loop.write("cancel()", partial(self._scheduler.cancel, job_id))

    def join(self, timeout: float | None = None) -> bool:
        """Wait until every submitted job is terminal.

        :param timeout: the most seconds to wait; None waits for as long as it
            takes. With a durable store it looks at the store at least once,
            so ``join(timeout=0)`` answers whether every job has ended.
        :returns: True once every job is terminal, False if ``timeout`` passed first.
        :raises SchedulerStoppedError: the scheduler was shut down with jobs
            still queued, which will then never finish here.
        :raises SchedulerError: called from inside one of its own jobs, which
            would wait for itself.
        """
        # On the loop's own thread, wait_for() refuses it with its own message.
        if not self._loop.on_loop() and self._scheduler._dispatcher in inside_workers_of.get():
            raise SchedulerError(
                "join() was called from inside one of this scheduler's jobs: it waits for "
                "every job to end, this one's too, so it could never answer True. Wait for "
                "the jobs you need by their ids (get(job_id).status), or use depends_on"
            )
        check_timeout(timeout)
        return self._loop.wait_for(
            "join()", partial(join_within, self._scheduler, self._store, timeout)
        )

    def add_listener(self, listener: JobListener) -> None:
        """Call ``listener(job, old_status, new_status)`` on every transition.

        It runs on the scheduler's thread, so it must be quick and must not
        block; one that raises is logged and ignored.
        """
        self._loop.read("add_listener()", partial(self._scheduler.add_listener, listener))

    # ── schedules ────────────────────────────────────────────────────────

    def schedule_recurring(
        self,
        factory: Callable[[], Job],
        interval: float,
        *,
        start_in: float = 0.0,
        allow_overlap: bool = False,
        id: str | None = None,
        misfire: str = "coalesce",
    ) -> str:
        """Submit ``factory()`` every ``interval`` seconds; returns the schedule id.

        See :meth:`JobScheduler.schedule_recurring`. ``factory`` runs on the
        scheduler's thread.
        """
        return self._loop.write(
            "schedule_recurring()",
            partial(
                self._scheduler.schedule_recurring,
                factory,
                interval,
                start_in=start_in,
                allow_overlap=allow_overlap,
                id=id,
                misfire=misfire,
            ),
        )

    def schedule_cron(
        self,
        factory: Callable[[], Job],
        cron: str | CronTrigger,
        *,
        timezone: str | tzinfo | None = None,
        allow_overlap: bool = False,
        id: str | None = None,
        misfire: str = "coalesce",
    ) -> str:
        """Submit ``factory()`` at a cron expression's fire times; returns the schedule id.

        See :meth:`JobScheduler.schedule_cron`. ``factory`` runs on the
        scheduler's thread.
        """
        return self._loop.write(
            "schedule_cron()",
            partial(
                self._scheduler.schedule_cron,
                factory,
                cron,
                timezone=timezone,
                allow_overlap=allow_overlap,
                id=id,
                misfire=misfire,
            ),
        )

    def cancel_recurring(self, schedule_id: str) -> bool:
        """Stop a schedule (see :meth:`JobScheduler.cancel_recurring`)."""
        return self._loop.write(
            "cancel_recurring()", partial(self._scheduler.cancel_recurring, schedule_id)
        )

    def schedules(self) -> list[ScheduleInfo]:
        """Every schedule, blocking (see :meth:`JobScheduler.schedules`)."""
        return self._loop.wait_for("schedules()", self._scheduler.schedules)

    def pause_schedule(self, schedule_id: str) -> None:
        """See :meth:`JobScheduler.pause_schedule`; raises :class:`UnknownScheduleError`."""
        self._loop.wait_for(
            "pause_schedule()", partial(self._scheduler.pause_schedule, schedule_id)
        )

    def resume_schedule(self, schedule_id: str) -> None:
        """See :meth:`JobScheduler.resume_schedule`; raises :class:`UnknownScheduleError`."""
        self._loop.wait_for(
            "resume_schedule()", partial(self._scheduler.resume_schedule, schedule_id)
        )

    def trigger_schedule(self, schedule_id: str) -> str:
        """One job from the schedule now; its id (see :meth:`JobScheduler.trigger_schedule`)."""
        return self._loop.wait_for(
            "trigger_schedule()", partial(self._scheduler.trigger_schedule, schedule_id)
        )
