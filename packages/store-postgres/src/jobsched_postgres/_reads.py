"""What operators read (the CLI, the dashboard) and the one action they take, retry."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Collection, Mapping
from typing import Any, TypeVar

from jobsched import JobStatus
from jobsched.store import (
    DEFAULT_QUEUE,
    KEY_ID_SIZE,
    KEY_ID_START,
    KEYED,
    Attempt,
    JobPage,
    JobStore,
    Member,
    StoredJob,
    attempt_of_key,
    check_attempts_args,
    check_jobs_args,
    check_limit,
    check_retry_ids,
)

from . import _members, _queues, _sql

T = TypeVar("T")

_COLUMNS = (
    "id, name, executor, status, attempts, run_at, submitted_at, started_at, finished_at, "
    "result, last_error, last_traceback, owner, payload, tenant, "
    "ARRAY(SELECT ARRAY[upstream, on_failure, settled] FROM jobsched_deps d "
    "WHERE d.downstream = jobsched_jobs.id ORDER BY upstream), args::text, schedule, "
    "workflow, progress, progress_message"
)
_RETRYABLE = (JobStatus.FAILED, JobStatus.TIMED_OUT, JobStatus.CANCELLED)
#: A row's status by its value: a dict lookup where calling the enum per row
#: cost a page of 1,000 jobs about 1 ms of CPU (the enum's call stays, for
#: its error on a value that is no status).
_STATUSES = {status.value: status for status in JobStatus}


class Reads(JobStore):
    """The operator's half of the store: reads that never lock a claim out."""

    @abstractmethod
    async def _run(
        self, fn: Callable[[_sql.Conn], T], *, transaction: bool = True, again: bool = False
    ) -> T:
        """Run ``fn`` on a worker thread, in one transaction unless not
        ``transaction`` (see ``PostgresStore._tx``).

        A read of one statement runs without one: the statement is its own
        snapshot, and BEGIN and COMMIT were two round trips more (the
        connections' lock and statement timeouts are their sessions', set
        when each is made, and hold either way). A read of several
        statements keeps its transaction.
        """

    @staticmethod
    def _jobs(conn: _sql.Conn, where: str, params: tuple[Any, ...]) -> list[StoredJob]:
        known = _queues.seen(conn)
        # Without the column every row is the default queue's, unless the
        # column is there in this statement's snapshot: then read again.
        queue = ", queue_name, true" if known else f", NULL::text, {_queues.HAS_COLUMN}"
        rows = conn.execute(
            f"SELECT {_COLUMNS}{queue} FROM jobsched_jobs {where}", params
        ).fetchall()
        if not known and rows and rows[0][22]:
            _queues.saw(conn)
            return Reads._jobs(conn, where, params)
        return [
            StoredJob(
                id=r[0],
                name=r[1],
                executor=r[2],
                status=_STATUSES.get(r[3]) or JobStatus(r[3]),
                attempts=r[4],
                run_at=r[5],
                submitted_at=r[6],
                started_at=r[7],
                finished_at=r[8],
                result=r[9],
                last_error=r[10],
                last_traceback=r[11],
                owner=r[12],
                payload=r[13],
                tenant=r[14],
                # Every edge kept (upstream, policy, state); those waited for.
                depends_on=tuple(e[0] for e in r[15] or () if e[2] == 0),
                args=r[16],
                schedule=r[17],
                workflow=r[18],
                progress=r[19],
                progress_message=r[20],
                queue=DEFAULT_QUEUE if r[21] is None else r[21],
                deps=tuple((u, p, s) for u, p, s in r[15] or ()),
            )
            for r in rows
        ]

    async def jobs(
        self,
        *,
        statuses: Collection[JobStatus] = (),
        limit: int = 50,
        before: int | None = None,
    ) -> list[StoredJob]:
        statuses, limit, before = check_jobs_args(statuses=statuses, limit=limit, before=before)
        sql, params = jobs_query(statuses, limit, before)
        return await self._run(lambda conn: self._jobs(conn, sql, tuple(params)), transaction=False)

    async def job_page(self, *, args: Mapping[str, str] | None = None, **filters: Any) -> JobPage:
        if not args:
            return await super().job_page(**filters)
        from . import _argpage

        defaults = {"statuses": (), "name": None, "executor": None, "tenant": None,
                    "limit": 50, "before": None, "scan": 1000, "queue": None}  # fmt: skip
        return await _argpage.page(self, args=args, **{**defaults, **filters})

    async def counts(self) -> dict[tuple[JobStatus, str], int]:
        rows = await self._run(_sql.counts, transaction=False)
        return {
            (_STATUSES.get(status) or JobStatus(status), executor): n
            for status, executor, n in rows
        }

    async def queue_counts(self) -> dict[tuple[str, JobStatus], int]:
        def count(conn: _sql.Conn) -> list[tuple[Any, ...]]:
            known = _queues.seen(conn)
            queue = "queue_name" if known else "NULL::text"
            # One arm per queue and the running rows, each through its
            # partial index: the unfinished rows, never the history.
            arms = " UNION ALL ".join(
                f"SELECT {queue} AS q, status FROM jobsched_jobs WHERE {where}"
                for where in ("queue = 0", "queue = 1", "queue = 2", "status = 'running'")
            )
            seen = "true" if known else _queues.HAS_COLUMN
            rows = conn.execute(
                f"SELECT q, status, COUNT(*), {seen} FROM ({arms}) AS u GROUP BY q, status"
            ).fetchall()
            if not known and rows and rows[0][3]:
                _queues.saw(conn)
                return count(conn)
            return rows

        rows = await self._run(count, transaction=False, again=True)
        return {
            (DEFAULT_QUEUE if q is None else q, _STATUSES.get(status) or JobStatus(status)): n
            for q, status, n, _ in rows
        }

    async def waiting_for_keys(self) -> dict[bytes, int]:
        keys = list(self.key_ids)
        rows = await self._run(
            lambda conn: conn.execute(
                f"SELECT substring(payload from {KEY_ID_START} for {KEY_ID_SIZE}), COUNT(*) "
                "FROM jobsched_jobs WHERE status IN ('pending', 'retry_wait') "
                f"AND substring(payload from 1 for 1) = '\\x{KEYED.hex()}'::bytea "
                f"AND NOT (substring(payload from {KEY_ID_START} for {KEY_ID_SIZE}) "
                "= ANY(%s::bytea[])) GROUP BY 1",
                (keys,),
            ).fetchall(),
            transaction=False,
        )
        return {bytes(kid): int(n) for kid, n in rows}

    async def waiting_for_executors(self, installed: Collection[str]) -> dict[str, int]:
        names = sorted(set(installed))
        # One arm per queue, each through its partial index (the ready one
        # holds the executor itself): the waiting rows, never the history.
        arms = " UNION ALL ".join(
            f"SELECT executor FROM jobsched_jobs WHERE queue = {queue} "
            "AND executor <> ALL(%(names)s::text[])"
            for queue in (0, 1, 2)
        )
        rows = await self._run(
            lambda conn: conn.execute(
                f"SELECT executor, COUNT(*) FROM ({arms}) AS waiting GROUP BY executor",
                {"names": names},
            ).fetchall(),
            transaction=False,
        )
        return {executor: int(n) for executor, n in rows}

    async def waiting_for_names(self, names: Collection[str]) -> dict[str, int]:
        known = sorted(set(names))
        # One arm per waiting queue, each through its partial index: the
        # waiting rows, never the history.
        arms = " UNION ALL ".join(
            f"SELECT name FROM jobsched_jobs WHERE queue = {queue} "
            "AND args IS NOT NULL AND name <> ALL(%(known)s::text[])"
            for queue in (0, 1, 2)
        )
        rows = await self._run(
            lambda conn: conn.execute(
                f"SELECT name, COUNT(*) FROM ({arms}) AS waiting GROUP BY name",
                {"known": known},
            ).fetchall(),
            transaction=False,
        )
        return {name: int(n) for name, n in rows}

    async def attempts(
        self, *, since: float | None = None, job_id: int | None = None, limit: int = 1000
    ) -> list[Attempt]:
        since, job_id, limit = check_attempts_args(since=since, job_id=job_id, limit=limit)
        sql, params = attempts_query(since, job_id, limit)
        rows = await self._run(lambda conn: conn.execute(sql, params).fetchall(), transaction=False)
        return [
            Attempt(
                job_id=r[0],
                attempt=attempt_of_key(r[1])[0],
                name=r[2],
                executor=r[3],
                owner=r[4],
                started_at=r[5],
                finished_at=r[6],
                status=_STATUSES.get(r[7]) or JobStatus(r[7]),
                error=r[8],
                handed_back=r[1] < 0,
            )
            for r in rows
        ]

    async def report_member(self, member: Member) -> None:
        made = getattr(self, "_members_made", False)
        await self._run(lambda conn: _members.report(conn, member, made=made))
        self._members_made = True

    async def forget_member(self, owner: str) -> None:
        await self._run(lambda conn: _members.forget(conn, owner))

    async def members(self, *, limit: int = 200) -> list[Member]:
        limit = check_limit(limit)
        return await self._run(lambda conn: _members.members(conn, limit))

    async def retry(self, ids: Collection[int], now: float) -> list[int]:
        wanted = check_retry_ids(ids)

        def retry(conn: _sql.Conn) -> list[int]:
            ids = sorted(set(wanted))
            # A job cancelled while it waited still has the waiting edges of
            # its unfinished upstreams (an upstream that ended settled its
            # edges): it waits for those again. FOR SHARE, as add() does: an
            # upstream completing now waits for this transaction, so its
            # release sees the job blocked again.
            # The rows by primary key: `j.status || ''` proves no partial
            # index's predicate (see _takeover). Said plainly, statistics that
            # saw few failures let the planner read every failed, timed-out
            # and cancelled row's entry of jobsched_jobs_status and hash them.
            conn.execute(
                "SELECT 1 FROM jobsched_jobs WHERE id IN (SELECT upstream FROM jobsched_deps "
                "WHERE downstream = ANY(%s) AND settled = 0) ORDER BY id FOR SHARE",
                (ids,),
            )
            rows = conn.execute(
                "UPDATE jobsched_jobs AS j SET status = 'pending', unmet = d.n, "
                "queue = CASE WHEN d.n > 0 THEN 2 ELSE 0 END, run_at = %s, "
                "finished_at = NULL, owner = NULL, lease_until = NULL, "
                "cancel_requested = false, result = NULL "
                "FROM (SELECT i.id, (SELECT COUNT(*) FROM jobsched_deps "
                "WHERE downstream = i.id AND settled = 0) AS n "
                "FROM unnest(%s::bigint[]) AS i(id)) AS d "
                "WHERE j.id = d.id AND j.status || '' = ANY(%s) RETURNING j.id",
                (now, ids, [s.value for s in _RETRYABLE]),
            ).fetchall()
            if rows:
                _sql.notify(conn)
            requeued = {i for (i,) in rows}
            # In the caller's order, each once, as every store returns them.
            return [i for i in dict.fromkeys(wanted) if i in requeued]

        return await self._run(retry)


