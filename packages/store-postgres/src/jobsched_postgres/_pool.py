"""The PostgreSQL store's pooled calls: a transaction run on a connection of
the pool, a dead connection replaced and the call run again, a deadlock
retried, and the errors sorted into outages, refused data and bugs."""

from __future__ import annotations

import math
import select
import time
import weakref
from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

import anyio
import psycopg
from psycopg_pool import ConnectionPool

from jobsched import StoreUnavailableError

from . import _errors, _poollog, _sql

T = TypeVar("T")

#: Connections in the pool: the committer, the claimer, the heartbeat and
#: one for flushes and operators' reads.
POOL_SIZE = 4
#: A pooled connection idle longer than this (seconds) is checked before use.
CHECK_IDLE = 1.0
#: Seconds the pool's background reconnection backs off (1, 2, 4 s...)
#: before it gives up and the next call starts again at 1 s: its backoff
#: has no cap, and after a minute's outage it would wait another minute.
RECONNECT_TIMEOUT = 10.0
#: Seconds a call run again on a new connection (its own died under it)
#: waits for one: longer, and the server is away, which is an outage.
REPLACE_WAIT = 1.0
#: A transaction that lost a deadlock is run again this many times.
RETRIES = 5


class Pooled:
    """Runs a store's calls on its pool (set by the store when it opens)."""

    url: str
    _pool: ConnectionPool[Any] | None
    _limiter: anyio.CapacityLimiter
    _last_used: weakref.WeakKeyDictionary[psycopg.Connection[Any], float]

    def _alive(self, conn: psycopg.Connection[Any]) -> bool:
        """Whether a connection the pool gave is worth a statement.

        Checked here, not by the pool's ``check``: a connection that fails
        the pool's check costs a backoff sleep (1 s, then 2, 4...) before the
        next, and a pool whose connections the server all ended took 10 s
        to give a live one.
        """
        # A round trip per transaction doubled a claim's; a connection in
        # use a moment ago is alive, one idle for longer is asked.
        if time.monotonic() - self._last_used.get(conn, -math.inf) > CHECK_IDLE:
            try:
                ConnectionPool.check_connection(conn)
            except psycopg.Error:
                return False
            return True
        # Without a round trip: an idle connection has nothing to read
        # (pool connections LISTEN to nothing) unless the server ended it
        # (a pg_terminate_backend, a shutdown) and its farewell waits on the
        # socket.
        return not select.select([conn.fileno()], [], [], 0)[0]

    def _returned(self, conn: psycopg.Connection[Any]) -> None:
        self._last_used[conn] = time.monotonic()

    def _tx(
        self, fn: Callable[[_sql.Conn], T], *, transaction: bool = True, again: bool = False
    ) -> T:
        """Run ``fn`` in one transaction (on the calling thread); without
        ``transaction``, each of its statements commits on its own.

        A connection that turns out dead (the server ended it since its
        last use, too recently to be checked: a pg_terminate_backend, a
        restart) is replaced and ``fn`` runs again on the next, up to a
        pool's worth of times, before the store counts as unavailable: a
        connection replaced at once (within :data:`REPLACE_WAIT`) is no
        outage. Not a transaction whose
        COMMIT was under way when the connection died (whether it committed
        is unknown), unless ``again``; statements that commit on their own
        run again as the scheduler's retry would have run them (fenced).

        :param again: ``fn`` may run twice whatever happened (a read, a
            lease renewal).
        :raises StoreUnavailableError: an outage (see ``_errors``).
        :raises JobDataError: the database refused a value of ``fn``'s jobs.
        """
        pool = self._pool
        if pool is None:
            raise StoreUnavailableError(f"the store {self.url!r} is not open; open() it first")
        conflicts = dead = 0
        while True:
            used: psycopg.Connection[Any] | None = None
            committing = False
            try:
                # A call run again waits briefly for its next connection: one
                # the pool cannot replace at once is an outage, said as one.
                wait = REPLACE_WAIT if dead else None
                with _poollog.store_call(), pool.connection(timeout=wait) as conn:
                    if not self._alive(conn):
                        conn.close()  # the pool replaces it
                        if dead < POOL_SIZE:
                            dead += 1
                            continue
                    used = conn
                    try:
                        if not transaction:
                            return fn(conn)
                        with conn.transaction():
                            result = fn(conn)
                            committing = True
                        return result
                    except psycopg.Error as exc:
                        if _errors.sqlstate(exc) == _errors.READ_ONLY:
                            # A session keeps the read-only default it began
                            # with: closed before the pool takes it back, so
                            # the next call (or the run below) gets a new one.
                            conn.close()
                        raise
            except Exception as exc:
                if _errors.is_conflict(exc) and conflicts < RETRIES - 1:
                    # Two members locked rows in different orders: one of them
                    # is rolled back by the server; run it again.
                    conflicts += 1
                    continue
                if _errors.is_transient(exc):
                    # Read-only: run on the next session, until one made now
                    # says the database is read-only still.
                    stale = _errors.sqlstate(exc) == _errors.READ_ONLY
                    lost = used is not None and used.broken
                    if (stale or (lost and (again or not committing))) and dead < POOL_SIZE:
                        dead += 1  # the pool discards it; the next may be alive
                        continue
                    raise _errors.unavailable(self.url, exc) from exc
                if _errors.is_data(exc):
                    raise _errors.refused(exc) from exc
                raise

    async def _run(
        self, fn: Callable[[_sql.Conn], T], *, transaction: bool = True, again: bool = False
    ) -> T:
        return await anyio.to_thread.run_sync(
            partial(self._tx, fn, transaction=transaction, again=again), limiter=self._limiter
        )
