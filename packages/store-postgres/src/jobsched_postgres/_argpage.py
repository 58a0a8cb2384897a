"""The job list filtered by registered jobs' arguments, in SQL (``->>``).

``job_page(args=...)`` keeps its contract (a page looks at no more than
``scan`` jobs, newest first): the window's ids are read as :meth:`jobs`
reads a page (the status index, the primary key), then one statement keeps
the rows of the window whose arguments match, ``args->>'KEY' = VALUE``,
with the other filters. Only the matches travel, not the window's rows and
payloads. docs/stores.md ("Registered jobs") gives the figures, and the
index a team may add for searches by one argument over the whole history.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

from jobsched import JobStatus
from jobsched.store import DEFAULT_QUEUE, LARGEST, JobPage, check_arg_filters, check_page_args

from . import _queues, _sql

if TYPE_CHECKING:
    from ._reads import Reads


async def page(
    store: Reads,
    *,
    statuses: Collection[JobStatus],
    name: str | None,
    executor: str | None,
    tenant: str | None,
    limit: int,
    before: int | None,
    scan: int,
    queue: str | None,
    args: Mapping[str, str],
) -> JobPage:
    """:meth:`JobStore.job_page` with ``args``, filtered by the server."""
    from ._reads import jobs_query

    statuses, limit, before = check_page_args(
        statuses=statuses, name=name, executor=executor, tenant=tenant,
        limit=limit, before=before, scan=scan, queue=queue,
    )  # fmt: skip
    wanted = check_arg_filters(args)
    window_sql, window_params = jobs_query(statuses, min(scan + 1, LARGEST), before)
    terms: list[str] = []
    params: list[Any] = []
    for key, value in wanted.items():
        terms.append("args ->> %s = %s")
        params += [key, value]
    for column, exact in (("name", name), ("executor", executor), ("tenant", tenant)):
        if exact is not None:
            terms.append(f"{column} = %s")
            params.append(exact)
    window = f"(SELECT id FROM jobsched_jobs {window_sql}) AS w"

    def read(conn: _sql.Conn) -> tuple[int, int | None, list[Any]]:
        # The window's size and its last id, then the matches in it: the
        # window's ids never leave the server (10,000 a page cost the CLI
        # most of its time).
        row = conn.execute(
            "SELECT count(*), min(id) FILTER (WHERE r <= %s) FROM (SELECT id, "
            f"row_number() OVER (ORDER BY id DESC) AS r FROM {window}) AS n",
            (scan, *window_params),
        ).fetchone()
        seen, last = (int(row[0]), row[1]) if row is not None else (0, None)
        where, bound = list(terms), list(params)
        if queue is not None:
            # Without the named queues' column every job is the default queue's.
            if _queues.has_column(conn):
                named = queue != DEFAULT_QUEUE
                where.append("queue_name = %s" if named else "queue_name IS NULL")
                bound += [queue] if named else []
            elif queue != DEFAULT_QUEUE:
                return seen, last, []
        if not seen:
            return seen, last, []
        sql = (
            f"WHERE id = ANY(ARRAY(SELECT id FROM {window} ORDER BY id DESC LIMIT %s)) "
            f"AND {' AND '.join(where)} ORDER BY id DESC LIMIT %s"
        )
        return seen, last, store._jobs(conn, sql, (*window_params, scan, *bound, limit + 1))

    seen, last, matches = await store._run(read)
    scanned = min(seen, scan)
    if len(matches) > limit:
        return JobPage(matches[:limit], matches[limit - 1].id, scanned)
    return JobPage(matches, last if seen > scan else None, scanned)
