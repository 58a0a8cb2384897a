"""The link as the engine sees it: :class:`StoreLink`, which builds the
parts once and hands each what it needs.

The engine and the tools use about thirty names of it; most are the parts'
own bound methods, set as attributes here, so that a call on the hot path
(``next_id``, ``add``, ``record``, ``start``) costs what it did when the link
was one class.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel

from ..._ordering._ratelimit import RateLimit
from ..._retention import Retention
from ...store._base import JobStore
from ...store._codec import Codec
from ...store._flowrows import NewWorkflow
from ...store._members import new_owner
from ...store._rows import Outcome
from ._claims import Claimer
from ._closing import Closing
from ._commit import Committer
from ._flows import FlowWrite
from ._handback import HandBacks
from ._host import Host
from ._ids import Ids
from ._leases import Heartbeat
from ._levels import Levels
from ._members import Members
from ._outage import Outage
from ._refusals import Refusals
from ._reports import Reports
from ._retry import StoreCalls
from ._settled import Settled
from ._terms import Terms
from ._writes import Writes

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from ..._workflows._bind import Upstream
    from ._progress import ProgressWriter


class StoreLink:
    """Batches a scheduler's writes to ``store`` and feeds it claimed work.

    Its three tasks (:meth:`committer`, :meth:`claimer`, :meth:`heartbeat`)
    run in the scheduler's task group; :meth:`close` ends them, and
    :attr:`stopped` is set once all three have returned.
    """

    def __init__(
        self,
        store: JobStore,
        host: Host,
        history: int | Retention,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.codec = Codec(store.secrets)
        #: This member's name in the store's ``owner`` column: unique per run.
        self.owner = owner = new_owner()
        #: Set when the committer, claimer and heartbeat have all returned.
        self.stopped = anyio.Event()
        self._tasks_left = 3

        self._closing = closing = Closing()
        self._outage = outage = Outage(store.url)
        self._terms = terms = Terms()
        settled = Settled()
        ids = Ids(store)
        self._writes = writes = Writes()
        self._calls = calls = StoreCalls(
            outage, closing, down=self._store_down, back=self._store_back
        )
        #: The members level check of a rolling upgrade (workflow features).
        self.levels = levels = Levels(store, owner, calls)
        self._reports = reports = Reports(store, self.codec, calls, terms)
        self._committer = committer = Committer(
            store,
            owner,
            history if isinstance(history, Retention) else Retention(max_finished=history),
            wall=wall,
            host=host,
            writes=writes,
            calls=calls,
            refusals=Refusals(store, owner, calls),
            outage=outage,
            closing=closing,
            settled=settled,
            wake_claimer=self._wake_claimer,
        )
        self._heartbeat = heartbeat = Heartbeat(
            store,
            owner,
            wall=wall,
            host=host,
            calls=calls,
            closing=closing,
            committer=committer,
            members=Members(store, owner, host, terms, wall, levels),
        )
        self._claimer = claimer = Claimer(
            store,
            owner,
            wall=wall,
            host=host,
            terms=terms,
            calls=calls,
            closing=closing,
            heartbeat=heartbeat,
            reports=reports,
            settled=settled,
        )

        # The parts' own methods: no frame of the link's in between.
        # Submit (synchronous, per job):
        self.next_id = ids.next_id
        self.next_seq = ids.next_seq
        self.add = writes.add
        self.unconfirmed = writes.unconfirmed
        # The workers (per attempt):
        self.record = writes.record
        self.start = writes.start
        self.outcomes_piled_up = writes.outcomes_piled_up
        self.wake_claimer = claimer.wake
        # Everything else:
        self.remove_schedule = writes.remove_schedule
        self.cancel = writes.cancel
        self.flush = committer.flush
        self.read = calls.read
        self.next_progress = settled.next_progress
        self.next_settled = settled.next_settled
        self.progress = settled.progress
        self.fire = claimer.fire
        self.claims_settled = claimer.claims_settled
        self.wake_heartbeat = heartbeat.wake
        # The stop (see HandBacks):
        hand_backs = HandBacks(store, owner)
        self.cut = hand_backs.cut
        self.hand_back = hand_backs.release
        # Progress (see note_progress): made with its first note.
        self._group: TaskGroup | None = None
        self._token: Any = None
        self._loop_thread = 0
        self._progress_writer: ProgressWriter | None = None
        self._progress_lock = threading.Lock()

    # ── what this member claims (set by the scheduler) ────────────────────

    @property
    def rates(self) -> Mapping[str, RateLimit] | None:
        """The scheduler's ``rate_limits``, passed to every claim (None: none)."""
        return self._terms.rates

    @rates.setter
    def rates(self, rates: Mapping[str, RateLimit] | None) -> None:
        self._terms.rates = rates

    @property
    def tenants(self) -> Mapping[str | None, int] | None:
        """A fair share's weights, passed to every claim (None: key order)."""
        return self._terms.tenants

    @tenants.setter
    def tenants(self, tenants: Mapping[str | None, int] | None) -> None:
        self._terms.tenants = tenants

    @property
    def queues(self) -> frozenset[str] | None:
        """The queues this member serves (None: every queue)."""
        return self._terms.queues

    @queues.setter
    def queues(self, queues: frozenset[str] | None) -> None:
        self._terms.queues = queues

    @property
    def producer(self) -> bool:
        """A producer (``num_workers=0``) claims nothing: its claimer only
        watches the store (for wait())."""
        return self._terms.producer

    @producer.setter
    def producer(self, producer: bool) -> None:
        self._terms.producer = producer

    @property
    def names(self) -> frozenset[str]:
        """The registered job names this member runs (an app's, set by it):
        its claims take registered rows of these names only."""
        return self._terms.names

    @names.setter
    def names(self, names: frozenset[str]) -> None:
        self._terms.names = names

    # ── state others read ─────────────────────────────────────────────────

    @property
    def closing(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closing.closing

    @property
    def claims_ahead(self) -> bool:
        """Whether the store's claim takes ``starting`` (see JobStore.claim):
        then jobs claimed ahead are not started until their start is written."""
        return self._claimer.claims_ahead

    @property
    def unkeyed_schedules(self) -> set[str]:
        """Stored schedules signed by a key this member lacks, logged once each."""
        return self._reports.unkeyed_schedules

    @property
    def _outcomes(self) -> list[Outcome]:
        # For tests that watch the outcomes pile up (test_prefetch).
        return self._writes.outcomes

    def add_workflow(self, workflow: NewWorkflow) -> FlowWrite:
        """Queue ``workflow`` (``JobStore.add_workflow``) after the jobs added
        so far and before those added later; await the result for the
        changes its add made (jobs cancelled at once).

        Awaiting it flushes (as :meth:`flush`, whose StoreUnavailableError
        it raises: the workflow stays queued and is written later).

        :raises ValueError: (awaited) the store holds one of its ids already;
            nothing of it was written.
        :raises JobDataError: (awaited) the store cannot keep a value of one
            of its jobs; nothing of it was written.
        :raises NotImplementedError: (awaited) the store keeps no workflows.
        """
        write = FlowWrite(workflow, self._committer.flush)
        self._writes.add_workflow(write)
        return write

    async def read_inputs(
        self, wanted: Mapping[int, Sequence[str]], max_bytes: int
    ) -> dict[int, dict[int, Upstream] | str]:
        """Claimed dependents' inputs (their number -> their upstreams' ids):
        each one's upstreams' ends by number, or why it cannot receive them;
        in one store call, retried through an outage (``_inputs``).

        :raises LinkClosed: the link closed while the store was away.
        """
        from ._inputs import read_inputs

        return await read_inputs(self.store, self.codec, self._calls, wanted, max_bytes)

    def put_schedule(self, schedule_id: str, payload: bytes, first_fire: float) -> None:
        """Queue a stored schedule (new, or replacing one of that id)."""
        self._writes.put_schedule(schedule_id, payload, first_fire)
        self._claimer.schedules_changed()

    # ── running jobs' progress ────────────────────────────────────────────

    def note_progress(
        self, number: int, attempt: int, fraction: float | None, message: str | None
    ) -> None:
        """A held job's attempt reported progress: written within about a
        second (see ``_progress``). Callable from any thread."""
        writer = self._progress_writer
        if writer is None:
            writer = self._make_progress_writer()
            if writer is None:
                return  # not started, or stopped: the outcome carries the values
        writer.note(number, attempt, fraction, message)

    def forget_progress(self, number: int) -> None:
        """A held job's attempt ended: its outcome carries its progress."""
        writer = self._progress_writer
        if writer is not None:
            writer.forget(number)

    @property
    def progress_writer(self) -> ProgressWriter | None:
        """The progress writer, once a job reported progress (None before)."""
        return self._progress_writer

    def _make_progress_writer(self) -> ProgressWriter | None:
        with self._progress_lock:
            writer = self._progress_writer
            group = self._group
            if writer is None and group is not None and not self._closing.closing:
                from ._progress import ProgressWriter

                writer = self._progress_writer = ProgressWriter(
                    self.store, self.owner, group, self._token, self._loop_thread
                )
            return writer

    # ── the tasks, and closing ────────────────────────────────────────────

    def spawn(self, group: TaskGroup) -> None:
        """Start the link's tasks in ``group`` (the scheduler's), where the
        progress writer's task starts too, when a job first reports progress."""
        self._group = group
        self._token = anyio.lowlevel.current_token()
        self._loop_thread = threading.get_ident()
        group.start_soon(self.committer, name="jobsched-store-committer")
        group.start_soon(self.claimer, name="jobsched-store-claimer")
        group.start_soon(self.heartbeat, name="jobsched-store-heartbeat")

    async def committer(self) -> None:
        """Group-commit appended writes until closed and drained."""
        try:
            await self._committer.run()
        finally:
            self._task_done()

    async def claimer(self) -> None:
        """Claim as many jobs as workers are idle, best first, until closed."""
        try:
            await self._claimer.run()
        finally:
            self._task_done()

    async def heartbeat(self) -> None:
        """Extend the leases of held jobs; pass on cancels requested elsewhere."""
        try:
            await self._heartbeat.run()
        finally:
            self._task_done()

    def close(self) -> None:
        """Let the tasks end: the committer once it has written everything."""
        self._closing.begin()
        with self._progress_lock:
            writer = self._progress_writer
        if writer is not None:
            writer.close()
        # Flushes that ride an outage wait from now on for a bounded time.
        self._committer.closed()
        self._writes.wake()
        self._claimer.wake()
        self._heartbeat.wake()
        self._closing.end_backoffs()

    def _task_done(self) -> None:
        self._tasks_left -= 1
        if not self._tasks_left:
            self.stopped.set()

    # ── what one part tells the others ────────────────────────────────────

    def _wake_claimer(self) -> None:
        # A commit brought new work, released dependents or made a schedule due.
        self._claimer.wake()

    def _store_down(self) -> None:
        # An outage began: the next claim renews this member's leases first.
        self._heartbeat.outage_began()

    def _store_back(self) -> None:
        # The outage ended: claim at once (notifications may have been
        # missed), and write whatever piled up.
        self._claimer.store_woke()
        self._writes.wake()
