"""Jobs written in the caller's own transaction (``enqueue(..., connection=conn)``)
on PostgreSQL.

The connection is the caller's, of any of the drivers a Python web app
holds: psycopg 3's ``Connection`` and ``AsyncConnection``, SQLAlchemy's
``Connection``, ``Session``, ``AsyncConnection`` and ``AsyncSession`` (on any
PostgreSQL driver SQLAlchemy has), and Django's ``connection``. None of
SQLAlchemy or Django is a dependency: an object is recognised by the module
of its class (or a base's), and SQLAlchemy's ``text`` imported only then.

A job is one statement in the caller's transaction: ``SELECT ... FROM
schema.jobsched_add(...)`` (``_sqlapi``), named by the store's schema so the
caller's search_path does not matter, which writes the row, its edges and
the NOTIFY that wakes the workers at commit. Before the first job through
a connection (or a SQLAlchemy engine, or a Django database), one look says
that the store's functions are there and that it is the same store (its
random id in ``jobsched_meta``), so a connection to another database is
refused in one line instead of aborting the caller's transaction on a
missing function. A connection with no transaction open (in autocommit
mode, outside a transaction block) is refused before any statement.

Plain jobs are numbered from the store's ``next_id`` in blocks, as a
member's group commit numbers its jobs, through the store's own pool: a
counter updated in the caller's transaction would hold its row lock, and
every other numbering, until the caller commits.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio.to_thread
import psycopg
from psycopg.pq import TransactionStatus

from jobsched import UnknownJobError
from jobsched.store import DEFAULT_QUEUE, Joined, NewJob

from . import _queues
from ._sql import padded
from ._sqlapi import ADD_SIGNATURE

if TYPE_CHECKING:
    from ._store import PostgresStore

_IDLE = TransactionStatus.IDLE

#: Ids a store reserves at a time for jobs written through callers' connections.
ID_BLOCK = 64

ACCEPTED = (
    "a psycopg 3 Connection or AsyncConnection, a SQLAlchemy Connection, Session, "
    "AsyncConnection or AsyncSession, or Django's django.db.connection"
)

_ADD = (
    "SELECT added, missing FROM {schema}.jobsched_add(CAST(:id AS bigint), CAST(:name AS text), "
    "CAST(:executor AS text), CAST(:queue AS text), CAST(:k0 AS float8), CAST(:k1 AS float8), "
    "CAST(:k2 AS float8), CAST(:run_at AS float8), CAST(:submitted_at AS float8), "
    "CAST(:tenant AS text), CAST(:rate_key AS text), CAST(:payload AS bytea), "
    "CAST(:args AS jsonb), CAST(:deps AS bigint[]), CAST(:now AS float8), "
    "CAST(:run_on_failure AS bigint[]))"
)
_HAS_FUNCTION = "SELECT to_regprocedure(CAST(:function AS text)) IS NOT NULL"
_STORE_ID = "SELECT value FROM {schema}.jobsched_meta WHERE key = 'store_id'"


class State:
    """A store's side of its joined connections: the ids it reserved for
    them, and the connections (engines, databases) found to reach it."""

    def __init__(self, reserve: Callable[[int], int]) -> None:
        self._reserve = reserve
        self._lock = threading.Lock()
        self._next = self._end = 0
        self._seen_objects: weakref.WeakSet[Any] = weakref.WeakSet()
        self._seen_keys: set[Any] = set()

    def number(self) -> int | None:
        """The next reserved id, or None when the block is used up."""
        with self._lock:
            if self._next < self._end:
                self._next += 1
                return self._next - 1
            return None

    def refill(self) -> None:
        """Reserve another block (a round trip on the store's pool: blocking)."""
        first = self._reserve(ID_BLOCK)
        with self._lock:
            self._next, self._end = first, first + ID_BLOCK

    def seen(self, key: Any) -> bool:
        with self._lock:
            if isinstance(key, tuple):
                return key in self._seen_keys
            return key in self._seen_objects

    def saw(self, key: Any) -> None:
        with self._lock:
            if isinstance(key, tuple):
                self._seen_keys.add(key)
            else:
                self._seen_objects.add(key)


def joined(store: PostgresStore, connection: object, identity: tuple[str, int]) -> Joined:
    """``connection`` as a writer into its open transaction.

    :raises TypeError: it is no connection of a kind above, or one to
        another database system than PostgreSQL.
    """
    driver = _driver(connection, store.url)
    if driver.asynchronous:
        return _AsyncJoined(store, driver, identity)
    return _SyncJoined(store, driver, identity)


class _Driver:
    """One kind of connection: how to run a statement of ``:name`` parameters."""

    asynchronous = False

    def __init__(self, connection: Any, key: Any) -> None:
        self.connection = connection
        #: What a look at the store's schema is remembered for (see State).
        self.key = key

    def run(self, sql: str, params: dict[str, Any]) -> tuple[Any, ...] | None:
        raise NotImplementedError

    def autocommits(self) -> bool:
        """Whether a statement now would commit on its own (no transaction open)."""
        raise NotImplementedError

    async def autocommits_async(self) -> bool:
        return self.autocommits()

    async def run_async(self, sql: str, params: dict[str, Any]) -> tuple[Any, ...] | None:
        raise NotImplementedError


def _pyformat(sql: str) -> str:
    """``:name`` parameters as DB-API's ``%(name)s`` (psycopg, Django)."""
    import re

    return re.sub(r"(?<![:\w]):(\w+)", r"%(\1)s", sql)


def _psycopg_autocommits(conn: Any) -> bool:
    # Not in autocommit mode, psycopg opens a transaction before the statement.
    return bool(conn.autocommit and conn.info.transaction_status == _IDLE)


def _dbapi_autocommits(dbapi: Any) -> bool:
    # SQLAlchemy opens a transaction first unless the engine says AUTOCOMMIT,
    # which sets the driver's own autocommit (psycopg's, asyncpg's adapter's).
    return getattr(dbapi, "autocommit", False) is True


class _Psycopg(_Driver):
    def autocommits(self) -> bool:
        return _psycopg_autocommits(self.connection)

    def run(self, sql: str, params: dict[str, Any]) -> tuple[Any, ...] | None:
        return self.connection.execute(_pyformat(sql), params).fetchone()  # type: ignore[no-any-return]


class _AsyncPsycopg(_Driver):
    asynchronous = True

    def autocommits(self) -> bool:
        return _psycopg_autocommits(self.connection)

    async def run_async(self, sql: str, params: dict[str, Any]) -> tuple[Any, ...] | None:
        cursor = await self.connection.execute(_pyformat(sql), params)
        return await cursor.fetchone()  # type: ignore[no-any-return]


class _SQLAlchemy(_Driver):
    def autocommits(self) -> bool:
        conn = self.connection
        if hasattr(conn, "get_bind"):  # a Session: its connection in this transaction
            conn = conn.connection()
        return _dbapi_autocommits(conn.connection.dbapi_connection)

    def run(self, sql: str, params: dict[str, Any]) -> tuple[Any, ...] | None:
        from sqlalchemy import text

        row = self.connection.execute(text(sql), params).first()
        return None if row is None else tuple(row)


class _AsyncSQLAlchemy(_Driver):
    asynchronous = True

    async def autocommits_async(self) -> bool:
        conn = self.connection
        if hasattr(conn, "sync_session"):  # an AsyncSession
            conn = await conn.connection()
        raw = await conn.get_raw_connection()
        return _dbapi_autocommits(raw.dbapi_connection)

    async def run_async(self, sql: str, params: dict[str, Any]) -> tuple[Any, ...] | None:
        from sqlalchemy import text

        row = (await self.connection.execute(text(sql), params)).first()
        return None if row is None else tuple(row)


class _Django(_Driver):
    def autocommits(self) -> bool:
        conn = self.connection
        return bool(conn.get_autocommit() and not conn.in_atomic_block)

    def run(self, sql: str, params: dict[str, Any]) -> tuple[Any, ...] | None:
        with self.connection.cursor() as cursor:
            cursor.execute(_pyformat(sql), params)
            return cursor.fetchone()  # type: ignore[no-any-return]


def _from(obj: object, package: str) -> bool:
    return any(c.__module__.split(".")[0] == package for c in type(obj).__mro__)


def _driver(connection: object, url: str) -> _Driver:
    if isinstance(connection, psycopg.Connection):
        return _Psycopg(connection, connection)
    if isinstance(connection, psycopg.AsyncConnection):
        return _AsyncPsycopg(connection, connection)
    if _from(connection, "sqlalchemy"):
        return _sqlalchemy(connection, url)
    if _from(connection, "django"):
        vendor = getattr(connection, "vendor", None)
        if vendor != "postgresql":
            raise TypeError(
                f"connection={connection!r} is Django's connection to a {vendor} database, "
                f"not to the PostgreSQL store {url!r}: enqueue through a PostgreSQL one"
            )
        settings = getattr(connection, "settings_dict", {})
        key = tuple(str(settings.get(k)) for k in ("NAME", "HOST", "PORT", "USER"))
        return _Django(connection, ("django", *key))
    raise TypeError(
        f"connection={connection!r}: the PostgreSQL store {url!r} writes jobs in your "
        f"transaction through {ACCEPTED}"
    )


def _sqlalchemy(connection: Any, url: str) -> _Driver:
    from sqlalchemy.engine import Connection
    from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession
    from sqlalchemy.orm import Session

    if isinstance(connection, (Session, Connection)):
        bind = connection.get_bind() if isinstance(connection, Session) else connection
        driver: _Driver = _SQLAlchemy(connection, getattr(bind, "engine", bind))
    elif isinstance(connection, (AsyncSession, AsyncConnection)):
        if isinstance(connection, AsyncSession):
            bind = connection.sync_session.get_bind()
        else:
            bind = connection.sync_connection or connection.sync_engine
        driver = _AsyncSQLAlchemy(connection, getattr(bind, "engine", bind))
    else:
        raise TypeError(
            f"connection={connection!r} is a SQLAlchemy object that runs no statements: "
            f"pass {ACCEPTED} (a Session or Connection, not an Engine)"
        )
    dialect = driver.key.dialect.name
    if dialect != "postgresql":
        raise TypeError(
            f"connection={connection!r} is SQLAlchemy's to a {dialect} database, not to the "
            f"PostgreSQL store {url!r}: enqueue through a PostgreSQL one"
        )
    return driver


class _Base(Joined):
    def __init__(self, store: PostgresStore, driver: _Driver, identity: tuple[str, int]) -> None:
        self._store = store
        self._driver = driver
        self._schema, self._store_id = identity

    def _check_sql(self) -> tuple[str, dict[str, Any]]:
        return _HAS_FUNCTION, {"function": f"{self._schema}.{ADD_SIGNATURE}"}

    def _checked(self, has_function: tuple[Any, ...] | None) -> None:
        if not (has_function and has_function[0]):
            raise ValueError(
                f"the connection's database has no jobsched schema {self._schema} of the "
                f"store {self._store.url!r} (or one older than this jobsched): connect to the "
                "store's database, and start a scheduler on the store once (a worker, or "
                "`async with app.scheduler():`), which creates and updates it"
            )

    def _same(self, found: tuple[Any, ...] | None) -> None:
        if found is None or found[0] != self._store_id:
            raise ValueError(
                f"the connection reaches another jobsched store than {self._store.url!r} "
                f"(the schema {self._schema} of another database): connect to the store's "
                "database to enqueue in its transactions"
            )
        self._store._joined.saw(self._driver.key)

    def _params(self, job: NewJob, now: float) -> dict[str, Any]:
        k0, k1, k2 = padded(job.key)
        return {
            "id": job.id, "name": job.name, "executor": job.executor, "queue": job.queue,
            "k0": k0, "k1": k1, "k2": k2, "run_at": float(job.run_at),
            "submitted_at": float(job.submitted_at), "tenant": job.tenant,
            "rate_key": job.rate_key, "payload": job.payload, "args": job.args,
            "deps": list(job.depends_on), "now": float(now),
            "run_on_failure": list(job.run_on_failure),
        }  # fmt: skip

    def _result(self, job: NewJob, row: tuple[Any, ...] | None) -> int | None:
        assert row is not None
        added, missing = row
        if missing:
            raise UnknownJobError(
                f"{job.name} depends on job(s) "
                f"{[f'job-{m}' if m > 0 else m for m in missing]} that the store does "
                "not hold (as your transaction sees it): enqueue dependencies first"
            )
        return job.id if added else None

    def _needs_column(self, job: NewJob) -> bool:
        return job.queue != DEFAULT_QUEUE and not self._store._queue_column

    def _add_column(self) -> None:
        """The named queues' column, through the store's pool before the
        caller's statement: an ALTER TABLE in the caller's transaction would
        lock the jobs table for the fleet until it commits. The indexes
        (``CREATE INDEX CONCURRENTLY``, which waits for every older
        transaction, the caller's too) are left to the next add of a member."""
        store = self._store

        def add(conn: Any) -> None:
            _queues.add_column(conn)
            store._queue_column = True

        store._tx(add, transaction=False)


_NO_TRANSACTION = (
    "the connection has no transaction open (autocommit), so the job would commit on its "
    "own: open one first (psycopg: `with conn.transaction():`; Django: inside "
    "`transaction.atomic()`; SQLAlchemy: a Session, or `with engine.begin() as conn:`), "
    "or enqueue without connection="
)


class _SyncJoined(_Base):
    def add(self, job: NewJob, now: float) -> int | None:
        driver, state = self._driver, self._store._joined
        if driver.autocommits():
            raise ValueError(_NO_TRANSACTION)
        if not state.seen(driver.key):
            self._checked(driver.run(*self._check_sql()))
            self._same(driver.run(_STORE_ID.format(schema=self._schema), {}))
        if self._needs_column(job):
            self._add_column()
        if not job.own_id:
            number = state.number()
            while number is None:
                state.refill()
                number = state.number()
            job.id = number
        row = driver.run(_ADD.format(schema=self._schema), self._params(job, now))
        return self._result(job, row)


class _AsyncJoined(_Base):
    asynchronous = True

    async def add_async(self, job: NewJob, now: float) -> int | None:
        driver, state = self._driver, self._store._joined
        if await driver.autocommits_async():
            raise ValueError(_NO_TRANSACTION)
        if not state.seen(driver.key):
            self._checked(await driver.run_async(*self._check_sql()))
            self._same(await driver.run_async(_STORE_ID.format(schema=self._schema), {}))
        if self._needs_column(job):
            await anyio.to_thread.run_sync(self._add_column)
        if not job.own_id:
            number = state.number()
            while number is None:
                await anyio.to_thread.run_sync(state.refill)
                number = state.number()
            job.id = number
        row = await driver.run_async(_ADD.format(schema=self._schema), self._params(job, now))
        return self._result(job, row)
