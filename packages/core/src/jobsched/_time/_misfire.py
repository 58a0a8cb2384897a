"""Misfires: which fire to make when a schedule's fires were missed.

A fire is *missed* when it is made more than :data:`GRACE` seconds after its
time: no scheduler ran (a deploy, a crash, a laptop asleep), or the loop was
blocked. One function, :func:`plan`, decides every step of every schedule,
in memory (the ticker) and stored (the claimer), so the two cannot drift
apart. It is a pure function of the policy, the due fire time and now.

Each step makes at most one job, for the due fire time itself, and moves the
schedule on; a schedule still due after a step is stepped again. So ``"all"``
catches up one fire per step, oldest first, and a durable store makes each
with one ``fire()`` (one job per schedule and fire time: its unique key keeps
members from making one twice). A step that passes over missed fires makes
no job: it moves the schedule to the next fire to make, which the next step
makes.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from .._log import logger

COALESCE = "coalesce"
SKIP = "skip"
ALL = "all"
#: The policies, in the order the error message names them.
MISFIRES = (COALESCE, SKIP, ALL)
#: A fire made within this many seconds of its time is on time. A second
#: covers a late tick, a busy claimer and a store's round trip, and is short
#: next to any schedule whose misfires matter.
GRACE = 1.0
#: ``"all"`` makes at most this many missed fires: the latest ones.
CATCH_UP = 100


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a due schedule: the job to make, if any, and what comes next."""

    #: Make a job for the due fire time (False: move on only).
    make: bool
    #: The schedule's next fire time after this step (may still be due).
    next: float
    #: True when ``make`` is a missed fire that ``"all"`` catches up: it is
    #: made even while the previous job runs (each fire is its own period).
    catch_up: bool = False
    #: Missed fires ``"all"`` dropped this step (more than :data:`CATCH_UP`).
    dropped: int = 0
    #: ``dropped`` is an estimate (a cron schedule's long backlog is not
    #: walked fire by fire).
    estimated: bool = False


def check_misfire(misfire: object) -> str:
    """``misfire`` if it names a policy.

    :raises ValueError: it does not.
    """
    if not isinstance(misfire, str) or misfire not in MISFIRES:
        raise ValueError(
            f"misfire must be 'coalesce' (one run for the fires missed while no worker "
            f"ran), 'skip' (none) or 'all' (each, oldest first, up to {CATCH_UP}), "
            f"got {misfire!r}"
        )
    return misfire


def plan(
    misfire: str,
    due: float,
    now: float,
    *,
    interval: float | None = None,
    after: Callable[[float], float] | None = None,
    grace: float = GRACE,
) -> Step:
    """The step a schedule due at ``due`` takes at ``now``.

    Give the schedule's ``interval`` (its fires are ``due + k * interval``)
    or ``after``, the first fire time strictly after a time (a cron trigger).

    * ``"coalesce"``: a job for ``due``; then the first fire after now.
    * ``"skip"``: a job only for a fire made on time (within ``grace``), the
      fires after it coalescing into it; a missed ``due`` moves on to the
      first fire that is not missed.
    * ``"all"``: a job for ``due``, then the fire after it: each fire in
      turn, oldest first; a backlog of more than :data:`CATCH_UP` missed
      fires first moves on to the oldest of the latest :data:`CATCH_UP`.
    """
    if interval is not None:
        after = _grid(due, interval)
    elif after is None:
        raise TypeError("plan() needs interval= or after=")
    if misfire == COALESCE:
        return Step(True, after(max(due, now)))
    on_time = now - due <= grace
    if misfire == SKIP:
        if on_time:
            return Step(True, after(max(due, now)))
        return Step(False, after(now - grace))  # the first fire that is not missed
    if on_time:
        return Step(True, after(due))
    if interval is not None:
        total = math.floor((now - due) / interval) + 1
        dropped = max(0, total - CATCH_UP)
        first = due + dropped * interval
        estimated = False
    else:
        first, dropped, estimated = _latest(due, now, after)
    if dropped:
        return Step(False, first, dropped=dropped, estimated=estimated)
    return Step(True, after(due), catch_up=True)


def warn_dropped(schedule_id: str, step: Step) -> None:
    """The one WARNING for a backlog longer than ``"all"`` catches up."""
    logger.warning(
        "schedule %r missed more than %d fires while no worker ran: misfire='all' makes "
        "the latest %d and drops the %s%d older ones",
        schedule_id,
        CATCH_UP,
        CATCH_UP,
        "about " if step.estimated else "",
        step.dropped,
    )


def _grid(due: float, interval: float) -> Callable[[float], float]:
    def after(t: float) -> float:
        return due + (math.floor((t - due) / interval) + 1) * interval

    return after


def _latest(due: float, now: float, after: Callable[[float], float]) -> tuple[float, int, bool]:
    """The oldest of the latest :data:`CATCH_UP` fires from ``due`` to ``now``,
    and about how many older ones there are.

    A cron step costs tens of microseconds, so a backlog of a year of
    minutely fires is not walked: the latest fires are found in a window
    before now that doubles until it holds enough of them, and the older
    ones are counted at the window's average spacing.
    """
    walked = [due]
    while len(walked) <= CATCH_UP:
        t = after(walked[-1])
        if t > now:
            return due, 0, False
        walked.append(t)
    span = walked[-1] - walked[0]
    while True:
        start = now - span
        if start <= due:
            start, t = due, due
        else:
            t = after(start)
        window: deque[float] = deque(maxlen=CATCH_UP)
        seen = 0
        while t <= now:
            window.append(t)
            seen += 1
            t = after(t)
        if start == due:
            # The window reaches back to the backlog's start: counted whole.
            return window[0], seen - len(window), False
        if len(window) == CATCH_UP:
            break
        span *= 2
    first = window[0]
    spacing = (window[-1] - first) / (len(window) - 1)
    older = round((first - due) / spacing) if spacing > 0 else 0
    return first, max(older, 1), True
