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

import math
import time
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from .._enums import JobStatus
from .._exceptions import (
    SchedulerError,
    SchedulerStoppedError,
    StoreUnavailableError,
    UnknownJobError,
)
from .._jobs import _plugins
from .._jobs._job import AsyncJob, Job, id_number
from .._log import logger
from .._ordering._admission import executor_capacity
from .._ordering._fairshare import FairShareStrategy
from ._dispatch import Dispatch
from ._state import POLL_INTERVAL, STOPPED, _describe

if TYPE_CHECKING:
    from datetime import datetime

    # Imported where they are used, not here: a scheduler on the memory store
    # never does, and the store seam's dataclasses are most of what `import
    # jobsched` would cost.
    from ..store._base import Change, Claimed, DueSchedule, NewJob

_PENDING = JobStatus.PENDING
_RUNNING = JobStatus.RUNNING
_RETRY_WAIT = JobStatus.RETRY_WAIT
_COMPLETED = JobStatus.COMPLETED
_FAILED = JobStatus.FAILED
_CANCELLED = JobStatus.CANCELLED

WORKER_LOST = "worker lost"


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


def _lost_end(claim: Claimed) -> float:
    """When a lost attempt stopped running, as far as the store knows: its
    owner's last lease renewal (never later than now)."""
    now = time.time()
    renewed = claim.renewed_at
    return now if renewed is None else min(renewed, now)


def _load_job(codec: Any, payload: bytes) -> tuple[Any, str]:
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
        return None, f"cannot load the job: {exc}; is its module importable here?"
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


