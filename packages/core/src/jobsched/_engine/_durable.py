"""DurableBacking: the jobs kept in a durable store, through the link.

Loaded with the first durable store (as the link is), never by ``import
jobsched``. It owns what this member holds in the store and its claimed jobs
(``_held``) and its reads (``_storedreads``); it holds no scheduler.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

from .._enums import JobStatus
from .._exceptions import StoreUnavailableError
from .._jobs import _markers
from .._jobs._text import storable
from .._log import logger
from .._ordering._admission import executor_capacity
from . import _queueviews
from ._cancel import CANCELS_KEPT
from ._outcomes import HANDED_BACK
from ._state import JobTable, Parts, RunState, Settings, _describe, _extra
from ._storedreads import StoredReads

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from .._jobs._executor import Executor
    from .._jobs._job import Job
    from .._queueinfo import QueueInfo
    from .._workflows._edges import DependsOn
    from ..store._rows import Outcome
    from ._attempts import Attempt
    from ._held import ClaimedQueue, Held
    from ._link import StoreLink
    from ._linkhost import LinkHost
    from ._outcomes import Outcomes
    from ._storedschedules import StoredSchedules
    from ._submission import Submission

_RUNNING = JobStatus.RUNNING
_RETRY_WAIT = JobStatus.RETRY_WAIT
_COMPLETED = JobStatus.COMPLETED
_FAILED = JobStatus.FAILED
_CANCELLED = JobStatus.CANCELLED


class DurableBacking:
    """The backing of a durable store: open and close it, run the link's
    tasks beside the workers, read and wait through the store."""

    __slots__ = (
        "_stored_book",
        "claims",
        "held",
        "host",
        "link",
        "outcomes",
        "reads",
        "settings",
        "submission",
        "take_next",
        "waiting",
    )

    cut_wording = "handed back to the store"
    #: Why an attempt the teardown cut short ends: back to the store.
    shutdown_reason = HANDED_BACK
    #: A dependency unknown here may be in the store: the store's add decides.
    dependencies_elsewhere = True
    outcomes: Outcomes  # the parts made after the backing (see bind)
    submission: Submission

    def __init__(
        self,
        link: StoreLink,
        held: Held,
        claims: ClaimedQueue,
        host: LinkHost,
        run: RunState,
        table: JobTable,
        settings: Settings,
    ) -> None:
        self.settings = settings
        self.host = host  # the link's: bound with the parts too
        self.link = link
        self.held = held
        self.claims = claims
        #: The workers take claimed jobs (limited by the store's claims: LinkHost).
        self.take_next = claims.take
        self.waiting = claims.jobs
        self._stored_book: StoredSchedules | None = None
        self.reads = StoredReads(link, run, table, settings.clock)

    def bind(self, parts: Parts) -> None:
        """A cancel finishes a job here through Outcomes; a job's row is Submission's."""
        self.outcomes, self.submission = parts.outcomes, parts.submission
        self.host.bind(self, parts)

    @property
    def schedules(self) -> StoredSchedules:
        """The stored schedules' book, made on first use."""
        book = self._stored_book
        if book is None:
            from ._storedschedules import StoredSchedules

            reads, submission = self.reads, self.submission
            book = self._stored_book = StoredSchedules(
                self.link, reads.run, reads.table, submission.check, submission.stored_row
            )
        return book

    def cancel_elsewhere(self, number: int, job: Job | None) -> bool | None:
        """cancel() through the store: a job not known here, or not held here,
        is cancelled wherever it is; a running one held here is cancelled in
        the store too, before its scope (None: cancel() goes on here)."""
        link = self.link
        if number and job is None:
            # Not known here: the store cancels it wherever it is. A claim
            # the store made before the cancel reached it may still be on
            # its way here: remember the id, so that claim does not start it.
            link.cancel(number)
            unknown = self.held.cancelled_unknown
            unknown[number] = None
            if len(unknown) > CANCELS_KEPT:
                del unknown[next(iter(unknown))]
            return True
        if job is None or job.status._terminal:  # type: ignore[attr-defined]
            return False
        if number not in self.held.fences:
            if job.status is not _RUNNING:
                self.outcomes.finish(job, _CANCELLED, "cancelled")
            link.cancel(number)
            return True
        if job.status is _RUNNING:
            # Stored too: if this process dies before the attempt ends,
            # the member that takes the job over ends it CANCELLED.
            link.cancel(number)
        return None

    def withdraw(self, job: Job) -> None:
        pass  # the store holds it: its cancel is the CANCELLED outcome

    async def queues(self) -> list[QueueInfo]:
        """The store's queues, for every member (see _queueviews)."""
        return await _queueviews.stored_infos(self.link, self.reads.run)

    async def pause_queue(self, name: str) -> None:
        await _queueviews.stored_pause(self.link, self.reads.run, name, pause=True)

    async def resume_queue(self, name: str) -> None:
        await _queueviews.stored_pause(self.link, self.reads.run, name, pause=False)

    def attempts_to_cut(self, attempts: Collection[Attempt]) -> list[Attempt]:
        """Those not cut short already: one that was ends as that says (a
        timeout is retried)."""
        return [a for a in attempts if not a.scope.cancel_called]

    def may_retry(self, stopping: bool) -> bool:
        """Even while stopping: the store keeps the retry for the next member
        (ending the job FAILED would make stop() cost it its retries)."""
        return True

    # The outcome verbs. Each imports Outcome where it needs it: the store
    # seam's dataclasses would be most of what `import jobsched` costs.

    def ending(
        self, job: Job, status: JobStatus, error: str | None, now: float | None
    ) -> JobStatus:
        """Before a job is finished here: the attempt-time mean and the fenced
        write of a held job's outcome; the status to record (FAILED if its
        result cannot be stored).

        :param now: the scheduler's clock, read if the job was running.
        """
        from ..store._rows import Outcome

        held = self.held
        started = job.started_at
        if started is not None and job.status is _RUNNING:
            assert now is not None
            held.ran(now - started)
        link = self.link
        number = job._jobsched_id
        # Held until the outcome is made: if making it raises (a bug), the
        # held attempt lets Outcomes.recording_failed still end the row FAILED.
        attempt = held.fences.get(number)
        if attempt is None:
            return status  # not ours in the store: a cascade, or cancelled while queued
        result = None
        # A None result is stored as NULL, which fetch reads back as None.
        if status is _COMPLETED and job.result is not None:
            try:
                if getattr(type(job), "_jobsched_json", False):
                    from .._jobs._registered import encode_result

                    result = encode_result(job)  # b"J" + JSON, which SQL can read
                else:
                    result = link.codec.dumps(job.result, lambda: f"the result of {_describe(job)}")
            except (TypeError, ValueError) as exc:
                status = _FAILED
                job.last_error = storable(str(exc))
                job.result = None
        del held.fences[number]
        ended = held.lost_ended.pop(number, None)
        out = Outcome(
            number,
            attempt,
            status,
            time.time() if ended is None else ended,
            result=result,
            error=error if error is not None else job.last_error,
            traceback=None if error is not None else job.last_traceback,
        )
        if (flow := job._flow) is not None:  # its last progress goes with it
            out.progress, out.progress_message = flow.progress, flow.message
            link.forget_progress(number)
        link.record(out)
        return status

    def failed_anyway(self, job: Job) -> None:
        """Its outcome could not be recorded: the row ends FAILED, not RUNNING
        under this member for ever."""
        attempt = self.held.fences.pop(job._jobsched_id, None)
        if attempt is not None:
            self.link.record(_erred(job, attempt, _FAILED, time.time()))

    def record_retry(self, job: Job, wait: float) -> None:
        """A held job's attempt failed and it is retried in ``wait`` seconds:
        the store's row waits that long, for any member to run it."""
        held = self.held
        number = job._jobsched_id
        attempt = held.fences.pop(number, None)
        ended = time.time() if (end := held.lost_ended.pop(number, None)) is None else end
        if (flow := job._flow) is not None:  # the next attempt starts with no progress
            flow.progress = flow.message = None  # (the store's: this outcome clears it)
            self.link.forget_progress(number)
        if attempt is not None:
            self.link.record(_erred(job, attempt, _RETRY_WAIT, ended, run_at=time.time() + wait))

    def retry(self, job: Job, now: float) -> None:
        pass  # the store runs it again (record_retry), in whichever member claims it

    def release(self, job: Job, now: float) -> None:
        """Never called: the store keeps dependencies in its rows (add blocks no job)."""

    def hand_back(self, job: Job) -> bool:
        """A held job whose attempt was cut short by a stopping worker: it goes
        back to the store (released when the store closes), to run again in
        any member, its interrupted attempt not counted."""
        held = self.held
        number = job._jobsched_id
        if (attempt := held.fences.pop(number, None)) is not None:
            held.released.append(number)
            self.link.cut(number, attempt, time.time())  # on record, with its end
        logger.info("%s stopped: %s, to run again", _describe(job), HANDED_BACK, extra=_extra(job))
        # This process lets go of the job: its row waits again (RETRY_WAIT if
        # an earlier attempt ran), the attempt uncounted. Set by hand:
        # RUNNING -> PENDING is no edge of the table, and the job did not end.
        job.attempts -= 1
        job.status = _RETRY_WAIT if job.attempts else JobStatus.PENDING
        return True

    def served(self, queues: frozenset[str] | None) -> None:
        """None: a job of a queue this member does not serve waits in the store."""
        return None

    def add(self, job: Job, delay: float, deps: list[int], job_id: str | None) -> str:
        """submit()'s last step: the job's row, written in the next group commit."""
        if job._flow is not None:  # a marker or a "run" edge: no worker may be older
            self.link.levels.check_cached(f"{_describe(job)} (a result marker or a 'run' edge)")
        row = self.submission.stored_row(job, delay, deps, job_id)
        self.link.add(row)
        return f"job-{row.id}" if job_id is None else job_id

    def executor_loaded(self, name: str, executor: Executor) -> None:
        """Its capacity is checked (a bad one refuses the job); the store's
        claims bound it (see LinkHost.claim_capacity)."""
        executor_capacity(name, executor)

    @property
    def default_grace(self) -> float | None:
        # Read when asked: tests shorten _lifecycle.DEFAULT_GRACE.
        from . import _lifecycle

        return _lifecycle.DEFAULT_GRACE

    def use_registry(self, registry: Mapping[str, object]) -> None:
        """Claim only the registered functions' jobs."""
        self.link.names = frozenset(registry)
        self.reads.registry = registry

    def spawn(self, group: TaskGroup) -> None:
        self.host.group = group  # claimed jobs' inputs are read in it (ClaimInputs)
        self.link.spawn(group)

    async def close_unstarted(self) -> None:
        """Never started: what was submitted is written, then the store closed."""
        try:
            await self.link.flush()
        finally:
            await self.link.store.close()

    async def flush(self) -> None:
        await self.link.flush()

    async def join(self) -> None:
        await self.reads.join()

    async def wait(self, job_id: str, seconds: float | None) -> Job:
        return await self.reads.wait(job_id, seconds)

    async def fetch(self, job_id: str) -> Job:
        return await self.reads.fetch(job_id)

    async def check_dependencies(self, job: Job, depends_on: DependsOn) -> DependsOn:
        if depends_on or _markers.MARKERS_MADE:
            # enqueue() can read: submit's level check then has a fresh answer.
            await self.link.levels.refresh(retried=True)
        return await self.reads.check_dependencies(job, depends_on)

    async def open(self) -> None:
        from ..store._urls import mask_password

        store = self.link.store
        await store.open()
        # The members' levels, for a synchronous submit's check (_levels).
        await self.link.levels.first_read()
        registry = self.reads.registry  # the app's (see use_registry)
        if registry:
            from ._functions import put_functions

            await put_functions(store, registry, self.settings.strategy)
        if not store.secrets:
            # A store that allows no secret (SQLite) would otherwise run
            # unsigned pickles without a word: say so once per start.
            logger.warning(
                "the store %s has no secret: job payloads are unsigned pickles, and "
                "this scheduler unpickles (runs code from) whatever the store holds, "
                "so anyone who can write to it can run code here; set the "
                "JOBSCHED_SECRET environment variable (the same on every member) or "
                "pass secret=... to sign them",
                mask_password(store.url),
            )

    async def close(self) -> None:
        """After the workers stopped: hand back unstarted claims, write everything, close."""
        link, held = self.link, self.held
        # A claim on its way when the workers stopped brings jobs too: wait
        # for it, so they are handed back with the rest rather than left
        # RUNNING here until their lease runs out.
        from ._link import _timing

        await link.claims_settled(_timing.UNAVAILABLE_WAIT)
        unstarted = self.claims.clear() + self.host.waiting_inputs()
        for number in unstarted:
            held.fences.pop(number, None)
        # With the jobs whose attempts a stopping worker cut short, and those
        # it could not load and has not handed back yet; kept in released
        # until the release, so that the heartbeat renews them.
        held.released += unstarted + [number for number, _, _ in held.deferred]
        held.deferred = []
        unstarted = list(held.released)
        try:
            await link.flush()
            if unstarted:
                try:
                    await link.read(
                        "handing back unstarted jobs",
                        lambda: link.hand_back(unstarted),
                        patience=None,  # stop() waits as long as for its flush
                    )
                except StoreUnavailableError as exc:
                    raise StoreUnavailableError(
                        f"{len(unstarted)} claimed job(s) were not handed back at stop: "
                        f"{exc}. They stay RUNNING under this member until their lease "
                        "runs out; then another member takes them over (an attempt counted, "
                        "'worker lost') and runs them again"
                    ) from exc
                held.released = []
        finally:
            link.close()
            await link.stopped.wait()
            await link.store.close()


def _erred(job: Job, attempt: int, status: JobStatus, end: float, **more: Any) -> Outcome:
    """The outcome of an attempt that ended in the job's own error."""
    from ..store._rows import Outcome

    return Outcome(
        job._jobsched_id,
        attempt,
        status,
        end,
        error=job.last_error,
        traceback=job.last_traceback,
        **more,
    )
