"""The scheduler on a durable store: what submit, the workers and outcomes do there.

With the in-memory store none of this runs: the parts below work on their
heaps. With a durable store (SQLite, PostgreSQL) the store is the queue: a job
is written at submit (group commit), claimed from the store when a worker is
free, and its outcome written back, fenced on this member and the attempt.
The dependency cascade happens in the store's transaction; this process's
view of its jobs (``get``, listeners) follows what the store reports back.
Times in the store are wall-clock; the view keeps monotonic ones.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .._exceptions import (
    SchedulerError,
)
from .._jobs._job import AsyncJob, Job
from .._ordering._fairshare import FairShareStrategy
from ._timers import Timers

if TYPE_CHECKING:
    from datetime import datetime


class UnloadableJob(AsyncJob):
    """What ``fetch`` gives for a stored job whose payload (or result) does
    not verify or load here: the row's name, executor, status, attempts,
    times and ``last_error``, without the payload's fields. ``load_error``
    says what was wrong. It cannot run."""

    def __init__(self, name: str, executor: str, load_error: str) -> None:
        super().__init__(name)
        #: The executor the row names (the class's own is unknown here).
        self.executor = executor  # type: ignore[misc]
        #: Why the payload did not load.
        self.load_error = load_error

    async def run(self) -> Any:
        raise SchedulerError(
            f"{self.name!r} is a placeholder for a stored job that cannot be loaded "
            f"({self.load_error}); it cannot run"
        )


#: How the reason for a payload whose module or attribute is missing here
#: begins: such a job may load on another member (a deploy under way), so it
#: is handed back for ``load_grace`` rather than failed (LinkHost.claimed).
CANNOT_LOAD = "cannot load the job: "


def load_job(codec: Any, payload: bytes) -> tuple[Any, str]:
    """A stored payload as a Job, or (None, what was found instead).

    Never raises: a row that does not verify, does not unpickle here, or is
    no Job must fail its one job (or show in ``fetch``), never the scheduler.
    """
    from ..store._codec import BadSignature, Unloadable

    try:
        job = codec.loads(payload)
    except BadSignature as exc:
        return None, f"the stored job cannot be loaded: {exc}"
    except Unloadable as exc:
        return None, f"{CANNOT_LOAD}{exc}; is its module importable here?"
    except Exception as exc:  # a codec bug must still cost one job only
        return None, f"cannot load the job ({type(exc).__name__}: {exc})"
    cls = type(job)
    if not isinstance(job, Job) or not isinstance(getattr(job, "executor", None), str):
        return None, (
            f"the stored job is not a jobsched Job: it loads as a "
            f"{cls.__module__}.{cls.__qualname__} (a class renamed or reused for "
            "something else since it was submitted?)"
        )
    return job, ""


class Stored(Timers):
    """The durable-store side of the scheduler: the store's view, opening and
    closing the store. The workers' take-next is ``_held.ClaimedQueue.take``;
    what the link calls back is ``_linkhost.LinkHost``."""

    # ── the store's view ─────────────────────────────────────────────────

    async def flush(self) -> None:
        """Return once everything submitted so far is committed to the store."""
        await self._backing.flush()

    async def enqueue(
        self,
        job: Job,
        *,
        delay: float = 0.0,
        depends_on: Iterable[str] = (),
        at: datetime | None = None,
        job_id: str | None = None,
        connection: object = None,
    ) -> str:
        """Submit ``job`` and return its id once it is committed (same checks as submit).

        Unlike ``submit``, it checks that the store holds every dependency
        this process doesn't know before accepting the job.

        :param connection: a database connection with a transaction open
            (an async driver's too): the job is written in that transaction
            and exists if and only if it commits; the id is returned once
            it is written there.
        :raises UnknownJobError: a dependency is in neither this process nor the store.
        """
        if connection is not None:
            from ._joined import enqueue_joined

            return await enqueue_joined(self, job, connection, delay, depends_on, at, job_id)  # type: ignore[arg-type]
        depends_on = await self._backing.check_dependencies(job, depends_on)
        job_id = self.submit(job, delay=delay, depends_on=depends_on, at=at, job_id=job_id)
        await self.flush()
        return job_id

    async def fetch(self, job_id: str) -> Job:
        """The job as the store has it, whichever process ran it.

        :raises UnknownJobError: the store does not hold it.
        :raises StoreUnavailableError: the store is unavailable (a one-off
            read: the caller decides whether to try again; what this process
            submitted is waited for as ``flush()`` does).
        """
        return await self._backing.fetch(job_id)


def check_stored_options(strategy: object) -> None:
    """A strategy a durable store can order by: a key per job, not a ready queue."""
    if (
        strategy is not None
        and not isinstance(strategy, FairShareStrategy)
        and strategy.ready_queue() is not None  # type: ignore[attr-defined]
    ):
        raise SchedulerError(
            f"{type(strategy).__name__} does not work with a durable store: its order "
            "is its own ready queue, not a per-job key the store can sort by; use the "
            "memory store for it, or a key-ordered strategy (FairShareStrategy is "
            "supported)"
        )
