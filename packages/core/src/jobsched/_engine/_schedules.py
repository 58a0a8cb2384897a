"""Recurring and cron schedules: in this process's ticker, or kept in a durable store."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._exceptions import SchedulerError, SchedulerStoppedError, UnknownScheduleError
from .._jobs._job import Job
from .._jobs._text import check_text
from .._time._recurring import CronSchedule, RecurringSchedule, Schedule, StoredSchedule
from ._submission import Submission

if TYPE_CHECKING:
    from datetime import tzinfo

    from .._time._cron import CronTrigger
    from .._time._scheduleinfo import ScheduleInfo


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
        schedule = RecurringSchedule(
            factory, interval, self._clock() + start_in, allow_overlap, misfire
        )
        if self._link is not None:
            stored = StoredSchedule(factory, interval, None, allow_overlap, misfire)
            return self._store_schedule(id, stored, stored.first_fire(time.time(), start_in))
        if id is not None:
            self._named(schedule, id)
        self._recurring[schedule.schedule_id] = schedule
        self._timers.wake()
        return schedule.schedule_id

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
        if self._link is not None:
            stored = StoredSchedule(factory, None, trigger, allow_overlap, misfire)
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

        schedule = CronSchedule(factory, trigger, now, wall_offset, allow_overlap, misfire)
        if id is not None:
            self._named(schedule, id)
        self._recurring[schedule.schedule_id] = schedule
        self._timers.wake()
        return schedule.schedule_id

    def cancel_recurring(self, schedule_id: str) -> bool:
        """Stop a schedule; False if it is unknown or already cancelled.

        A job it already submitted keeps running; cancel it by its id. With a
        durable store the stored schedule is removed; True for any id, since
        another process may have registered it.

        :raises ValueError: ``schedule_id`` holds a character no store can keep.
        """
        _check_lookup(schedule_id)
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

    # ── managing schedules ───────────────────────────────────────────────

    async def schedules(self) -> list[ScheduleInfo]:
        """Every schedule (in this process, or stored), soonest fire first,
        paused ones last."""
        from .._time._scheduleinfo import from_memory, from_store

        link = self._link
        if link is None:
            offset = time.time() - self._clock()
            found = [from_memory(s, offset) for s in self._recurring.values() if s.active]
        else:
            codec = link.codec
            found = [
                from_store(codec, row.id, row.payload, row.next_fire, row.last_job)
                for row in await self._stored_schedules()
            ]
        return sorted(found, key=_soonest)

    async def pause_schedule(self, schedule_id: str) -> None:
        """Stop a schedule firing until :meth:`resume_schedule`; pausing a
        paused one does nothing. On a durable store the stored schedule is
        paused, for whichever member fires it, and stays paused when it is
        registered again.

        :raises UnknownScheduleError: no schedule has that id.
        :raises ValueError: ``schedule_id`` holds a character no store can keep.
        """
        _check_lookup(schedule_id)
        link = self._link
        if link is None:
            self._schedule(schedule_id).pause()
            return
        self._need_open_store()
        await link.flush()
        store = link.store
        if not await link.read(
            "pausing a schedule", lambda: store.pause_schedule(schedule_id), patience=None
        ):
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
        link = self._link
        if link is None:
            schedule = self._schedule(schedule_id)
            if schedule.paused:
                schedule.resume(self._clock())
                self._timers.wake()
            return
        from .._time._scheduleinfo import PAUSED, read

        row = await self._stored_schedule(schedule_id)
        if row.next_fire != PAUSED:
            return
        try:
            first = read(link.codec, row.payload).resumed_fire(time.time())
        except Exception as exc:
            raise self._unloadable(schedule_id, exc) from exc
        store = link.store
        if not await link.read(
            "resuming a schedule", lambda: store.resume_schedule(schedule_id, first), patience=None
        ):
            raise self._unknown_schedule(schedule_id)
        link.wake_claimer()

    async def trigger_schedule(self, schedule_id: str) -> str:
        """Submit one job from the schedule's factory now (paused or not; the
        overlap guard does not apply) and return its id; the regular fires
        are unchanged. It becomes the schedule's last job.

        :raises UnknownScheduleError: no schedule has that id.
        :raises ValueError: ``schedule_id`` holds a character no store can keep.
        """
        _check_lookup(schedule_id)
        link = self._link
        if link is None:
            schedule = self._schedule(schedule_id)
            job_id = self.submit(schedule.factory())
            schedule.last_job_id = job_id
            return job_id
        row = await self._stored_schedule(schedule_id)
        try:
            stored = link.codec.loads(row.payload)
        except Exception as exc:
            raise self._unloadable(schedule_id, exc) from exc
        job = stored.factory()
        self._check_submit(job, 0.0, ())
        new = self._stored_row(job, 0.0, [])
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
            raise self._unknown_schedule(schedule_id)
        link.wake_claimer()
        fired: str = job.job_id
        return fired

    def _schedule(self, schedule_id: str) -> Schedule:
        schedule = self._recurring.get(schedule_id) if isinstance(schedule_id, str) else None
        if schedule is None or not schedule.active:
            raise self._unknown_schedule(schedule_id)
        return schedule

    async def _stored_schedules(self) -> list[Any]:
        link = self._link
        assert link is not None
        self._need_open_store()
        await link.flush()  # this process's registrations first
        return await link.read("listing schedules", link.store.schedules, patience=None)

    async def _stored_schedule(self, schedule_id: str) -> Any:
        for row in await self._stored_schedules():
            if row.id == schedule_id:
                return row
        raise self._unknown_schedule(schedule_id)

    def _need_open_store(self) -> None:
        from ._state import STARTED

        if self._run.phase != STARTED:
            assert self._link is not None
            raise SchedulerError(
                f"the schedules in the store {self._link.store.url} are managed through a "
                "running scheduler: call this inside 'async with JobScheduler(...)' (or "
                "after start(), before stop())"
            )

    def _unloadable(self, schedule_id: str, exc: Exception) -> SchedulerError:
        return SchedulerError(
            f"the stored schedule {schedule_id!r} cannot be loaded here ({exc}); "
            "register it again from code that holds the store's key and imports its factory"
        )

    def _unknown_schedule(self, schedule_id: object) -> UnknownScheduleError:
        where = "this scheduler" if self._link is None else f"the store {self._link.store.url}"
        return UnknownScheduleError(
            f"no schedule {schedule_id!r} in {where}: never registered, or removed "
            "(schedules() lists them)"
        )

    def _named(self, schedule: Schedule, name: str) -> None:
        """Give ``schedule`` the caller's id, replacing a schedule of that id."""
        check_schedule_id(name)
        old = self._recurring.pop(name, None)
        if old is not None:
            old.active = False
            if old.paused:  # as on a durable store: registering again keeps a pause
                schedule.pause()
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
        check_schedule_id(name)
        payload = link.codec.dumps(schedule, f"the schedule {name!r} (its factory)")
        link.put_schedule(name, payload, first)
        return name


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
