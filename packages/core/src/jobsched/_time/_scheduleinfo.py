"""What an operator sees of a schedule (:class:`ScheduleInfo`), in memory or stored.

A stored schedule's payload is a pickle of its factory (by reference) and its
trigger. Listing schedules must not import the factory's module nor run
anything from the store: the CLI and the dashboard list schedules without the
jobs' code. So the payload is read by an unpickler that builds only the
trigger's own types and stands a placeholder in for every other reference.
Its signature is verified first when the reader holds the store's key.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from datetime import datetime

    from ..store._codec import Codec
    from ._recurring import Schedule, StoredSchedule

#: Where a paused stored schedule's next fire is: the due query's
#: ``next_fire <= now`` never holds, with no new column (no schema change).
PAUSED = math.inf


@dataclass(frozen=True, slots=True)
class ScheduleInfo:
    """One schedule, as :meth:`JobScheduler.schedules` lists it."""

    #: The schedule's id (``sched-<n>``, or the ``id=`` it was registered with).
    id: str
    #: ``"cron"`` or ``"interval"``; ``"unknown"`` for a stored payload that
    #: cannot be read here (see :attr:`problem`).
    kind: str
    #: The cron expression, or the interval in seconds.
    spec: str | float | None
    #: A cron schedule's zone (IANA name, or ``"local"``); None for an interval.
    timezone: str | None
    #: When it fires next (aware); None while paused.
    next_fire: datetime | None
    paused: bool
    #: The id of the last job it made (a fire or a trigger), if any.
    last_job_id: str | None
    #: Why a stored payload could not be read here, else None.
    problem: str | None = None
    #: What becomes of fires missed while no scheduler ran: ``"coalesce"``,
    #: ``"skip"`` or ``"all"``; None for a payload that cannot be read here.
    misfire: str | None = "coalesce"


def from_memory(schedule: Schedule, wall_offset: float) -> ScheduleInfo:
    """A ticker's schedule; ``wall_offset`` is wall minus scheduler-clock seconds."""
    from ._recurring import CronSchedule, RecurringSchedule

    paused = bool(getattr(schedule, "paused", False))
    if isinstance(schedule, CronSchedule):
        trigger = schedule.trigger
        fire = None if paused else _aware(schedule.next_wall, trigger.timezone)
        return ScheduleInfo(
            schedule.schedule_id,
            "cron",
            trigger.expression,
            _zone(trigger.timezone),
            fire,
            paused,
            schedule.last_job_id,
            misfire=schedule.misfire,
        )
    assert isinstance(schedule, RecurringSchedule)
    fire = None if paused else _aware(schedule.next_run + wall_offset, None)
    return ScheduleInfo(
        schedule.schedule_id,
        "interval",
        schedule.interval,
        None,
        fire,
        paused,
        schedule.last_job_id,
        misfire=schedule.misfire,
    )


def from_store(
    codec: Codec, schedule_id: str, payload: bytes, next_fire: float, last_job: int | None
) -> ScheduleInfo:
    """A stored schedule's row; never raises for a payload it cannot read."""
    paused = next_fire == PAUSED
    # Schedules' jobs are numbered: the id is job-<n>, as the scheduler gave it.
    last = None if last_job is None else f"job-{last_job}"
    try:
        stored = read(codec, payload)
    except Exception as exc:
        return ScheduleInfo(
            schedule_id,
            "unknown",
            None,
            None,
            None if paused else _aware(next_fire, None),
            paused,
            last,
            problem=str(exc) or type(exc).__name__,
            misfire=None,
        )
    trigger = stored.trigger
    zone = None if trigger is None else trigger.timezone
    return ScheduleInfo(
        schedule_id,
        "interval" if trigger is None else "cron",
        stored.interval if trigger is None else trigger.expression,
        None if zone is None else _zone(zone),
        None if paused else _aware(next_fire, zone),
        paused,
        last,
        misfire=stored.misfire,
    )


def read(codec: Codec, payload: bytes) -> StoredSchedule:
    """A stored schedule's trigger and interval, its factory a placeholder.

    :raises BadSignature: the payload does not verify under the codec's keys.
    :raises ValueError: it holds something other than a stored schedule.
    """
    import io

    from ._recurring import StoredSchedule

    data = codec.verify(payload)
    stored = _trigger_only()(io.BytesIO(data)).load()
    if not isinstance(stored, StoredSchedule):
        raise ValueError(f"the stored payload is not a schedule but a {type(stored).__name__}")
    return stored


class _Reference:
    """Stands in for a global the payload names (the factory): never imported."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self, *args: Any, **kwargs: Any) -> _Reference:
        return _Reference(f"{self.name}(...)")

    def __setstate__(self, state: Any) -> None:
        del state

    def __repr__(self) -> str:
        return f"<{self.name}>"


# What a trigger is made of; anything else the payload names is a reference.
# Payloads name the classes where they were before the core's subpackages
# (the stored format, tests/test_layout.py); the new paths are accepted too.
_BUILT = {
    ("jobsched._recurring", "StoredSchedule"),
    ("jobsched._cron", "CronTrigger"),
    ("zoneinfo", "ZoneInfo"),
    ("zoneinfo", "ZoneInfo._unpickle"),
    ("zoneinfo._zoneinfo", "ZoneInfo"),
    ("zoneinfo._zoneinfo", "ZoneInfo._unpickle"),
    ("datetime", "timezone"),
    ("datetime", "timedelta"),
    # The wrapper that carries a schedule's misfire policy; its function
    # stays a reference, never imported nor called.
    ("functools", "partial"),
}


@functools.cache
def _trigger_only() -> Any:
    # Made on first use: `import jobsched` loads no pickle module.
    import pickle

    class TriggerOnly(pickle.Unpickler):
        def find_class(self, module: str, name: str) -> Any:
            if (module, name) in _BUILT:
                return super().find_class(module, name)
            return _Reference(f"{module}.{name}")

    return TriggerOnly


def _aware(epoch: float, zone: Any) -> datetime:
    from datetime import datetime, timezone

    moment = datetime.fromtimestamp(epoch, timezone.utc)
    return moment if zone is None else moment.astimezone(zone)


def _zone(zone: Any) -> str:
    from ._cron import _zone_name

    return _zone_name(zone)
