"""A scheduler's link to a durable store: ids, group commit, claims and leases.

The workers never wait on the store. ``submit`` and every outcome only append
to a batch; one *committer* task writes whatever has piled up while its last
transaction ran (a group commit: one round trip for many jobs, with no fixed
delay). One *claimer* task claims as many runnable jobs as there are idle
workers, best first, and hands them over; a *heartbeat* task extends the
leases of the jobs this member holds and learns which of them someone
cancelled. The in-memory store needs none of this: the scheduler works on its
heaps directly.
"""

from __future__ import annotations

import inspect
import math
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from functools import partial
from typing import Protocol

import anyio

from ._codec import Codec
from ._members import new_owner
from ._ratelimit import RateLimit
from ._store import Change, Claimed, DueSchedule, JobStore, NewJob, Outcome

#: Ids reserved per round trip at first; the next block is reserved when
#: half is used, twice as large while submits keep coming (up to
#: MAX_ID_BLOCK), so a burst of submits rarely waits on the store.
ID_BLOCK = 1024
MAX_ID_BLOCK = 65536
#: Seconds between looks at the store when nothing woke the claimer; other
#: processes' commits reach an idle member at the latest this late.
POLL_INTERVAL = 0.5
#: Finished jobs between two prunes of the store's history.
PRUNE_EVERY = 1000
#: Seconds between looks for due schedules while every claim finds work: a
#: look is a round trip, and one per claim cost W10 a third of its speed.
SCHEDULES_EVERY = 0.05


class Host(Protocol):
    """What the link needs from the scheduler it serves."""

    def claim_capacity(self) -> tuple[int, Mapping[str, int]]:
        """How many jobs to claim now, and how many at most on each executor."""

    def claimed(self, claims: Sequence[Claimed]) -> None:
        """Take claimed jobs: queue them for the workers, or settle lost ones."""

    def changed(self, changes: Sequence[Change]) -> None:
        """Statuses the store set (cascaded cancels, cancels of queued jobs)."""

    def existed(self, ids: Sequence[int]) -> None:
        """Jobs with ids of their own that the store already held: not added."""

    def held(self) -> Collection[int]:
        """Ids of the jobs this member holds (claimed or running)."""

    def cancel_held(self, ids: Collection[int]) -> None:
        """Someone asked to cancel these jobs, which this member holds."""

    async def fire_schedules(self, due: Sequence[DueSchedule]) -> None:
        """Make the fires of stored schedules this member claimed."""


