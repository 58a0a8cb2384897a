"""Recurring schedules: when the ticker fires a job factory next."""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._jobs._job import Job
from ._misfire import COALESCE, Step, check_misfire, plan

if TYPE_CHECKING:
    from ._cron import CronTrigger

_schedule_ids = itertools.count(1)


class Schedule:
    """What the ticker needs of a schedule: ``next_run`` and ``advance(now)``.

    Both are in the scheduler's clock domain. With ``allow_overlap=False`` a
    fire is skipped while the previous job is unfinished. ``misfire`` says
    what becomes of fires missed while the ticker did not run (``_misfire``).
    """

    __slots__ = (
        "active",
        "allow_overlap",
        "factory",
        "fired",
        "last_job_id",
        "misfire",
        "next_run",
        "paused",
        "schedule_id",
        "skipped",
    )

    def __init__(
        self,
        factory: Callable[[], Job],
        first_run: float,
        allow_overlap: bool = False,
        misfire: str = COALESCE,
    ) -> None:
        if not callable(factory):
            raise TypeError(f"factory must be a callable that returns a Job, got {factory!r}")
        self.misfire = check_misfire(misfire)
        self.schedule_id = f"sched-{next(_schedule_ids)}"
        self.factory = factory
        self.next_run = first_run
        self.allow_overlap = allow_overlap
        self.active = True
        #: Paused: ``next_run`` is ``inf`` until resumed.
        self.paused = False
        self.last_job_id: str | None = None
        self.fired = 0
        self.skipped = 0

    def advance(self, now: float) -> Step:
        """Take the step due at ``now`` (``_misfire.plan``): move ``next_run``
        on and say which fire, if any, to make."""
        raise NotImplementedError

    def pause(self) -> None:
        self.paused = True
        self.next_run = math.inf

    def resume(self, now: float) -> None:
        """Fire again from the first fire after ``now``: none missed while paused."""
        raise NotImplementedError


class RecurringSchedule(Schedule):
    """Fires ``factory()`` every ``interval`` seconds.

    Fixed-rate, not fixed-delay: the next fire time is computed from the
    previous *scheduled* time, so slow ticks don't make it drift. Missed fires
    follow ``misfire``: coalesced, a ticker that wakes three intervals late
    fires once and jumps to the next future slot.
    """

    __slots__ = ("interval",)

    def __init__(
        self,
        factory: Callable[[], Job],
        interval: float,
        first_run: float,
        allow_overlap: bool = False,
        misfire: str = COALESCE,
    ) -> None:
        if not (interval > 0 and math.isfinite(interval)):
            raise ValueError(f"interval must be a positive number of seconds, got {interval!r}")
        super().__init__(factory, first_run, allow_overlap, misfire)
        self.interval = interval

    def advance(self, now: float) -> Step:
        step = plan(self.misfire, self.next_run, now, interval=self.interval)
        self.next_run = step.next
        return step

    def resume(self, now: float) -> None:
        # One interval from the resume: its old phase is not kept (a stored
        # schedule's is gone with its paused next fire, and both agree).
        self.paused = False
        self.next_run = now + self.interval


