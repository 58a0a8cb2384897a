"""The state every part of the scheduler shares, and the primitives on it.

``JobScheduler`` is assembled from parts, one module each, stacked so that a
part may call the parts below it::

    _scheduler.JobScheduler             construction, listeners, join, get
      _lifecycle.Lifecycle              start, stop, async with
        _results.Results                one job's outcome: wait, result
          _stored.Stored                on a durable store: claimed jobs, the store's view
            _timers.Timers              the ticker: due delayed jobs, schedules, timeouts
              _schedules.Schedules      recurring and cron schedules (in memory or stored)
                _state.SchedulerState   the state (declared here) and its primitives

The parts read three records rather than loose attributes: ``Settings``
(what the scheduler was built with: fixed), ``RunState`` (NEW, STARTED,
STOPPED, stopping: written by the lifecycle) and ``JobTable`` (this process's
jobs, their waiters and listeners, the one checked transition).

The workers are a part of their own, not a layer: ``_dispatch.Dispatcher``
(``_dispatcher``) owns them and their attempts, takes work from the backing
and hands outcomes to ``_outcomes.Outcomes`` (``_outcomes``: how an attempt
ended, the dependency graph and its cascade). So are submit's checks and
hooks (``_submission.Submission``, ``_submission``) and cancelling
(``_cancel.Canceller``, ``_cancelling``), which ``cancel()`` and ``stop()`` call.

On a durable store the scheduler also has a link (``_link``, its tasks) and
the link a ``_linkhost.LinkHost``: what the link calls back, on this state,
kept off the public class.

Every piece of scheduler state is owned by the event-loop thread, and every
check-then-act on it runs without an ``await`` in the middle, so no other task
can interleave and no lock is needed. Work that leaves the loop (threads,
processes) only returns a value; it never touches scheduler state. Other
threads reach the scheduler through ``submit_threadsafe``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import anyio

from .._enums import JobStatus
from .._exceptions import InvalidTransitionError, UnknownJobError
from .._jobs._ids import id_number
from .._jobs._job import Job
from .._jobs._text import storable
from .._log import logger
from .._ordering._queue import JobQueue
from .._ordering._strategies import SchedulingStrategy

if TYPE_CHECKING:
    # Imported where they are used, not here: asyncio, anyio.abc,
    # anyio.lowlevel, anyio.from_thread, logging, traceback and the cron
    # module (datetime) would triple the cost of `import jobsched`; random
    # only for the rng's type (JobScheduler makes one when it is built).
    import asyncio
    import random
    from datetime import datetime

    from anyio.abc import TaskGroup
    from anyio.lowlevel import EventLoopToken

    from ._backing import Backing
    from ._cancel import Canceller
    from ._dispatch import Dispatcher
    from ._executors import ExecutorSet
    from ._link import StoreLink
    from ._outcomes import Outcomes
    from ._submission import Submission
    from ._timers import Ticker


JobListener = Callable[[Job, JobStatus, JobStatus], None]
SubmitHook = Callable[[Job], None]


class FinishOne(Protocol):
    """``Outcomes.finish_one``: one of two methods, chosen when the
    scheduler is built (on a durable store the outcome is written first)."""

    def __call__(
        self, job: Job, status: JobStatus, error: str | None, now: float | None = None, /
    ) -> list[tuple[Job, str]] | None: ...


#: Seconds between looks at the store when nothing woke the claimer; other
#: processes' commits reach an idle member at the latest this late. Defined
#: here, not in the store link, so that `import jobsched` never loads the link.
POLL_INTERVAL = 0.5

# Lifecycle of the scheduler itself.
NEW, STARTED, STOPPED = range(3)


class Parts(NamedTuple):
    """The parts made after the backing, bound to it once built (``bind``):
    each takes the backing, and the backing (or its link's host) calls them."""

    outcomes: Outcomes
    submission: Submission
    dispatcher: Dispatcher
    cancelling: Canceller


class Settings:
    """What the scheduler was built with: set once by ``JobScheduler.__init__``,
    read by every part, changed by none."""

    __slots__ = (
        "clock",
        "executor_limits",
        "history_limit",
        "load_grace",
        "num_workers",
        "queue_limits",
        "queues",
        "rng",
        "strategy",
    )

    strategy: SchedulingStrategy
    clock: Callable[[], float]
    rng: random.Random
    num_workers: int
    history_limit: int
    #: ``load_grace``: seconds a claimed job whose payload does not load
    #: here goes back to the store for another member before it FAILs.
    load_grace: float
    #: The queues this scheduler serves (None: every queue), and queue ->
    #: the most attempts of it at once here (``queue_limits``).
    queues: frozenset[str] | None
    queue_limits: dict[str, int]
    #: executor -> the most attempts on it at once here (``executor_limits``,
    #: lowered to known capacities).
    executor_limits: dict[str, int]

    def __init__(
        self,
        strategy: SchedulingStrategy,
        clock: Callable[[], float],
        rng: random.Random,
        num_workers: int,
        history_limit: int,
        load_grace: float,
        queues: frozenset[str] | None,
        queue_limits: dict[str, int],
        executor_limits: dict[str, int],
    ) -> None:
        set_ = object.__setattr__
        set_(self, "strategy", strategy)
        set_(self, "clock", clock)
        set_(self, "rng", rng)
        set_(self, "num_workers", num_workers)
        set_(self, "history_limit", history_limit)
        set_(self, "load_grace", load_grace)
        set_(self, "queues", queues)
        set_(self, "queue_limits", queue_limits)
        set_(self, "executor_limits", executor_limits)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"the scheduler's settings are fixed once it is built ({name})")


