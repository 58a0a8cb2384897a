"""The link's state and its plain operations: ids, submit order, wakeups, closing.

:class:`LinkBase` sets every attribute the layers above it use (see the
package's docstring for how they stack); :class:`Host` is what the link asks
of the scheduler it serves.
"""

from __future__ import annotations

import collections
import contextlib
import math
import random
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

import anyio

from ..._exceptions import StoreUnavailableError
from ..._ordering._ratelimit import RateLimit
from ...store._base import JobStore
from ...store._codec import Codec
from ...store._members import new_owner
from ...store._rows import Change, Claimed, DueSchedule, NewJob, Outcome
from . import _timing
from ._outage import Outage

if TYPE_CHECKING:
    from ._refusals import Batch


class Host(Protocol):
    """What the link needs from the scheduler it serves."""

    def claim_capacity(self) -> tuple[int, Mapping[str, int]]:
        """How many jobs to claim now, and how many at most on each executor."""

    def queue_room(self, wanted: int) -> Mapping[str, int] | None:
        """How many at most of each limited queue (None: no queue is limited)."""

    def stale_claims(self) -> list[int]:
        """Claimed jobs that waited too long ahead of stuck workers, to hand back."""

    def handed_back(self, numbers: Collection[int]) -> None:
        """The store took back jobs :meth:`stale_claims` gave."""

    def deferred(self) -> list[tuple[int, float, str]]:
        """Claimed jobs this member cannot load, to hand back until a later
        time (``JobStore.defer``): ``(id, run_at, error)`` each, taken."""

    def undeferred(self, jobs: list[tuple[int, float, str]]) -> None:
        """The store did not take back jobs :meth:`deferred` gave (an outage)."""

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

    def committed(self) -> None:
        """A group commit ended: workers that waited for it may start jobs."""

    async def fire_schedules(self, due: Sequence[DueSchedule]) -> bool:
        """Make the fires of stored schedules this member claimed; True if
        one is due again (missed fires caught up one by one)."""

    @property
    def num_workers(self) -> int:
        """The scheduler's ``num_workers``, for the members list."""


def _takes(method: Callable[..., object], name: str) -> bool:
    """Whether ``method`` takes the keyword ``name`` (a store written before
    it was part of the seam does not)."""
    import inspect

    try:
        return name in inspect.signature(method).parameters
    except (TypeError, ValueError):
        return False


class LinkBase:
    """The link's state: set here, used by every layer above."""

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
        self._block = _timing.ID_BLOCK
        self._reserved_at = -math.inf
        self._last_seq = 0
        self._adds: list[NewJob] = []
        #: Jobs with ids of their own whose insert has not come back yet ->
        #: the payload this member wrote: another member's insert of that id
        #: may win meanwhile (see ``unconfirmed``).
        self._unconfirmed: dict[int, bytes] = {}
        self._outcomes: list[Outcome] = []
        #: Starts of jobs claimed ahead: (id, attempt, wall-clock start).
        self._starts: list[tuple[int, int, float]] = []
        #: Whether the store's claim takes ``starting`` (see JobStore.claim):
        #: then jobs claimed ahead are not started until their start is written.
        self.claims_ahead = _takes(store.claim, "starting")
        #: Stale claims whose hand-back the store refused (an outage): the
        #: heartbeat tries again (see Leasing._hand_back_stale).
        self._unreleased: list[int] = []
        #: Set when no claim is on its way (see StoreLink.claims_settled).
        self._claim_settled: anyio.Event | None = None
        self._cancels: list[int] = []
        self._schedules: list[tuple[str, bytes, float]] = []
        self._unscheduled: list[str] = []
        self._appended = 0  # writes handed to the committer so far
        #: Where the next batch ends, when a big result was queued behind
        #: other writes: (writes before it, then each list's length then).
        self._cut: tuple[int, int, int, int, int, int] | None = None
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
        #: New jobs the store refused (see ``JobDataError``), for the flushes
        #: that waited for them: (writes committed before their batch, the
        #: batch's end, what was refused). The last few: an older flush has
        #: returned by now.
        self._refused_adds: collections.deque[tuple[int, int, str]] = collections.deque(maxlen=100)
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
        self._names_reported: set[str] = set()
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
        #: The queues this member serves (None: every queue).
        self.queues: frozenset[str] | None = None
        #: A producer (``num_workers=0``) never claims jobs or schedule fires:
        #: its claimer only watches the store (for wait()).
        self.producer = False
        #: The registered job names this member runs (``js.App``): its
        #: claims take registered jobs of these names only.
        self.names: frozenset[str] = frozenset()
        #: Set when the committer, claimer and heartbeat have all returned.
        self.stopped = anyio.Event()
        self._close_wakeup = anyio.Event()
        self._outage = Outage(store.url)
        #: The batch being written (kept across transient failures).
        self._batch: Batch | None = None
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
                self._block = min(self._block * 2, _timing.MAX_ID_BLOCK)
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

    # ── waiting, waking and closing ───────────────────────────────────────

    def outcomes_piled_up(self) -> bool:
        """Whether OUTCOMES_WAITING_MAX outcomes or more wait for the next
        group commit. The batch being written is not counted: the workers
        fill the next one meanwhile, so the committer never waits for them
        (counting it cost a loaded database a third of its throughput). A
        batch is taken from at most OUTCOMES_WAITING_MAX outcomes (and
        those of the attempts in flight), so at most twice that many wait
        for a commit at any time, however slow the database."""
        return len(self._outcomes) >= _timing.OUTCOMES_WAITING_MAX

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
        with anyio.move_on_after(_timing.POLL_INTERVAL):
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

    def wake_heartbeat(self) -> None:
        """Jobs to hand back (see ``Host.deferred``): the heartbeat writes them now."""
        self._beat_wakeup.set()

    def _store_woke(self) -> None:
        # Another member's commit: a new job, a cancel, or a new schedule.
        self._schedules_seen = -math.inf
        self._claim_wakeup.set()
        self._wake_settled()  # a cancel ends jobs too

    def _store_finished(self) -> None:
        # Another member committed jobs' outcomes: only waiters care.
        self._wake_settled()
