"""A durable store's reads for this scheduler: a row as a Job of this
process's view, and waiting for one job or for every job in the store.

The durable backing's reader (``DurableBacking.fetch``, ``wait``, ``join``);
loaded with it, never by ``import jobsched``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import anyio

from .._exceptions import SchedulerStoppedError, StoreUnavailableError, UnknownJobError
from .._jobs._ids import id_number
from ._state import POLL_INTERVAL, STOPPED, _describe
from ._stored import UnloadableJob, load_job

if TYPE_CHECKING:
    from .._jobs._job import Job
    from .._workflows._edges import DependsOn
    from ._link import StoreLink
    from ._state import JobTable, RunState


class StoredReads:
    """What the store holds, read for this process: rows as jobs, waits."""

    __slots__ = ("clock", "link", "registry", "run", "table")

    def __init__(
        self, link: StoreLink, run: RunState, table: JobTable, clock: Callable[[], float]
    ) -> None:
        self.link = link
        self.run = run
        self.table = table
        self.clock = clock
        #: The app's registered functions by name (``js.App``), for
        #: registered jobs' rows; None without an app.
        self.registry: Mapping[str, Any] | None = None

    def job_from_row(self, stored: Any, job_id: str | None = None) -> Job:
        """A stored row as a Job of this process's view (times monotonic)."""
        link = self.link
        job: Any
        args = getattr(stored, "args", None)
        if args is not None:
            # A registered job: its name and JSON arguments, nothing unpickled.
            from .._jobs._registered import from_row

            job, problem = from_row(self.registry, stored.name, stored.executor, args), ""
            job.queue = stored.queue
            if stored.id < 0 and job_id is not None:
                job._set_own_id(job_id)  # the row keeps no pickle that carries it
        else:
            job, problem = load_job(link.codec, stored.payload)
        result = None
        if job is not None and stored.result is not None:
            from ..store._codec import BadSignature, Unloadable

            try:
                if stored.result[:1] == b"J":
                    from .._jobs._registered import decode_result

                    result = decode_result(stored.result)
                else:
                    result = link.codec.loads(stored.result)
            except (BadSignature, Unloadable, ValueError) as exc:
                job, problem = None, f"the stored result cannot be loaded: {exc}"
        if job is None:
            # Never raise for a row the store holds: what the row says, without
            # what only the payload knows.
            job = UnloadableJob(stored.name, stored.executor, problem)
        job._jobsched_id = stored.id
        offset = time.time() - self.clock()
        job.status = stored.status
        job.attempts = stored.attempts
        job.result = result
        job.last_error = stored.last_error
        job.last_traceback = stored.last_traceback
        job.submitted_at = stored.submitted_at - offset
        job.run_at = stored.run_at - offset
        job.started_at = None if stored.started_at is None else stored.started_at - offset
        job.finished_at = None if stored.finished_at is None else stored.finished_at - offset
        workflow = getattr(stored, "workflow", None)
        if stored.progress is not None or stored.progress_message is not None or workflow:
            from .._jobs._flow import flow_of

            flow = flow_of(job)
            flow.progress, flow.message = stored.progress, stored.progress_message
            if workflow is not None:
                flow.workflow = workflow
        return job  # type: ignore[no-any-return]

    async def wait(self, job_id: str, seconds: float | None) -> Job:
        link = self.link
        number = id_number(job_id)
        # The first look is not cut short by the timeout (it takes round
        # trips): wait(timeout=0) still answers for a job that has ended.
        # Only an outage longer than the timeout ends it.
        patience = math.inf if seconds is None else seconds
        try:
            await link.flush(patience)  # a job this process submitted is in the store
            # Taken before each read: an outcome committed while the read is on
            # its way wakes the next wait instead of being missed.
            settled = link.next_settled()
            job = await self.look(job_id, number, patience)
        except StoreUnavailableError as exc:
            self.stopped_under(exc)
            raise TimeoutError from exc
        if job is not None:
            return job
        try:
            with anyio.fail_after(seconds):
                while True:
                    with anyio.move_on_after(POLL_INTERVAL):
                        await settled.wait()
                    settled = link.next_settled()
                    job = await self.look(job_id, number)
                    if job is not None:
                        return job
        except StoreUnavailableError as exc:
            self.stopped_under(exc)
            raise

    def stopped_under(self, exc: StoreUnavailableError) -> None:
        """A wait's read gave up because stop() closed the link under it:
        it is the stop that answers."""
        if self.run.stopping:
            raise SchedulerStoppedError(
                "cannot wait for the job: this scheduler is stopping, and the store is "
                "unavailable; the job runs on when a scheduler on the store runs"
            ) from exc

    async def look(self, job_id: str, number: int, patience: float = math.inf) -> Job | None:
        """The job if the store holds it finished, None if it holds it unfinished
        (read through an outage of up to ``patience`` seconds)."""
        link = self.link
        if self.run.phase == STOPPED:
            raise SchedulerStoppedError(
                f"cannot wait for {job_id!r}: this scheduler stopped and closed its store; "
                "wait from a running scheduler (the job runs on when one runs)"
            )
        row = None
        if number:
            row = await link.read(
                "waiting for a job", lambda: link.store.fetch(number), patience=patience
            )
        if row is None:
            raise UnknownJobError(
                f"no job {job_id!r} in the store {link.store.url}: never submitted there, "
                "or pruned (history_limit)"
            )
        if row.status.is_terminal:
            return self.job_from_row(row, job_id)
        return None

    async def join(self) -> None:
        link = self.link
        if self.run.phase == STOPPED:
            # The store is closed: this process's view is all there is to go by.
            if self.table.unfinished:
                raise SchedulerStoppedError(
                    f"{self.table.unfinished} job(s) will not finish here: the scheduler stopped "
                    "with them still in the store; they run when a scheduler on the store runs"
                )
            return
        stopping = SchedulerStoppedError(
            "jobs in the store will not finish here: this scheduler is stopping; "
            "they run when a scheduler on the store runs"
        )
        # A COUNT of the store's unfinished jobs costs a scan of an index (a
        # long one with many jobs queued): ask the store when this process's
        # view says all is done, and otherwise once a poll interval, for the
        # jobs other members submitted or ran, which this view does not see.
        asked = -math.inf
        try:
            # Through an outage: join waits for the jobs anyway, and they go
            # on once the store is back.
            await link.flush(math.inf)
            while True:
                # Taken before the count: a commit that lands while the count
                # is on its way is not missed (waiting for the commit after
                # it would sleep a poll interval for nothing).
                progress = link.next_progress()
                now = time.monotonic()
                if self.table.unfinished <= 0 or now - asked >= POLL_INTERVAL:
                    asked = now
                    if not await link.read("counting unfinished jobs", link.store.unfinished):
                        return
                if self.run.stopping:
                    raise stopping
                await link.progress(progress)
        except StoreUnavailableError:
            if not self.run.stopping:
                raise
            # stop() closed the store under this join: it is the stop that answers.
            raise stopping from None

    async def fetch(self, job_id: str) -> Job:
        link = self.link
        await link.flush()
        stored = await link.store.fetch(id_number(job_id))
        if stored is None:
            raise UnknownJobError(
                f"no job {job_id!r} in the store {link.store.url}: never submitted there, "
                "or pruned (history_limit)"
            )
        return self.job_from_row(stored, job_id)

    async def check_dependencies(self, job: Job, depends_on: DependsOn) -> DependsOn:
        """enqueue(): every dependency this process does not know must be in the store."""
        if isinstance(depends_on, str):
            return depends_on
        from .._jobs._job import Job as AnyJob
        from .._workflows._edges import After

        if isinstance(depends_on, (AnyJob, After)):
            depends_on = (depends_on,)
        link = self.link
        depends_on = tuple(depends_on)
        jobs = self.table.jobs
        # An After names its upstream by its job (a Job is known here once submitted).
        named = [getattr(d, "job", d) for d in depends_on]
        ids = [d for d in named if type(d) is str]
        foreign = [d for d in ids if id_number(d) and id_number(d) not in jobs]
        if foreign:
            await link.flush()
            missing = [d for d in foreign if await link.store.fetch(id_number(d)) is None]
            if missing:
                raise UnknownJobError(
                    f"{_describe(job)} depends on job(s) {missing} that the store "
                    f"{link.store.url} does not hold: submit dependencies first "
                    "(finished jobs are pruned after history_limit)"
                )
        return depends_on
