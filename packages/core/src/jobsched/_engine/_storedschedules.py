"""StoredSchedules: the schedules a durable store keeps, for every member to fire.

The store holds them (this process keeps nothing); whichever member's
claimer claims a due one fires it (``fire``, through ``LinkHost``). Made on
the first schedule call of a durable scheduler (``DurableBacking.schedules``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .._exceptions import SchedulerError
from .._log import logger
from .._time._misfire import warn_dropped
from .._time._recurring import StoredSchedule
from ._schedules import check_schedule_id
from ._state import STARTED

if TYPE_CHECKING:
    from .._jobs._job import Job
    from .._time._cron import CronTrigger
    from .._time._recurring import RecurringSchedule
    from .._time._scheduleinfo import ScheduleInfo
    from ..store._rows import DueSchedule, NewJob
    from ._link import StoreLink
    from ._state import JobTable, RunState


class StoredSchedules:
    """The ``ScheduleBook`` of a durable store."""

    __slots__ = ("_check", "_link", "_row", "_run", "_table", "where")

    def __init__(
        self,
        link: StoreLink,
        run: RunState,
        table: JobTable,
        check: Callable[[Job, float, tuple[str, ...]], object],
        row: Callable[[Job, float, list[int]], NewJob],
    ) -> None:
        self._link = link
        self._run = run
        self._table = table
        self._check = check  # submit's checks, for a triggered fire
        self._row = row  # the row of a checked job (DurableBacking's)
        self.where = f"the store {link.store.url}"

    def add_recurring(
        self, schedule_id: str | None, schedule: RecurringSchedule, start_in: float
    ) -> str:
        """Keep a checked interval schedule in the store, under the caller's id."""
        stored = StoredSchedule(
            schedule.factory, schedule.interval, None, schedule.allow_overlap, schedule.misfire
        )
        return self._store(schedule_id, stored, stored.first_fire(time.time(), start_in))

    def add_cron(
        self,
        schedule_id: str | None,
        factory: Callable[[], Job],
        trigger: CronTrigger,
        allow_overlap: bool,
        misfire: str,
    ) -> str:
        stored = StoredSchedule(factory, None, trigger, allow_overlap, misfire)
        return self._store(schedule_id, stored, stored.first_fire(time.time(), 0.0))

    def _store(self, name: str | None, schedule: StoredSchedule, first: float) -> str:
        if name is None:
            raise ValueError(
                "a schedule on a durable store needs id=...: the store keeps it across "
                "restarts under that name, and registering the name again replaces it"
            )
        check_schedule_id(name)
        link = self._link
        payload = link.codec.dumps(schedule, f"the schedule {name!r} (its factory)")
        link.put_schedule(name, payload, first)
        return name

    def remove(self, schedule_id: str) -> bool:
        """True for any id: another process may have registered it."""
        if not isinstance(schedule_id, str) or not schedule_id:
            return False
        self._link.remove_schedule(schedule_id)
        return True

    async def infos(self) -> list[ScheduleInfo]:
        from .._time._scheduleinfo import from_store

        codec = self._link.codec
        return [
            from_store(codec, row.id, row.payload, row.next_fire, row.last_job)
            for row in await self._rows()
        ]

    async def pause(self, schedule_id: str) -> bool:
        """Paused for whichever member fires it; False: no such schedule."""
        self._need_open_store()
        link = self._link
        await link.flush()
        store = link.store
        paused: bool = await link.read(
            "pausing a schedule", lambda: store.pause_schedule(schedule_id), patience=None
        )
        return paused

    async def resume(self, schedule_id: str) -> bool:
        from .._time._scheduleinfo import PAUSED, read

        row = await self._row_of(schedule_id)
        if row is None:
            return False
        if row.next_fire != PAUSED:
            return True
        link = self._link
        try:
            first = read(link.codec, row.payload).resumed_fire(time.time())
        except Exception as exc:
            raise _unloadable(schedule_id, exc) from exc
        store = link.store
        if not await link.read(
            "resuming a schedule", lambda: store.resume_schedule(schedule_id, first), patience=None
        ):
            return False
        link.wake_claimer()
        return True

    async def trigger(self, schedule_id: str) -> str | None:
        row = await self._row_of(schedule_id)
        if row is None:
            return None
        link = self._link
        try:
            stored = link.codec.loads(row.payload)
        except Exception as exc:
            raise _unloadable(schedule_id, exc) from exc
        job = stored.factory()
        self._check(job, 0.0, ())
        new = self._row(job, 0.0, [])
        store = link.store
        try:
            added = await link.read(
                "triggering a schedule",
                lambda: store.trigger_schedule(schedule_id, new),
                patience=None,
            )
        except BaseException:
            added = False
            raise
        finally:
            if not added:  # this process forgets the job it did not add
                self._table.jobs.pop(new.id, None)
                self._table.unfinished -= 1
        if not added:
            return None
        link.wake_claimer()
        fired: str = job.job_id
        return fired

    async def _rows(self) -> list[Any]:
        link = self._link
        self._need_open_store()
        await link.flush()  # this process's registrations first
        rows: list[Any] = await link.read("listing schedules", link.store.schedules, patience=None)
        return rows

    async def _row_of(self, schedule_id: str) -> Any:
        for row in await self._rows():
            if row.id == schedule_id:
                return row
        return None

    def _need_open_store(self) -> None:
        if self._run.phase != STARTED:
            raise SchedulerError(
                f"the schedules in the store {self._link.store.url} are managed through a "
                "running scheduler: call this inside 'async with JobScheduler(...)' (or "
                "after start(), before stop())"
            )

    async def fire(self, due: Sequence[DueSchedule]) -> bool:
        """Make the fires of the due schedules this member's claimer claimed;
        True if one of them is due again (misfire="all" catching up)."""
        link = self._link
        again = False
        for schedule in due:
            try:
                stored = link.codec.loads(schedule.payload)
            except Exception as exc:
                from ..store._codec import UnknownKey

                if isinstance(exc, UnknownKey):
                    # Another key's schedule (a rotation under way, or this
                    # member misconfigured): not ours to remove. Its lease
                    # runs out and a member that holds the key fires it.
                    if schedule.id not in link.unkeyed_schedules:
                        link.unkeyed_schedules.add(schedule.id)
                        logger.error("stored schedule %r is left alone: %s", schedule.id, exc)
                    continue
                logger.exception(
                    "stored schedule %r cannot be loaded here; it is removed", schedule.id
                )
                link.remove_schedule(schedule.id)
                continue
            now = time.time()
            step = stored.step(schedule.fire_time, now)
            row: NewJob | None = None
            last = schedule.last_status
            if step.make and (
                step.catch_up or stored.allow_overlap or last is None or last.is_terminal
            ):
                try:
                    job = stored.factory()
                    self._check(job, 0.0, ())
                    row = self._row(job, 0.0, [])
                except Exception:  # a broken factory must not stop the claimer
                    logger.exception("stored schedule %r failed to fire", schedule.id)
                else:
                    row.schedule = schedule.id
                    row.fire_time = schedule.fire_time
            if not await link.fire(schedule.id, schedule.fire_time, step.next, row):
                if row is not None:  # another member made this fire: forget ours
                    del self._table.jobs[row.id]
                    self._table.unfinished -= 1
                continue
            if step.dropped:  # once: the member whose step moved the schedule on
                warn_dropped(schedule.id, step)
            if row is not None:
                link.wake_claimer()
            again = again or step.next <= now
        return again


def _unloadable(schedule_id: str, exc: Exception) -> SchedulerError:
    return SchedulerError(
        f"the stored schedule {schedule_id!r} cannot be loaded here ({exc}); "
        "register it again from code that holds the store's key and imports its factory"
    )
