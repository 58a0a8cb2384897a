"""The writes waiting for the next group commit, appended synchronously.

The workers never wait on the store: ``submit`` and every outcome only
append here (and wake the committer), in order. The committer takes them as
one :class:`Batch`; a big result is cut off from the writes queued before it,
so that they need not wait for its write. A workflow (:class:`FlowWrite`)
keeps its place among the adds: it is written between those before it and
those after.
"""

from __future__ import annotations

import anyio

from ...store._codec import BIG
from ...store._rows import NewJob, Outcome
from . import _timing
from ._batch import Batch
from ._flows import FlowWrite


class Writes:
    """The appended writes, and the event that tells the committer of them."""

    __slots__ = (
        "_adds",
        "_cancels",
        "_cut",
        "_flows",
        "_outcomes",
        "_schedules",
        "_starts",
        "_unconfirmed",
        "_unscheduled",
        "_wakeup",
        "appended",
    )

    def __init__(self) -> None:
        self._adds: list[NewJob] = []
        #: Workflows, each with its place: how many adds were queued before it.
        self._flows: list[tuple[int, FlowWrite]] = []
        #: Jobs with ids of their own whose insert has not come back yet ->
        #: the payload this member wrote: another member's insert of that id
        #: may win meanwhile (see ``unconfirmed``).
        self._unconfirmed: dict[int, bytes] = {}
        self._outcomes: list[Outcome] = []
        #: Starts of jobs claimed ahead: (id, attempt, wall-clock start).
        self._starts: list[tuple[int, int, float]] = []
        self._cancels: list[int] = []
        self._schedules: list[tuple[str, bytes, float]] = []
        self._unscheduled: list[str] = []
        #: Writes appended so far (read by the committer: a flush waits until
        #: it has committed this many).
        self.appended = 0
        #: Where the next batch ends, when a big result was queued behind
        #: other writes: (writes before it, then each list's length then).
        self._cut: tuple[int, int, int, int, int, int, int] | None = None
        self._wakeup = anyio.Event()

    # ── appending (synchronous: submit and the workers are) ───────────────

    def add(self, job: NewJob) -> None:
        """Queue ``job`` for the next group commit."""
        if job.own_id:
            self._unconfirmed[job.id] = job.payload
        self._adds.append(job)
        self.appended += 1
        self._wakeup.set()

    def add_workflow(self, write: FlowWrite) -> None:
        """Queue a workflow after the adds queued so far, before later ones."""
        for job in write.workflow.jobs:
            if job.own_id:
                self._unconfirmed[job.id] = job.payload
        self._flows.append((len(self._adds), write))
        self.appended += 1
        self._wakeup.set()

    def unconfirmed(self, job_id: int) -> bytes | None:
        """The payload of this member's insert of an own id, until the
        store has said whether it was added or the id was taken.

        Until then a claim of that id may be another member's job, which
        won the insert: the claimed payload tells which.
        """
        return self._unconfirmed.get(job_id)

    def record(self, outcome: Outcome) -> None:
        """Queue an attempt's outcome for the next group commit."""
        if (
            outcome.result is not None
            and len(outcome.result) >= BIG
            and self._cut is None
            and (
                self._adds
                or self._flows
                or self._outcomes
                or self._cancels
                or self._schedules
                or self._unscheduled
            )
        ):
            # The writes queued before a big result go in a batch of their
            # own: they need not wait for its write (most of a second for
            # 100 MB). A prefix of every list, so that a batch still commits
            # every write appended before its end, as flush() counts them.
            self._cut = (
                self.appended,
                len(self._adds),
                len(self._outcomes),
                len(self._cancels),
                len(self._schedules),
                len(self._unscheduled),
                len(self._flows),
            )
        self._outcomes.append(outcome)
        self.appended += 1
        self._wakeup.set()

    def start(self, job_id: int, attempt: int, at: float) -> None:
        """Queue the start of a job claimed ahead for the next group commit."""
        self._starts.append((job_id, attempt, at))
        self.appended += 1
        self._wakeup.set()

    def put_schedule(self, schedule_id: str, payload: bytes, first_fire: float) -> None:
        """Queue a stored schedule (new, or replacing one of that id)."""
        self._schedules.append((schedule_id, payload, first_fire))
        self.appended += 1
        self._wakeup.set()

    def remove_schedule(self, schedule_id: str) -> None:
        """Queue the removal of a stored schedule."""
        self._unscheduled.append(schedule_id)
        self.appended += 1
        self._wakeup.set()

    def cancel(self, job_id: int) -> None:
        """Queue a cancel of a job this member does not hold."""
        self._cancels.append(job_id)
        self.appended += 1
        self._wakeup.set()

    def outcomes_piled_up(self) -> bool:
        """Whether OUTCOMES_WAITING_MAX outcomes or more wait for the next
        group commit. The batch being written is not counted: the workers
        fill the next one meanwhile, so the committer never waits for them
        (counting it cost a loaded database a third of its throughput). A
        batch is taken from at most OUTCOMES_WAITING_MAX outcomes (and
        those of the attempts in flight), so at most twice that many wait
        for a commit at any time, however slow the database."""
        return len(self._outcomes) >= _timing.OUTCOMES_WAITING_MAX

    @property
    def outcomes(self) -> list[Outcome]:
        """The outcomes appended since the last batch was taken (not a copy)."""
        return self._outcomes

    # ── the committer's side ──────────────────────────────────────────────

    def wake(self) -> None:
        """Wake the committer (it writes, or, closing, ends)."""
        self._wakeup.set()

    async def arrived(self) -> None:
        """Return once :meth:`wake` was called (or a write appended) since
        the last return: the committer's wait."""
        await self._wakeup.wait()
        self._wakeup = anyio.Event()

    def pending(self) -> bool:
        """Whether any write waits to be taken."""
        return bool(
            self._adds
            or self._flows
            or self._starts
            or self._outcomes
            or self._cancels
            or self._schedules
            or self._unscheduled
        )

    def take_batch(self, now: float) -> Batch:
        """The writes for the next commit, taken off the lists (up to a cut,
        if a big result made one)."""
        starts = self._starts
        if starts and self._outcomes:
            # A job that started and ended since the last commit: its start
            # goes with its outcome (one write of its row, not two), which
            # for short jobs claimed ahead is nearly every start.
            ended = {(o.id, o.attempt): o for o in self._outcomes}
            left = []
            for start in starts:
                outcome = ended.get(start[:2])
                if outcome is None:
                    left.append(start)
                else:
                    outcome.started_at = start[2]
            starts = left
        cut, self._cut = self._cut, None
        if cut is not None:
            done, adds, outcomes, cancels, schedules, unscheduled, flows = cut
            batch = Batch(
                self._adds[:adds],
                self._outcomes[:outcomes],
                self._cancels[:cancels],
                self._schedules[:schedules],
                self._unscheduled[:unscheduled],
                done,
                now,
                starts=starts,
                flows=self._flows[:flows],
            )
            self._starts = []
            # The workflows left keep their places among the adds left.
            self._flows = [(at - adds, write) for at, write in self._flows[flows:]]
            del self._adds[:adds], self._outcomes[:outcomes], self._cancels[:cancels]
            del self._schedules[:schedules], self._unscheduled[:unscheduled]
            return batch
        batch = Batch(
            self._adds,
            self._outcomes,
            self._cancels,
            self._schedules,
            self._unscheduled,
            self.appended,
            now,
            starts=starts,
            flows=self._flows,
        )
        self._adds, self._outcomes, self._cancels, self._starts = [], [], [], []
        self._flows = []
        self._schedules, self._unscheduled = [], []
        return batch

    def settle(self, adds: list[NewJob]) -> None:
        """A batch's new jobs are written: a copy of an own id the store did
        not take is forgotten (it existed, or its workflow was refused), one
        it did is the stored job. (A later submit of the id makes an entry
        of its own.)"""
        unconfirmed = self._unconfirmed
        if unconfirmed:
            for job in adds:
                if unconfirmed.get(job.id) is job.payload:
                    del unconfirmed[job.id]