def jobs_query(
    statuses: Collection[JobStatus], limit: int, before: int | None
) -> tuple[str, list[Any]]:
    """The WHERE clause and parameters of :meth:`Reads.jobs`.

    By status, the newest ``limit`` of each status from the status index
    (jobsched_jobs_status: every status but completed, whose newest rows the
    primary key walked backwards finds), then the newest ``limit`` of those:
    a page costs the same on any history. One ``status = ANY`` over the
    primary key walked every finished row when no job had the status (a
    list of the queued jobs: 110 ms at 1M); the same over the status index
    sorted every failure ever kept.
    """
    below = "" if before is None else " AND id < %s"
    if not statuses:
        return f"WHERE TRUE{below} ORDER BY id DESC LIMIT %s", [
            *([] if before is None else [before]),
            limit,
        ]
    parts, params = [], []
    for status in dict.fromkeys(statuses):
        # Said again so the planner may use the partial index (a generic
        # plan cannot prove it from the parameter).
        other = "" if status is JobStatus.COMPLETED else " AND status <> 'completed'"
        parts.append(
            f"(SELECT id FROM jobsched_jobs WHERE status = %s{other}{below} "
            "ORDER BY id DESC LIMIT %s)"
        )
        params += [status.value, *([] if before is None else [before]), limit]
    newest = " UNION ALL ".join(parts)
    return (
        f"WHERE id = ANY(ARRAY(SELECT id FROM ({newest}) s ORDER BY id DESC LIMIT %s)) "
        "ORDER BY id DESC",
        [*params, limit],
    )


