"""An attempt's completion written in the caller's own transaction
(``js.current_job().complete_in(conn, result)``), on the caller's connection.

Two statements. The first locks the job's row (``FOR NO KEY UPDATE``,
waiting for a moment's lock such as a heartbeat's) and reads the fence:
this member's owner and attempt, as the group commit's outcomes are fenced
(``_outcomes``). The second, on a snapshot taken after that lock, writes
the row COMPLETED, counts its dependents off as ``_RECORD`` does (its text,
so the two cannot drift apart), and sends the NOTIFYs a member's own
completion sends (ready dependents, ``FINISHED`` for ``wait()``), which
PostgreSQL delivers only if the caller commits. Locking first is what
keeps a dependent added meanwhile from being missed: an add holds its
upstreams ``FOR SHARE`` until it commits (``_sql.add``), and a statement
that waited for that lock inside its own snapshot would not see the edge
the add wrote. For the same reason the caller's transaction must be READ
COMMITTED (PostgreSQL's default), whose statements each take a snapshot of
their own.

The row stays locked by the caller's transaction until it ends: the
member's heartbeat and any takeover skip it (``SKIP LOCKED``), and the
member's own outcome, after the commit, finds the row no longer its to
write. The caller's connection need not share the store's
``search_path`` (a store in a schema of its own): the statements name the
tables by the schema the store's connection found them in (``_sqlapi.identity``).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable
from typing import Any

import psycopg
from psycopg import errors
from psycopg.pq import TransactionStatus

from jobsched import LeaseLostError
from jobsched.store import Completion

from ._outcomes import _RECORD
from ._schema import CHANNEL
from ._sql import FINISHED

# The fence, and what says this connection may write here at all. Locked
# only in READ COMMITTED: another isolation's lock of a row updated since
# its snapshot (a heartbeat's) fails, where the refusal must say why.
_LOCK = """
SELECT CASE WHEN current_setting('transaction_isolation') = 'read committed' THEN (
        SELECT j.owner = %(owner)s AND j.attempts = %(attempt)s AND j.status = 'running'
        FROM jobsched_jobs AS j WHERE j.id = %(id)s FOR NO KEY UPDATE) END,
    current_database(), current_setting('transaction_isolation')
"""
_FENCED = """
WITH written AS (
    UPDATE jobsched_jobs AS j SET status = 'completed', queue = NULL,
        finished_at = %(finished)s, started_at = COALESCE(j.started_at, %(started)s),
        owner = NULL, lease_until = NULL, result = %(result)s,
        last_error = NULL, last_traceback = NULL
    WHERE j.id = %(id)s AND j.owner = %(owner)s AND j.attempts = %(attempt)s
        AND j.status = 'running'
    RETURNING j.id, 'completed' AS status
),
"""
# The dependents' count-off of a completion: _RECORD's own CTEs.
_TAIL = _RECORD[_RECORD.index("gone AS (") : _RECORD.index("\nSELECT id, NULL")]
_NOTIFY = """
SELECT (SELECT count(*) FROM written),
    (SELECT count(*) FROM (SELECT pg_notify(%(channel)s, %(ended)s) FROM written) AS ended),
    (SELECT count(*) FROM (SELECT pg_notify(%(channel)s, '') FROM freed
        WHERE queue <> 2 LIMIT 1) AS woken)
