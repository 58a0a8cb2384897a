"""Stored jobs as this process reads them: a payload loaded (or why not),
the placeholder for one that does not load, and the strategies a durable
store can order by.

With a durable store (SQLite, PostgreSQL) the store is the queue: a job is
written at submit (group commit), claimed from the store when a worker is
free, and its outcome written back, fenced on this member and the attempt
(``_durable.DurableBacking``; what the link calls back is
``_linkhost.LinkHost``). The public ``flush``, ``enqueue`` and ``fetch`` are
``JobScheduler``'s, over the backing.
"""

from __future__ import annotations

from typing import Any

from .._exceptions import (
    SchedulerError,
)
from .._jobs._job import AsyncJob, Job
from .._ordering._fairshare import FairShareStrategy


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