def attempts_query(since: float | None, job_id: int | None, limit: int) -> tuple[str, list[Any]]:
    """The SQL and parameters of :meth:`Reads.attempts`."""
    params: list[Any] = []
    if job_id is not None:
        where, last = "a.job_id = %s", "j.id = %s"
        params += (job_id, job_id)
    elif since is not None:
        where = "(a.finished_at IS NULL OR a.finished_at >= %s)"
        last = "(j.status = 'running' OR j.finished_at >= %s)"
        params += (since, since)
    else:
        where = last = "TRUE"
    # A running attempt, and a job's completed last one, have no row of
    # their own (see _claim._TAKE and _outcomes._RECORD): the job's row stands for
    # them. The newest `limit` (by start), returned oldest first.
    sql = (
        "SELECT * FROM (SELECT a.job_id, a.attempt, j.name, j.executor, a.owner, "
        "a.started_at, a.finished_at, a.status, a.error FROM jobsched_attempts a "
        f"JOIN jobsched_jobs j ON j.id = a.job_id WHERE {where} "
        "UNION ALL SELECT j.id, j.attempts, j.name, j.executor, j.ran_by, "
        "COALESCE(j.started_at, j.finished_at), j.finished_at, j.status, NULL "
        "FROM jobsched_jobs j "
        f"WHERE j.status IN ('running', 'completed') AND j.attempts > 0 AND {last} "
        # A job claimed ahead that has not started (started_at NULL): no attempt yet.
        "AND COALESCE(j.started_at, j.finished_at) IS NOT NULL "
        "AND NOT EXISTS (SELECT 1 FROM jobsched_attempts a WHERE a.job_id = j.id "
        "AND a.attempt = j.attempts) "
        "ORDER BY started_at DESC, job_id DESC, attempt DESC LIMIT %s) newest "
        "ORDER BY started_at, job_id, attempt"
    )
    return sql, [*params, limit]
