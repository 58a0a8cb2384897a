"""SQLiteStore: the JobStore interface on one SQLite file.

One connection, used from one thread at a time (a lock; the async methods
run in anyio's worker threads), so the event loop never waits on the disk.
Every method is one ``BEGIN IMMEDIATE`` transaction. Several schedulers may
open one file, in one process or many: claims, leases and fenced outcomes
keep each attempt in exactly one of them, as on PostgreSQL.
The operators' reads and actions are the :class:`Reads` half (``_reads``).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import ClassVar, TypeVar

import anyio

from jobsched import JobStatus, RateLimit, StoreUnavailableError
from jobsched.store import (
    Change,
    Claimed,
    DueSchedule,
    Input,
    Joined,
    NewJob,
    NewWorkflow,
    Outcome,
    ProgressRow,
    Recorded,
    StoredJob,
    TakeoverLooks,
    check_prune_args,
)

from . import _handback, _inputs, _operator, _own, _schedules, _schema, _sql, _txadd, _workflows
from ._add import AlreadyFired, add
from ._claim import RUNNING, claim
from ._errors import classified
from ._groupcommit import GroupCommit, rollback
from ._outcomes import record
from ._reads import Reads
from ._sql import cancel_queued, prune

T = TypeVar("T")

#: Rows a prune deletes per transaction: short transactions keep writers
#: moving (and its ids stay under SQLite's 32,766 parameters).
PRUNE_BATCH = 1000


class SQLiteStore(Reads):
    """Jobs in one SQLite file (``sqlite:///jobs.db``).

    :param url: ``sqlite:///relative.db`` or ``sqlite:////absolute.db``.
    :param secret: signs payloads; optional for SQLite.
    :param lease: seconds a claimed attempt stays owned without a heartbeat.
    """

    #: Schema 5 brought workflows: a member of older code reports no level.
    workflow_level: ClassVar[int | None] = 5

    def __init__(
        self,
        url: str,
        *,
        secret: str | bytes | Sequence[str | bytes] | None = None,
        lease: float = 30.0,
    ) -> None:
        #: The database file.
        self.path: Path = _schema.path_from_url(url)
        super().__init__(url, secret=secret, lease=lease)
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._limiter = anyio.CapacityLimiter(1)
        # When a bucket the last claim left empty has its next token: next_due().
        self._token_due: float | None = None
        self._looks = TakeoverLooks()
        self._group = GroupCommit(self._connection, self._lock, self._limiter)

    # ── plumbing ──────────────────────────────────────────────────────────

    async def open(self) -> None:
        if self._conn is None:
            conn = await anyio.to_thread.run_sync(_schema.connect, self.path)
            with self._lock:
                if self._conn is None:
                    self._conn = conn
                    return
            # Opened meanwhile (a submit's reserve_ids, another open): keep
            # that one; this one would be left for the GC to close.
            conn.close()

    async def exists(self) -> bool | None:
        return await anyio.to_thread.run_sync(_schema.exists, self.path)

    async def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with self._lock:
                conn.close()

    def _write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` in one write transaction (on the calling thread)."""
        conn = self._conn
        if conn is None:
            raise StoreUnavailableError(f"the store {self.url!r} is not open; open() it first")
        with self._lock:
            try:
                conn.execute("BEGIN IMMEDIATE")
                result = fn(conn)
                conn.execute("COMMIT")
            except BaseException as exc:
                rollback(conn)
                if isinstance(exc, Exception) and (mapped := classified(exc, self.path)) is not exc:
                    raise mapped from exc
                raise
            return result

    def _read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        conn = self._conn
        if conn is None:
            raise StoreUnavailableError(f"the store {self.url!r} is not open; open() it first")
        with self._lock:
            try:
                return fn(conn)
            except Exception as exc:
                if (mapped := classified(exc, self.path)) is not exc:
                    raise mapped from exc
                raise

    def _connection(self) -> sqlite3.Connection:
        conn = self._conn
        if conn is None:
            raise StoreUnavailableError(f"the store {self.url!r} is not open; open() it first")
        return conn

    async def _write_async(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        try:
            return await self._group.write(fn)
        except Exception as exc:
            # Locked, full, an I/O error: the scheduler retries these; a
            # value too big or not encodable fails its job alone.
            if (mapped := classified(exc, self.path)) is not exc:
                raise mapped from exc
            raise

    async def _read_async(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        return await anyio.to_thread.run_sync(self._read, fn, limiter=self._limiter)

    # ── the interface ─────────────────────────────────────────────────────

    def reserve_ids(self, count: int) -> int:
        if self._conn is None:
            # submit() before the scheduler started: ids come from the file
            # now, so open it now (quick for a local file).
            with self._lock:
                if self._conn is None:
                    self._conn = _schema.connect(self.path)

        def reserve(conn: sqlite3.Connection) -> int:
            (first,) = conn.execute(
                "UPDATE jobsched_meta SET value = value + ? WHERE key = 'next_id' "
                "RETURNING value - ?",
                (count, count),
            ).fetchone()
            return int(first)

        return self._write(reserve)

    async def add(self, jobs: Sequence[NewJob], now: float) -> list[Change]:
        return await self._write_async(lambda conn: add(conn, jobs, now))

    async def add_workflow(self, workflow: NewWorkflow, now: float) -> list[Change]:
        # One write of the group commit: its savepoint undoes it alone.
        return await self._write_async(lambda conn: _workflows.add_workflow(conn, workflow, now))

    def joined(self, connection: object) -> Joined:
        """A ``sqlite3.Connection`` to this file, a transaction open (see ``_txadd``)."""
        return _txadd.joined(self.path, connection)

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
        if limit < 1:
            return []
        take_over = self._looks.due(owner, now, lease)

        def claim_ids(conn: sqlite3.Connection) -> tuple[list[Claimed], float | None]:
            claims, token_due = claim(
                conn,
                owner,
                limit,
                executors,
                now,
                now + lease,
                rates,
                tenants,
                take_over,
                self.key_ids,
                queues,
                queue_room,
                starting,
                names,
            )
            ids = _own.ids_of(conn, [c.id for c in claims])
            if ids:
                for c in claims:
                    c.id = ids.get(c.id, c.id)
            return claims, token_due

        claims, self._token_due = await self._write_async(claim_ids)
        return claims

    async def record(self, owner: str, outcomes: Sequence[Outcome]) -> Recorded:
        return await self._write_async(lambda conn: record(conn, owner, outcomes))

    async def start(self, owner: str, starts: Sequence[tuple[int, int, float]]) -> None:
        if not starts:
            return

        def start(conn: sqlite3.Connection) -> None:
            rows = _own.rows_of(conn, [s[0] for s in starts])
            conn.executemany(
                "UPDATE jobs SET started_at = ? WHERE id = ? AND owner = ? AND attempts = ? "
                "AND status = 'running'",
                [(at, rows.get(i, i), owner, attempt) for i, attempt, at in starts],
            )

        await self._write_async(start)

    async def extend(self, owner: str, ids: Collection[int], until: float) -> list[int]:
        def extend(conn: sqlite3.Connection) -> list[int]:
            rows = _own.rows_of(conn, ids)
            conn.executemany(
                "UPDATE jobs SET lease_until = ? WHERE id = ? AND owner = ? AND status = 'running'",
                [(until, rows.get(i, i), owner) for i in ids],
            )
            cancels = [
                i
                for (i,) in conn.execute(
                    "SELECT id FROM jobs WHERE owner = ? AND status = 'running' "
                    f"AND {RUNNING} AND cancel_requested = 1",
                    (owner,),
                )
            ]
            back = _own.ids_of(conn, cancels)
            return [back.get(i, i) for i in cancels]

        return await self._write_async(extend)

    async def release(self, owner: str, ids: Collection[int]) -> None:
        await self._write_async(lambda conn: _handback.release(conn, owner, ids))

    async def hand_back(self, owner: str, attempts: Sequence[tuple[int, int, float]]) -> None:
        await self._write_async(lambda conn: _handback.hand_back(conn, owner, attempts))

    async def defer(self, owner: str, jobs: Sequence[tuple[int, float, str]]) -> None:
        await self._write_async(lambda conn: _sql.defer(conn, owner, jobs))

    async def cancel(self, ids: Collection[int], now: float) -> list[Change]:
        return await self._write_async(lambda conn: cancel_queued(conn, ids, now))

    async def next_due(self) -> float | None:
        def next_due(conn: sqlite3.Connection) -> float | None:
            (job,) = conn.execute("SELECT MIN(run_at) FROM jobs WHERE queue = 1").fetchone()
            # Paused schedules (next_fire +inf) are never due.
            (fire,) = conn.execute(
                f"SELECT MIN(next_fire) FROM schedules WHERE next_fire < {_schedules.INF}"
            ).fetchone()
            due = [t for t in (job, fire, self._token_due) if t is not None]
            return min(due) if due else None

        return await self._read_async(next_due)

    async def inputs(self, ids: Collection[int], max_bytes: int) -> dict[int, Input] | int:
        return await self._read_async(lambda conn: _inputs.inputs(conn, ids, max_bytes))

    async def progress(self, owner: str, rows: Sequence[ProgressRow]) -> None:
        if rows:
            await self._write_async(lambda conn: _inputs.progress(conn, owner, rows))

    async def fetch(self, job_id: int) -> StoredJob | None:
        return await self._read_async(lambda conn: _operator.fetch(conn, job_id))

    async def unfinished(self) -> int:
        def count(conn: sqlite3.Connection) -> int:
            # From jobs_status, which holds every unfinished row.
            (n,) = conn.execute(
                "SELECT COUNT(*) FROM jobs WHERE status IN ('pending', 'retry_wait', 'running') "
                "AND status != 'completed'"
            ).fetchone()
            return int(n)

        return await self._read_async(count)

    async def put_schedules(self, schedules: Sequence[tuple[str, bytes, float]]) -> None:
        await self._write_async(lambda conn: _schedules.put(conn, schedules))

    async def remove_schedules(self, ids: Collection[str]) -> None:
        await self._write_async(lambda conn: _schedules.remove(conn, ids))

    async def claim_schedules(self, owner: str, now: float, lease: float) -> list[DueSchedule]:
        return await self._write_async(lambda conn: _schedules.claim(conn, owner, now, lease))

    async def fire(
        self, owner: str, schedule: str, fire_time: float, next_fire: float, job: NewJob | None
    ) -> bool:
        try:
            return await self._write_async(
                lambda conn: _schedules.fire(conn, owner, schedule, fire_time, next_fire, job)
            )
        except AlreadyFired:
            return False

    async def prune(self, keep: int | None, before: Mapping[JobStatus, float] | None = None) -> int:
        cutoffs = check_prune_args(keep, before)
        total = 0
        while True:
            deleted, seen = await self._write_async(
                lambda conn: prune(conn, keep, cutoffs, PRUNE_BATCH)
            )
            total += deleted
            # Held jobs fill part of a batch: go on while a batch was full
            # and freed some, never round a batch the guard holds whole.
            if seen < PRUNE_BATCH or not deleted:
                return total
