"""A scheduler's link to a durable store: ids, group commit, claims and leases.

The workers never wait on the store. ``submit`` and every outcome only append
to a batch; one *committer* task writes whatever has piled up while its last
transaction ran (a group commit: one round trip for many jobs, with no fixed
delay). One *claimer* task claims as many runnable jobs as there are idle
workers, best first, and hands them over; a *heartbeat* task extends the
leases of the jobs this member holds and learns which of them someone
cancelled. The in-memory store needs none of this: the scheduler works on its
heaps directly.

A store call that fails with :class:`StoreUnavailableError` (the store's mark
for a transient failure: a dropped connection, a locked or full database) is
retried with capped, jittered backoff, and never ends the scheduler: running
jobs go on, their outcomes wait in order in the batch and are written, fenced
as ever, when the store is back. The outage is logged once when it starts and
once when it ends (:class:`_Outage`). Any other exception is a bug, and ends
the scheduler as it always did.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import math
import random
import time
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

import anyio

from .._exceptions import StoreUnavailableError
from .._jobs import _plugins
from .._jobs._retry import RetryPolicy
from .._log import logger
from .._ordering._ratelimit import RateLimit
from ..store._base import (
    MEMBER_EVERY,
    Change,
    Claimed,
    DueSchedule,
    JobStore,
    Member,
    NewJob,
    Outcome,
    mask_password,
)
from ..store._codec import Codec, key_name
from ..store._members import new_owner
from ._state import POLL_INTERVAL as POLL_INTERVAL  # there: `import jobsched` skips this module

T = TypeVar("T")

#: Ids reserved per round trip at first; the next block is reserved when
#: half is used, twice as large while submits keep coming (up to
#: MAX_ID_BLOCK), so a burst of submits rarely waits on the store.
ID_BLOCK = 1024
MAX_ID_BLOCK = 65536
#: Finished jobs between two prunes of the store's history, at most: a
#: smaller ``history_limit`` prunes every ``history_limit`` (see prune_every).
PRUNE_EVERY = 1000
#: Seconds between looks for due schedules while every claim finds work: a
#: look is a round trip, and one per claim cost W10 a third of its speed.
SCHEDULES_EVERY = 0.05
#: Seconds ``flush()`` and ``enqueue()`` wait while the store is unavailable
#: before they raise StoreUnavailableError. What they waited for is not lost:
#: it stays in the batch and is written when the store is back.
UNAVAILABLE_WAIT = 30.0
#: Waits between retries of a store call that failed for a transient reason:
#: capped exponential backoff with full jitter, so members that lost their
#: database together do not come back as a herd. A small cap: an outage
#: ends for this member at most this long after the store is back.
STORE_BACKOFF = RetryPolicy(max_retries=0, base_delay=0.05, max_delay=2.0)
#: Seconds between an idle member's looks for jobs signed by a key it lacks
#: (a scan of the waiting rows' first bytes), which its claims never see.
KEYS_EVERY = 10.0
#: Seconds between a member's looks for jobs waiting on an executor it has
#: not installed (a count of the waiting rows), which its claims never see.
EXECUTORS_EVERY = 30.0
#: Seconds before a member repeats its WARNING about jobs still waiting on an
#: executor it lacks (one that was resolved and comes back is told at once).
EXECUTORS_REPEAT = 600.0


def prune_every(history_limit: int) -> int:
    """Finished jobs between two prunes: the store keeps at most
    ``history_limit + prune_every(history_limit)`` finished jobs, which is
    ``min(2 x limit, limit + PRUNE_EVERY)`` (and one batch's for a limit of 0)."""
    return max(1, min(history_limit, PRUNE_EVERY))


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
        """Ids of the jobs this member holds (claimed, running, or handed
        back at stop and not yet released). The link
        renews the leases of these and of the jobs whose outcomes it has yet
        to commit."""

    def cancel_held(self, ids: Collection[int]) -> None:
        """Someone asked to cancel these jobs, which this member holds."""

    async def fire_schedules(self, due: Sequence[DueSchedule]) -> None:
        """Make the fires of stored schedules this member claimed."""


class _Closed(Exception):
    """The link closed while a call waited to be retried: the task ends."""


class _Outage:
    """Which of the link's store calls are failing: one WARNING when the first
    fails, one INFO when a call succeeds and none is failing any more.

    Each call site has a name in ``failing`` until it succeeds, so a store
    that reads but cannot write (a full disk) is one outage, not one per
    read that got through.
    """

    def __init__(self, url: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.url = mask_password(url)
        self.failing: set[str] = set()
        #: When the outage began (``clock``), or None while the store is fine.
        self.since: float | None = None
        self.error: StoreUnavailableError | None = None
        self._clock = clock

    def failed(self, what: str, exc: StoreUnavailableError) -> None:
        """The call ``what`` failed with ``exc``."""
        self.failing.add(what)
        self.error = exc
        if self.since is None:
            self.since = self._clock()
            logger.warning(
                "the store %s is unavailable (%s: %s); retrying. Running jobs go on, "
                "and their outcomes are written when it is back",
                self.url,
                what,
                exc,
            )

    def drop(self, what: str) -> None:
        """Forget ``what`` without a success (it is not being called now)."""
        self.failing.discard(what)

    def ok(self, what: str) -> bool:
        """The call ``what`` succeeded; True if that ended the outage."""
        self.failing.discard(what)
        if self.since is None or self.failing:
            return False
        lasted = self._clock() - self.since
        self.since = self.error = None
        logger.info("the store %s is back after %.1f s unavailable", self.url, lasted)
        return True

    def down_for(self, since: float) -> float:
        """Seconds the store has been unavailable since ``since`` (0: it is not)."""
        if self.since is None:
            return 0.0
        return max(0.0, self._clock() - max(since, self.since))


@dataclass
class _Batch:
    """Writes taken off the lists for one group commit, and how far they got.

    A batch that a transient failure interrupted stays with the link (in
    order, before anything appended since) until every step is written.
    """

    adds: list[NewJob]
    outcomes: list[Outcome]
    cancels: list[int]
    schedules: list[tuple[str, bytes, float]]
    unscheduled: list[str]
    #: ``_appended`` when it was taken: committed once it is written.
    done: int
    now: float
    #: Steps written so far (add, record, cancel, put, remove: the non-empty ones).
    step: int = 0
    changes: list[Change] = field(default_factory=list)


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
        self.codec = Codec(store.secrets)
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
        #: The members list: when this member started, and last reported.
        self._member_started = self._wall()
        self._member_reported = -math.inf
        self._member_failed = False
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
        self._keys_seen = -math.inf
        #: Key ids this member logged that it lacks: each is logged once.
        self._keys_reported: set[bytes] = set()
        self._executors_seen = -math.inf
        #: Executors this member lacks that jobs wait on -> when it last
        #: logged them (monotonic); a name goes once no job waits on it.
        self._executors_reported: dict[str, float] = {}
        #: Stored schedules signed by a key this member lacks, logged once each.
        self.unkeyed_schedules: set[str] = set()
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
        self._close_wakeup = anyio.Event()
        self._outage = _Outage(store.url)
        #: The batch being written (kept across transient failures).
        self._batch: _Batch | None = None
        #: Set when an outage starts: the next claim renews this member's
        #: leases first, so that a lease which ran out while the store was
        #: away is not taken over from this member by its own claim.
        self._renew_first = False
        self._rng = random.Random()

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
            # On a failure the ids in hand still serve; the next submit asks again.
            with contextlib.suppress(StoreUnavailableError):
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

    async def flush(self, patience: float | None = None) -> None:
        """Return once everything appended so far is committed.

        :param patience: seconds of unavailability to wait before raising
            (None: :data:`UNAVAILABLE_WAIT`; ``math.inf``: ride the outage,
            as ``join()`` does). Once the link closes, at most
            :data:`UNAVAILABLE_WAIT`: the committer gives up then.
        :raises StoreUnavailableError: the store stayed unavailable for
            that long during this wait. The writes stay queued and are
            written when it is back.
        """
        target = self._appended
        started = time.monotonic()
        while self._committed < target:
            limit = UNAVAILABLE_WAIT if patience is None else patience
            if self.closing:
                limit = min(limit, UNAVAILABLE_WAIT)
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
            with anyio.move_on_after(max(POLL_INTERVAL, limit - down)):
                await entry[1].wait()
            if not entry[1].is_set():
                self._flushed.remove(entry)
                outage = self._outage
                if outage.since is not None and outage.down_for(started) >= limit:
                    raise self._unavailable(target, limit)
        if self._error is not None:
            raise self._error

    def _unavailable(self, target: int, waited: float | None = None) -> StoreUnavailableError:
        outage = self._outage
        waited = UNAVAILABLE_WAIT if waited is None else waited
        return StoreUnavailableError(
            f"the store {outage.url} has been unavailable for {waited:g} s "
            f"({outage.error}); {target - self._committed} write(s) are not committed "
            "yet. They stay queued and are written when the store is back: flush() "
            "again to wait for them"
        )

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
        # Flushes that ride an outage wait from now on for a bounded time.
        flushed, self._flushed = self._flushed, []
        for _, event in flushed:
            event.set()
        self._commit_wakeup.set()
        self._claim_wakeup.set()
        self._beat_wakeup.set()
        self._close_wakeup.set()

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

    # ── transient failures ────────────────────────────────────────────────

    async def _call(
        self,
        what: str,
        call: Callable[[], Awaitable[T]],
        *,
        give_up: Callable[[float], bool] | None = None,
    ) -> T:
        """``call()`` until it succeeds; a StoreUnavailableError is retried.

        Each call runs shielded, so its caller knows whether it finished.
        ``give_up(seconds failing)`` True re-raises the error instead; without
        it, the link closing ends the retries with :class:`_Closed`.
        """
        failures = 0
        first = 0.0
        while True:
            try:
                with anyio.CancelScope(shield=True):
                    result = await call()
            except StoreUnavailableError as exc:
                if not failures:
                    first = time.monotonic()
                failures += 1
                self._failed(what, exc)
                if give_up is not None:
                    if give_up(time.monotonic() - first):
                        raise
                elif self.closing:
                    raise _Closed() from exc
                await self._backoff(failures)
                continue
            self._ok(what)
            return result

    async def read(
        self, what: str, call: Callable[[], Awaitable[T]], patience: float | None = math.inf
    ) -> T:
        """``call()`` for a caller that waits anyway (``join()``, ``wait()``,
        stop's hand-back): retried through an outage, logged as one with the
        link's own calls.

        :param patience: seconds of failing calls before giving up (None:
            :data:`UNAVAILABLE_WAIT`); once the link closes, at the next failure.
        :raises StoreUnavailableError: given up.
        """

        def give_up(failing: float) -> bool:
            # Closing: the store is about to close under the caller anyway.
            limit = UNAVAILABLE_WAIT if patience is None else patience
            return self.closing or failing >= limit

        try:
            return await self._call(what, call, give_up=give_up)
        except BaseException:
            # Given up, or the caller cancelled (a wait's timeout): the call
            # is not failing any more, so the outage can end without it.
            self._outage.drop(what)
            raise

    def _failed(self, what: str, exc: StoreUnavailableError) -> None:
        if self._outage.since is None:
            self._renew_first = True
        self._outage.failed(what, exc)

    def _ok(self, what: str) -> None:
        if self._outage.ok(what):
            # Back: claim at once (notifications may have been missed), and
            # write whatever piled up.
            self._store_woke()
            self._commit_wakeup.set()

    async def _backoff(self, failures: int) -> None:
        delay = STORE_BACKOFF.delay(failures, self._rng)
        if self.closing:
            # The committer still writing at stop: a backoff all the same
            # (the wakeup below is set for good now).
            await anyio.sleep(delay)
            return
        # Cut short by close(): the call is tried once more, then the task ends.
        with anyio.move_on_after(delay):
            await self._close_wakeup.wait()

    # ── the tasks ─────────────────────────────────────────────────────────

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
            with contextlib.suppress(_Closed):  # the store is away: the next scheduler prunes
                await self._call("pruning", lambda: self.store.prune(self._history_limit))

    def _pending(self) -> bool:
        return bool(
            self._batch
            or self._adds
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
            return (self.closing or not patient) and failing >= UNAVAILABLE_WAIT

        try:
            await self._write_batch(give_up)
        finally:
            writing, self._writing = self._writing, None
            writing.set()

    def _take_batch(self) -> _Batch:
        batch = _Batch(
            self._adds,
            self._outcomes,
            self._cancels,
            self._schedules,
            self._unscheduled,
            self._appended,
            self._wall(),
        )
        self._adds, self._outcomes, self._cancels = [], [], []
        self._schedules, self._unscheduled = [], []
        return batch

    async def _write_batch(self, give_up: Callable[[float], bool]) -> None:
        store = self.store
        batch = self._batch
        if batch is None:
            batch = self._batch = self._take_batch()

        async def record() -> list[Change]:
            return (await store.record(self.owner, batch.outcomes)).changes

        async def put() -> list[Change]:
            await store.put_schedules(batch.schedules)
            return []

        async def remove() -> list[Change]:
            await store.remove_schedules(batch.unscheduled)
            return []

        # In this order, each step once: a step that failed is retried alone,
        # so the steps before it are never written twice.
        steps: list[Callable[[], Awaitable[list[Change]]]] = []
        if batch.adds:
            steps.append(lambda: store.add(batch.adds, batch.now))
        if batch.outcomes:
            steps.append(record)
        if batch.cancels:
            steps.append(lambda: store.cancel(batch.cancels, batch.now))
        if batch.schedules:
            steps.append(put)
        if batch.unscheduled:
            steps.append(remove)
        try:
            while batch.step < len(steps):
                batch.changes += await self._call("writing", steps[batch.step], give_up=give_up)
                batch.step += 1
        except StoreUnavailableError:
            raise  # given up: the batch stays, and nothing counts as committed
        except Exception as exc:
            # A bug, not an outage: nobody may think their writes landed.
            self._error = exc
            self._release_flushes(math.inf)
            raise
        self._batch = None
        existed = [job.id for job in batch.adds if job.existed]
        if existed:
            self._host.existed(existed)  # before the flushes return: submit's view is right
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
        if self._finished_since_prune >= prune_every(self._history_limit):
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

    async def claimer(self, host: Host) -> None:
        """Claim as many jobs as workers are idle, best first, until closed."""
        try:
            async with anyio.create_task_group() as tg:
                # The store's notifications wake the claimer between polls.
                tg.start_soon(self._watch, name="jobsched-store-watch")
                if self.producer:
                    # Claims nothing: the watch alone runs, for wait() and join().
                    while not self.closing:
                        await self._claim_wakeup.wait()
                        self._claim_wakeup = anyio.Event()
                else:
                    with contextlib.suppress(_Closed):
                        await self._claim_all(host)
                tg.cancel_scope.cancel()
        finally:
            self._task_done()

    async def _watch(self) -> None:
        """The store's ``watch``, subscribed again after a transient failure."""
        failures = 0
        while True:
            started = time.monotonic()
            try:
                if _watches_finished(self.store):
                    await self.store.watch(self._store_woke, finished=self._store_finished)
                else:  # a store written before the finished callback
                    await self.store.watch(self._store_woke)
                return
            except StoreUnavailableError as exc:
                if time.monotonic() - started > 10 * STORE_BACKOFF.max_delay:
                    failures = 0  # it ran well for a while: a new outage
                failures += 1
                self._failed("watching for changes", exc)
            await self._backoff(failures)
            if self.closing:
                return
            # Whether the new subscription holds is not known until it
            # fails: the next call that succeeds may end the outage.
            self._outage.drop("watching for changes")
            self._store_woke()  # what it missed meanwhile

    async def fire(
        self, schedule: str, fire_time: float, next_fire: float, job: NewJob | None
    ) -> bool:
        """The store's ``fire`` for this member, retried while the store is unavailable."""
        return await self._call(
            "firing a schedule",
            lambda: self.store.fire(self.owner, schedule, fire_time, next_fire, job),
        )

    async def _claim(self, host: Host, limit: int, executors: Mapping[str, int]) -> list[Claimed]:
        store = self.store
        if self._renew_first:
            # After an outage: leases first, so this claim does not take over
            # this member's own jobs whose leases ran out meanwhile.
            await self._extend(host)
            self._renew_first = False
        return await store.claim(
            self.owner,
            limit,
            executors,
            self._wall(),
            store.lease,
            rates=self.rates,
            tenants=self.tenants,
        )

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
            looked_at = self._wall()
            if limit > 0 and executors:
                claims = await self._call(
                    "claiming jobs", functools.partial(self._claim, host, limit, executors)
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
                fires = await self._call(
                    "claiming schedules",
                    lambda: store.claim_schedules(self.owner, self._wall(), store.lease),
                )
                if fires:
                    await host.fire_schedules(fires)
            if idle and clock - self._keys_seen >= KEYS_EVERY:
                self._keys_seen = clock
                await self._report_unknown_keys()
            # Not only when idle: a member kept busy by its own executors'
            # jobs still tells about those it never claims.
            if limit > 0 and clock - self._executors_seen >= EXECUTORS_EVERY:
                self._executors_seen = clock
                await self._report_missing_executors(executors, clock)
            if claims:
                continue
            wait = POLL_INTERVAL
            if limit > 0:
                # Also when a rate-limited job's next token is due (next_due).
                due = await self._call("reading the next due time", store.next_due)
                # Due already when this pass claimed, yet nothing came: not
                # this member's to take now (a schedule leased by another
                # member, or signed by a key this one lacks). Waiting 0 for
                # it spun the claimer, thousands of round trips a second.
                if due is not None and due > looked_at:
                    wait = min(wait, max(0.0, due - self._wall()))
            with anyio.move_on_after(wait):
                await self._claim_wakeup.wait()

    async def _report_unknown_keys(self) -> None:
        """Log an ERROR, once per key id, for jobs this member never claims
        because a key it does not hold signed them."""
        # Retried as every store call is: an outage must not end the claimer.
        waiting = await self._call(
            "looking for jobs signed by unknown keys", self.store.waiting_for_keys
        )
        for kid, count in waiting.items():
            if kid not in self._keys_reported:
                self._keys_reported.add(kid)
                held = ", ".join(key_name(k) for k in self.codec.key_ids) or "none"
                logger.error(
                    "%d job(s) in the store %s are signed with key id %s, which this member "
                    "does not hold (its key ids: %s): they wait for a member that holds it; "
                    "add that key to secret=[...] or JOBSCHED_SECRET (the first key signs, "
                    "every one verifies)",
                    count,
                    self.store.url,
                    key_name(kid),
                    held,
                )

    async def _report_missing_executors(self, installed: Collection[str], clock: float) -> None:
        """Log a WARNING, once per executor name (again after
        EXECUTORS_REPEAT, or when it comes back after none waited), for
        jobs this member never claims because it lacks their executor."""
        # Retried as every store call is: an outage must not end the claimer.
        waiting = await self._call(
            "looking for jobs on executors this member lacks",
            lambda: self.store.waiting_for_executors(installed),
        )
        reported = self._executors_reported
        for name in [n for n in reported if n not in waiting]:
            del reported[name]  # resolved: told again if it comes back
        for name, count in sorted(waiting.items()):
            if clock - reported.get(name, -math.inf) < EXECUTORS_REPEAT:
                continue
            reported[name] = clock
            logger.warning(
                "%d job(s) in the store %s wait for the executor %r, which this member has "
                "not installed (its executors: %s), so it never claims them: they wait for a "
                "member that has it; to fix, on the workers that should run them: %s",
                count,
                self.store.url,
                name,
                ", ".join(sorted(installed)) or "none",
                _plugins.install_hint(name),
            )

    async def heartbeat(self, host: Host) -> None:
        """Extend the leases of held jobs; pass on cancels requested elsewhere."""
        try:
            await self._beat(host)
        finally:
            self._task_done()

    def _holding(self, host: Host) -> Collection[int]:
        """The jobs whose leases this member keeps: those the host holds, and
        those whose outcomes wait in the batch. The host lets go of a job
        when its outcome is made, but the row stays RUNNING under this member
        until that outcome is committed; a commit that stalls past the lease
        (an outage, a slow database) must not let another member take the
        finished job over as lost and run it again."""
        held = host.held()
        batch = self._batch
        if not self._outcomes and (batch is None or not batch.outcomes):
            return held
        waiting = {outcome.id for outcome in self._outcomes}
        if batch is not None:
            waiting.update(outcome.id for outcome in batch.outcomes)
        waiting.update(held)
        return waiting

    async def _extend(self, host: Host) -> None:
        held = self._holding(host)
        if held:
            store = self.store
            cancelled = await store.extend(self.owner, held, self._wall() + store.lease)
            if cancelled:
                host.cancel_held(cancelled)

    async def _beat(self, host: Host) -> None:
        store = self.store
        # A third of the lease, so two missed beats still keep it; at least
        # every second, so a cancel asked on another member arrives in time.
        every = min(store.lease / 3, 1.0)
        failures = 0
        # Until closed, leaving by the one way out that forgets the member
        # (a close during a beat must not skip it).
        while True:
            if failures:
                # A failed beat is tried again soon (with backoff), with the
                # jobs held then: a lease the outage ran out may still be kept.
                await self._backoff(failures)
            else:
                with anyio.move_on_after(every):
                    await self._beat_wakeup.wait()
            if self.closing:
                await self._forget_member()
                return
            await self._report_member(host)
            if not self._holding(host):
                failures = 0
                self._outage.drop("renewing leases")
                continue
            try:
                with anyio.CancelScope(shield=True):
                    await self._extend(host)
            except StoreUnavailableError as exc:
                failures += 1
                self._failed("renewing leases", exc)
                continue
            failures = 0
            self._renew_first = False
            self._ok("renewing leases")

    async def _report_member(self, host: Host) -> None:
        """Every MEMBER_EVERY seconds: this member's line in the members list."""
        now = self._wall()
        if now - self._member_reported < MEMBER_EVERY:
            return
        self._member_reported = now
        member = Member(
            owner=self.owner,
            # The scheduler's num_workers; a host without one reports 0.
            workers=int(getattr(host, "_num_workers", 0)),
            busy=len(host.held()),
            started_at=self._member_started,
            seen_at=now,
        )
        try:
            await self.store.report_member(member)
        except StoreUnavailableError:
            pass  # the leases' own beats report an outage; the next report retries
        except Exception:
            # The members list is for people: a store that fails it in a way
            # of its own must not end the heartbeat, which keeps the leases.
            if not self._member_failed:
                self._member_failed = True
                logger.warning(
                    "the store %s could not record this member for the members list; "
                    "its jobs are not affected",
                    self.store.url,
                    exc_info=True,
                )

    async def _forget_member(self) -> None:
        with anyio.move_on_after(MEMBER_EVERY, shield=True):
            # Unreachable: it goes stale, then leaves the list after MEMBERS_KEEP.
            with contextlib.suppress(StoreUnavailableError):
                await self.store.forget_member(self.owner)


def _watches_finished(store: JobStore) -> bool:
    """Whether ``store.watch`` takes the ``finished`` callback (see JobStore.watch)."""
    try:
        return "finished" in inspect.signature(store.watch).parameters
    except (TypeError, ValueError):
        return False
