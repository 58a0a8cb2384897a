"""Recurring schedules: when the ticker fires a job factory next."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

from ._jobs import Job

_schedule_ids = itertools.count(1)


class RecurringSchedule:
    """Fires ``factory()`` every ``interval`` seconds.

    Fixed-rate, not fixed-delay: the next fire time is computed from the
    previous *scheduled* time, so slow ticks don't make it drift. Missed fires
    coalesce: a ticker that wakes three intervals late fires once and jumps to
    the next future slot. With ``allow_overlap=False`` a fire is skipped while
    the previous job is unfinished.
    """

    __slots__ = (
        "active",
        "allow_overlap",
        "factory",
        "fired",
        "interval",
        "last_job_id",
        "next_run",
        "schedule_id",
        "skipped",
    )

    def __init__(
        self,
        factory: Callable[[], Job],
        interval: float,
        first_run: float,
        allow_overlap: bool = False,
    ) -> None:
        if not callable(factory):
            raise TypeError(f"factory must be a callable that returns a Job, got {factory!r}")
        if not (interval > 0 and math.isfinite(interval)):
            raise ValueError(f"interval must be a positive number of seconds, got {interval!r}")
        self.schedule_id = f"sched-{next(_schedule_ids)}"
        self.factory = factory
        self.interval = interval
        self.next_run = first_run
        self.allow_overlap = allow_overlap
        self.active = True
        self.last_job_id: str | None = None
        self.fired = 0
        self.skipped = 0

    def advance(self, now: float) -> None:
        """Move ``next_run`` to the first slot after ``now`` (missed slots coalesce)."""
        missed = int((now - self.next_run) // self.interval) + 1
        self.next_run += max(missed, 1) * self.interval