"""
_WRITE = _FENCED + _TAIL + _NOTIFY
_TABLE = re.compile(r"\bjobsched_(jobs|deps)\b")

#: How the caller's connection kinds are named in a TypeError.
_TAKES = "a psycopg 3 Connection or AsyncConnection"


class Completer:
    """Writes completions on a caller's psycopg connection (``JobStore.completer``).

    Picklable (a process job writes through its own copy): it holds where
    the store's tables are, never a connection.
    """

    __slots__ = ("database", "schema", "url")

    def __init__(self, schema: str, database: str, url: str) -> None:
        #: The schema that holds the store's tables.
        self.schema: str = schema
        #: The store's database.
        self.database: str = database
        #: The store's URL, its password masked: for messages.
        self.url: str = url

    def __getstate__(self) -> tuple[str, str, str]:
        return self.schema, self.database, self.url

    def __setstate__(self, state: tuple[str, str, str]) -> None:
        self.schema, self.database, self.url = state

    def write(self, conn: Any, completion: Completion) -> Awaitable[None] | None:
        """Write ``completion`` in ``conn``'s transaction (see ``jobsched.store.Completer``)."""
        if isinstance(conn, psycopg.AsyncConnection):
            self._check(conn)
            return self._write_async(conn, completion)
        if isinstance(conn, psycopg.Connection):
            self._check(conn)
            lock, write = self._statements()
            params = self._params(completion)
            try:
                self._fenced(conn.execute(lock, params).fetchone(), completion)
            except (errors.UndefinedTable, errors.InvalidSchemaName) as exc:
                raise self._elsewhere(exc) from exc
            self._written(conn.execute(write, params).fetchone())
            return None
        raise TypeError(
            f"complete_in() takes {_TAKES} to the store's database, in a transaction; "
            f"got {type(conn).__module__}.{type(conn).__qualname__}"
        )

    async def _write_async(
        self, conn: psycopg.AsyncConnection[Any], completion: Completion
    ) -> None:
        lock, write = self._statements()
        params = self._params(completion)
        try:
            cursor = await conn.execute(lock, params)
            self._fenced(await cursor.fetchone(), completion)
        except (errors.UndefinedTable, errors.InvalidSchemaName) as exc:
            raise self._elsewhere(exc) from exc
        cursor = await conn.execute(write, params)
        self._written(await cursor.fetchone())

    def _check(self, conn: psycopg.Connection[Any] | psycopg.AsyncConnection[Any]) -> None:
        if conn.autocommit and conn.info.transaction_status == TransactionStatus.IDLE:
            raise ValueError(
                "complete_in() got a connection in autocommit mode outside a transaction: "
                "the completion would commit on its own, apart from your work. Call it "
                "inside `with conn.transaction():` (`async with` for an AsyncConnection), "
                "or on a connection without autocommit, and commit once"
            )

    def _statements(self) -> tuple[str, str]:
        # Named by schema: the caller's search_path may not reach the store's.
        # A % in the name would read as a parameter.
        schema = '"' + self.schema.replace('"', '""').replace("%", "%%") + '"'

        def qualified(text: str) -> str:
            return _TABLE.sub(lambda m: f"{schema}.{m.group(0)}", text)

        return qualified(_LOCK), qualified(_WRITE)

    def _params(self, completion: Completion) -> dict[str, Any]:
        return {
            "id": completion.id,
            "owner": completion.owner,
            "attempt": completion.attempt,
            "finished": completion.finished_at,
            "started": completion.started_at,
            "result": completion.result,
            "now": completion.finished_at,
            "channel": CHANNEL,
            "ended": FINISHED,
        }

    def _fenced(self, row: tuple[Any, ...] | None, completion: Completion) -> None:
        """Raise unless the row is this member's attempt and the connection may write it."""
        assert row is not None
        held, database, isolation = row
        if database != self.database:
            raise ValueError(
                f"complete_in() got a connection to the database {database!r}; the "
                f"store's is {self.database!r} ({self.url}): the completion must be "
                "written where the job is"
            )
        if isolation != "read committed":
            raise ValueError(
                f"complete_in() needs a READ COMMITTED transaction (PostgreSQL's default); "
                f"this one is {isolation.upper()}, whose snapshot could miss a dependent "
                "added meanwhile, which would then never run. Nothing was written: roll "
                "back, and complete in a READ COMMITTED transaction"
            )
        if not held:
            raise LeaseLostError(
                f"attempt {completion.attempt} is no longer this member's in the store "
                f"{self.url} (its lease ran out and another member took the job over, or "
                "the attempt ended already): nothing was written; roll your transaction back"
            )

    def _written(self, row: tuple[Any, ...] | None) -> None:
        # The row is locked by this transaction since the fence was read.
        assert row is not None and row[0] == 1, row

    def _elsewhere(self, exc: Exception) -> ValueError:
        return ValueError(
            f"complete_in() got a connection whose database holds no jobsched store "
            f"in the schema {self.schema!r} ({type(exc).__name__}: "
            f"{' '.join(str(exc).split())}); pass a connection to the store's database "
            f"{self.database!r} ({self.url}). The error aborted your transaction: roll "
            "it back"
        )
