"""The backing's roles: where jobs are kept, claimed, finished and fired.

A scheduler has one backing, chosen when it is built (the one place that
asks which store it has): ``MemoryBacking`` (``_memory``) keeps the jobs in
this process; ``DurableBacking`` (``_durable``, loaded with the first
durable store) keeps them in the store through the link. The parts call the
backing through these roles, never asking which one it is.

Imported under ``TYPE_CHECKING`` only: the roles are for the type checker,
and ``import jobsched`` does not pay for them.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sized
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from .._enums import JobStatus
    from .._jobs._executor import Executor
    from .._jobs._job import Job
    from .._queueinfo import QueueInfo
    from .._time._cron import CronTrigger
    from .._time._recurring import RecurringSchedule
    from .._time._scheduleinfo import ScheduleInfo
    from .._workflows._edges import DependsOn
    from ._attempts import Attempt
    from ._link import StoreLink
    from ._state import Parts

    #: ``ending``: (job, status, error, the clock if the job ran) -> the status to record.
    EndHook = Callable[[Job, JobStatus, str | None, float | None], JobStatus]


class Lifetime(Protocol):
    """The lifecycle's view: what opens, runs beside the workers and closes."""

    @property
    def link(self) -> StoreLink | None:
        """The store link, for tools and tests; None in memory."""
        ...

    #: How ``stop()`` words the attempts it cut short, for its log line.
    cut_wording: str

    @property
    def default_grace(self) -> float | None:
        """``stop()``'s grace when none is given (None: wait for the attempts)."""
        ...

    async def open(self) -> None: ...

    def spawn(self, group: TaskGroup) -> None: ...

    async def close(self) -> None:
        """After the workers stopped."""
        ...

    async def close_unstarted(self) -> None:
        """``stop()`` before ``start()``."""
        ...

    def use_registry(self, registry: Mapping[str, object]) -> None: ...


class Reader(Protocol):
    """The public reads' view: where a job's outcome is read and waited for."""

    async def flush(self) -> None: ...

    async def fetch(self, job_id: str) -> Job: ...

    async def join(self) -> None: ...

    async def wait(self, job_id: str, seconds: float | None) -> Job: ...

    async def check_dependencies(self, job: Job, depends_on: DependsOn) -> DependsOn: ...


class JobSink(Protocol):
    """Submit's view: where a checked job goes."""

    @property
    def dependencies_elsewhere(self) -> bool:
        """Whether a dependency unknown here may be in the store (then the
        store's add decides); False: submit refuses it."""
        ...

    def served(self, queues: frozenset[str] | None) -> frozenset[str] | None:
        """The queues submit refuses others of (None: refuse none)."""
        ...

    def add(self, job: Job, delay: float, deps: list[int], job_id: str | None) -> str:
        """Keep a checked job; its id."""
        ...

    def executor_loaded(self, name: str, executor: Executor) -> None:
        """An executor plugin was loaded on first use (it may refuse it)."""
        ...


class Due(Protocol):
    """What the ticker fires (memory's delayed jobs and schedules)."""

    def fire_due(self, now: float) -> None: ...

    def next_at(self) -> float | None:
        """When it fires next (None: nothing to fire)."""
        ...


class ScheduleBook(Protocol):
    """The schedule methods' view, after their argument checks. An id no
    schedule has: False (None for trigger), and the caller says so."""

    #: Where the schedules are, for an error: "this scheduler" / "the store <url>".
    @property
    def where(self) -> str: ...

    def add_recurring(
        self, schedule_id: str | None, schedule: RecurringSchedule, start_in: float
    ) -> str:
        """Keep an interval schedule (checked: made with its first fire)."""
        ...

    def add_cron(
        self,
        schedule_id: str | None,
        factory: Callable[[], Job],
        trigger: CronTrigger,
        allow_overlap: bool,
        misfire: str,
    ) -> str: ...

    def remove(self, schedule_id: str) -> bool: ...

    async def infos(self) -> list[ScheduleInfo]: ...

    async def pause(self, schedule_id: str) -> bool: ...

    async def resume(self, schedule_id: str) -> bool: ...

    async def trigger(self, schedule_id: str) -> str | None: ...


class Schedules(Protocol):
    """Where schedules are kept and fired."""

    @property
    def schedules(self) -> ScheduleBook:
        """The book (made on first use: `import jobsched` does not load it)."""
        ...


class WorkSource(Protocol):
    """The Dispatcher's view: where the workers take their next job."""

    #: The next job to run, or None (then the worker waits, idle). Read per
    #: job: in memory admission rebinds it when it starts.
    take_next: Callable[[], Job | None]

    @property
    def waiting(self) -> Sized:
        """Jobs claimed for this member and not yet taken (empty in memory): a
        worker that suspends or exits while there are some wakes an idle one."""
        ...

    #: Why an attempt the teardown cut short ends (HANDED_BACK: to the store).
    shutdown_reason: str


class OutcomePolicy(Protocol):
    """How attempts end here: retries while stopping, a failure recorded the
    hard way (and the teardown's reason: see WorkSource)."""

    def attempts_to_cut(self, attempts: Collection[Attempt]) -> list[Attempt]:
        """Of the running attempts, those ``stop()`` cuts short past its grace."""
        ...

    def may_retry(self, stopping: bool) -> bool: ...

    def failed_anyway(self, job: Job) -> None:
        """Recording ``job``'s outcome failed; it ends FAILED here."""
        ...

    @property
    def ending(self) -> EndHook | None:
        """Before a job is finished here, what the backing writes; the status
        to record. None: nothing (Outcomes then finishes jobs directly,
        decided once when the scheduler is built)."""
        ...

    def record_retry(self, job: Job, wait: float) -> None:
        """A failed attempt is retried in ``wait`` seconds: before its transition."""
        ...

    def retry(self, job: Job, now: float) -> None:
        """The same, after its transition to RETRY_WAIT."""
        ...

    def release(self, job: Job, now: float) -> None:
        """``job``'s upstreams all completed: it may run."""
        ...

    def hand_back(self, job: Job) -> bool:
        """An attempt a stopping worker cut short: the job goes back to the
        store, True; False: it ends CANCELLED here."""
        ...


class CancelPolicy(Protocol):
    """cancel()'s view: which jobs the backing answers for, and how a queued one leaves."""

    def cancel_elsewhere(self, number: int, job: Job | None) -> bool | None:
        """cancel()'s answer if the backing decides it; None: cancel it here."""
        ...

    def withdraw(self, job: Job) -> None:
        """A queued job was cancelled here."""
        ...


class QueueControl(Protocol):
    """The operator's queues: listed, paused for every member, resumed."""

    async def queues(self) -> list[QueueInfo]: ...

    async def pause_queue(self, name: str) -> None: ...

    async def resume_queue(self, name: str) -> None: ...


class Backing(
    Lifetime,
    Reader,
    JobSink,
    WorkSource,
    OutcomePolicy,
    CancelPolicy,
    Schedules,
    QueueControl,
    Protocol,
):
    """Every role a backing plays (more join as the engine's parts move here)."""

    def bind(self, parts: Parts) -> None:
        """The parts made after the backing (they take it): bound once, when
        the scheduler is built."""
        ...
