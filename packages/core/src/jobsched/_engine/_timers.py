"""The ticker: promotes due delayed jobs, fires schedules, times attempts out."""

from __future__ import annotations

import math

import anyio

from .._jobs._ids import id_number
from .._log import logger
from .._time._misfire import warn_dropped
from ._schedules import Schedules


class Timers(Schedules):
    """One task that sleeps until the next thing that is due."""

    async def _ticker(self) -> None:
        """Promotes due delayed jobs, fires schedules, times attempts out; sleeps in between."""
        self._watching = True
        deadlines = self._deadlines
        try:
            while not self._run.stopping:
                now = self._clock()
                deadlines.expire(now)
                if self._recurring:
                    self._fire_due(now)
                self._promote_due(now)
                next_at = self._queue.next_due()
                for schedule in self._recurring.values():
                    if next_at is None or schedule.next_run < next_at:
                        next_at = schedule.next_run
                timeout_at = deadlines.next_at()
                if timeout_at is not None and (next_at is None or timeout_at < next_at):
                    next_at = timeout_at
                wakeup = self._ticker_wakeup = anyio.Event()
                if next_at is None:
                    self._ticker_sleeps_until = math.inf
                    await wakeup.wait()
                else:
                    self._ticker_sleeps_until = next_at
                    with anyio.move_on_after(max(0.0, next_at - self._clock())):
                        await wakeup.wait()
                self._ticker_wakeup = None
        finally:
            # Attempts still running keep their timeouts: on their own scopes.
            self._watching = False
            deadlines.hand_back(self._clock)
            self._task_exited()

    def _promote_due(self, now: float) -> None:
        moved = self._queue.promote_due(now)
        idle = self._idle_workers
        while moved and idle:
            idle.popleft().set()
            moved -= 1

    def _fire_due(self, now: float) -> None:
        for schedule in list(self._recurring.values()):
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
                    schedule.last_job_id = self.submit(job)
                    schedule.fired += 1
                except Exception:  # a broken factory must not kill the ticker
                    logger.exception("recurring schedule %s failed to fire", schedule.schedule_id)
