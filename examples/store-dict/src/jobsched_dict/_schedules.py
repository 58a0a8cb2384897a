"""Stored schedules in the dict store: a member registers, removes, claims
(under a lease) and fires them, one job per fire; an operator lists, pauses,
resumes and triggers them."""

from __future__ import annotations

import math
import time
from abc import abstractmethod
from collections.abc import Collection, Sequence

from jobsched.store import DueSchedule, JobStore, NewJob, StoredSchedule

from . import _deps
from ._rows import Schedule, State


class Schedules(JobStore):
    """The stored schedules; a paused one has ``next_fire = inf``."""

    @property
    @abstractmethod
    def _state(self) -> State:
        """The store of this object's name (see ``DictStore``)."""

    # ── the abstract methods: a member's ───────────────────────────────────

    async def put_schedules(self, schedules: Sequence[tuple[str, bytes, float]]) -> None:
        stored = self._state.schedules
        for schedule_id, payload, first in schedules:
            was = stored.get(schedule_id)
            if was is not None and was.payload == payload:
                continue  # the same schedule again keeps its timing
            paused = was is not None and was.next_fire == math.inf  # stays paused
            last_job = was.last_job if was is not None else None
            stored[schedule_id] = Schedule(
                payload, math.inf if paused else first, None, None, last_job
            )

    async def remove_schedules(self, ids: Collection[str]) -> None:
        for schedule_id in ids:
            self._state.schedules.pop(schedule_id, None)

    async def claim_schedules(self, owner: str, now: float, lease: float) -> list[DueSchedule]:
        state, due = self._state, []
        for schedule_id, s in state.schedules.items():
            free = s.owner is None or (s.lease_until is not None and s.lease_until < now)
            if s.next_fire <= now and free:
                s.owner, s.lease_until = owner, now + lease
                last = state.jobs.get(s.last_job) if s.last_job is not None else None
                due.append(
                    DueSchedule(
                        schedule_id, s.payload, s.next_fire, None if last is None else last.status
                    )
                )
        return due

    async def fire(
        self, owner: str, schedule: str, fire_time: float, next_fire: float, job: NewJob | None
    ) -> bool:
        state = self._state
        s = state.schedules.get(schedule)
        if s is None or s.owner != owner or s.next_fire != fire_time:
            return False  # fenced: no longer this member's, or paused
        if job is not None and (schedule, fire_time) in state.fired:
            return False  # this fire was made already
        s.next_fire, s.owner, s.lease_until = next_fire, None, None
        if job is not None:
            state.fired.add((schedule, fire_time))
            s.last_job = job.id
            _deps.add(state, [job], fire_time)
        return True

    # ── the methods with defaults: an operator's ───────────────────────────

    async def schedules(self) -> list[StoredSchedule]:
        now = time.time()  # whose lease still holds, as of this read
        return [
            StoredSchedule(
                schedule_id,
                s.next_fire,
                s.owner if s.lease_until is not None and s.lease_until >= now else None,
                s.payload,
                s.last_job,
            )
            for schedule_id, s in sorted(
                self._state.schedules.items(), key=lambda item: (item[1].next_fire, item[0])
            )
        ]

    async def pause_schedule(self, schedule_id: str) -> bool:
        s = self._state.schedules.get(schedule_id)
        if s is None:
            return False
        s.next_fire, s.owner, s.lease_until = math.inf, None, None
        return True

    async def resume_schedule(self, schedule_id: str, next_fire: float) -> bool:
        s = self._state.schedules.get(schedule_id)
        if s is None:
            return False
        if s.next_fire == math.inf:
            s.next_fire = next_fire
        return True

    async def trigger_schedule(self, schedule_id: str, job: NewJob) -> bool:
        s = self._state.schedules.get(schedule_id)
        if s is None:
            return False
        s.last_job = job.id
        _deps.add(self._state, [job], time.time())
        return True
