"""Group commit: writes appended by submit and the workers, written by one task.

The workers never wait on the store. ``submit`` and every outcome only append
to a list; the *committer* task writes whatever has piled up while its last
transaction ran (one round trip for many jobs, with no fixed delay), in order,
fenced as ever. A batch that an outage interrupted stays until it is written.
A batch of new jobs or outcomes the store refuses for one job's data
(:class:`JobDataError`) is written again in halves until that job is alone:
it fails alone, the rest are written, and the common batch stays one call.
The committer also prunes the store's history every
``_timing.prune_every(history_limit)`` outcomes.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Awaitable, Callable

import anyio

from ..._exceptions import StoreUnavailableError
from ..._log import logger
from ...store._codec import BIG
from ...store._errors import JobDataError
from ...store._rows import Change, NewJob, Outcome
from . import _timing
from ._refusals import Batch, Refusals, Split
from ._retry import LinkClosed


class Committing(Refusals):
    """The writes: appended here, committed by the committer task."""

    def add(self, job: NewJob) -> None:
        """Queue ``job`` for the next group commit."""
        if job.own_id:
            self._unconfirmed[job.id] = job.payload
        self._adds.append(job)
        self._appended += 1
        self._commit_wakeup.set()

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
                self._appended,
                len(self._adds),
                len(self._outcomes),
                len(self._cancels),
                len(self._schedules),
                len(self._unscheduled),
            )
        self._outcomes.append(outcome)
        self._appended += 1
        self._commit_wakeup.set()

    def start(self, job_id: int, attempt: int, at: float) -> None:
        """Queue the start of a job claimed ahead for the next group commit."""
        self._starts.append((job_id, attempt, at))
        self._appended += 1
        self._commit_wakeup.set()

    def put_schedule(self, schedule_id: str, payload: bytes, first_fire: float) -> None:
        """Queue a stored schedule (new, or replacing one of that id)."""
        self._schedules.append((schedule_id, payload, first_fire))
        self._appended += 1
        self._schedules_seen = -math.inf
        self._commit_wakeup.set()

    def remove_schedule(self, schedule_id: str) -> None:
        """Queue the removal of a stored schedule."""
        self._unscheduled.append(schedule_id)
        self._appended += 1
        self._commit_wakeup.set()

    def cancel(self, job_id: int) -> None:
        """Queue a cancel of a job this member does not hold."""
        self._cancels.append(job_id)
        self._appended += 1
        self._commit_wakeup.set()

    async def flush(self, patience: float | None = None) -> None:
        """Return once everything appended so far is committed.

        :param patience: seconds of unavailability to wait before raising
            (None: :data:`UNAVAILABLE_WAIT`; ``math.inf``: ride the outage,
            as ``join()`` does). Once the link closes, at most
            :data:`UNAVAILABLE_WAIT`: the committer gives up then.
        :raises StoreUnavailableError: the store stayed unavailable for
            that long during this wait. The writes stay queued and are
            written when it is back.
        :raises ValueError: the store refused a job submitted before this
            call for its data (a value it cannot keep); the message names
            it. The other writes are committed.
        """
        target = self._appended
        since = self._committed
        started = time.monotonic()
        while self._committed < target:
            limit = _timing.UNAVAILABLE_WAIT if patience is None else patience
            if self.closing:
                limit = min(limit, _timing.UNAVAILABLE_WAIT)
            if self._error is not None:
                raise self._error
            if not self._committing:
                # No committer task (not started yet, or torn down): commit here.
                await self.store.open()
                try:
                    await self._commit_batch(patient=False)
                except StoreUnavailableError as exc:
                    raise self._unavailable(target) from exc
                continue
            entry = (target, anyio.Event())
            self._flushed.append(entry)
            self._commit_wakeup.set()
            # Woken by the commit (or close(): the limit changes); else
            # looks again once the store could have been away for the whole wait.
            # (A poll interval at least: a short limit must not spin.)
            down = self._outage.down_for(started)
            with anyio.move_on_after(max(_timing.POLL_INTERVAL, limit - down)):
                await entry[1].wait()
            if not entry[1].is_set():
                self._flushed.remove(entry)
                outage = self._outage
                if outage.since is not None and outage.down_for(started) >= limit:
                    raise self._unavailable(target, limit)
        if self._error is not None:
            raise self._error
        refused = [said for low, high, said in self._refused_adds if low < target and high > since]
        if refused:
            raise ValueError(
                "; ".join(refused) + ". The other jobs are committed; the refused ones "
                "are cancelled here and not in the store: submit them again with values "
                "the store can keep"
            )

    def _unavailable(self, target: int, waited: float | None = None) -> StoreUnavailableError:
        outage = self._outage
        waited = _timing.UNAVAILABLE_WAIT if waited is None else waited
        return StoreUnavailableError(
            f"the store {outage.url} has been unavailable for {waited:g} s "
            f"({outage.error}); {target - self._committed} write(s) are not committed "
            "yet. They stay queued and are written when the store is back: flush() "
            "again to wait for them"
        )

    async def committer(self) -> None:
        """Group-commit appended writes until closed and drained."""
        try:
            await self._commit_all()
        except StoreUnavailableError as exc:
            # Only when closing (see _commit_batch): stop() has raised it too.
            logger.error(
                "%d write(s) were not committed at stop: the store %s is unavailable (%s). "
                "Jobs submitted since the last commit are not in the store; attempts whose "
                "outcomes were not written run again when a scheduler opens it",
                self._appended - self._committed,
                self._outage.url,
                exc,
            )
        finally:
            self._task_done()

    async def _commit_all(self) -> None:
        self._committing = True
        try:
            while True:
                if not self._pending():
                    if self.closing:
                        await self._prune_at_stop()
                        return
                    await self._commit_wakeup.wait()
                    self._commit_wakeup = anyio.Event()
                    continue
                await self._commit_batch()
        finally:
            self._committing = False

    async def _prune_at_stop(self) -> None:
        # A worker that stops before the cadence comes round leaves the
        # history within the limit too.
        if self._finished_since_prune and self._error is None:
            self._finished_since_prune = 0
            with contextlib.suppress(LinkClosed):  # the store is away: the next scheduler prunes
                await self._call("pruning", lambda: self.store.prune(self._history_limit))

    def _pending(self) -> bool:
        return bool(
            self._batch
            or self._adds
            or self._starts
            or self._outcomes
            or self._cancels
            or self._schedules
            or self._unscheduled
        )

    async def _commit_batch(self, patient: bool = True) -> None:
        """Write everything appended so far in one round of transactions.

        One batch at a time: a flush that writes before the committer task
        runs and the committer's first batch would otherwise be in flight
        together, and the earlier one, committing last, would set
        ``_committed`` back below writes already committed (a later flush
        then waited forever for writes nobody had left to write).

        The committer (``patient``) retries a store that is unavailable for
        as long as it takes, and once closing, for :data:`UNAVAILABLE_WAIT`;
        a flush that writes itself (no committer) for that long. Then the
        StoreUnavailableError is raised, and the batch stays for a later try.
        """
        while self._writing is not None:
            await self._writing.wait()
        # An event per batch, made on the loop that runs it (a link outlives
        # the loop that submitted before start, as anyio's Lock would not).
        self._writing = anyio.Event()

        def give_up(failing: float) -> bool:
            return (self.closing or not patient) and failing >= _timing.UNAVAILABLE_WAIT

        try:
            await self._write_batch(give_up)
        finally:
            writing, self._writing = self._writing, None
            writing.set()

    def _take_batch(self) -> Batch:
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
            done, adds, outcomes, cancels, schedules, unscheduled = cut
            batch = Batch(
                self._adds[:adds],
                self._outcomes[:outcomes],
                self._cancels[:cancels],
                self._schedules[:schedules],
                self._unscheduled[:unscheduled],
                done,
                self._wall(),
                starts=starts,
            )
            self._starts = []
            del self._adds[:adds], self._outcomes[:outcomes], self._cancels[:cancels]
            del self._schedules[:schedules], self._unscheduled[:unscheduled]
            return batch
        batch = Batch(
            self._adds,
            self._outcomes,
            self._cancels,
            self._schedules,
            self._unscheduled,
            self._appended,
            self._wall(),
            starts=starts,
        )
        self._adds, self._outcomes, self._cancels, self._starts = [], [], [], []
        self._schedules, self._unscheduled = [], []
        return batch

    async def _write_batch(self, give_up: Callable[[float], bool]) -> None:
        store = self.store
        batch = self._batch
        if batch is None:
            batch = self._batch = self._take_batch()

        async def record() -> list[Change]:
            return (await store.record(self.owner, batch.outcomes)).changes

        async def start() -> list[Change]:
            await store.start(self.owner, batch.starts)
            return []

        async def put() -> list[Change]:
            await store.put_schedules(batch.schedules)
            return []

        async def remove() -> list[Change]:
            await store.remove_schedules(batch.unscheduled)
            return []

        # In this order, each step once: a step that failed is retried alone,
        # so the steps before it are never written twice. Adds and outcomes
        # are written in parts if the store refuses one job's data.
        steps: list[tuple[Callable[[], Awaitable[list[Change]]], Split | None]] = []
        if batch.adds:
            steps.append(
                (
                    lambda: store.add(batch.adds, batch.now),
                    Split(batch.adds, lambda part: store.add(part, batch.now), self._refuse_add),
                )
            )
        if batch.starts:
            steps.append((start, None))
        if batch.outcomes:
            steps.append((record, Split(batch.outcomes, self._record_part, self._refuse_outcome)))
        if batch.cancels:
            steps.append((lambda: store.cancel(batch.cancels, batch.now), None))
        if batch.schedules:
            steps.append((put, None))
        if batch.unscheduled:
            steps.append((remove, None))
        try:
            while batch.step < len(steps):
                whole, split = steps[batch.step]
                if batch.parts is None:
                    try:
                        batch.changes += await self._call(
                            "writing", whole, give_up=give_up, data=split is not None
                        )
                    except JobDataError:
                        if split is None:
                            raise
                        batch.parts = [split.items]
                if batch.parts is not None:
                    assert split is not None
                    await self._write_parts(batch, split, give_up)
                batch.step += 1
        except StoreUnavailableError:
            raise  # given up: the batch stays, and nothing counts as committed
        except Exception as exc:
            # A bug, not an outage: nobody may think their writes landed.
            self._error = exc
            self._release_flushes(math.inf)
            raise
        self._batch = None
        for said in batch.refused:
            self._refused_adds.append((self._committed, batch.done, said))
        self._host.committed()
        existed = [job.id for job in batch.adds if job.existed]
        if existed:
            self._host.existed(existed)  # before the flushes return: submit's view is right
        if self._unconfirmed:
            # Settled: a copy the store did not take is forgotten (existed),
            # one it did is the stored job. (A later submit of the id makes
            # an entry of its own.)
            for job in batch.adds:
                if self._unconfirmed.get(job.id) is job.payload:
                    del self._unconfirmed[job.id]
        self._committed = batch.done
        self._release_flushes(batch.done)
        progress, self._progress = self._progress, anyio.Event()
        progress.set()
        self._wake_settled()
        if batch.changes:
            self._host.changed(batch.changes)
        if batch.adds or batch.outcomes or batch.schedules:
            # New work, dependents released or a schedule due: claim now.
            self._claim_wakeup.set()
        self._finished_since_prune += len(batch.outcomes)
        if self._finished_since_prune >= _timing.prune_every(self._history_limit):
            self._finished_since_prune = 0
            # Tried once: retried in place, a prune the store keeps refusing
            # (PostgreSQL's DELETE meeting an operator's lock on an old row,
            # for as long as that is held) held up every write behind it.
            # The next cadence tries again.
            try:
                await self._call(
                    "pruning", lambda: store.prune(self._history_limit), give_up=lambda _: True
                )
            except StoreUnavailableError:
                self._outage.drop("pruning")

    def _release_flushes(self, committed: float) -> None:
        waiting = []
        for target, event in self._flushed:
            if target <= committed:
                event.set()
            else:
                waiting.append((target, event))
        self._flushed = waiting
