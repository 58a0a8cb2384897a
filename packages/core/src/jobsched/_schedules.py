"""Recurring and cron schedules: in this process's ticker, or kept in a durable store."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from ._exceptions import SchedulerStoppedError
from ._jobs import Job
from ._recurring import CronSchedule, RecurringSchedule, Schedule, StoredSchedule
from ._submission import Submission

if TYPE_CHECKING:
    from datetime import tzinfo

    from ._cron import CronTrigger


class Schedules(Submission):
    """Registers schedules; the ticker (or, on a durable store, the claimer) fires them."""

    def schedule_recurring(
        self,
        factory: Callable[[], Job],
        interval: float,
        *,
        start_in: float = 0.0,
        allow_overlap: bool = False,
        id: str | None = None,
    ) -> str:
        """Submit ``factory()`` every ``interval`` seconds; returns the schedule id.

        Fixed-rate: missed fires coalesce into one. Unless ``allow_overlap``,
        a fire is skipped while the previous job from this schedule runs.

        :param id: the schedule's name: registering an id again replaces that
            schedule. Required with a durable store, which keeps the schedule
            (its factory must then be importable) and fires it from whichever
            scheduler runs.
        """
        if self._stopping:
            raise SchedulerStoppedError("cannot add a schedule: the scheduler is stopping")
        if not (start_in >= 0 and math.isfinite(start_in)):
            raise ValueError(f"start_in must be a number of seconds >= 0, got {start_in!r}")
        schedule = RecurringSchedule(factory, interval, self._clock() + start_in, allow_overlap)
        if self._link is not None:
            stored = StoredSchedule(factory, interval, None, allow_overlap)
            return self._store_schedule(id, stored, stored.first_fire(time.time(), start_in))
        if id is not None:
            self._named(schedule, id)
        self._recurring[schedule.schedule_id] = schedule
        self._wake_ticker()
        return schedule.schedule_id

    def schedule_cron(
        self,
        factory: Callable[[], Job],
        cron: str | CronTrigger,
        *,
        timezone: str | tzinfo | None = None,
        allow_overlap: bool = False,
        id: str | None = None,
    ) -> str:
        """Submit ``factory()`` at the fire times of a cron expression; returns the schedule id.

        :param cron: a five-field expression or alias, or a :class:`CronTrigger`.
        :param timezone: the zone of an expression (IANA name or ``tzinfo``;
            local by default); a :class:`CronTrigger` carries its own.

        Missed fires coalesce into one and, unless ``allow_overlap``, a fire is
        skipped while the previous job from this schedule runs, as for
        :meth:`schedule_recurring`. :meth:`cancel_recurring` stops it.

        :param id: as for :meth:`schedule_recurring`.
        :raises ValueError: the expression or zone is not valid, or both a
            :class:`CronTrigger` and ``timezone`` were given.
        """
        from ._cron import CronTrigger

        if self._stopping:
            raise SchedulerStoppedError("cannot add a schedule: the scheduler is stopping")
        if isinstance(cron, CronTrigger):
            if timezone is not None:
                raise ValueError(
                    f"timezone={timezone!r} was given with {cron!r}, which has its own zone; "
                    "pass the zone to CronTrigger, or pass the expression as a string"
                )
            trigger = cron
        elif isinstance(cron, str):
            trigger = CronTrigger(cron, timezone)
        else:
            raise TypeError(f"cron must be an expression string or a CronTrigger, got {cron!r}")
        if self._link is not None:
            stored = StoredSchedule(factory, None, trigger, allow_overlap)
            return self._store_schedule(id, stored, stored.first_fire(time.time(), 0.0))
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

        schedule = CronSchedule(factory, trigger, now, wall_offset, allow_overlap)
        if id is not None:
            self._named(schedule, id)
        self._recurring[schedule.schedule_id] = schedule
        self._wake_ticker()
        return schedule.schedule_id

    def cancel_recurring(self, schedule_id: str) -> bool:
        """Stop a schedule; False if it is unknown or already cancelled.

        A job it already submitted keeps running; cancel it by its id. With a
        durable store the stored schedule is removed; True for any id, since
        another process may have registered it.
        """
        if self._link is not None:
            if not isinstance(schedule_id, str) or not schedule_id:
                return False
            self._link.remove_schedule(schedule_id)
            return True
        schedule = self._recurring.pop(schedule_id, None)
        if schedule is None or not schedule.active:
            return False
        schedule.active = False
        return True

    def _named(self, schedule: Schedule, name: str) -> None:
        """Give ``schedule`` the caller's id, replacing a schedule of that id."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"a schedule id must be a non-empty string, got {name!r}")
        old = self._recurring.pop(name, None)
        if old is not None:
            old.active = False
        schedule.schedule_id = name

    def _store_schedule(self, name: str | None, schedule: StoredSchedule, first: float) -> str:
        """Keep a schedule in the durable store, under the caller's id."""
        link = self._link
        assert link is not None
        if name is None:
            raise ValueError(
                "a schedule on a durable store needs id=...: the store keeps it across "
                "restarts under that name, and registering the name again replaces it"
            )
        if not isinstance(name, str) or not name:
            raise ValueError(f"a schedule id must be a non-empty string, got {name!r}")
        payload = link.codec.dumps(schedule, f"the schedule {name!r} (its factory)")
        link.put_schedule(name, payload, first)
        return name
