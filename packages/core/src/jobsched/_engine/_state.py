"""The records every part of the scheduler is handed, and the primitives on them.

``JobScheduler`` (``_scheduler``) is the public face: it holds the parts
``_compose`` builds, and inherits only stateless bases (``ScheduleCalls``,
``ResultCalls``, ``Seams``).

The parts read three records rather than loose attributes: ``Settings``
(what the scheduler was built with: fixed), ``RunState`` (NEW, STARTED,
STOPPED, stopping: written by the lifecycle) and ``JobTable`` (this process's
jobs, their waiters and listeners, the one checked transition).

The workers are a part of their own, not a layer: ``_dispatch.Dispatcher``
(``_dispatcher``) owns them and their attempts, takes work from the backing
and hands outcomes to ``_outcomes.Outcomes`` (``_outcomes``: how an attempt
ended, the dependency graph and its cascade). So are submit's checks and
hooks (``_submission.Submission``, ``_submission``), cancelling
(``_cancel.Canceller``, ``_cancelling``), which ``cancel()`` and ``stop()``
call, and the lifecycle (``_lifecycle.Lifecycle``, ``_lifecycle``), which
``start``, ``stop`` and ``async with`` call, with its count of the tasks
still running. ``_compose`` builds and wires them all.

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

import sys
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import anyio

from .._enums import JobStatus
from .._exceptions import InvalidTransitionError, UnknownJobError
from .._jobs._ids import id_number
from .._jobs._job import Job
from .._jobs._text import storable
from .._log import logger
from .._ordering._strategies import SchedulingStrategy
from .._retention import Retention
from ._history import RetainedHistory

if TYPE_CHECKING:
    # Imported where they are used, not here: asyncio, anyio.abc,
    # anyio.lowlevel, anyio.from_thread, logging, traceback and the cron
    # module (datetime) would triple the cost of `import jobsched`; random
    # only for the rng's type (JobScheduler makes one when it is built).
    import random

    from anyio.lowlevel import EventLoopToken

    from ._cancel import Canceller
    from ._dispatch import Dispatcher
    from ._outcomes import Outcomes
    from ._submission import Submission


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
        "keeping",
        "listeners",
        "outcome_waiters",
        "remember",
        "unfinished",
    )

    def __init__(self, history: int | Retention) -> None:
        # Jobs are known by the number in their id ("job-<n>" outside): the
        # int is the job's own (see _jobs._numbers), a str would be one more
        # object per job. Public methods convert with id_number().
        self.jobs: dict[int, Job] = {}
        #: Submitted here and not yet terminal.
        self.unfinished = 0
        #: Terminal jobs, oldest first: the history ``get`` still knows,
        #: trimmed at ``history_limit`` by the finish paths.
        self.finished: deque[int] = deque()
        keeping = history if isinstance(history, Retention) else Retention(max_finished=history)
        self.keeping = keeping
        ages = keeping.ages()
        bound = keeping.max_finished
        self.history_limit = bound if bound is not None and not ages else sys.maxsize
        #: Files a job that just ended (the finish paths call it), chosen
        #: once: ``finished.append`` where only a count bounds the history
        #: (a C method: no Python frame per job), else a retention by age,
        #: which trims itself (``finished`` then stays empty).
        self.remember: Callable[[int], None] = (
            self.finished.append if not ages else RetainedHistory(self.jobs, ages, bound).add
        )
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
                f"enough ago to be evicted ({self.kept_by()})"
            ) from None

    def kept_by(self) -> str:
        """The rule finished jobs are kept by, for messages."""
        keeping = self.keeping
        if keeping.ages():
            return f"retention={keeping!r}"
        return f"history_limit={keeping.max_finished}"

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
