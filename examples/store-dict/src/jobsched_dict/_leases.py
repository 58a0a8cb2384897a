"""A member's running jobs in the dict store: claims (with takeovers of lost
attempts), lease renewals, outcomes and hand-backs; the half of ``DictStore``
the scheduler's claimer, heartbeat and committer call."""

from __future__ import annotations

import time
from abc import abstractmethod
from collections.abc import Collection, Mapping, Sequence

from jobsched import JobStatus
from jobsched.store import (
    HANDED_BACK_AT_STOP,
    Attempt,
    Change,
    Claimed,
    JobStore,
    Outcome,
    RateLimit,
    Recorded,
    dead_local,
    hand_back_key,
)

from . import _deps
from ._claim import Picker
from ._rows import Row, State

S = JobStatus


class Leases(JobStore):
    """Claims, leases and outcomes: every write fenced on the owner (and attempt)."""

    #: When a bucket this object's last claim left empty has its next token.
    _token_due: float | None

    @property
    @abstractmethod
    def _state(self) -> State:
        """The store of this object's name (see ``DictStore``)."""

    async def claim(
        self,
        owner: str,
        limit: int,
        executors: Mapping[str, int],
        now: float,
        lease: float,
        *,
        rates: Mapping[str, RateLimit] | None = None,
        tenants: Mapping[str | None, int] | None = None,
        queues: Collection[str] | None = None,
        queue_room: Mapping[str, int] | None = None,
        starting: int | None = None,
        names: Collection[str] = (),
    ) -> list[Claimed]:
        self._token_due = None
        if limit < 1:
            return []
        state, until, names = self._state, now + lease, frozenset(names)
        claimed = self._take_over_lost(owner, limit, now, until, names)
        rooms = {name: room for name, room in executors.items() if room > 0}
        want = limit - len(claimed)
        if want <= 0 or not rooms:
            return claimed
        for row in state.jobs.values():  # due delayed jobs join the ready ones
            if row.delayed and row.run_at <= now:
                row.delayed = False
        ready = sorted(
            (
                r
                for r in state.jobs.values()
                if r.ready
                and r.key_held(self.key_ids)
                and r.known(names)
                and (queues is None or r.queue in queues)
                and r.queue not in state.paused
            ),
            key=lambda r: (r.key, r.id),
        )
        picker = Picker(state, ready, rooms, rates or {}, now, queue_room)
        ids = picker.take(want) if tenants is None else picker.round_robin(tenants, want)
        self._token_due = picker.save()
        started = []
        first = len(ids) if starting is None else starting
        for n, job_id in enumerate(ids):
            row = state.jobs[job_id]
            row.status, row.owner, row.ran_by = S.RUNNING, owner, owner
            row.lease_until, row.cancel_requested = until, False
            # The first `starting` start now; the rest are claimed ahead of
            # the workers, not started until the member says so (start()).
            starts_now = n < first or row.handed_back
            row.started_at = now if starts_now else None
            row.handed_back = False
            row.attempts += 1
            started.append(
                Claimed(
                    row.id,
                    row.attempts,
                    row.payload,
                    started=starts_now,
                    args=row.args,
                    run_at=row.run_at,
                )
            )
        return claimed + started

    async def start(self, owner: str, starts: Sequence[tuple[int, int, float]]) -> None:
        for job_id, attempt, at in starts:
            row = self._state.jobs.get(job_id)
            if row is None or row.status is not S.RUNNING:
                continue
            if row.owner == owner and row.attempts == attempt:  # the fence
                row.started_at = at

    def _take_over_lost(
        self, owner: str, limit: int, now: float, until: float, names: Collection[str]
    ) -> list[Claimed]:
        """Attempts whose owner is gone (its lease ran out, or a process of
        this machine that died), now ``owner``'s: never its own."""
        running = [r for r in self._state.jobs.values() if r.status is S.RUNNING]
        dead = set(dead_local({r.owner for r in running if r.owner is not None}))
        lease = until - now
        taken: list[Claimed] = []
        for row in running:
            assert row.lease_until is not None
            if row.started_at is None and (
                (row.lease_until < now and row.owner != owner) or row.owner in dead
            ):
                # Claimed ahead and never started: handed back, uncounted.
                self._hand_back(row, now)
        for row in running:
            if row.status is not S.RUNNING:
                continue
            if len(taken) == limit:
                break
            assert row.lease_until is not None
            if not row.key_held(self.key_ids) or not row.known(names):
                continue
            if (row.lease_until < now and row.owner != owner) or row.owner in dead:
                # The old lease's end, less a lease: when its owner last renewed it.
                renewed = max(row.lease_until - lease, row.started_at or row.lease_until - lease)
                row.owner, row.lease_until = owner, until
                taken.append(
                    Claimed(
                        row.id,
                        row.attempts,
                        row.payload,
                        True,
                        row.cancel_requested,
                        renewed,
                        args=row.args,
                    )
                )
        return taken

    async def record(self, owner: str, outcomes: Sequence[Outcome]) -> Recorded:
        state, recorded = self._state, Recorded()
        completed: list[Outcome] = []
        for out in outcomes:
            row = state.jobs.get(out.id)
            # The fence: only the owner of the attempt that runs writes its end.
            if row is None or row.status is not S.RUNNING:
                recorded.refused.append(out.id)
                continue
            if row.owner != owner or row.attempts != out.attempt:
                recorded.refused.append(out.id)
                continue
            asked = out
            if out.started_at is not None:  # claimed ahead: its start comes with its end
                row.started_at = out.started_at
            if out.status is S.RETRY_WAIT and row.cancel_requested:
                # Cancelled while it ran: no retry, or the next claim would lose the cancel.
                out = Outcome(out.id, out.attempt, S.CANCELLED, out.finished_at, error="cancelled")
            if out.status is not S.COMPLETED:
                state.attempts[row.id, out.attempt] = Attempt(
                    row.id, out.attempt, row.name, row.executor, row.ran_by or owner,
                    row.started_at or out.finished_at, out.finished_at, asked.status, asked.error,
                )  # fmt: skip
            _write(row, out)
            if out.status is S.COMPLETED:
                completed.append(out)
            elif out.status.is_terminal:
                if out is not asked:  # the member recorded a retry: tell it
                    recorded.changes.append(Change(row.id, S.CANCELLED, "cancelled"))
                recorded.changes += _deps.cascade(state, row.id, out.status, out.finished_at)
        if completed:
            since = min(o.finished_at for o in completed)
            for out in completed:
                _deps.release(state, out.id, since)
        return recorded

    async def extend(self, owner: str, ids: Collection[int], until: float) -> list[int]:
        state = self._state
        for job_id in ids:
            row = state.jobs.get(job_id)
            if row is not None and row.status is S.RUNNING and row.owner == owner:
                row.lease_until = until
        return sorted(
            r.id
            for r in state.jobs.values()
            if r.status is S.RUNNING and r.owner == owner and r.cancel_requested
        )

    def _hand_back(self, row: Row, now: float) -> None:
        """A job claimed ahead whose member is gone before it started."""
        row.attempts -= 1
        row.owner = row.lease_until = None
        if row.cancel_requested:
            _deps.finish(row, S.CANCELLED, now, "cancelled")
            _deps.cascade(self._state, row.id, S.CANCELLED, now)
        else:
            row.status = S.RETRY_WAIT if row.attempts else S.PENDING
            row.delayed, row.handed_back = False, True

    async def release(self, owner: str, ids: Collection[int]) -> None:
        state, now = self._state, time.time()
        for job_id in ids:
            row = state.jobs.get(job_id)
            if row is None or row.status is not S.RUNNING or row.owner != owner:
                continue
            row.attempts -= 1  # it never started: its number is used again
            row.owner = row.lease_until = None
            if row.cancel_requested:
                _deps.finish(row, S.CANCELLED, now, "cancelled")
                _deps.cascade(state, row.id, S.CANCELLED, now)
            else:
                row.status = S.RETRY_WAIT if row.attempts else S.PENDING
                row.delayed = False

    async def hand_back(self, owner: str, attempts: Sequence[tuple[int, int, float]]) -> None:
        state = self._state
        for job_id, attempt, ended_at in attempts:
            row = state.jobs.get(job_id)
            if row is None or row.status is not S.RUNNING or row.owner != owner:
                continue
            if row.attempts != attempt:
                continue  # the fence: another attempt's row
            # It ran: into the history, under a key the next attempt of the
            # same number (this one is not counted) never takes.
            key = hand_back_key(attempt, [k for j, k in state.attempts if j == job_id])
            if key is not None:
                started = ended_at if row.started_at is None else min(row.started_at, ended_at)
                state.attempts[job_id, key] = Attempt(
                    job_id, attempt, row.name, row.executor, row.ran_by or owner, started,
                    ended_at, S.RETRY_WAIT, HANDED_BACK_AT_STOP, handed_back=True,
                )  # fmt: skip
        await self.release(owner, [job_id for job_id, _, _ in attempts])

    async def defer(self, owner: str, jobs: Sequence[tuple[int, float, str]]) -> None:
        state = self._state
        ours = [
            (row, run_at, error)
            for job_id, run_at, error in jobs
            if (row := state.jobs.get(job_id)) is not None
            and row.status is S.RUNNING
            and row.owner == owner
        ]
        await self.release(owner, [row.id for row, _, _ in ours])
        for row, run_at, error in ours:
            if not row.status.is_terminal:  # not cancelled: it waits until run_at
                row.run_at, row.delayed, row.last_error = run_at, True, error


def _write(row: Row, out: Outcome) -> None:
    """An accepted outcome onto its job."""
    row.status, row.owner, row.lease_until = out.status, None, None
    if out.status is S.RETRY_WAIT:
        assert out.run_at is not None
        row.run_at, row.delayed, row.finished_at, row.result = out.run_at, True, None, None
        row.last_error, row.last_traceback = out.error, out.traceback
        return
    row.finished_at, row.result = out.finished_at, out.result
    if out.status is S.COMPLETED:
        # An earlier attempt's error stays in its attempt's row only.
        row.last_error = row.last_traceback = None
    else:
        row.last_error = out.error if out.error is not None else row.last_error
        row.last_traceback = out.traceback if out.traceback is not None else row.last_traceback
