"""The scheduler's side of its store link: what the link calls back.

The link (:mod:`jobsched._engine._link`) asks how many jobs to claim, hands
over the claims, reports statuses the store set itself, and asks which jobs
this member holds; :class:`LinkHost` answers on the parts it is passed (the
records, the executors, the idle workers, Outcomes, Submission, the
Dispatcher, cancel), not the scheduler, so none of this is on the public
:class:`~jobsched.JobScheduler`. Loaded with the first durable store, with the link.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

from .._enums import JobStatus
from .._jobs import _markers, _plugins
from .._jobs._text import storable
from ..store._rows import Change, Claimed, DueSchedule, Outcome
from ._claimtimes import lost_end, on_clock
from ._link import _timing
from ._loadgrace import hand_back_or_fail
from ._stored import CANNOT_LOAD, load_job

if TYPE_CHECKING:
    from collections import deque
    from collections.abc import Callable

    import anyio
    import anyio.abc

    from ._claiminputs import ClaimInputs
    from ._dispatch import Dispatcher
    from ._durable import DurableBacking
    from ._executors import ExecutorSet
    from ._held import ClaimedQueue, Held
    from ._outcomes import Outcomes
    from ._state import JobTable, Parts, RunState, Settings

_PENDING = JobStatus.PENDING
_RUNNING = JobStatus.RUNNING
_FAILED = JobStatus.FAILED
_CANCELLED = JobStatus.CANCELLED

WORKER_LOST = "worker lost"


class LinkHost:
    """The link's :class:`~jobsched._engine._link.Host`: the member it serves, as parts."""

    __slots__ = (
        "_backing",
        "_cancel",
        "_claims",
        "_dispatcher",
        "_executors",
        "_held",
        "_idle",
        "_inputs",
        "_run",
        "_settings",
        "_table",
        "group",
        "outcomes",
    )

    #: The parts made after the link (see bind): how a claimed job ends here.
    outcomes: Outcomes
    _backing: DurableBacking
    _settings: Settings
    _dispatcher: Dispatcher
    _cancel: Callable[[str], bool]

    def __init__(
        self,
        held: Held,
        claims: ClaimedQueue,
        run: RunState,
        table: JobTable,
        executors: ExecutorSet,
        idle: deque[anyio.Event],
    ) -> None:
        # idle: the idle workers' events (one is woken for claimed jobs).
        self._held = held
        self._claims = claims
        self._run = run
        self._table = table
        self._executors = executors
        self._idle = idle
        #: Claimed jobs waiting for results (made on first need), read in ``group``.
        self._inputs: ClaimInputs | None = None
        self.group: anyio.abc.TaskGroup | None = None

    def bind(self, durable: DurableBacking, parts: Parts) -> None:
        """The parts made after the link (its host is made with it): the
        backing (its settings, the app's registry, the stored schedules) too."""
        self._backing = durable
        self._settings = durable.settings
        self.outcomes = parts.outcomes
        self._dispatcher = parts.dispatcher
        self._cancel = parts.cancelling.cancel

    @property
    def num_workers(self) -> int:
        """The scheduler's ``num_workers``, for the members list."""
        return self._settings.num_workers

    def executor_names(self) -> tuple[str, ...]:
        """The executors this member claims jobs on, sorted, for the members list."""
        return tuple(sorted(set(self._executors) | set(_plugins.registered())))

    def claim_capacity(self) -> tuple[int, dict[str, int]]:
        """Claim for the idle workers; on each executor this member has, at
        most its room under ``executor_limits`` or its capacity."""
        if self._run.stopping:
            return 0, {}
        wanted = len(self._idle) + self.ahead() - len(self._claims.jobs)
        if self._inputs is not None:
            wanted -= len(self._inputs.waiting)  # claimed too, only not queued yet
        if wanted <= 0:
            return 0, {}
        rooms = dict.fromkeys(set(self._executors) | set(_plugins.registered()), wanted)
        # A bounded executor gets no more claims than it has room for, so a
        # claimed job starts at once (its timeout counts its run) and the
        # limit holds: the store honours each executor's room.
        bounds = self._executors.bounds(self._settings.executor_limits)
        if bounds:
            jobs = self._table.jobs
            holding = Counter(jobs[n].executor for n in self._held.fences if n in jobs)
            for name, bound in bounds.items():
                rooms[name] = max(0, min(wanted, bound - holding[name]))
        return wanted, rooms

    def ahead(self) -> int:
        """How many claimed jobs to hold beyond the idle workers (prefetch).

        0 under rate limits (a token is taken at the claim, and jobs
        that waited with their tokens could start in a burst the bucket
        never allowed) or fair share (a tenant's new job would wait behind
        the claims ahead, where fair share promises it the next turn).
        Otherwise as many as the workers run in ``PREFETCH_AHEAD`` seconds
        at the recent mean attempt time.
        """
        link = self._claims.link
        if link.rates or link.tenants is not None or not self._settings.num_workers:
            return 0
        mean = self._held.attempt_time
        if mean == math.inf or self._stuck():
            return 0
        return min(
            _timing.PREFETCH_MAX,
            int(self._settings.num_workers * _timing.PREFETCH_AHEAD / max(mean, 1e-6)),
        )

    def _stuck(self) -> bool:
        """Every worker runs an attempt older than ``PREFETCH_AHEAD``: jobs
        claimed now would wait behind long ones, so none are claimed ahead."""
        dispatcher = self._dispatcher
        if self._idle or len(dispatcher.running()) < self._settings.num_workers:
            return False
        ahead = _timing.PREFETCH_AHEAD
        old = sum(age > ahead for age in dispatcher.attempt_ages(self._settings.clock()))
        return old >= self._settings.num_workers

    def stale_claims(self) -> list[int]:
        """The claimed-ahead jobs, if the oldest waited past ``PREFETCH_STALE``
        (the workers are stuck on long attempts): see ``ClaimedQueue.stale``."""
        return self._claims.stale(self._held, self._table, _timing.PREFETCH_STALE)

    def handed_back(self, numbers: Collection[int]) -> None:
        """The store took ``numbers`` back (see :meth:`stale_claims`)."""
        held = self._held
        gone = set(numbers)
        held.released = [n for n in held.released if n not in gone]

    def queue_room(self, wanted: int) -> dict[str, int] | None:
        """Each queue under ``queue_limits``: how many more of its jobs this
        member may claim now (None: no queue is limited)."""
        if not self._settings.queue_limits:
            return None
        jobs = self._table.jobs
        holding = Counter(jobs[n].queue for n in self._held.fences if n in jobs)
        return {
            name: max(0, min(wanted, bound - holding[name]))
            for name, bound in self._settings.queue_limits.items()
        }

    def claimed(self, claims: Sequence[Claimed]) -> None:
        """Jobs the store handed to this member: queue them, or settle lost ones."""
        held, queue = self._held, self._claims
        link, fences = queue.link, held.fences
        jobs = self._table.jobs
        claimed_now = time.monotonic()
        # A stored job unpickling a result marker makes one: then it is looked into.
        made = _markers.MARKERS_MADE
        for claim in claims:
            number = claim.id
            fences[number] = claim.attempt
            job = jobs.get(number)
            if job is None and not claim.lost and number in held.cancelled_unknown:
                # cancel() sent it to the store as a job unknown here, and the
                # store had claimed it for us before that cancel arrived: the
                # claim is ours, so end it CANCELLED in one fenced write
                # rather than start a job whose cancel already returned True.
                del fences[number]
                link.record(
                    Outcome(number, claim.attempt, _CANCELLED, time.time(), error="cancelled")
                )
                continue
            # A job this process submitted and still has needs no loading:
            # the payload is its own pickle (the usual case, and a quarter
            # of a claim's cost).
            local = job is not None and not job.status._terminal  # type: ignore[attr-defined]
            if local:
                written = link.unconfirmed(number)
                if written is not None and written != claim.payload:
                    # An id of its own whose insert has not come back, and
                    # the row holds another member's job: that insert won,
                    # so the store's job runs, never this process's copy
                    # (which the store reports as existed when it answers).
                    local = False
                    del jobs[number]
                    self._table.unfinished -= 1
            if not local:
                stored, reason = self._load(claim)
                if stored is None:
                    if reason.startswith(CANNOT_LOAD):
                        grace = self._settings.load_grace
                        hand_back_or_fail(
                            held, grace, link, number, claim.attempt, reason, self._refuse
                        )
                    else:
                        self._refuse(number, claim.attempt, reason)
                    continue
                stored._jobsched_id = number  # a stored form carries no id: the row has it
            name = job.executor if local else stored.executor  # type: ignore[union-attr]
            if name not in self._executors:
                # Submitted by another process: this one loads its executor now.
                try:
                    # No hook: the claims bound it to its capacity.
                    self._executors.ensure(name)
                except Exception as exc:
                    self._refuse(number, claim.attempt, f"{type(exc).__name__}: {exc}")
                    continue
            if job is not None and job.status is _CANCELLED and not claim.lost:
                # Cancelled here while its add or this claim was on the way:
                # the claim is ours, so end it CANCELLED in one fenced write
                # (a release and a cancel are two transactions, and another
                # claim could come between them).
                del fences[number]
                link.record(
                    Outcome(number, claim.attempt, _CANCELLED, time.time(), error=job.last_error)
                )
                continue
            if not local:
                # Submitted elsewhere (or before a restart): this process's view,
                # its run_at on this member's clock for the queue wait metrics.
                job = stored
                job.status = _PENDING
                if claim.run_at is not None:
                    job.run_at = on_clock(self._settings.clock, claim.run_at)
                jobs[number] = job
                self._table.unfinished += 1
            assert job is not None
            if claim.lost and claim.cancelled:
                # Cancelled while it ran in a member that died: the cancel wins.
                del fences[number]
                ended = lost_end(claim)
                link.record(Outcome(number, claim.attempt, _CANCELLED, ended, error="cancelled"))
                if not job.status.is_terminal:
                    job.attempts = claim.attempt
                    job.status = _RUNNING
                    self.outcomes.finish(job, _CANCELLED, "cancelled")
                continue
            if claim.lost:  # its attempt ran in a member that died: that attempt failed
                if not local:  # its retry is claimed as ours: it binds from these
                    self._claim_inputs().keep(job)
                held.lost_ended[number] = lost_end(claim)
                job.attempts = claim.attempt
                job.status = _RUNNING
                self.outcomes.after_failure(job, WORKER_LOST, True, False)
                continue
            job.attempts = claim.attempt - 1  # the worker counts the attempt
            if local:
                flow = getattr(job, "_flow", None)  # a stored job may predate the slot
                if flow is not None and flow.inputs is not None:
                    self._claim_inputs().wait(job, flow.inputs, claim)
                    continue
            elif made != _markers.MARKERS_MADE or '"$result' in (claim.args or ""):
                made = _markers.MARKERS_MADE
                if self._claim_inputs().found(job, claim):
                    continue
            queue.add(job, claimed_now, claim.started)
        # One worker: it runs the claimed jobs that never suspend back to
        # back and passes the rest on as one suspends (Dispatcher._work).
        # Waking one per job cost a task switch each, mostly for workers
        # that found the jobs gone.
        # With claims ahead of the workers, the next claim goes out when
        # half of them are taken, while the rest run.
        queue.refill_at = min(len(queue.jobs), self.ahead()) // 2
        if queue.jobs and self._idle:
            self._idle.popleft().set()

    def _claim_inputs(self) -> ClaimInputs:
        if self._inputs is None:
            from ._claiminputs import ClaimInputs

            assert self.group is not None  # claims arrive once the backing spawned
            self._inputs = ClaimInputs(self._claims, self.group, self._refuse, self.committed)
        return self._inputs

    def waiting_inputs(self) -> list[int]:
        """Stop waiting for inputs (the stop hands these claimed jobs back)."""
        return [] if self._inputs is None else self._inputs.let_go()

    def _load(self, claim: Claimed) -> tuple[Any, str]:
        """A claimed row as a Job, or (None, why not): a registered job by
        its name in this member's app, a pickled one from its payload."""
        if claim.args is None:
            return load_job(self._claims.link.codec, claim.payload)
        from .._jobs._registered import load_claimed

        return load_claimed(self._backing.reads.registry, claim.name, claim.args)

    def deferred(self) -> list[tuple[int, float, str]]:
        """The jobs to hand back for members that can load them (taken)."""
        held = self._held
        taken, held.deferred = held.deferred, []
        return taken

    def undeferred(self, jobs: list[tuple[int, float, str]]) -> None:
        """The store did not take ``jobs`` back (an outage): try again."""
        held = self._held
        held.deferred = jobs + held.deferred

    def _refuse(self, number: int, attempt: int, reason: str) -> None:
        """A claimed row that must not run: FAILED in the store, unread."""
        # The reason may quote the row's own text (a module name from its pickle).
        reason = storable(reason)
        self._held.fences.pop(number, None)
        self._claims.link.record(Outcome(number, attempt, _FAILED, time.time(), error=reason))
        job = self._table.jobs.get(number)
        if job is not None and not job.status._terminal:  # type: ignore[attr-defined]
            job.last_error = reason
            job.status = _RUNNING
            self.outcomes.finish(job, _FAILED, None)

    def changed(self, changes: Sequence[Change]) -> None:
        """Statuses the store set itself (a cascade): this process's view follows."""
        jobs = self._table.jobs
        finish_one = self.outcomes.finish_one
        for change in changes:
            job = jobs.get(change.id)
            if job is not None and not job.status._terminal:  # type: ignore[attr-defined]
                finish_one(job, change.status, change.error)

    def existed(self, ids: Sequence[int]) -> None:
        """Jobs submitted here with an id of their own that the store already
        held: the store's job stands, and this process forgets its copy."""
        jobs = self._table.jobs
        for number in ids:
            job = jobs.get(number)
            if job is not None and not job.status._terminal and number not in self._held.fences:  # type: ignore[attr-defined]
                del jobs[number]
                self._table.unfinished -= 1
        if not self._table.unfinished and self._table.join_waiters:
            self._table.wake_joiners()

    def held(self) -> Collection[int]:
        """The jobs this member holds in the store, for their leases."""
        held = self._held
        # With the jobs handed back but not yet released: still RUNNING under
        # this member in the store, whose leases must not lapse meanwhile.
        return [*held.fences, *held.released, *(number for number, _, _ in held.deferred)]

    async def fire_schedules(self, due: Sequence[DueSchedule]) -> bool:
        """Make the fires of the stored schedules this member claimed (see
        ``StoredSchedules.fire``); True if one of them is due again."""
        return await self._backing.schedules.fire(due)

    def committed(self) -> None:
        """Workers that found too many outcomes waiting (``ClaimedQueue.take``)
        take claimed jobs again: one is woken, and it wakes the next as a
        job suspends, as for a claim."""
        if self._claims.jobs and self._idle:
            self._idle.popleft().set()

    def cancel_held(self, ids: Collection[int]) -> None:
        """Cancels asked for in the store, of jobs this member holds."""
        jobs = self._table.jobs
        for number in ids:
            job = jobs.get(number)
            if job is not None and job.status is _RUNNING:
                self._dispatcher.cancel_running(number)  # the store has the cancel already
            else:
                self._cancel(f"job-{number}")
