"""Recurring and cron schedules: the public methods' checks, then the backing's book.

The backing keeps them (``backing.schedules``): ``MemorySchedules`` in this
process's ticker, ``StoredSchedules`` in a durable store.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from .._exceptions import SchedulerStoppedError, UnknownScheduleError
from .._jobs._job import Job
from .._jobs._text import check_text
from .._time._recurring import RecurringSchedule
from ._state import SchedulerState

if TYPE_CHECKING:
    from datetime import tzinfo

    from .._time._cron import CronTrigger
    from .._time._scheduleinfo import ScheduleInfo


class Schedules(SchedulerState):
    """Registers schedules; the ticker (or, on a durable store, the claimer) fires them."""

    def schedule_recurring(
        self,
        factory: Callable[[], Job],
        interval: float,
        *,
        start_in: float = 0.0,
        allow_overlap: bool = False,
        id: str | None = None,
        misfire: str = "coalesce",
    ) -> str:
        """Submit ``factory()`` every ``interval`` seconds; returns the schedule id.

        Fixed-rate. Unless ``allow_overlap``, a fire is skipped while the
        previous job from this schedule runs.

        :param id: the schedule's name: registering an id again replaces that
            schedule. Required with a durable store, which keeps the schedule
            (its factory must then be importable) and fires it from whichever
            scheduler runs.
        :param misfire: what becomes of fires missed while no scheduler ran
            (or made more than a second late): ``"coalesce"``, one job for
            them all; ``"skip"``, none; ``"all"``, one each, oldest first (the
            latest 100; a WARNING says how many older ones are dropped),
            made even while the previous job runs.
        :raises ValueError: ``misfire`` is not one of the three.
        """
        if self._run.stopping:
            raise SchedulerStoppedError("cannot add a schedule: the scheduler is stopping")
        if not (start_in >= 0 and math.isfinite(start_in)):
            raise ValueError(f"start_in must be a number of seconds >= 0, got {start_in!r}")
        # Made on any store: its checks (the interval, misfire, the factory).
        schedule = RecurringSchedule(
            factory, interval, self._clock() + start_in, allow_overlap, misfire
        )
        return self._backing.schedules.add_recurring(id, schedule, start_in)

    def schedule_cron(
        self,
        factory: Callable[[], Job],
        cron: str | CronTrigger,
        *,
        timezone: str | tzinfo | None = None,
        allow_overlap: bool = False,
        id: str | None = None,
        misfire: str = "coalesce",
    ) -> str:
        """Submit ``factory()`` at the fire times of a cron expression; returns the schedule id.

        :param cron: a five-field expression or alias, or a :class:`CronTrigger`.
        :param timezone: the zone of an expression (IANA name or ``tzinfo``;
            local by default); a :class:`CronTrigger` carries its own.

        Unless ``allow_overlap``, a fire is skipped while the previous job
        from this schedule runs, as for :meth:`schedule_recurring`.
        :meth:`cancel_recurring` stops it.

        :param id: as for :meth:`schedule_recurring`.
        :param misfire: as for :meth:`schedule_recurring`.
        :raises ValueError: the expression or zone is not valid, both a
            :class:`CronTrigger` and ``timezone`` were given, or ``misfire``
            is not one of the three.
        """
        from .._time._cron import CronTrigger
        from .._time._misfire import check_misfire

        if self._run.stopping:
            raise SchedulerStoppedError("cannot add a schedule: the scheduler is stopping")
        check_misfire(misfire)
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
        return self._backing.schedules.add_cron(id, factory, trigger, allow_overlap, misfire)

    def cancel_recurring(self, schedule_id: str) -> bool:
        """Stop a schedule; False if it is unknown or already cancelled.

        A job it already submitted keeps running; cancel it by its id. With a
        durable store the stored schedule is removed; True for any id, since
        another process may have registered it.

        :raises ValueError: ``schedule_id`` holds a character no store can keep.
        """
        _check_lookup(schedule_id)
        return self._backing.schedules.remove(schedule_id)

    # ── managing schedules ───────────────────────────────────────────────

    async def schedules(self) -> list[ScheduleInfo]:
        """Every schedule (in this process, or stored), soonest fire first,
        paused ones last."""
        return sorted(await self._backing.schedules.infos(), key=_soonest)

    async def pause_schedule(self, schedule_id: str) -> None:
        """Stop a schedule firing until :meth:`resume_schedule`; pausing a
        paused one does nothing. On a durable store the stored schedule is
        paused, for whichever member fires it, and stays paused when it is
        registered again.

        :raises UnknownScheduleError: no schedule has that id.
        :raises ValueError: ``schedule_id`` holds a character no store can keep.
        """
        _check_lookup(schedule_id)
        if not await self._backing.schedules.pause(schedule_id):
            raise self._unknown_schedule(schedule_id)

    async def resume_schedule(self, schedule_id: str) -> None:
        """Fire a paused schedule again, from its first fire after now: fires
        missed while it was paused are skipped, not coalesced. An interval
        schedule fires one interval after the resume. Resuming a schedule
        that is not paused does nothing.

        :raises UnknownScheduleError: no schedule has that id.
        :raises ValueError: ``schedule_id`` holds a character no store can keep.
        """
        _check_lookup(schedule_id)
        if not await self._backing.schedules.resume(schedule_id):
            raise self._unknown_schedule(schedule_id)

    async def trigger_schedule(self, schedule_id: str) -> str:
        """Submit one job from the schedule's factory now (paused or not; the
        overlap guard does not apply) and return its id; the regular fires
        are unchanged. It becomes the schedule's last job.

        :raises UnknownScheduleError: no schedule has that id.
        :raises ValueError: ``schedule_id`` holds a character no store can keep.
        """
        _check_lookup(schedule_id)
        job_id = await self._backing.schedules.trigger(schedule_id)
        if job_id is None:
            raise self._unknown_schedule(schedule_id)
        return job_id

    def _unknown_schedule(self, schedule_id: object) -> UnknownScheduleError:
        return UnknownScheduleError(
            f"no schedule {schedule_id!r} in {self._backing.schedules.where}: never "
            "registered, or removed (schedules() lists them)"
        )


def check_schedule_id(schedule_id: object) -> str:
    """``schedule_id`` if a schedule can be registered or found under it.

    :raises ValueError: it is not a non-empty str, or it holds a character
        no store can keep.
    """
    if not isinstance(schedule_id, str) or not schedule_id:
        raise ValueError(f"a schedule id must be a non-empty string, got {schedule_id!r}")
    return check_text("schedule id", schedule_id)


def _check_lookup(schedule_id: object) -> None:
    # Only text is checked: any other id is no schedule's, as it always was.
    if isinstance(schedule_id, str):
        check_text("schedule id", schedule_id)


def _soonest(info: ScheduleInfo) -> tuple[bool, float, str]:
    fire = info.next_fire
    return (fire is None, fire.timestamp() if fire is not None else 0.0, info.id)
