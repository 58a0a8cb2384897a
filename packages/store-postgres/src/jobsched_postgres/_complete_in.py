"""An attempt's completion written in the caller's own transaction
(``js.current_job().complete_in(conn, result)``), on the caller's connection.

One statement: the job's row COMPLETED, fenced on the owner and the attempt
as the group commit's outcomes are (``_outcomes``), its dependents counted
off as ``_RECORD`` does (its text, so the two cannot drift apart), and the
NOTIFYs a member's own completion sends (ready dependents, ``FINISHED``
for ``wait()``), which PostgreSQL delivers only if the caller commits. The
row stays locked by the caller's transaction until then: the member's
heartbeat and any takeover skip it (``SKIP LOCKED``), and the member's own
outcome, written after the commit, finds the row no longer its to write.

The caller's connection need not share the store's ``search_path`` (a
store in a schema of its own): the statement names the tables by the
schema the store's connection found them in (:func:`locate`).
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
_VERDICT = """
SELECT (SELECT count(*) FROM written),
    (SELECT count(*) FROM (SELECT pg_notify(%(channel)s, %(ended)s) FROM written) AS ended),
    (SELECT count(*) FROM (SELECT pg_notify(%(channel)s, '') FROM freed
        WHERE queue <> 2 LIMIT 1) AS woken),
    current_database()
"""
_TABLE = re.compile(r"\bjobsched_(jobs|deps)\b")

#: How the caller's connection kinds are named in a TypeError.
_TAKES = "a psycopg 3 Connection or AsyncConnection"


def locate(conn: psycopg.Connection[Any]) -> tuple[str, str]:
    """The schema that holds the store's tables, as the store's own
    connection finds them, and the database's name."""
    row = conn.execute(
        "SELECT n.nspname, current_database() FROM pg_class c "
        "JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE c.oid = 'jobsched_jobs'::regclass"
    ).fetchone()
    assert row is not None
    return str(row[0]), str(row[1])


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
            try:
                row = conn.execute(self._statement(), self._params(completion)).fetchone()
            except (errors.UndefinedTable, errors.InvalidSchemaName) as exc:
                raise self._elsewhere(exc) from exc
            self._verdict(row, completion)
            return None
        raise TypeError(
            f"complete_in() takes {_TAKES} to the store's database, in a transaction; "
            f"got {type(conn).__module__}.{type(conn).__qualname__}"
        )

    async def _write_async(
        self, conn: psycopg.AsyncConnection[Any], completion: Completion
    ) -> None:
        try:
            cursor = await conn.execute(self._statement(), self._params(completion))
            row = await cursor.fetchone()
        except (errors.UndefinedTable, errors.InvalidSchemaName) as exc:
            raise self._elsewhere(exc) from exc
        self._verdict(row, completion)

    def _check(self, conn: psycopg.Connection[Any] | psycopg.AsyncConnection[Any]) -> None:
        if conn.autocommit and conn.info.transaction_status == TransactionStatus.IDLE:
            raise ValueError(
                "complete_in() got a connection in autocommit mode outside a transaction: "
                "the completion would commit on its own, apart from your work. Call it "
                "inside `with conn.transaction():` (`async with` for an AsyncConnection), "
                "or on a connection without autocommit, and commit once"
            )

    def _statement(self) -> str:
        # Named by schema: the caller's search_path may not reach the store's.
        # A % in the name would read as a parameter.
        schema = '"' + self.schema.replace('"', '""').replace("%", "%%") + '"'
        text = _FENCED + _TAIL + _VERDICT
        return _TABLE.sub(lambda m: f"{schema}.{m.group(0)}", text)

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

    def _verdict(self, row: tuple[Any, ...] | None, completion: Completion) -> None:
        """Raise unless the statement wrote the completion."""
        assert row is not None
        written, _, _, database = row
        if written:
            return
        if database != self.database:
            raise ValueError(
                f"complete_in() got a connection to the database {database!r}; the "
                f"store's is {self.database!r} ({self.url}): the completion must be "
                "written where the job is"
            )
        raise LeaseLostError(
            f"attempt {completion.attempt} is no longer this member's in the store "
            f"{self.url} (its lease ran out and another member took the job over, or "
            "the attempt ended already): nothing was written; roll your transaction back"
        )

    def _elsewhere(self, exc: Exception) -> ValueError:
        return ValueError(
            f"complete_in() got a connection whose database holds no jobsched store "
            f"in the schema {self.schema!r} ({type(exc).__name__}: "
            f"{' '.join(str(exc).split())}); pass a connection to the store's database "
            f"{self.database!r} ({self.url}). The error aborted your transaction: roll "
            "it back"
        )
