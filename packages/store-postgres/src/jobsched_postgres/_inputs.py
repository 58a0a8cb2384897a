"""What workflows ask of the PostgreSQL store (issue 37): the upstreams a
dependent receives, sizes first, and running attempts' progress, fenced as
outcomes are. A mixin of :class:`PostgresStore` over ``Reads._run``."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from jobsched import JobStatus
from jobsched.store import Input, ProgressRow

from . import _sql
from ._reads import _STATUSES, Reads

#: Ids per read of results (a page of them, by the primary key).
PAGE = 1_000
# The ids are sent as bigint[], the key's type, and as one text
# (_sql.int_array): psycopg sends a list of small ints as smallint[], and a
# primary key scan of 10,000 ids compared across types took 2-3x as long
# (W23's fan-in).

# A progress write changes no indexed column and none the entered_xid
# trigger watches: it is a HOT update where the page has room.
_PROGRESS = """
UPDATE jobsched_jobs AS j SET progress = p.f, progress_message = p.m
FROM unnest(%s::bigint[], %s::int[], %s::float8[], %s::text[]) AS p(id, attempt, f, m)
WHERE j.id = p.id AND j.owner = %s AND j.attempts = p.attempt
"""


class WorkflowReads(Reads):
    """The store's side of workflows' results and progress."""

    async def inputs(self, ids: Collection[int], max_bytes: int) -> dict[int, Input] | int:
        wanted = sorted(set(ids))

        def read(conn: _sql.Conn) -> dict[int, Input] | int:
            (total,) = conn.execute(
                "SELECT COALESCE(sum(octet_length(result)), 0) FROM jobsched_jobs "
                "WHERE id = ANY(%s::bigint[])",
                (_sql.int_array(wanted),),
            ).fetchone() or (0,)
            if total > max_bytes:
                return int(total)
            found: dict[int, Input] = {}
            for start in range(0, len(wanted), PAGE):
                for job_id, status, result, error in conn.execute(
                    "SELECT id, status, result, last_error FROM jobsched_jobs "
                    "WHERE id = ANY(%s::bigint[])",
                    (_sql.int_array(wanted[start : start + PAGE]),),
                ):
                    found[job_id] = Input(
                        job_id, _STATUSES.get(status) or JobStatus(status), result, error
                    )
            return found

        return await self._run(read)

    async def progress(self, owner: str, rows: Sequence[ProgressRow]) -> None:
        if not rows:
            return
        params = (
            [r.id for r in rows], [r.attempt for r in rows],
            [r.fraction for r in rows], [r.message for r in rows], owner,
        )  # fmt: skip

        def write(conn: _sql.Conn) -> None:
            conn.execute(_PROGRESS, params)

        await self._run(write)
