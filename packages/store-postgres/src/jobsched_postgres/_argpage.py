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
from jobsched.store import JobPage, check_arg_filters, check_page_args
from jobsched.store._args import LARGEST

from . import _sql

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
    terms, params = ["id = ANY(%s)"], []
    for key, value in wanted.items():
        terms.append("args ->> %s = %s")
        params += [key, value]
    for column, value in (("name", name), ("executor", executor), ("tenant", tenant)):
        if value is not None:
            terms.append(f"{column} = %s")
            params.append(value)
    if queue is not None:
        from jobsched.store import DEFAULT_QUEUE

        terms.append("queue_name IS NULL" if queue == DEFAULT_QUEUE else "queue_name = %s")
        params += [] if queue == DEFAULT_QUEUE else [queue]

    def read(conn: _sql.Conn) -> tuple[list[int], list[Any]]:
        ids = [
            i for (i,) in conn.execute(f"SELECT id FROM jobsched_jobs {window_sql}", window_params)
        ]
        window = ids[:scan]
        if not window:
            return ids, []
        where = f"WHERE {' AND '.join(terms)} ORDER BY id DESC LIMIT %s"
        return ids, store._jobs(conn, where, (window, *params, limit + 1))

    ids, matches = await store._run(read, transaction=False)
    more = len(ids) > scan
    window = ids[:scan]
    if len(matches) > limit:
        return JobPage(matches[:limit], matches[limit - 1].id, len(window))
    return JobPage(matches, window[-1] if more and window else None, len(window))
