"""Group commit: the committer task, and ``flush()`` that waits for it.

The *committer* writes whatever :class:`~._writes.Writes` piled up while its
last transaction ran (one round trip for many jobs, with no fixed delay), in
order, fenced as ever. A batch that an outage interrupted stays until it is
written. A step of a batch the store refuses for one job's data
(:class:`JobDataError`) is written again in halves (``_refusals``). The
committer also prunes the store's history (see ``_pruning``).
"""

from __future__ import annotations

import collections
import contextlib
import math
import time
from collections.abc import Awaitable, Callable

import anyio

from ..._exceptions import StoreUnavailableError
from ..._log import logger
from ..._retention import Retention
from ...store._base import JobStore
from ...store._errors import JobDataError
from ...store._rows import Change, NewJob, Outcome
from . import _timing
from ._batch import Batch, Split
from ._closing import Closing
from ._flows import FlowWrite
from ._host import Host
from ._outage import Outage
from ._pruning import Pruning
from ._refusals import Refusals
from ._retry import LinkClosed, StoreCalls
from ._settled import Settled
from ._writes import Writes


class Committer:
    """Commits the appended writes, one batch at a time; tells the host,
    the waiters and the flushes when a batch is in."""

    __slots__ = (
        "_batch",
        "_calls",
        "_closing",
        "_committed",
        "_committing",
        "_error",
        "_flushed",
        "_host",
        "_outage",
        "_owner",
        "_pruning",
        "_refusals",
        "_refused_adds",
        "_settled",
        "_store",
        "_wake_claimer",
        "_wall",
        "_writes",
        "_writing",
    )

    def __init__(
        self,
        store: JobStore,
        owner: str,
        keeping: Retention,
        *,
        wall: Callable[[], float],
        host: Host,
        writes: Writes,
        calls: StoreCalls,
        refusals: Refusals,
        outage: Outage,
        closing: Closing,
        settled: Settled,
        wake_claimer: Callable[[], None],
    ) -> None:
        self._store = store
        self._owner = owner
        self._pruning = Pruning(store, keeping, wall)
        self._wall = wall
        self._host = host
        self._writes = writes
        self._calls = calls
        self._refusals = refusals
        self._outage = outage
        self._closing = closing
        self._settled = settled
        self._wake_claimer = wake_claimer
        self._committed = 0  # writes it has committed
        self._flushed: list[tuple[int, anyio.Event]] = []
        self._error: BaseException | None = None
        #: New jobs the store refused (see ``JobDataError``), for the flushes
        #: that waited for them: (writes committed before their batch, the
        #: batch's end, what was refused). The last few: an older flush has
        #: returned by now.
        self._refused_adds: collections.deque[tuple[int, int, str]] = collections.deque(maxlen=100)
        self._committing = False
        #: Set while a batch is being written (see _commit_batch).
        self._writing: anyio.Event | None = None
        #: The batch being written (kept across transient failures).
        self._batch: Batch | None = None

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
        target = self._writes.appended
        since = self._committed
        started = time.monotonic()
        while self._committed < target:
            limit = _timing.UNAVAILABLE_WAIT if patience is None else patience
            if self._closing.closing:
                limit = min(limit, _timing.UNAVAILABLE_WAIT)
            if self._error is not None:
                raise self._error
            if not self._committing:
                # No committer task (not started yet, or torn down): commit here.
                await self._store.open()
                try:
                    await self._commit_batch(patient=False)
                except StoreUnavailableError as exc:
                    raise self._unavailable(target) from exc
                continue
            entry = (target, anyio.Event())
            self._flushed.append(entry)
            self._writes.wake()
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

    def closed(self) -> None:
        """The link closes: the flushes that ride an outage wait from now on
        for a bounded time (they look again)."""
        flushed, self._flushed = self._flushed, []
        for _, event in flushed:
            event.set()

    def outcomes_uncommitted(self) -> list[Outcome] | None:
        """The outcomes appended or being written, not committed yet (None:
        none). Their rows stay RUNNING under this member until they are."""
        pending = self._writes.outcomes
        batch = self._batch
        if not pending and (batch is None or not batch.outcomes):
            return None
        return pending + batch.outcomes if batch is not None else pending

    async def run(self) -> None:
        """Group-commit appended writes until closed and drained."""
        try:
            await self._commit_all()
        except StoreUnavailableError as exc:
            # Only when closing (see _commit_batch): stop() has raised it too.
            logger.error(
                "%d write(s) were not committed at stop: the store %s is unavailable (%s). "
                "Jobs submitted since the last commit are not in the store; attempts whose "
                "outcomes were not written run again when a scheduler opens it",
                self._writes.appended - self._committed,
                self._outage.url,
                exc,
            )

    async def _commit_all(self) -> None:
        self._committing = True
        writes = self._writes
        try:
            while True:
                if not (self._batch or writes.pending()):
                    if self._closing.closing:
                        await self._prune_at_stop()
                        return
                    await writes.arrived()
                    continue
                await self._commit_batch()
        finally:
            self._committing = False

    async def _prune_at_stop(self) -> None:
        # A worker that stops before the cadence comes round leaves the
        # history within the limit too.
        if self._error is None and self._pruning.left():
            with contextlib.suppress(LinkClosed):  # the store is away: the next scheduler prunes
                await self._calls.call("pruning", self._pruning.prune)

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
        closing = self._closing

        def give_up(failing: float) -> bool:
            return (closing.closing or not patient) and failing >= _timing.UNAVAILABLE_WAIT

        try:
            await self._write_batch(give_up)
        finally:
            writing, self._writing = self._writing, None
            writing.set()

    async def _write_batch(self, give_up: Callable[[float], bool]) -> None:
        store, owner, refusals = self._store, self._owner, self._refusals
        batch = self._batch
        if batch is None:
            batch = self._batch = self._writes.take_batch(self._wall())

        async def record() -> list[Change]:
            return (await store.record(owner, batch.outcomes)).changes

        async def start() -> list[Change]:
            await store.start(owner, batch.starts)
            return []

        async def put() -> list[Change]:
            await store.put_schedules(batch.schedules)
            return []

        async def remove() -> list[Change]:
            await store.remove_schedules(batch.unscheduled)
            return []

        async def refuse_add(job: NewJob, exc: JobDataError) -> list[Change]:
            return await refusals.refuse_add(batch, job, exc)

        def add(jobs: list[NewJob]) -> Callable[[], Awaitable[list[Change]]]:
            return lambda: store.add(jobs, batch.now)

        def add_workflow(write: FlowWrite) -> Callable[[], Awaitable[list[Change]]]:
            async def step() -> list[Change]:
                try:
                    changes = await store.add_workflow(write.workflow, batch.now)
                except (ValueError, JobDataError, NotImplementedError) as exc:
                    # Nothing of it written: its caller's to say, not a bug here.
                    write.refused(exc)
                    return []
                write.written(changes)
                return changes

            return step

        # In this order, each step once: a step that failed is retried alone,
        # so the steps before it are never written twice. Adds and outcomes
        # are written in parts if the store refuses one job's data; a
        # workflow, all or nothing, is a step of its own between the adds
        # queued before it and after it.
        steps: list[tuple[Callable[[], Awaitable[list[Change]]], Split | None]] = []
        for adding in batch.add_steps():
            if isinstance(adding, FlowWrite):
                steps.append((add_workflow(adding), None))
            else:
                steps.append(
                    (
                        add(adding),
                        Split(adding, lambda part: store.add(part, batch.now), refuse_add),
                    )
                )
        if batch.starts:
            steps.append((start, None))
        if batch.outcomes:
            steps.append(
                (
                    record,
                    Split(batch.outcomes, refusals.record_part, refusals.refuse_outcome),
                )
            )
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
                        batch.changes += await self._calls.call(
                            "writing", whole, give_up=give_up, data=split is not None
                        )
                    except JobDataError:
                        if split is None:
                            raise
                        batch.parts = [split.items]
                if batch.parts is not None:
                    assert split is not None
                    await refusals.write_parts(batch, split, give_up)
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
        self._writes.settle(
            [*batch.adds, *(j for _, w in batch.flows for j in w.workflow.jobs)]
            if batch.flows
            else batch.adds
        )
        self._committed = batch.done
        self._release_flushes(batch.done)
        self._settled.committed()
        if batch.changes:
            self._host.changed(batch.changes)
        if batch.adds or batch.flows or batch.outcomes or batch.schedules:
            # New work, dependents released or a schedule due: claim now.
            self._wake_claimer()
        if self._pruning.due(len(batch.outcomes)):
            # Tried once: retried in place, a prune the store keeps refusing
            # (PostgreSQL's DELETE meeting an operator's lock on an old row,
            # for as long as that is held) held up every write behind it.
            # The next cadence tries again.
            try:
                await self._calls.call(
                    "pruning",
                    self._pruning.prune,
                    give_up=lambda _: True,
                )
            except StoreUnavailableError:
                self._calls.drop("pruning")

    def _release_flushes(self, committed: float) -> None:
        waiting = []
        for target, event in self._flushed:
            if target <= committed:
                event.set()
            else:
                waiting.append((target, event))
        self._flushed = waiting
