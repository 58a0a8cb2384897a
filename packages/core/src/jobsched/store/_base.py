"""The store interface: where jobs, their outcomes and their dependencies live.

A durable store is shared: any number of schedulers (*members*, each with an
``owner`` id) may work on it at once, in one process or many. So every
operation is a batch (a database store pays one round trip per batch, not per
job) and every running attempt is *claimed*: the row names its owner, a lease
that the owner's heartbeat extends, and the attempt number. The pair (owner,
attempt) is the fencing token: an outcome is written only where both still
match, so a member whose lease expired and whose job was taken over can never
overwrite the newer attempt.

The store keeps no policy. It never unpickles a job: the scheduler computes
strategy keys, retry times and statuses, and the store applies them. Times in
a store are wall-clock seconds (``time.time()``), since a restart has a new
monotonic clock; the scheduler converts at this boundary.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from ._joined import Joined, Registered
from ._rows import (
    Change,
    Claimed,
    Completion,
    DueSchedule,
    NewJob,
    Outcome,
    Recorded,
    StoredJob,
)
from ._urls import mask_password
from ._workflowside import WorkflowSide

if TYPE_CHECKING:
    from .._enums import JobStatus
    from .._ordering._ratelimit import RateLimit


class Completer(Protocol):
    """What writes an attempt's completion in a caller's open transaction
    (``js.current_job().complete_in``): see :meth:`JobStore.completer`."""

    def write(self, conn: Any, completion: Completion) -> Awaitable[None] | None:
        """Write ``completion`` in ``conn``'s open transaction, fenced on its
        owner and attempt, with what :meth:`JobStore.record` does for a
        completed outcome (dependents released, waiters woken at commit).

        :returns: None once written (a synchronous connection), else an
            awaitable that writes (an asynchronous one).
        :raises LeaseLostError: the fence failed: nothing was written.
        :raises TypeError: ``conn`` is no connection this store takes.
        :raises ValueError: ``conn`` would commit it on its own, or is not
            to this store's database.
        """


class JobStore(WorkflowSide, ABC):
    """A place where jobs live, shared by every scheduler that opens it.

    Published through the ``jobsched.stores`` entry-point group under its URL
    scheme. Each method is one transaction; the scheduler batches calls (a
    group commit every few milliseconds) so a database pays one round trip
    per batch.
    """

    #: True for a store that processes on other machines share (PostgreSQL):
    #: what a job refers to must import in each of them, so a job defined in
    #: the submitting script (``__main__``) is refused at submit. A store of
    #: one machine (SQLite) takes it: a restart of the script loads it again.
    fleet: ClassVar[bool] = False
    #: The members' ``Member.level`` from which every member keeps workflows'
    #: edges and results (the schema that brought them), or None: the store
    #: reports no levels, and a producer does not check them. During a
    #: rolling upgrade a producer refuses workflow features while a live
    #: worker reports a lower level (docs/fleet.md, "Upgrading").
    workflow_level: ClassVar[int | None] = None

    def __init__(
        self,
        url: str,
        *,
        secret: str | bytes | Sequence[str | bytes] | None = None,
        lease: float = 30.0,
    ) -> None:
        """Keep the options every store takes.

        :param secret: signs payloads (HMAC-SHA256); a list of keys rotates
            them: the first signs, every one verifies. Default: the
            ``JOBSCHED_SECRET`` environment variable (keys separated by commas).
        :param lease: seconds a claimed attempt stays owned without a heartbeat.
        """
        if isinstance(lease, bool) or not isinstance(lease, (int, float)):
            raise TypeError(f"lease must be a number of seconds, got {lease!r}")
        if not (lease > 0 and math.isfinite(lease)):
            raise ValueError(f"lease must be a positive, finite number of seconds, got {lease!r}")
        #: The URL it was opened from, with any password masked.
        from ._codec import key_id, secrets_from  # hashlib and hmac: only for a durable store

        self.url: str = mask_password(url)
        #: The keys held, the signing one first (empty: payloads are unsigned).
        self.secrets: tuple[bytes, ...] = secrets_from(secret)
        #: The key that signs, or None.
        self.secret: bytes | None = self.secrets[0] if self.secrets else None
        #: The ids of the keys held: a claim hands out only rows signed with
        #: one of them (or unsigned, or in the legacy format without an id).
        self.key_ids: tuple[bytes, ...] = tuple(dict.fromkeys(key_id(k) for k in self.secrets))
        self.lease: float = float(lease)

    def completer(self) -> Completer | None:
        """What writes completions in callers' own transactions, or None
        (the default): this store cannot, and ``complete_in`` says so.

        Called on an open store, in the member's process; the object it
        returns is pickled to reach a process job, so it must hold no
        connection, only what finds the store's rows from the caller's
        connection.
        """
        return None

    @abstractmethod
    async def open(self) -> None:
        """Connect, create or check the schema.

        :raises StoreUnavailableError: the store cannot be reached or opened.
        """

    @abstractmethod
    async def close(self) -> None:
        """Release connections and threads. Idempotent."""

    async def exists(self) -> bool | None:
        """Whether the store holds a jobsched schema already, asked without
        creating one (the CLI's read commands never create a store); None if
        this store cannot tell, so that :meth:`open` decides.

        :raises StoreUnavailableError: the store cannot be reached.
        """
        return None

    @abstractmethod
    def reserve_ids(self, count: int) -> int:
        """Reserve ``count`` job ids for this process; the first of the block.

        Synchronous, so ``submit`` stays synchronous: the scheduler reserves
        the next block ahead of need, so this rarely blocks.
        """

    @abstractmethod
    async def add(self, jobs: Sequence[NewJob], now: float) -> list[Change]:
        """Insert jobs (one transaction); the ones cancelled at once because
        an upstream already failed."""

    def joined(self, connection: object) -> Joined:
        """The caller's ``connection``, checked, as a writer of jobs into its
        open transaction (``enqueue(..., connection=conn)``, see
        :class:`~jobsched.store.Joined`). Synchronous: it may look at the
        connection (a blocking driver's), never through an async one.

        :raises TypeError: the store takes no connection of this kind.
        :raises ValueError: the connection is not to this store's database,
            has no transaction open, or the store's schema is not there.

        The default takes none.
        """
        raise TypeError(
            f"{type(self).__name__} ({self.url}) cannot write jobs in your own transaction "
            f"(connection={connection!r}): it keeps its jobs where no connection of yours "
            "reaches; enqueue without connection=, after your transaction commits"
        )

    async def put_functions(self, functions: Sequence[Registered]) -> None:
        """Keep the app's registered functions for enqueues made in SQL (one
        transaction; a name stored already is replaced). The scheduler of an
        app calls it when it opens the store. The default keeps none: such a
        store has no SQL enqueue."""
        del functions  # nothing kept: the default has no SQL enqueue

    @abstractmethod
    async def claim(
        self,
        owner: str,
        limit: int,
        executors: Mapping[str, int],
        now: float,
        lease: float,
        *,
        rates: Mapping[str, RateLimit] | None = None,
        tenants: Mapping[str | None, int] | None = None,
        queues: Collection[str] | None = None,
        queue_room: Mapping[str, int] | None = None,
        starting: int | None = None,
        names: Collection[str] = (),
    ) -> list[Claimed]:
        """Up to ``limit`` runnable jobs for ``owner``, best first.

        Runnable: PENDING or RETRY_WAIT, every dependency completed, ``run_at``
        reached, on an executor in ``executors``, which maps each executor
        this member has to the most jobs it may claim on it now (its room
        under ``executor_limits`` or its capacity). Also takes over attempts
        whose lease expired (``Claimed.lost``), and hands back, uncounted,
        jobs claimed ahead that never started (see ``starting``). Each is
        RUNNING under ``owner`` with a lease until ``now + lease``, its
        attempt number counted.

        :param rates: rate key -> its limit. The store keeps one token bucket
            per key for everyone who opens it (``burst`` tokens at most,
            ``rate / per`` back a second) and takes a token per claimed job
            with that ``rate_key`` in the claim's own transaction; a job whose
            bucket is empty is not runnable yet. Keys absent here are not
            limited.
        :param tenants: fair share: tenant -> weight. When given, the claim
            serves tenants round-robin (up to each one's weight of jobs per
            turn, each tenant's jobs best first by key) instead of by key
            alone; tenants absent from the mapping weigh 1.
        :param queues: only jobs of these queues (``NewJob.queue``); None:
            of any queue. A worker on a small queue must not pay for a big
            one: its claim reads an index that starts with the queue.
        :param queue_room: queue -> the most jobs of it this claim may take
            (the member's room under ``queue_limits``, 0 for none); queues
            absent are bound only by ``limit``. The scheduler passes
            ``queues`` and ``queue_room`` only when it was given ``queues``
            or ``queue_limits``.
        :param starting: how many of the claimed jobs start now (idle
            workers wait for them); None: all of them. The rest, the jobs
            the member claims *ahead* of its workers, are RUNNING under
            ``owner`` and leased like the others, their attempt numbered,
            but not started: ``Claimed.started`` is False, ``started_at``
            stays NULL until the member reports the start (:meth:`start`),
            and a takeover hands such a job back uncounted instead of
            failing it as lost. A job handed back that way starts at its
            next claim whatever ``starting`` says, so a job that kills its
            member as it starts, before the start is written, still uses
            up its attempts. Optional: the scheduler passes it only to a
            store whose ``claim`` takes it (and then calls :meth:`start`).
        :param names: the registered job names this member can run. A row
            with ``args`` (a registered job) is runnable only when its
            ``name`` is one of them, so a member never claims a job it does
            not know; it waits for one that does (see
            :meth:`waiting_for_names`). Rows without ``args`` (pickled jobs)
            are claimed whatever ``names`` says. The filter is in the claim,
            takeovers of expired leases included, not a claim-and-release loop.
        """

    async def start(self, owner: str, starts: Sequence[tuple[int, int, float]]) -> None:
        """Jobs ``owner`` claimed ahead of its workers (``Claimed.started``
        False) that started: ``(id, attempt, started_at)`` each, fenced on
        (owner, attempt) like an outcome. A row no longer ``owner``'s is
        left alone. The scheduler writes them in its group commit, before
        the outcomes of the same batch.

        Only a store whose ``claim`` takes ``starting`` is called; the
        default says that it was called on one that claims nothing ahead.
        """
        raise NotImplementedError(
            f"{type(self).__name__}.claim() takes `starting`, so it must implement "
            "start() to learn which jobs claimed ahead started"
        )

    @abstractmethod
    async def record(self, owner: str, outcomes: Sequence[Outcome]) -> Recorded:
        """Write outcomes, each fenced on (owner, attempt), and apply the
        dependency cascade of every terminal one. A completion clears the
        job's ``last_error`` and ``last_traceback`` (an earlier attempt's
        error stays in its attempt's row). An outcome with ``started_at``
        (a job claimed ahead that started and ended within one group
        commit) sets the attempt's start too. A RETRY_WAIT outcome clears
        the job's progress (the next attempt starts with none); another
        writes its ``progress`` values where they are not None."""

    @abstractmethod
    async def extend(self, owner: str, ids: Collection[int], until: float) -> list[int]:
        """Extend the leases of ``owner``'s running jobs (started or claimed
        ahead); the ids among them that someone asked to cancel."""

    @abstractmethod
    async def release(self, owner: str, ids: Collection[int]) -> None:
        """Hand back jobs ``owner`` claimed but never started (it is stopping):
        their attempt is not counted, and any member may claim them again."""

    async def hand_back(self, owner: str, attempts: Sequence[tuple[int, int, float]]) -> None:
        """Hand back running attempts a stopping ``owner`` cut short past its
        grace: ``(id, attempt, ended_at)`` each. As :meth:`release`, the job
        waits again, its attempt not counted (one someone asked to cancel
        ends CANCELLED, and its progress is cleared: the next attempt starts
        with none), and any member may claim it; but the attempt ran,
        so it stays in the job's history (:meth:`attempts`): its member,
        start and ``ended_at``, status RETRY_WAIT, error
        :data:`~jobsched.store.HANDED_BACK_AT_STOP`, ``handed_back`` True,
        under a key of its own (:func:`~jobsched.store.hand_back_key`). A
        row no longer ``owner``'s, or on another attempt, is left alone.

        The default releases them, their history unrecorded: a store without
        it still hands the jobs on.
        """
        await self.release(owner, [job_id for job_id, _, _ in attempts])

    async def defer(self, owner: str, jobs: Sequence[tuple[int, float, str]]) -> None:
        """Hand back jobs ``owner`` claimed but cannot run (their payload does
        not load in this member: a deploy under way), for another member:
        ``(id, run_at, error)`` each. As :meth:`release`, the attempt is not
        counted (and one someone asked to cancel ends CANCELLED); the job is
        runnable again from ``run_at`` (not at once, so the member that
        could not load it does not claim it back in a loop) and its
        ``last_error`` is ``error``. A row no longer ``owner``'s is left alone.

        The default releases them, runnable at once, their error unrecorded:
        a store without it still hands the jobs on, only sooner.
        """
        await self.release(owner, [job_id for job_id, _, _ in jobs])

    @abstractmethod
    async def cancel(self, ids: Collection[int], now: float) -> list[Change]:
        """Cancel jobs: a queued one at once (with its dependents); a running
        one is flagged for its owner to stop (see :meth:`extend`)."""

    @abstractmethod
    async def next_due(self) -> float | None:
        """The earliest ``run_at`` of a waiting (delayed or retry-waiting,
        dependencies met) job or fire time of a schedule, or None.

        With ``rates``: also the time the next token is due in a bucket that
        this store object's last :meth:`claim` left empty, so that a member
        whose jobs wait only for tokens claims again when one is due.
        """

    @abstractmethod
    async def put_schedules(self, schedules: Sequence[tuple[str, bytes, float]]) -> None:
        """Store schedules ``(id, payload, first fire time)``; an id already
        stored is replaced, never duplicated. The same payload stored again
        changes nothing (its next fire stays): every worker of an app
        registers the app's schedules at its start."""

    @abstractmethod
    async def remove_schedules(self, ids: Collection[str]) -> None:
        """Forget schedules (a job they already made stays)."""

    @abstractmethod
    async def claim_schedules(self, owner: str, now: float, lease: float) -> list[DueSchedule]:
        """The schedules due by ``now`` that no live member is firing, now ``owner``'s."""

    @abstractmethod
    async def fire(
        self, owner: str, schedule: str, fire_time: float, next_fire: float, job: NewJob | None
    ) -> bool:
        """Make one fire of a claimed schedule: add ``job`` (None: the fire is
        skipped) and move the schedule to ``next_fire``, in one transaction.
        False if the fire was already made (by another member) or the
        schedule is no longer ``owner``'s: nothing changed."""

    @abstractmethod
    async def fetch(self, job_id: int) -> StoredJob | None:
        """The stored job, or None."""

    @abstractmethod
    async def unfinished(self) -> int:
        """How many jobs are not terminal."""

    @abstractmethod
    async def prune(self, keep: int | None, before: Mapping[JobStatus, float] | None = None) -> int:
        """Delete finished jobs with their attempts, never an unfinished one;
        how many went.

        First, of each status in ``before``, those that finished before its
        time (a cutoff on the clock of the outcomes' ``finished_at``); then
        the oldest finished jobs beyond the newest ``keep`` (None: no count
        bound). Each from an index, oldest first, never walking the kept rows.

        The scheduler passes ``before`` only under a ``js.Retention`` with
        an age: a store that takes ``keep`` alone serves ``history_limit``.
        """

    async def watch(
        self, wake: Callable[[], None], finished: Callable[[], None] | None = None
    ) -> None:
        """Call ``wake`` whenever another member committed work this one may
        claim (a new job, a released dependent, a cancel), until cancelled;
        and ``finished`` (if given) whenever another member committed the end
        of a job (what ``wait()`` and ``result()`` wait for).

        The scheduler runs it as a task for as long as the store is open and
        polls as well, so a store without notifications keeps the default,
        which returns at once.
        """
        del wake, finished  # nothing to watch: polling is the whole story
