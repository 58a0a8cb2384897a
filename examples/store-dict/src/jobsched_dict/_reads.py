"""The dict store's reads: what operators read (the CLI, the dashboard) and
the waiting jobs a member warns about; the one action operators take, retry;
and the members list that members report to."""

from __future__ import annotations

from abc import abstractmethod
from collections import Counter
from collections.abc import Collection

from jobsched import JobStatus
from jobsched.store import (
    MEMBERS_KEEP,
    Attempt,
    JobStore,
    Member,
    StoredJob,
    check_attempts_args,
    check_jobs_args,
    check_limit,
    check_retry_ids,
)

from ._rows import State

S = JobStatus
RETRYABLE = (S.FAILED, S.TIMED_OUT, S.CANCELLED)


class Reads(JobStore):
    """Methods with defaults: without them a store still runs jobs."""

    @property
    @abstractmethod
    def _state(self) -> State:
        """The store of this object's name (see ``DictStore``)."""

    async def waiting_for_keys(self) -> dict[bytes, int]:
        return dict(
            Counter(
                r.key_id
                for r in self._state.jobs.values()
                if r.waiting and not r.key_held(self.key_ids)
            )
        )

    async def waiting_for_names(self, names: Collection[str]) -> dict[str, int]:
        return dict(
            Counter(
                r.name
                for r in self._state.jobs.values()
                if r.waiting and r.args is not None and r.name not in names
            )
        )

    async def waiting_for_executors(self, installed: Collection[str]) -> dict[str, int]:
        return dict(
            Counter(
                r.executor
                for r in self._state.jobs.values()
                if r.waiting and r.executor not in installed
            )
        )

    async def jobs(
        self,
        *,
        statuses: Collection[JobStatus] = (),
        limit: int = 50,
        before: int | None = None,
    ) -> list[StoredJob]:
        statuses, limit, before = check_jobs_args(statuses=statuses, limit=limit, before=before)
        rows = sorted(self._state.jobs.values(), key=lambda r: r.id, reverse=True)
        rows = [
            r
            for r in rows
            if (before is None or r.id < before) and (not statuses or r.status in statuses)
        ]
        return [r.stored() for r in rows[:limit]]

    async def counts(self) -> dict[tuple[JobStatus, str], int]:
        return dict(Counter((r.status, r.executor) for r in self._state.jobs.values()))

    async def queue_counts(self) -> dict[tuple[str, JobStatus], int]:
        return dict(
            Counter(
                (r.queue, r.status)
                for r in self._state.jobs.values()
                if r.waiting or r.status is S.RUNNING
            )
        )

    async def attempts(
        self, *, since: float | None = None, job_id: int | None = None, limit: int = 1000
    ) -> list[Attempt]:
        since, job_id, limit = check_attempts_args(since=since, job_id=job_id, limit=limit)
        state = self._state
        found = [
            a
            for a in state.attempts.values()
            if (job_id is None or a.job_id == job_id)
            and (job_id is not None or since is None or (a.finished_at or 0.0) >= since)
        ]
        for row in state.jobs.values():
            # A running or completed attempt is the job's row itself.
            if not row.attempts or (row.id, row.attempts) in state.attempts:
                continue
            if job_id is not None and row.id != job_id:
                continue
            if (row.status is S.RUNNING and row.started_at is not None) or (
                row.status is S.COMPLETED
                and (job_id is not None or since is None or (row.finished_at or 0.0) >= since)
            ):
                found.append(
                    Attempt(
                        row.id,
                        row.attempts,
                        row.name,
                        row.executor,
                        row.ran_by,
                        row.started_at or 0.0,
                        row.finished_at,
                        row.status,
                    )
                )
        found.sort(key=lambda a: (a.started_at, a.job_id, a.attempt))
        return found[-limit:]

    async def retry(self, ids: Collection[int], now: float) -> list[int]:
        state, done = self._state, []
        for job_id in dict.fromkeys(check_retry_ids(ids)):  # once each, in the caller's order
            row = state.jobs.get(job_id)
            if row is None or row.status not in RETRYABLE:
                continue
            # It waits again for the upstreams it still has an edge to
            # (a cascade consumed the edge of the one that cancelled it).
            row.unmet = {u for u in row.depends_on if job_id in state.dependents.get(u, ())}
            row.status, row.run_at, row.delayed = S.PENDING, now, False
            row.finished_at = row.result = row.owner = row.lease_until = None
            row.cancel_requested = False
            done.append(job_id)
        return done

    async def report_member(self, member: Member) -> None:
        members = self._state.members
        was = members.get(member.owner)
        started = was.started_at if was is not None else member.started_at
        members[member.owner] = Member(
            member.owner, member.workers, member.busy, started, member.seen_at, member.names,
            member.queues, member.executors,
        )  # fmt: skip
        for owner in [o for o, m in members.items() if m.seen_at < member.seen_at - MEMBERS_KEEP]:
            del members[owner]

    async def forget_member(self, owner: str) -> None:
        self._state.members.pop(owner, None)

    async def members(self, *, limit: int = 200) -> list[Member]:
        limit = check_limit(limit)
        return sorted(self._state.members.values(), key=lambda m: (-m.seen_at, m.owner))[:limit]

    async def paused_queues(self) -> set[str]:
        return set(self._state.paused)

    async def pause_queue(self, queue: str) -> bool:
        paused = self._state.paused
        if queue in paused:
            return False
        paused.add(queue)
        return True

    async def resume_queue(self, queue: str) -> bool:
        paused = self._state.paused
        if queue not in paused:
            return False
        paused.discard(queue)
        return True