class StoreLink:
    """Batches a scheduler's writes to ``store`` and feeds it claimed work."""

    def __init__(
        self,
        store: JobStore,
        host: Host,
        history_limit: int,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.codec = Codec(store.secret)
        #: This member's name in the store's ``owner`` column: unique per run.
        self.owner = new_owner()
        self._wall = wall
        self._next_id = 0
        self._end_id = 0
        self._spare: tuple[int, int] | None = None  # a reserved block: (first, size)
        self._block = ID_BLOCK
        self._reserved_at = -math.inf
        self._last_seq = 0
        self._adds: list[NewJob] = []
        self._outcomes: list[Outcome] = []
        self._cancels: list[int] = []
        self._schedules: list[tuple[str, bytes, float]] = []
        self._unscheduled: list[str] = []
        self._appended = 0  # writes handed to the committer so far
        self._committed = 0  # writes it has committed
        self._commit_wakeup = anyio.Event()
        self._claim_wakeup = anyio.Event()
        self._beat_wakeup = anyio.Event()
        self._flushed: list[tuple[int, anyio.Event]] = []
        self._error: BaseException | None = None
        self._progress = anyio.Event()
        #: Set (and replaced) by this member's commits and by the store's
        #: notifications of others' outcomes: what wait() sleeps on.
        self._settled = anyio.Event()
        self._history_limit = history_limit
        self._finished_since_prune = 0
        self.closing = False
        self._committing = False
        #: Set while a batch is being written (see _commit_batch).
        self._writing: anyio.Event | None = None
        #: When the claimer last looked for due schedules (monotonic); reset
        #: by a schedule put here or a wake from the store.
        self._schedules_seen = -math.inf
        self._host = host
        self._tasks_left = 3
        #: Passed to every claim: the scheduler's ``rate_limits`` (None:
        #: none), and a fair share's weights (None: key order).
        self.rates: Mapping[str, RateLimit] | None = None
        self.tenants: Mapping[str | None, int] | None = None
        #: A producer (``num_workers=0``) never claims jobs or schedule fires:
        #: its claimer only watches the store (for wait()).
        self.producer = False
        #: Set when the committer, claimer and heartbeat have all returned.
        self.stopped = anyio.Event()

    # ── ids and order (synchronous: submit is) ────────────────────────────

    def next_id(self) -> int:
        """A new job id, unique in the store across processes and restarts."""
        if self._next_id >= self._end_id:
            spare, self._spare = self._spare, None
            if spare is None:
                spare = (self.store.reserve_ids(self._block), self._block)
            first, size = spare
            self._next_id, self._end_id = first, first + size
        number = self._next_id
        self._next_id += 1
        if self._spare is None and self._end_id - self._next_id < self._block // 2:
            # Reserve the next block ahead, so submit rarely waits for one;
            # a block used up soon after the last asks for a larger one.
            clock = time.monotonic()
            if clock - self._reserved_at < 1.0:
                self._block = min(self._block * 2, MAX_ID_BLOCK)
            self._reserved_at = clock
            self._spare = (self.store.reserve_ids(self._block), self._block)
        return number

    def next_seq(self) -> int:
        """Submit order across members: wall-clock microseconds, strictly increasing here."""
        seq = max(self._last_seq + 1, time.time_ns() // 1000)
        self._last_seq = seq
        return seq

    # ── writes (appended here, committed by the committer task) ───────────

    def add(self, job: NewJob) -> None:
        """Queue ``job`` for the next group commit."""
        self._adds.append(job)
        self._appended += 1
        self._commit_wakeup.set()

    def record(self, outcome: Outcome) -> None:
        """Queue an attempt's outcome for the next group commit."""
        self._outcomes.append(outcome)
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

    async def flush(self) -> None:
        """Return once everything appended so far is committed."""
        target = self._appended
        while self._committed < target:
            if self._error is not None:
                raise self._error
            if not self._committing:
                # No committer task (not started yet, or torn down): commit here.
                await self.store.open()
                await self._commit_batch()
                continue
            event = anyio.Event()
            self._flushed.append((target, event))
            self._commit_wakeup.set()
            await event.wait()
        if self._error is not None:
            raise self._error

    def next_progress(self) -> anyio.Event:
        """The event this member's next commit sets."""
        return self._progress

    def next_settled(self) -> anyio.Event:
        """The event the next commit here, or the next outcome another member
        commits that the store notifies of, sets."""
        return self._settled

    def _wake_settled(self) -> None:
        settled, self._settled = self._settled, anyio.Event()
        settled.set()

    async def progress(self, event: anyio.Event) -> None:
        """Wait for ``event`` (see :meth:`next_progress`), or a poll interval (others' work)."""
        with anyio.move_on_after(POLL_INTERVAL):
            await event.wait()

    def close(self) -> None:
        """Let the tasks end: the committer once it has written everything."""
        self.closing = True
        self._commit_wakeup.set()
        self._claim_wakeup.set()
        self._beat_wakeup.set()

    def _task_done(self) -> None:
        self._tasks_left -= 1
        if not self._tasks_left:
            self.stopped.set()

    def wake_claimer(self) -> None:
        """A worker freed up, or new work may be claimable."""
        self._claim_wakeup.set()

    def _store_woke(self) -> None:
        # Another member's commit: a new job, a cancel, or a new schedule.
        self._schedules_seen = -math.inf
        self._claim_wakeup.set()
        self._wake_settled()  # a cancel ends jobs too

    def _store_finished(self) -> None:
        # Another member committed jobs' outcomes: only waiters care.
        self._wake_settled()

    # ── the tasks ─────────────────────────────────────────────────────────

    async def committer(self) -> None:
        """Group-commit appended writes until closed and drained."""
        try:
            await self._commit_all()
        finally:
            self._task_done()

    async def _commit_all(self) -> None:
        self._committing = True
        try:
            while True:
                if not self._pending():
                    if self.closing:
                        return
                    await self._commit_wakeup.wait()
                    self._commit_wakeup = anyio.Event()
                    continue
                await self._commit_batch()
        finally:
            self._committing = False

    def _pending(self) -> bool:
        return bool(
            self._adds or self._outcomes or self._cancels or self._schedules or self._unscheduled
        )

    async def _commit_batch(self) -> None:
        """Write everything appended so far in one round of transactions.

        One batch at a time: a flush that writes before the committer task
        runs and the committer's first batch would otherwise be in flight
        together, and the earlier one, committing last, would set
        ``_committed`` back below writes already committed (a later flush
        then waited forever for writes nobody had left to write).
        """
        while self._writing is not None:
            await self._writing.wait()
        # An event per batch, made on the loop that runs it (a link outlives
        # the loop that submitted before start, as anyio's Lock would not).
        self._writing = anyio.Event()
        try:
            await self._write_batch()
        finally:
            writing, self._writing = self._writing, None
            writing.set()

    async def _write_batch(self) -> None:
        store = self.store
        adds, self._adds = self._adds, []
        outcomes, self._outcomes = self._outcomes, []
        cancels, self._cancels = self._cancels, []
        schedules, self._schedules = self._schedules, []
        unscheduled, self._unscheduled = self._unscheduled, []
        done = self._appended
        now = self._wall()
        # Shielded: a batch taken off the lists is written whole, so a
        # cancelled committer never leaves a batch half known (flush() after
        # a teardown writes what is left).
        existed: list[int] = []
        with anyio.CancelScope(shield=True):
            try:
                changes: list[Change] = []
                if adds:
                    changes += await store.add(adds, now)
                    existed = [job.id for job in adds if job.existed]
                if outcomes:
                    changes += (await store.record(self.owner, outcomes)).changes
                if cancels:
                    changes += await store.cancel(cancels, now)
                if schedules:
                    await store.put_schedules(schedules)
                if unscheduled:
                    await store.remove_schedules(unscheduled)
            except Exception as exc:
                # The store is gone: nobody may think their writes landed.
                self._error = exc
                self._release_flushes(math.inf)
                raise
        if existed:
            self._host.existed(existed)  # before the flushes return: submit's view is right
        self._committed = done
        self._release_flushes(done)
        progress, self._progress = self._progress, anyio.Event()
        progress.set()
        self._wake_settled()
        if changes:
            self._host.changed(changes)
        if adds or outcomes or schedules:
            # New work, dependents released or a schedule due: claim now.
            self._claim_wakeup.set()
        self._finished_since_prune += len(outcomes)
        if self._finished_since_prune >= PRUNE_EVERY:
            self._finished_since_prune = 0
            await store.prune(self._history_limit)

    def _release_flushes(self, committed: float) -> None:
        waiting = []
        for target, event in self._flushed:
            if target <= committed:
                event.set()
            else:
                waiting.append((target, event))
        self._flushed = waiting

    async def claimer(self, host: Host) -> None:
        """Claim as many jobs as workers are idle, best first, until closed."""
        try:
            async with anyio.create_task_group() as tg:
                # The store's notifications wake the claimer between polls.
                if _watches_finished(self.store):
                    watch = partial(self.store.watch, finished=self._store_finished)
                else:  # a store written before the finished callback
                    watch = self.store.watch  # type: ignore[assignment]
                tg.start_soon(watch, self._store_woke, name="jobsched-store-watch")
                if self.producer:
                    while not self.closing:
                        await self._claim_wakeup.wait()
                        self._claim_wakeup = anyio.Event()
                else:
                    await self._claim_all(host)
                tg.cancel_scope.cancel()
        finally:
            self._task_done()

    async def _claim_all(self, host: Host) -> None:
        store = self.store
        while not self.closing:
            self._claim_wakeup = anyio.Event()
            # The claim first: the workers that just went idle woke this task
            # together with the committer (their outcomes), so a store that
            # commits writes asked for together in one transaction (SQLite's
            # group commit) pays one fsync for both.
            limit, executors = host.claim_capacity()
            claims: list[Claimed] = []
            if limit > 0 and executors:
                claims = await store.claim(
                    self.owner,
                    limit,
                    executors,
                    self._wall(),
                    store.lease,
                    rates=self.rates,
                    tenants=self.tenants,
                )
                if claims:
                    host.claimed(claims)
            # Schedules fire whether or not a worker is free: their jobs queue.
            # While the workers are busy or claims keep finding work, the
            # look waits SCHEDULES_EVERY; an idle member looks every pass.
            clock = time.monotonic()
            idle = limit > 0 and not claims
            if idle or clock - self._schedules_seen >= SCHEDULES_EVERY:
                self._schedules_seen = clock
                fires = await store.claim_schedules(self.owner, self._wall(), store.lease)
                if fires:
                    await host.fire_schedules(fires)
            if claims:
                continue
            wait = POLL_INTERVAL
            if limit > 0:
                # Also when a rate-limited job's next token is due (next_due).
                due = await store.next_due()
                if due is not None:
                    wait = min(wait, max(0.0, due - self._wall()))
            with anyio.move_on_after(wait):
                await self._claim_wakeup.wait()

    async def heartbeat(self, host: Host) -> None:
        """Extend the leases of held jobs; pass on cancels requested elsewhere."""
        try:
            await self._beat(host)
        finally:
            self._task_done()

    async def _beat(self, host: Host) -> None:
        store = self.store
        # A third of the lease, so two missed beats still keep it; at least
        # every second, so a cancel asked on another member arrives in time.
        every = min(store.lease / 3, 1.0)
        while not self.closing:
            with anyio.move_on_after(every):
                await self._beat_wakeup.wait()
            if self.closing:
                return
            held = host.held()
            if held:
                cancelled = await store.extend(self.owner, held, self._wall() + store.lease)
                if cancelled:
                    host.cancel_held(cancelled)


def _watches_finished(store: JobStore) -> bool:
    """Whether ``store.watch`` takes the ``finished`` callback (see JobStore.watch)."""
    try:
        return "finished" in inspect.signature(store.watch).parameters
    except (TypeError, ValueError):
        return False
