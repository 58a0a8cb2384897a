"""The job list filtered by registered jobs' arguments, in SQL (``json_extract``).

``job_page(args=...)`` keeps its contract (a page looks at no more than
``scan`` jobs, newest first): the window's ids are read as ``jobs()`` reads
a page, then one statement keeps those whose arguments match, comparing
each named argument's text as PostgreSQL's ``->>`` gives it (a string as it
is, a number as its digits, a boolean as ``true``/``false``; JSON's null
matches nothing), and only the matching rows are read whole.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping

from jobsched.store import DEFAULT_QUEUE, JobPage

from . import _operator, _own, _queues

# json_extract gives a boolean as 1 or 0: its JSON type says which it was.
_TEXT = (
    "CASE json_type(args, ?) WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' "
    "ELSE CAST(json_extract(args, ?) AS TEXT) END = ?"
)


def page(
    conn: sqlite3.Connection,
    statuses: list[str],
    exact: Mapping[str, str | None],
    args: Mapping[str, str],
    limit: int,
    before: int | None,
    scan: int,
) -> JobPage:
    """One page (see ``JobStore.job_page``); ``exact``: name, executor,
    tenant and queue, None where not filtered; ``args`` checked already."""
    if before is not None:
        before = _own.row_of(conn, before)
    ids = _operator.newest_ids(conn, statuses, scan + 1, before)
    more = len(ids) > scan
    window = ids[:scan]
    if not window:
        return JobPage([], None, 0)
    terms: list[str] = ["id IN (SELECT value FROM json_each(?))"]
    params: list[str | None] = [json.dumps(window)]
    for key, text in args.items():
        path = f'$."{key}"'  # a parameter's name: no quote in it
        terms.append(_TEXT)
        params += [path, path, text]
    for column in ("name", "executor", "tenant"):
        if exact.get(column) is not None:
            terms.append(f"{column} = ?")
            params.append(exact[column])
    queue = exact.get("queue")
    if queue is not None:
        if _queues.present(conn):
            terms.append("queue_name IS ?")
            params.append(_queues.stored(queue))
        elif queue != DEFAULT_QUEUE:
            terms.append("0")  # every job of a file without the column is the default's
    rows = conn.execute(
        f"SELECT id FROM jobs WHERE {' AND '.join(terms)} ORDER BY id DESC LIMIT ?",
        (*params, limit + 1),
    ).fetchall()
    matches = _operator.jobs_of(conn, [r[0] for r in rows])
    if len(matches) > limit:
        return JobPage(matches[:limit], matches[limit - 1].id, len(window))
    last = _own.ids_of(conn, [window[-1]]).get(window[-1], window[-1])
    return JobPage(matches, last if more else None, len(window))