class CronSchedule(Schedule):
    """Fires ``factory()`` at the fire times of a :class:`CronTrigger`.

    Fire times are wall-clock instants; the ticker runs on the scheduler's
    clock. The two meet here and nowhere else: ``wall_offset()`` is wall-clock
    seconds minus scheduler-clock seconds. On the real clock it is read at every
    fire, so a wall clock that was stepped or a machine that slept is caught up
    with at the next fire; on a virtual clock it is the constant fixed when the
    schedule was made, so wall time advances with virtual time. A fire is never
    made twice: the next one is searched for after both now and the fire just
    made, even if the wall clock went back.
    """

    __slots__ = ("next_wall", "trigger", "wall_offset")

    def __init__(
        self,
        factory: Callable[[], Job],
        trigger: CronTrigger,
        now: float,
        wall_offset: Callable[[], float],
        allow_overlap: bool = False,
        misfire: str = COALESCE,
    ) -> None:
        offset = wall_offset()
        self.trigger = trigger
        self.wall_offset = wall_offset
        #: The upcoming fire time, in wall-clock (epoch) seconds.
        self.next_wall = _next_fire(trigger, now + offset)
        super().__init__(factory, self.next_wall - offset, allow_overlap, misfire)

    def advance(self, now: float) -> Step:
        # Stepped in wall time, where the trigger's fire times are; the step's
        # fire times go back to the scheduler's clock for the caller.
        offset = self.wall_offset()
        trigger = self.trigger
        step = plan(
            self.misfire,
            self.next_wall,
            now + offset,
            after=lambda t: _next_fire(trigger, t),
        )
        self.next_wall = step.next
        self.next_run = step.next - offset
        return step

    def resume(self, now: float) -> None:
        self.paused = False
        offset = self.wall_offset()
        self.next_wall = _next_fire(self.trigger, now + offset)
        self.next_run = self.next_wall - offset


def _next_fire(trigger: CronTrigger, after: float) -> float:
    # datetime comes with the cron module, which jobsched imports on first use.
    from datetime import datetime, timezone

    moment = datetime.fromtimestamp(after, timezone.utc)
    return trigger.next_after(moment).timestamp()


#: The attribute of the factory's wrapper that carries a stored schedule's
#: misfire policy (see ``StoredSchedule.__reduce__``).
_MISFIRE = "jobsched_misfire"


class StoredSchedule:
    """What a durable store keeps of a schedule: pickled by reference, fired by
    whichever scheduler claims it when it is due. Times are wall-clock."""

    __slots__ = ("allow_overlap", "factory", "interval", "misfire", "trigger")

    def __init__(
        self,
        factory: Callable[[], Job],
        interval: float | None,
        trigger: CronTrigger | None,
        allow_overlap: bool,
        misfire: str = COALESCE,
    ) -> None:
        if type(factory) is functools.partial and _MISFIRE in factory.__dict__:
            # As __reduce__ wrote it. A partial with arguments stays as it
            # is: a partial factory may have been flattened into it.
            misfire = factory.__dict__.pop(_MISFIRE)
            if not factory.args and not factory.keywords:
                factory = factory.func
        self.factory = factory
        self.interval = interval
        self.trigger = trigger
        self.allow_overlap = allow_overlap
        self.misfire = check_misfire(misfire)

    def __reduce__(self) -> tuple[Any, ...]:
        factory: Any = self.factory
        if self.misfire != COALESCE:
            # The policy rides on a partial of the factory, not as a fifth
            # argument: a member of an older version, whose StoredSchedule
            # takes four, loads it and fires it as coalescing, where a fifth
            # argument would fail its load and have it remove the schedule
            # (a rolling deploy). A coalescing schedule's payload is unchanged.
            factory = functools.partial(factory)
            setattr(factory, _MISFIRE, self.misfire)
        return (StoredSchedule, (factory, self.interval, self.trigger, self.allow_overlap))

    def first_fire(self, now: float, start_in: float) -> float:
        """The first fire time, for a schedule registered at ``now``."""
        if self.trigger is not None:
            return _next_fire(self.trigger, now)
        return now + start_in

    def resumed_fire(self, now: float) -> float:
        """The first fire after a resume at ``now`` (none missed while paused)."""
        if self.trigger is not None:
            return _next_fire(self.trigger, now)
        assert self.interval is not None
        return now + self.interval

    def step(self, due: float, now: float) -> Step:
        """The step of a fire due at ``due``, claimed at ``now`` (``_misfire.plan``)."""
        trigger = self.trigger
        if trigger is not None:
            return plan(self.misfire, due, now, after=lambda t: _next_fire(trigger, t))
        return plan(self.misfire, due, now, interval=self.interval)


# Rows pickle it by this name (the stored format; see that module).
StoredSchedule.__module__ = "jobsched._recurring"
