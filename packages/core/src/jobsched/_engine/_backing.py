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

from collections.abc import Callable, Collection, Iterable, Mapping, Sized
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from .._jobs._executor import Executor
    from .._jobs._job import Job
    from ._attempts import Attempt
    from ._link import StoreLink


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

    async def check_dependencies(self, job: Job, depends_on: Iterable[str]) -> Iterable[str]: ...


class JobSink(Protocol):
    """Submit's view: where a checked job goes."""

    def served(self, queues: frozenset[str] | None) -> frozenset[str] | None:
        """The queues submit refuses others of (None: refuse none)."""
        ...

    def add(self, job: Job, delay: float, deps: list[int], job_id: str | None) -> str:
        """Keep a checked job; its id."""
        ...

    def executor_loaded(self, name: str, executor: Executor) -> None:
        """An executor plugin was loaded on first use (it may refuse it)."""
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


class CancelPolicy(Protocol):
    """cancel()'s view: which jobs the backing answers for, and how a queued one leaves."""

    def cancel_elsewhere(self, number: int, job: Job | None) -> bool | None:
        """cancel()'s answer if the backing decides it; None: cancel it here."""
        ...

    def withdraw(self, job: Job) -> None:
        """A queued job was cancelled here."""
        ...


class Backing(Lifetime, Reader, JobSink, WorkSource, OutcomePolicy, CancelPolicy, Protocol):
    """Every role a backing plays (more join as the engine's parts move here)."""