class RunState:
    """Where the scheduler is in its life: NEW -> STARTED -> STOPPED, and
    whether it is stopping. Written by the lifecycle only; read by every part."""

    __slots__ = ("loop_thread", "loop_token", "phase", "stopping")

    def __init__(self) -> None:
        self.phase = NEW
        self.stopping = False
        self.loop_token: EventLoopToken | None = None
        self.loop_thread: int | None = None


class JobTable:
    """This process's jobs, who waits for them, who listens to them, and the
    one checked transition every status change goes through."""

    __slots__ = (
        "finished",
        "history_limit",
        "jobs",
        "join_waiters",
        "listeners",
        "outcome_waiters",
        "unfinished",
    )

    def __init__(self, history_limit: int) -> None:
        # Jobs are known by the number in their id ("job-<n>" outside): the
        # int is the job's own (see _jobs._numbers), a str would be one more
        # object per job. Public methods convert with id_number().
        self.jobs: dict[int, Job] = {}
        #: Submitted here and not yet terminal.
        self.unfinished = 0
        #: Terminal jobs, oldest first: the history ``get`` still knows.
        self.finished: deque[int] = deque()
        self.history_limit = history_limit
        self.join_waiters: list[anyio.Event] = []
        #: wait(): events per job number, set when that job ends here (and,
        #: all of them, when the scheduler stops).
        self.outcome_waiters: dict[int, list[anyio.Event]] = {}
        self.listeners: list[JobListener] = []

    def get(self, job_id: str) -> Job:
        """The job with this id (``JobScheduler.get``).

        :raises UnknownJobError: never submitted, or evicted from history.
        """
        try:
            return self.jobs[id_number(job_id)]
        except KeyError:
            raise UnknownJobError(
                f"no job {job_id!r}: it was never submitted here, or it finished long "
                f"enough ago to be evicted (history_limit={self.history_limit})"
            ) from None

    def wake_joiners(self) -> None:
        """Every job ended, or the scheduler stopped: join() and wait() look again."""
        waiters, self.join_waiters = self.join_waiters, []
        for event in waiters:
            event.set()
        if self.outcome_waiters:
            outcome_waiters, self.outcome_waiters = self.outcome_waiters, {}
            for events in outcome_waiters.values():
                for event in events:
                    event.set()

    def transition(self, job: Job, new: JobStatus) -> None:
        """Set ``job``'s status if the table of legal edges allows it, and tell the listeners."""
        old = job.status
        if not old._allowed & new._bit:  # type: ignore[attr-defined]
            raise InvalidTransitionError(
                f"{_describe(job)}: {old.value} -> {new.value} is not a legal transition"
            )
        job.status = new
        if self.listeners:
            self.notify(job, old, new)

    def notify(self, job: Job, old: JobStatus, new: JobStatus) -> None:
        for listener in self.listeners:
            try:
                listener(job, old, new)
            except Exception:  # a bad listener must not break the scheduler
                logger.exception("listener %r failed on %s", listener, _describe(job))


class SchedulerState:
    """The state the layers still on the scheduler share on ``self`` (set by
    ``_compose.compose``), until each becomes a part the scheduler holds."""

    _settings: Settings
    _run: RunState
    _table: JobTable
    _clock: Callable[[], float]  # _settings.clock (see _compose)
    _executors: ExecutorSet
    _queue: JobQueue
    #: The workers and their attempts (see _dispatch).
    _dispatcher: Dispatcher
    #: ``cancel()`` and a stop's cut past its grace (see _cancel).
    _cancelling: Canceller
    _idle_workers: deque[anyio.Event]
    _timers: Ticker
    #: Where jobs are kept (see _backing): memory or a durable store.
    _backing: Backing
    _live_tasks: int
    _done: anyio.Event | None
    _task_group: TaskGroup | None
    _standalone: asyncio.Task[None] | None
    # A durable store (see _stored.py): None for the in-memory one.
    _link: StoreLink | None
    #: The registered functions by name (``js.App``), for registered jobs
    #: claimed or fetched from the store; None without an app.
    _registry: Mapping[str, Any] | None

    if TYPE_CHECKING:
        # JobScheduler.submit, which the layers' public methods call (enqueue).
        def submit(
            self,
            job: Job,
            *,
            delay: float = ...,
            depends_on: Iterable[str] = ...,
            at: datetime | None = ...,
            job_id: str | None = ...,
            connection: object = ...,
        ) -> str: ...

    def _wake_all(self) -> None:
        while self._idle_workers:
            self._idle_workers.popleft().set()
        self._timers.wake()

    def _task_started(self) -> None:
        self._live_tasks += 1

    def _task_exited(self) -> None:
        self._live_tasks -= 1
        if self._live_tasks == 0:
            assert self._done is not None
            self._done.set()


def _describe(job: object) -> str:
    if isinstance(job, Job):
        try:
            return f"{job.job_id} ({job.name!r})"
        except AttributeError:  # its __init__ never called Job.__init__
            return f"a {type(job).__qualname__} that was never initialised"
    return repr(job)


def _extra(job: Job) -> dict[str, Any]:
    """The fields every log record about a job carries, for structured (JSON) logging."""
    return {"job_id": job.job_id, "job_name": job.name, "attempt": job.attempts}


def _format(exc: BaseException) -> str:
    """``last_traceback``'s text: what ``traceback.format_exception`` prints,
    with what no store can keep escaped (see ``_jobs._text.storable``)."""
    import traceback  # on the first failure, not at `import jobsched`

    return storable("".join(traceback.format_exception(exc)))
