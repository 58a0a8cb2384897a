"""PostgresStore: the JobStore interface on PostgreSQL, for a fleet.

psycopg's synchronous driver, called in anyio worker threads: its async
connection runs on asyncio only, and jobsched runs on trio too (see
docs/design.md). A small connection pool serves the scheduler's committer,
claimer and heartbeat at once; each method is one transaction, or statements
that commit on their own where each stands alone (a claim's steps, a batch
of outcomes, a read of one statement); a dedicated connection LISTENs for
other members' commits (:meth:`watch`). A member's claims, leases and
outcomes are the :class:`Leases` half, the operators' reads the
:class:`Reads` half (its reads of schedules in :class:`ScheduleReads`,
its queue pauses in :class:`QueuePauses`).
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Collection, Mapping, Sequence
from typing import Any, ClassVar, TypeVar

import anyio
import anyio.from_thread
import anyio.lowlevel
import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from jobsched import JobStatus, StoreUnavailableError
from jobsched.store import Change, DueSchedule, Joined, NewJob, Registered, StoredJob, TakeoverLooks

from . import (
    _cancels,
    _connect,
    _errors,
    _frontier,
    _orphans,
    _poollog,
    _prune,
    _queues,
    _running,
    _schedules,
    _schema,
    _sql,
    _sqlapi,
)
from ._complete_in import Completer
from ._leases import DEAD_OWNER_EVERY, Leases
from ._notify import Notifications
from ._pausing import QueuePauses
from ._pool import POOL_SIZE, RECONNECT_TIMEOUT, Pooled
from ._txadd import State, joined
from ._workflows import Workflows

T = TypeVar("T")

#: Rows a prune deletes per transaction: short transactions keep VACUUM
#: working and the queue table from bloating.
PRUNE_BATCH = 1000


class PostgresStore(Notifications, Pooled, Leases, QueuePauses, Workflows):
    """Jobs in PostgreSQL (``postgresql://user:password@host:5432/db``).

    :param url: a libpq URL; ``postgres://`` and ``postgresql+psycopg://`` work too.
    :param secret: signs payloads; required (else ``JOBSCHED_SECRET``).
    :param lease: seconds a claimed attempt stays owned without a heartbeat.
    :raises ValueError: the URL is malformed, or there is no secret.
    """

    #: Members on other machines load its jobs: none from ``__main__``.
    fleet = True
    #: Schema 6 brought workflows: a member of older code reports no level.
    workflow_level: ClassVar[int | None] = 6

    def __init__(
        self,
        url: str,
        *,
        secret: str | bytes | Sequence[str | bytes] | None = None,
        lease: float = 30.0,
    ) -> None:
        self._conninfo = _connect.with_keepalives(_connect.conninfo_from_url(url))
        super().__init__(url, secret=secret, lease=lease)
        if self.secret is None:
            raise ValueError(
                f"the PostgreSQL store {self.url!r} needs a secret to sign the jobs it "
                "stores (a fleet shares them): pass secret=... to open_store() or set "
                "the JOBSCHED_SECRET environment variable"
            )
        self._raw_url = url
        self._pool: ConnectionPool[Any] | None = None
        self._start_lock = threading.Lock()
        self._limiter = anyio.CapacityLimiter(POOL_SIZE)
        self._dead_checked = -DEAD_OWNER_EVERY
        self._looks = TakeoverLooks()
        self._last_used: weakref.WeakKeyDictionary[psycopg.Connection[Any], float] = (
            weakref.WeakKeyDictionary()
        )
        self._token_due = None  # see Leases
        self._queue_column = False  # see Leases
        self._pauses = False  # see Leases
        self._frontier = _frontier.Frontier()
        self._running = _running.Running()
        self._pruned = _prune.Bound()
        self._held = _orphans.Held()
        # Whether this member has seen the named queues' index built (see _queues).
        self._queue_index = False
        self._closed = False
        #: Where the store lives, read at open (see _sqlapi.identity).
        self._identity: _sqlapi.Identity | None = None
        self._joined = State(self.reserve_ids)

    # ── plumbing ──────────────────────────────────────────────────────────

    def _start(self) -> ConnectionPool[Any]:
        """Connect, create or check the schema, and open the pool (blocking)."""
        with self._start_lock:
            if self._pool is not None:
                return self._pool
            conn = _connect.connect(self._conninfo, self._raw_url)
            try:
                self._writable(conn)
                _schema.prepare(conn, self._raw_url)
                self._queue_column = _queues.has_column(conn)
                self._identity = _sqlapi.identity(conn)
            except psycopg.Error as exc:
                if _errors.is_transient(exc):
                    raise _errors.unavailable(self.url, exc) from None
                raise
            finally:
                conn.close()
            _poollog.install()
            pool: ConnectionPool[Any] = ConnectionPool(
                self._conninfo,
                min_size=1,
                max_size=POOL_SIZE,
                kwargs={"autocommit": True, "connect_timeout": _connect.CONNECT_TIMEOUT},
                configure=self._configure,
                # A connection the server dropped (a restart, an idle
                # timeout) is replaced when taken, not failed on (_alive, in
                # _tx); one that broke in use is discarded when it comes
                # back (the pool's own check of its state) and the pool
                # reconnects in the background, with backoff (see
                # RECONNECT_TIMEOUT).
                reset=self._returned,
                timeout=_connect.CONNECT_TIMEOUT,
                reconnect_timeout=RECONNECT_TIMEOUT,
                open=False,
                name=_poollog.POOL_NAME,
            )
            try:
                pool.open(wait=True, timeout=_connect.CONNECT_TIMEOUT)
            except PoolTimeout:
                pool.close()
                raise StoreUnavailableError(
                    f"cannot open connections to the PostgreSQL store {self.url!r}; check "
                    "that the server accepts more connections (max_connections)"
                ) from None
            self._pool = pool
            return pool

    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        """A new pool connection's settings; and the claims' and looks'
        kept snapshots forgotten: a crash restart, a failover or a restore
        (after which the server hands out transaction ids again) ends every
        connection (see _frontier)."""
        _connect.configure(conn)
        self._frontier.forget()
        self._running.forget()

    def _writable(self, conn: psycopg.Connection[Any]) -> None:
        """Raise if the database takes no writes (a standby, a read-only default):
        said at start in one line, not when the first write fails."""
        row = conn.execute(
            "SELECT current_setting('transaction_read_only'), pg_is_in_recovery()"
        ).fetchone()
        if row is not None and (row[0] == "on" or row[1]):
            said = "a hot standby in recovery" if row[1] else "transaction_read_only is on"
            raise _errors.read_only(self.url, said)

    async def open(self) -> None:
        self._closed = False
        if self._pool is None:
            await anyio.to_thread.run_sync(self._start, limiter=self._limiter)

    async def exists(self) -> bool | None:
        return await anyio.to_thread.run_sync(self._exists, limiter=self._limiter)

    def _exists(self) -> bool:
        conn = _connect.connect(self._conninfo, self._raw_url)
        try:
            return _schema.has_schema(conn, self._raw_url)
        finally:
            conn.close()

    async def close(self) -> None:
        self._closed = True
        pool, self._pool = self._pool, None
        if pool is not None:
            await anyio.to_thread.run_sync(pool.close)

    # ── the interface ─────────────────────────────────────────────────────

    def completer(self) -> Completer:
        """Writes ``complete_in`` completions on callers' psycopg connections."""
        if self._identity is None:
            self._start()
        assert self._identity is not None
        return Completer(self._identity.schema_name, self._identity.database, self.url)

    def reserve_ids(self, count: int) -> int:
        if self._pool is None and not self._closed:
            # submit() before the scheduler started: ids come from the
            # database now, so open it now (not after close(): nothing
            # would close it again).
            self._start()

        def reserve(conn: _sql.Conn) -> int:
            row = conn.execute(
                "UPDATE jobsched_meta SET value = value + %s WHERE key = 'next_id' "
                "RETURNING value - %s",
                (count, count),
            ).fetchone()
            assert row is not None
            return int(row[0])

        return self._tx(reserve)

    async def _named_queues(self, jobs: Sequence[NewJob] | Sequence[Registered]) -> None:
        """Before a write of ``jobs``: the named queues' column and index, if
        one of them is of a named queue and this member has not seen both."""
        if self._queue_index or not _queues.named(jobs):
            return

        def make(conn: _sql.Conn) -> None:
            _queues.add_column(conn)
            self._queue_column = True
            self._queue_index = _queues.build_indexes(conn)

        await self._run(make, transaction=False)

    async def add(self, jobs: Sequence[NewJob], now: float) -> list[Change]:
        await self._named_queues(jobs)
        return await self._run(lambda conn: _sql.add(conn, jobs, now))

    def joined(self, connection: object) -> Joined:
        """A caller's connection to this store's database (see ``_txadd``)."""
        if self._identity is None:
            self._start()  # as reserve_ids: the schema's name and id come from it
        assert self._identity is not None
        return joined(self, connection, self._identity[:2])

    async def put_functions(self, functions: Sequence[Registered]) -> None:
        await self._named_queues(functions)
        now = time.time()
        await self._run(lambda conn: _sqlapi.put_functions(conn, list(functions), now))

    async def cancel(self, ids: Collection[int], now: float) -> list[Change]:
        return await self._run(lambda conn: _cancels.cancel(conn, ids, now))

    async def next_due(self) -> float | None:
        def next_due(conn: _sql.Conn) -> float | None:
            row = conn.execute(
                "SELECT LEAST((SELECT MIN(run_at) FROM jobsched_jobs WHERE queue = 1), "
                # Paused schedules (next_fire +inf) are never due.
                "(SELECT MIN(next_fire) FROM jobsched_schedules "
                "WHERE next_fire < 'Infinity'::double precision))"
            ).fetchone()
            due = [t for t in (row[0] if row else None, self._token_due) if t is not None]
            return float(min(due)) if due else None

        return await self._run(next_due, transaction=False, again=True)

    async def put_schedules(self, schedules: Sequence[tuple[str, bytes, float]]) -> None:
        await self._run(lambda conn: _schedules.put(conn, schedules))

    async def remove_schedules(self, ids: Collection[str]) -> None:
        await self._run(lambda conn: _schedules.remove(conn, ids))

    async def claim_schedules(self, owner: str, now: float, lease: float) -> list[DueSchedule]:
        return await self._run(lambda conn: _schedules.claim(conn, owner, now, lease))

    async def fire(
        self, owner: str, schedule: str, fire_time: float, next_fire: float, job: NewJob | None
    ) -> bool:
        if job is not None:
            await self._named_queues([job])
        try:
            return await self._run(
                lambda conn: _schedules.fire(conn, owner, schedule, fire_time, next_fire, job)
            )
        except _schedules.AlreadyFired:
            return False

    async def pause_schedule(self, schedule_id: str) -> bool:
        return await self._run(lambda conn: _schedules.pause(conn, schedule_id))

    async def resume_schedule(self, schedule_id: str, next_fire: float) -> bool:
        return await self._run(lambda conn: _schedules.resume(conn, schedule_id, next_fire))

    async def trigger_schedule(self, schedule_id: str, job: NewJob) -> bool:
        now = time.time()
        await self._named_queues([job])
        return await self._run(lambda conn: _schedules.trigger(conn, schedule_id, job, now))

    async def fetch(self, job_id: int) -> StoredJob | None:
        found = await self._run(
            lambda conn: self._jobs(conn, "WHERE id = %s", (job_id,)), transaction=False, again=True
        )
        return found[0] if found else None

    async def unfinished(self) -> int:
        def count(conn: _sql.Conn) -> int:
            # Each queue and the running rows through their own partial
            # index (an unfinished job is in one of them).
            row = conn.execute(
                "SELECT (SELECT COUNT(*) FROM jobsched_jobs WHERE queue = 0) "
                "+ (SELECT COUNT(*) FROM jobsched_jobs WHERE queue = 1) "
                "+ (SELECT COUNT(*) FROM jobsched_jobs WHERE queue = 2) "
                "+ (SELECT COUNT(*) FROM jobsched_jobs WHERE status = 'running')"
            ).fetchone()
            return int(row[0]) if row is not None else 0

        return await self._run(count, transaction=False, again=True)

    async def prune(self, keep: int | None, before: Mapping[JobStatus, float] | None = None) -> int:
        cutoffs = _prune.check_prune_args(keep, before)

        def prune(conn: _sql.Conn) -> tuple[int, int]:
            return _prune.prune(conn, keep, cutoffs, PRUNE_BATCH, self._pruned)

        total = 0
        while True:
            deleted, seen = await self._run(prune)
            self._pruned.commit()
            total += deleted
            # Held jobs fill part of a batch: go on while a batch was full
            # and freed some, never round a batch the guard holds whole.
            if seen < PRUNE_BATCH or not deleted:
                # Every prune (a member's, every ~1,000 outcomes) folds the
                # counts: their deltas stay few without an operator reading.
                await self._run(_sql.fold_counts)
                return total
