"""The operator's half of the SQLite store: what the CLI and the dashboard
read (jobs, counts, attempts, schedules, members) and do (schedule
management, retry), each a read outside a write transaction or one write
transaction of :class:`~jobsched_sqlite.SQLiteStore`'s."""

from __future__ import annotations

import sqlite3
import time
from abc import abstractmethod
from collections.abc import Callable, Collection, Mapping
from typing import Any, TypeVar

from jobsched import JobStatus
from jobsched.store import (
    Attempt,
    Change,
    JobPage,
    JobStore,
    Member,
    NewJob,
    StoredJob,
    StoredSchedule,
    WorkflowGraph,
    WorkflowRow,
    check_arg_filters,
    check_attempts_args,
    check_jobs_args,
    check_limit,
    check_page_args,
    check_retry_ids,
    check_workflows_args,
)

from . import (
    _argpage,
    _attempts,
    _members,
    _operator,
    _pauses,
    _queues,
    _schedulereads,
    _schedules,
    _workflows,
)

T = TypeVar("T")


class Reads(JobStore):
    """The operator's reads and actions, on the store's connection."""

    @abstractmethod
    async def _read_async(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` on the connection, outside a write transaction (WAL: it
        sees the last commit and blocks no writer), in a worker thread."""

    @abstractmethod
    async def _write_async(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` in one write transaction (the group commit's)."""

    async def jobs(
        self,
        *,
        statuses: Collection[JobStatus] = (),
        limit: int = 50,
        before: int | None = None,
    ) -> list[StoredJob]:
        statuses, limit, before = check_jobs_args(statuses=statuses, limit=limit, before=before)
        names = [s.value for s in statuses]
        return await self._read_async(lambda conn: _operator.jobs(conn, names, limit, before))

    async def job_page(self, *, args: Mapping[str, str] | None = None, **filters: Any) -> JobPage:
        if not args:
            return await super().job_page(**filters)
        defaults = {"statuses": (), "name": None, "executor": None, "tenant": None,
                    "limit": 50, "before": None, "scan": 1000, "queue": None}  # fmt: skip
        given = {**defaults, **filters}
        statuses, limit, before = check_page_args(**given)
        wanted = check_arg_filters(args)
        exact = {k: given[k] for k in ("name", "executor", "tenant", "queue")}
        names = [s.value for s in statuses]
        scan = given["scan"]
        return await self._read_async(
            lambda conn: _argpage.page(conn, names, exact, wanted, limit, before, scan)
        )

    async def counts(self) -> dict[tuple[JobStatus, str], int]:
        return await self._read_async(_operator.counts)

    async def queue_counts(self) -> dict[tuple[str, JobStatus], int]:
        return await self._read_async(_queues.counts)

    async def waiting_for_keys(self) -> dict[bytes, int]:
        return await self._read_async(lambda conn: _operator.waiting_for_keys(conn, self.key_ids))

    async def waiting_for_names(self, names: Collection[str]) -> dict[str, int]:
        known = sorted(set(names))
        return await self._read_async(lambda conn: _operator.waiting_for_names(conn, known))

    async def waiting_for_executors(self, installed: Collection[str]) -> dict[str, int]:
        names = sorted(set(installed))
        return await self._read_async(lambda conn: _operator.waiting_for_executors(conn, names))

    async def attempts(
        self, *, since: float | None = None, job_id: int | None = None, limit: int = 1000
    ) -> list[Attempt]:
        since, job_id, limit = check_attempts_args(since=since, job_id=job_id, limit=limit)
        return await self._read_async(lambda conn: _attempts.attempts(conn, since, job_id, limit))

    async def schedule_jobs(self, schedule_id: str, *, limit: int = 20) -> list[StoredJob]:
        limit = check_limit(limit)
        return await self._read_async(
            lambda conn: _schedulereads.schedule_jobs(conn, schedule_id, limit)
        )

    async def schedules(self) -> list[StoredSchedule]:
        now = time.time()  # whose schedule lease still holds, as of this read
        return await self._read_async(lambda conn: _schedulereads.schedules(conn, now))

    async def pause_schedule(self, schedule_id: str) -> bool:
        return await self._write_async(lambda conn: _schedules.pause(conn, schedule_id))

    async def resume_schedule(self, schedule_id: str, next_fire: float) -> bool:
        return await self._write_async(lambda conn: _schedules.resume(conn, schedule_id, next_fire))

    async def trigger_schedule(self, schedule_id: str, job: NewJob) -> bool:
        return await self._write_async(lambda conn: _schedules.trigger(conn, schedule_id, job))

    async def retry(self, ids: Collection[int], now: float) -> list[int]:
        wanted = check_retry_ids(ids)
        if not wanted:
            return []
        return await self._write_async(lambda conn: _operator.retry(conn, wanted, now))

    async def report_member(self, member: Member) -> None:
        await self._write_async(lambda conn: _members.report_member(conn, member))

    async def forget_member(self, owner: str) -> None:
        await self._write_async(lambda conn: _members.forget_member(conn, owner))

    async def members(self, *, limit: int = 200) -> list[Member]:
        limit = check_limit(limit)
        return await self._read_async(lambda conn: _members.members(conn, limit))

    async def paused_queues(self) -> set[str]:
        return set(await self._read_async(_pauses.paused))

    async def pause_queue(self, queue: str) -> bool:
        now = time.time()
        return await self._write_async(lambda conn: _pauses.pause(conn, queue, now))

    async def resume_queue(self, queue: str) -> bool:
        return await self._write_async(lambda conn: _pauses.resume(conn, queue))

    async def workflow(self, workflow_id: int) -> WorkflowRow | None:
        return await self._read_async(lambda conn: _workflows.workflow(conn, workflow_id))

    async def workflows(
        self, *, limit: int = 50, before: int | None = None, unfinished: bool = False
    ) -> list[WorkflowRow]:
        limit, before = check_workflows_args(limit=limit, before=before)
        return await self._read_async(
            lambda conn: _workflows.workflows(conn, limit, before, unfinished)
        )

    async def workflow_graph(self, workflow_id: int, *, limit: int = 2_000) -> WorkflowGraph | None:
        limit = check_limit(limit)
        return await self._read_async(lambda conn: _workflows.graph(conn, workflow_id, limit))

    async def cancel_workflow(self, workflow_id: int, now: float) -> tuple[int, list[Change]]:
        return await self._write_async(
            lambda conn: _workflows.cancel_workflow(conn, workflow_id, now)
        )
