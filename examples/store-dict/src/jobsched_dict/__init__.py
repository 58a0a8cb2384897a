"""An example third-party jobsched store: the jobs live in a dict of this process.

``open_store("dict://NAME")`` (the entry point ``dict`` in the
``jobsched.stores`` group) opens the store ``NAME``; every store object of
that name in the process shares it, so schedulers of one process are members
of one store, each with its own owner id, and nothing outlives the process.

Each method runs without an ``await`` in the middle, so on one event loop it
is one transaction, as a database store's method is. It imports only public
names from ``jobsched`` and ``jobsched.store`` (docs/stores.md, "Writing a
store", walks through it), and passes the conformance suite:
``pytest -p jobsched.store.testing --store-url 'dict://{token}'``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection, Sequence

from jobsched import JobStatus
from jobsched.store import (
    MEMBERS_KEEP,
    Attempt,
    Change,
    Member,
    NewJob,
    StoredJob,
    check_attempts_args,
    check_jobs_args,
    check_limit,
    check_retry_ids,
)

from . import _deps
from ._leases import Leases
from ._rows import STATES, State
from ._schedules import Schedules

__all__ = ["DictStore"]

S = JobStatus
RETRYABLE = (S.FAILED, S.TIMED_OUT, S.CANCELLED)


class DictStore(Leases, Schedules):
    """The jobs of ``dict://NAME``, in this process's memory."""

    def __init__(
        self,
        url: str,
        *,
        secret: str | bytes | Sequence[str | bytes] | None = None,
        lease: float = 30.0,
    ) -> None:
        scheme, sep, name = url.partition("://")
        if scheme != "dict" or not sep or not name:
            raise ValueError(f"a dict store's URL is dict://NAME, got {url!r}")
        super().__init__(url, secret=secret, lease=lease)
        self.name = name
        self._token_due = None  # set by each claim (Leases), read by next_due

    @property
    def _state(self) -> State:
        return STATES.setdefault(self.name, State())

    # ── the abstract methods (the others: Leases, Schedules) ───────────────

    async def open(self) -> None:
        self._state  # noqa: B018 - creates the store of this name

    async def close(self) -> None:
        pass  # nothing to release; the store lives on for the process

    async def exists(self) -> bool | None:
        return self.name in STATES

    def reserve_ids(self, count: int) -> int:
        state = self._state
        first, state.next_id = state.next_id, state.next_id + count
        return first

    async def add(self, jobs: Sequence[NewJob], now: float) -> list[Change]:
        return _deps.add(self._state, jobs, now)

    async def cancel(self, ids: Collection[int], now: float) -> list[Change]:
        state, changes = self._state, []
        for job_id in ids:
            row = state.jobs.get(job_id)
            if row is None:
                continue
            if row.status is S.RUNNING:
                row.cancel_requested = True  # its owner sees it at its next extend()
            elif row.waiting:
                _deps.finish(row, S.CANCELLED, now, "cancelled")
                changes.append(Change(row.id, S.CANCELLED, "cancelled"))
                changes += _deps.cascade(state, row.id, S.CANCELLED, now)
        return changes

    async def next_due(self) -> float | None:
        state = self._state
        due = [r.run_at for r in state.jobs.values() if r.delayed and r.waiting and not r.unmet]
        due += [s.next_fire for s in state.schedules.values() if s.next_fire < math.inf]
        if self._token_due is not None:
            due.append(self._token_due)
        return min(due, default=None)

    async def fetch(self, job_id: int) -> StoredJob | None:
        row = self._state.jobs.get(job_id)
        return None if row is None else row.stored()

    async def unfinished(self) -> int:
        return sum(not r.status.is_terminal for r in self._state.jobs.values())

    async def prune(self, keep: int) -> int:
        state = self._state
        ended = sorted(
            (r for r in state.jobs.values() if r.finished_at is not None),
            key=lambda r: r.finished_at or 0.0,
            reverse=True,
        )
        for row in ended[keep:]:
            del state.jobs[row.id]
            state.dependents.pop(row.id, None)
            for attempt in range(1, row.attempts + 1):
                state.attempts.pop((row.id, attempt), None)
        return max(len(ended) - keep, 0)

    # ── the methods with defaults ──────────────────────────────────────────

    async def waiting_for_keys(self) -> dict[bytes, int]:
        return dict(
            Counter(
                r.key_id
                for r in self._state.jobs.values()
                if r.waiting and not r.key_held(self.key_ids)
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
            if row.status is S.RUNNING or (
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
            member.owner, member.workers, member.busy, started, member.seen_at
        )
        for owner in [o for o, m in members.items() if m.seen_at < member.seen_at - MEMBERS_KEEP]:
            del members[owner]

    async def forget_member(self, owner: str) -> None:
        self._state.members.pop(owner, None)

    async def members(self, *, limit: int = 200) -> list[Member]:
        limit = check_limit(limit)
        return sorted(self._state.members.values(), key=lambda m: (-m.seen_at, m.owner))[:limit]