class Stored(Dispatch):
    """The durable-store side of the scheduler; the link's host."""

    # ── the link's host ──────────────────────────────────────────────────

    def claim_capacity(self) -> tuple[int, dict[str, int]]:
        """Claim for the idle workers; on each executor this member has, at
        most its room under ``executor_limits`` or its capacity."""
        if self._stopping:
            return 0, {}
        wanted = len(self._idle_workers) - len(self._claimed)
        if wanted <= 0:
            return 0, {}
        rooms = dict.fromkeys(set(self._executors) | set(_plugins.registered()), wanted)
        # A bounded executor gets no more claims than it has room for, so a
        # claimed job starts at once (its timeout counts its run) and the
        # limit holds: the store honours each executor's room.
        bounds = dict(self._executor_limits)
        for name, executor in self._executors.items():
            capacity = executor_capacity(name, executor)
            if capacity is not None:
                bounds[name] = min(bounds.get(name, capacity), capacity)
        if bounds:
            jobs = self._jobs
            holding = Counter(jobs[n].executor for n in self._held if n in jobs)
            for name, bound in bounds.items():
                rooms[name] = max(0, min(wanted, bound - holding[name]))
        return wanted, rooms

    def claimed(self, claims: Sequence[Claimed]) -> None:
        """Jobs the store handed to this member: queue them, or settle lost ones."""
        from ..store._base import Outcome

        link = self._link
        assert link is not None
        jobs = self._jobs
        for claim in claims:
            number = claim.id
            self._held[number] = claim.attempt
            job = jobs.get(number)
            # A job this process submitted and still has needs no loading:
            # the payload is its own pickle (the usual case, and a quarter
            # of a claim's cost).
            local = job is not None and not job.status._terminal  # type: ignore[attr-defined]
            if not local:
                stored, reason = _load_job(link.codec, claim.payload)
                if stored is None:
                    self._refuse(number, claim.attempt, reason)
                    continue
                stored._jobsched_id = number  # a stored form carries no id: the row has it
            name = job.executor if local else stored.executor  # type: ignore[union-attr]
            if name not in self._executors:
                # Submitted by another process: this one loads its executor now.
                try:
                    self._executors[name] = _plugins.create(name)
                except Exception as exc:
                    self._refuse(number, claim.attempt, f"{type(exc).__name__}: {exc}")
                    continue
            if job is not None and job.status is _CANCELLED and not claim.lost:
                # Cancelled here while its add or this claim was on the way:
                # the claim is ours, so end it CANCELLED in one fenced write
                # (a release and a cancel are two transactions, and another
                # claim could come between them).
                del self._held[number]
                link.record(
                    Outcome(number, claim.attempt, _CANCELLED, time.time(), error=job.last_error)
                )
                continue
            if not local:
                # Submitted elsewhere (or before a restart): this process's view.
                job = stored
                job.status = _PENDING
                jobs[number] = job
                self._unfinished += 1
            assert job is not None
            if claim.lost and claim.cancelled:
                # Cancelled while it ran in a member that died: the cancel wins.
                del self._held[number]
                ended = _lost_end(claim)
                link.record(Outcome(number, claim.attempt, _CANCELLED, ended, error="cancelled"))
                if not job.status.is_terminal:
                    job.attempts = claim.attempt
                    job.status = _RUNNING
                    self._finish(job, _CANCELLED, "cancelled")
                continue
            if claim.lost:
                # Its attempt ran in a member that died: that attempt failed.
                self._lost_ended[number] = _lost_end(claim)
                job.attempts = claim.attempt
                job.status = _RUNNING
                self._after_failure(job, WORKER_LOST, True, False)
                continue
            job.attempts = claim.attempt - 1  # the worker counts the attempt
            self._claimed.append(job)
        # One worker: it runs the claimed jobs that never suspend back to
        # back and passes the rest on as one suspends (Dispatch._work).
        # Waking one per job cost a task switch each, mostly for workers
        # that found the jobs gone.
        if self._claimed and self._idle_workers:
            self._idle_workers.popleft().set()

    def _refuse(self, number: int, attempt: int, reason: str) -> None:
        """A claimed row that must not run: FAILED in the store, unread."""
        from ..store._base import Outcome

        link = self._link
        assert link is not None
        self._held.pop(number, None)
        link.record(Outcome(number, attempt, _FAILED, time.time(), error=reason))
        job = self._jobs.get(number)
        if job is not None and not job.status._terminal:  # type: ignore[attr-defined]
            job.last_error = reason
            job.status = _RUNNING
            self._finish(job, _FAILED, None)

    def changed(self, changes: Sequence[Change]) -> None:
        """Statuses the store set itself (a cascade): this process's view follows."""
        for change in changes:
            job = self._jobs.get(change.id)
            if job is not None and not job.status._terminal:  # type: ignore[attr-defined]
                self._finish_one(job, change.status, change.error)

    def existed(self, ids: Sequence[int]) -> None:
        """Jobs submitted here with an id of their own that the store already
        held: the store's job stands, and this process forgets its copy."""
        jobs = self._jobs
        for number in ids:
            job = jobs.get(number)
            if job is not None and not job.status._terminal and number not in self._held:  # type: ignore[attr-defined]
                del jobs[number]
                self._unfinished -= 1
        if not self._unfinished and self._join_waiters:
            self._wake_joiners()

    def held(self) -> Collection[int]:
        # With the jobs handed back but not yet released: still RUNNING under
        # this member in the store, whose leases must not lapse meanwhile.
        return [*self._held, *self._released]

    async def fire_schedules(self, due: Sequence[DueSchedule]) -> None:
        """Make the fires of the stored schedules this member claimed."""
        link = self._link
        assert link is not None
        for schedule in due:
            try:
                stored = link.codec.loads(schedule.payload)
            except Exception as exc:
                from ..store._codec import UnknownKey

                if isinstance(exc, UnknownKey):
                    # Another key's schedule (a rotation under way, or this
                    # member misconfigured): not ours to remove. Its lease
                    # runs out and a member that holds the key fires it.
                    if schedule.id not in link.unkeyed_schedules:
                        link.unkeyed_schedules.add(schedule.id)
                        logger.error("stored schedule %r is left alone: %s", schedule.id, exc)
                    continue
                logger.exception(
                    "stored schedule %r cannot be loaded here; it is removed", schedule.id
                )
                link.remove_schedule(schedule.id)
                continue
            now = time.time()
            after = stored.next_fire(schedule.fire_time, now)
            row: NewJob | None = None
            last = schedule.last_status
            if stored.allow_overlap or last is None or last.is_terminal:
                try:
                    job = stored.factory()
                    self._check_submit(job, 0.0, ())
                    row = self._stored_row(job, 0.0, [])
                except Exception:  # a broken factory must not stop the claimer
                    logger.exception("stored schedule %r failed to fire", schedule.id)
                else:
                    row.schedule = schedule.id
                    row.fire_time = schedule.fire_time
            if not await link.fire(schedule.id, schedule.fire_time, after, row):
                if row is not None:  # another member made this fire: forget ours
                    del self._jobs[row.id]
                    self._unfinished -= 1
            elif row is not None:
                link.wake_claimer()

    def _take_claimed(self) -> Job | None:
        """The workers' take-next on a durable store: the next claimed job."""
        claimed = self._claimed
        while claimed:
            job = claimed.popleft()
            if not job.status._terminal:  # type: ignore[attr-defined]
                if not claimed and self._link is not None:
                    # The last one: claim more for the idle workers now, so
                    # the claim is asked for before this round's outcomes
                    # commit, and shares their transaction (SQLite's group
                    # commit: one fsync per round instead of two).
                    self._link.wake_claimer()
                return job
        if self._link is not None:
            self._link.wake_claimer()
        return None

    # ── the store's view ─────────────────────────────────────────────────

    async def flush(self) -> None:
        """Return once everything submitted so far is committed to the store."""
        if self._link is not None:
            await self._link.flush()

    async def enqueue(
        self,
        job: Job,
        *,
        delay: float = 0.0,
        depends_on: Iterable[str] = (),
        at: datetime | None = None,
        job_id: str | None = None,
    ) -> str:
        """Submit ``job`` and return its id once it is committed (same checks as submit).

        Unlike ``submit``, it checks that the store holds every dependency
        this process doesn't know before accepting the job.

        :raises UnknownJobError: a dependency is in neither this process nor the store.
        """
        link = self._link
        if link is not None and not isinstance(depends_on, str):
            depends_on = tuple(depends_on)
            foreign = [d for d in depends_on if id_number(d) and id_number(d) not in self._jobs]
            if foreign:
                await link.flush()
                missing = [d for d in foreign if await link.store.fetch(id_number(d)) is None]
                if missing:
                    raise UnknownJobError(
                        f"{_describe(job)} depends on job(s) {missing} that the store "
                        f"{link.store.url} does not hold: submit dependencies first "
                        "(finished jobs are pruned after history_limit)"
                    )
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
        link = self._link
        if link is None:
            return self.get(job_id)  # type: ignore[attr-defined,no-any-return]
        await link.flush()
        stored = await link.store.fetch(id_number(job_id))
        if stored is None:
            raise UnknownJobError(
                f"no job {job_id!r} in the store {link.store.url}: never submitted there, "
                "or pruned (history_limit)"
            )
        return self._job_from_row(stored)

    def _job_from_row(self, stored: Any) -> Job:
        """A stored row as a Job of this process's view (times monotonic)."""
        link = self._link
        assert link is not None
        job: Any
        job, problem = _load_job(link.codec, stored.payload)
        result = None
        if job is not None and stored.result is not None:
            from ..store._codec import BadSignature, Unloadable

            try:
                result = link.codec.loads(stored.result)
            except (BadSignature, Unloadable) as exc:
                job, problem = None, f"the stored result cannot be loaded: {exc}"
        if job is None:
            # Never raise for a row the store holds: what the row says, without
            # what only the payload knows.
            job = UnloadableJob(stored.name, stored.executor, problem)
        job._jobsched_id = stored.id
        offset = time.time() - self._clock()
        job.status = stored.status
        job.attempts = stored.attempts
        job.result = result
        job.last_error = stored.last_error
        job.last_traceback = stored.last_traceback
        job.submitted_at = stored.submitted_at - offset
        job.run_at = stored.run_at - offset
        job.started_at = None if stored.started_at is None else stored.started_at - offset
        job.finished_at = None if stored.finished_at is None else stored.finished_at - offset
        return job  # type: ignore[no-any-return]

    async def _join_stored(self) -> None:
        link = self._link
        assert link is not None
        if self._state == STOPPED:
            # The store is closed: this process's view is all there is to go by.
            if self._unfinished:
                raise SchedulerStoppedError(
                    f"{self._unfinished} job(s) will not finish here: the scheduler stopped "
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
                if self._unfinished <= 0 or now - asked >= POLL_INTERVAL:
                    asked = now
                    if not await link.read("counting unfinished jobs", link.store.unfinished):
                        return
                if self._stopping:
                    raise stopping
                await link.progress(progress)
        except StoreUnavailableError:
            if not self._stopping:
                raise
            # stop() closed the store under this join: it is the stop that answers.
            raise stopping from None

    def _check_stored_options(self, strategy: object) -> None:
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

    async def _open_store(self) -> None:
        if self._link is not None:
            from ..store._base import mask_password

            store = self._link.store
            await store.open()
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

    async def _close_store(self) -> None:
        """After the workers stopped: hand back unstarted claims, write everything, close."""
        link = self._link
        if link is None:
            return
        unstarted = [job._jobsched_id for job in self._claimed]
        self._claimed.clear()
        for number in unstarted:
            self._held.pop(number, None)
        # With the jobs whose attempts a stopping worker cut short; kept in
        # _released until the release, so that the heartbeat renews them.
        self._released += unstarted
        unstarted = list(self._released)
        try:
            await link.flush()
            if unstarted:
                try:
                    await link.read(
                        "handing back unstarted jobs",
                        lambda: link.store.release(link.owner, unstarted),
                        patience=None,  # stop() waits as long as for its flush
                    )
                except StoreUnavailableError as exc:
                    raise StoreUnavailableError(
                        f"{len(unstarted)} claimed job(s) were not handed back at stop: "
                        f"{exc}. They stay RUNNING under this member until their lease "
                        "runs out; then another member takes them over (an attempt counted, "
                        "'worker lost') and runs them again"
                    ) from exc
                self._released = []
        finally:
            link.close()
            await link.stopped.wait()
            await link.store.close()
