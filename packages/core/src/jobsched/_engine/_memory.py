"""MemoryBacking: the jobs kept in this process (the memory store)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import anyio

from .._exceptions import SchedulerError, SchedulerStoppedError
from ._state import NEW, STOPPED, _describe

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from .._jobs._job import Job
    from ._link import StoreLink
    from ._state import JobTable, RunState


class MemoryBacking:
    """The backing of the memory store: nothing to open or close; reads and
    waits answer from the job table, woken by its events."""

    __slots__ = ("_run", "_table")

    link: StoreLink | None = None
    cut_wording = "cancelled"
    default_grace: float | None = None  # stop() waits for running attempts

    def __init__(self, run: RunState, table: JobTable) -> None:
        self._run = run
        self._table = table

    async def open(self) -> None:
        pass

    def spawn(self, group: TaskGroup) -> None:
        pass

    async def close(self) -> None:
        pass

    async def close_unstarted(self) -> None:
        pass

    def use_registry(self, registry: Mapping[str, object]) -> None:
        pass

    async def flush(self) -> None:
        pass

    async def fetch(self, job_id: str) -> Job:
        return self._table.get(job_id)

    async def check_dependencies(self, job: Job, depends_on: Iterable[str]) -> Iterable[str]:
        return depends_on  # submit checks them here

    async def join(self) -> None:
        table, run = self._table, self._run
        while table.unfinished:
            if run.phase == STOPPED:
                raise SchedulerStoppedError(
                    f"{table.unfinished} job(s) will never finish: the scheduler stopped "
                    "with them still queued"
                )
            event = anyio.Event()
            table.join_waiters.append(event)
            await event.wait()

    async def wait(self, job_id: str, seconds: float | None) -> Job:
        with anyio.fail_after(seconds):
            job = self._table.get(job_id)
            if self._run.phase == NEW and not job.status._terminal:  # type: ignore[attr-defined]
                raise SchedulerError(
                    "wait() waits for the workers to run the job, but this scheduler was "
                    "never started: use `async with JobScheduler(...) as s:` or "
                    "`await s.start()` first"
                )
            while not job.status._terminal:  # type: ignore[attr-defined]
                if self._run.phase == STOPPED:
                    raise SchedulerStoppedError(
                        f"{_describe(job)} will never finish: the scheduler stopped with it "
                        f"{job.status.value}"
                    )
                event = anyio.Event()
                self._table.outcome_waiters.setdefault(job._jobsched_id, []).append(event)
                await event.wait()
            return job
