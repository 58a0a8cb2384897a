"""MemorySchedules: the schedules of the memory store, fired by this process's ticker.

Made on the first schedule (``MemoryBacking.schedules``), so ``import
jobsched`` does not load it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from .._jobs._ids import id_number
from .._log import logger
from .._time._misfire import warn_dropped
from .._time._recurring import CronSchedule

if TYPE_CHECKING:
    from .._jobs._job import Job
    from .._time._cron import CronTrigger
    from .._time._recurring import RecurringSchedule, Schedule
    from .._time._scheduleinfo import ScheduleInfo
    from ._state import JobTable
    from ._timers import Ticker


class MemorySchedules:
    """The ``ScheduleBook`` of the memory store, and a ``Due`` source of the ticker."""

    __slots__ = ("_clock", "_submit_fire", "_table", "_timers", "recurring")

    where = "this scheduler"

    def __init__(
        self,
        clock: Callable[[], float],
        table: JobTable,
        timers: Ticker,
        submit: Callable[[Job], str],
    ) -> None:
        self._clock = clock
        self._table = table
        self._timers = timers
        self._submit_fire = submit  # the public submit: a fire is a submit
        #: The schedules, by id.
        self.recurring: dict[str, Schedule] = {}

    def add_recurring(
        self, schedule_id: str | None, schedule: RecurringSchedule, start_in: float
    ) -> str:
        """Register a checked interval schedule (its first fire is set already)."""
        return self._add(schedule_id, schedule)

    def add_cron(
        self,
        schedule_id: str | None,
        factory: Callable[[], Job],
        trigger: CronTrigger,
        allow_overlap: bool,
        misfire: str,
    ) -> str:
        clock = self._clock
        now = clock()
        if clock is time.monotonic:
            # Re-read at every fire, so a stepped wall clock or a suspend is
            # caught up with.
            def wall_offset() -> float:
                return time.time() - time.monotonic()

        else:
            # A custom (virtual) clock: wall time advances with it from now on.
            fixed = time.time() - now

            def wall_offset() -> float:
                return fixed

        schedule = CronSchedule(factory, trigger, now, wall_offset, allow_overlap, misfire)
        return self._add(schedule_id, schedule)

    def _add(self, schedule_id: str | None, schedule: Schedule) -> str:
        if schedule_id is not None:
            self._named(schedule, schedule_id)
        self.recurring[schedule.schedule_id] = schedule
        self._timers.wake()
        return schedule.schedule_id

    def _named(self, schedule: Schedule, name: str) -> None:
        """Give ``schedule`` the caller's id, replacing a schedule of that id."""
        from ._schedules import check_schedule_id

        check_schedule_id(name)
        old = self.recurring.pop(name, None)
        if old is not None:
            old.active = False
            if old.paused:  # as on a durable store: registering again keeps a pause
                schedule.pause()
        schedule.schedule_id = name

    def remove(self, schedule_id: str) -> bool:
        schedule = self.recurring.pop(schedule_id, None)
        if schedule is None or not schedule.active:
            return False
        schedule.active = False
        return True

    async def infos(self) -> list[ScheduleInfo]:
        from .._time._scheduleinfo import from_memory

        offset = time.time() - self._clock()
        return [from_memory(s, offset) for s in self.recurring.values() if s.active]

    async def pause(self, schedule_id: str) -> bool:
        schedule = self._schedule(schedule_id)
        if schedule is None:
            return False
        schedule.pause()
        return True

    async def resume(self, schedule_id: str) -> bool:
        schedule = self._schedule(schedule_id)
        if schedule is None:
            return False
        if schedule.paused:
            schedule.resume(self._clock())
            self._timers.wake()
        return True

    async def trigger(self, schedule_id: str) -> str | None:
        schedule = self._schedule(schedule_id)
        if schedule is None:
            return None
        job_id = self._submit_fire(schedule.factory())
        schedule.last_job_id = job_id
        return job_id

    def _schedule(self, schedule_id: str) -> Schedule | None:
        schedule = self.recurring.get(schedule_id) if isinstance(schedule_id, str) else None
        if schedule is None or not schedule.active:
            return None
        return schedule

    # ── the ticker's Due source ──────────────────────────────────────────

    def next_at(self) -> float | None:
        """When the next schedule fires (None: none)."""
        next_at = None
        for schedule in self.recurring.values():
            if next_at is None or schedule.next_run < next_at:
                next_at = schedule.next_run
        return next_at

    def fire_due(self, now: float) -> None:
        """Submit what the schedules due by ``now`` make."""
        for schedule in list(self.recurring.values()):
            # Each step moves next_run on; only misfire="all" takes more
            # than one, catching missed fires up one by one (at most 100).
            while schedule.active and schedule.next_run <= now:
                step = schedule.advance(now)
                if step.dropped:
                    warn_dropped(schedule.schedule_id, step)
                if not step.make:
                    continue
                previous = self._table.jobs.get(id_number(schedule.last_job_id))
                if (
                    previous is not None
                    and not previous.status.is_terminal
                    and not schedule.allow_overlap
                    and not step.catch_up
                ):
                    schedule.skipped += 1
                    continue
                try:
                    job = schedule.factory()
                    schedule.last_job_id = self._submit_fire(job)
                    schedule.fired += 1
                except Exception:  # a broken factory must not kill the ticker
                    logger.exception("recurring schedule %s failed to fire", schedule.schedule_id)
