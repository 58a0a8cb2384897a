"""``@app.periodic``: a registered job that every worker of the app keeps on a schedule.

On a durable store the schedule is a stored one (one fire per time, whichever
worker fires it); every scheduler with workers that the app builds registers
it again at its start, which changes nothing while the schedule is the same
(the store keeps its next fire, see ``JobStore.put_schedules``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ._function import JobFunction

if TYPE_CHECKING:
    from .._engine._scheduler import JobScheduler
    from ._app import App


class Periodic:
    """One ``@app.periodic``: what to register on each scheduler."""

    __slots__ = ("cron", "every", "function", "id", "misfire", "timezone")

    def __init__(
        self,
        function: JobFunction[Any, Any],
        cron: str | None,
        every: float | None,
        timezone: str | None,
        id: str,
        misfire: str,
    ) -> None:
        self.function = function
        self.cron = cron
        self.every = every
        self.timezone = timezone
        self.id = id
        self.misfire = misfire

    def register(self, scheduler: JobScheduler) -> str:
        """Register the schedule on ``scheduler`` (replacing one of its id)."""
        if self.cron is not None:
            return scheduler.schedule_cron(
                self.function.job, self.cron, timezone=self.timezone, id=self.id,
                misfire=self.misfire,
            )  # fmt: skip
        assert self.every is not None
        return scheduler.schedule_recurring(
            self.function.job, self.every, id=self.id, misfire=self.misfire
        )


def periodic_decorator(
    app: App,
    cron: str | None,
    every: float | None,
    timezone: str | None,
    id: str | None,
    misfire: str,
) -> Callable[[Any], JobFunction[Any, Any]]:
    """``@app.periodic(...)``: checks now, registers on decoration."""
    if (cron is None) == (every is None):
        raise ValueError(
            f"@app.periodic takes cron= or every=, exactly one (got cron={cron!r}, every={every!r})"
        )
    if cron is not None:
        from .._time._cron import CronTrigger

        CronTrigger(cron, timezone)  # a bad expression or zone: ValueError now
    else:
        if isinstance(every, bool) or not isinstance(every, (int, float)):
            raise TypeError(f"every must be a number of seconds, got {every!r}")
        if not (every > 0 and math.isfinite(every)):
            raise ValueError(f"every must be a positive, finite number of seconds, got {every!r}")
        if timezone is not None:
            raise ValueError(f"timezone={timezone!r} applies to cron=, not every=")
    from .._time._misfire import check_misfire

    check_misfire(misfire)

    def decorate(fn: Any) -> JobFunction[Any, Any]:
        function = fn if isinstance(fn, JobFunction) else app.job()(fn)
        if function._app is not app:
            raise ValueError(f"{function!r} is registered with another App")
        try:
            function._signature.bind()
        except TypeError:
            raise TypeError(
                f"@app.periodic: {function.name} takes arguments "
                f"{function.fn.__name__}{function._signature}, but a schedule calls it with "
                "none: give its parameters defaults, or wrap it in a function that takes none"
            ) from None
        schedule_id = id if id is not None else function.name
        if schedule_id in app._periodic:
            raise ValueError(
                f"a periodic job with id {schedule_id!r} is registered already: give this "
                "one another id=..."
            )
        app._periodic[schedule_id] = Periodic(function, cron, every, timezone, schedule_id, misfire)
        return function

    return decorate
