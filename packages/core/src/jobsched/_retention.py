"""How long finished jobs are kept: :class:`Retention`, and the rule the
memory table and the stores' ``prune`` apply (issue 38).

A single count (``history_limit``) let a busy day's completions push out
yesterday's failures before anyone retried them; a retention by age per
outcome keeps failures for as long as an operator needs them, whatever the
completions do. ``history_limit`` stays the rule where no retention is given:
it is ``Retention(max_finished=history_limit)``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any, Union

from ._enums import JobStatus

if TYPE_CHECKING:
    # Not at run time: `import jobsched` does not load datetime (see
    # _engine/_state.py); a timedelta is known by its total_seconds().
    from datetime import timedelta

#: An age as the caller may give it.
Age = Union[float, int, "timedelta", None]

_AGES = ("completed", "failed", "cancelled")
#: The statuses each age field covers: ``failed`` covers TIMED_OUT too.
_COVERS: dict[str, tuple[JobStatus, ...]] = {
    "completed": (JobStatus.COMPLETED,),
    "failed": (JobStatus.FAILED, JobStatus.TIMED_OUT),
    "cancelled": (JobStatus.CANCELLED,),
}


@dataclasses.dataclass(frozen=True)
class Retention:
    """How long finished jobs are kept, per outcome, and at most how many.

    Each age is seconds (a number or a :class:`~datetime.timedelta`) since
    the job finished; ``None`` keeps that outcome's jobs for ever, bounded
    only by ``max_finished``. The oldest finished jobs go first.

    :param completed: how long COMPLETED jobs are kept.
    :param failed: how long FAILED and TIMED_OUT jobs are kept.
    :param cancelled: how long CANCELLED jobs are kept.
    :param max_finished: the most finished jobs kept, whatever their
        outcome (None: no count bound).
    :raises ValueError: an age is not a positive finite duration, or
        ``max_finished`` is not an integer >= 0.
    """

    completed: Age = None
    failed: Age = None
    cancelled: Age = None
    max_finished: int | None = None

    def __post_init__(self) -> None:
        for name in _AGES:
            value = getattr(self, name)
            if value is None:
                continue
            seconds = _seconds(value)
            if (
                isinstance(seconds, bool)
                or not isinstance(seconds, (int, float))
                or not seconds > 0
                or seconds == math.inf
            ):
                raise ValueError(
                    f"Retention {name}={value!r}: give a positive finite age in seconds or "
                    f"a timedelta (e.g. {name}=timedelta(days=7)), or None to keep "
                    f"{name} jobs until max_finished pushes them out"
                )
        bound = self.max_finished
        if bound is not None and (
            isinstance(bound, bool) or not isinstance(bound, int) or bound < 0
        ):
            raise ValueError(
                f"Retention max_finished={bound!r}: give an integer >= 0 (the most finished "
                f"jobs kept, oldest dropped first), or None for no count bound"
            )

    def ages(self) -> dict[JobStatus, float]:
        """Seconds each terminal status is kept, for the statuses with an age."""
        ages: dict[JobStatus, float] = {}
        for name in _AGES:
            value = getattr(self, name)
            if value is not None:
                seconds = float(_seconds(value))
                for status in _COVERS[name]:
                    ages[status] = seconds
        return ages

    def cutoffs(self, now: float) -> dict[JobStatus, float]:
        """Status -> the finish time before which its jobs go, at ``now``
        (the clock the jobs' ``finished_at`` was read on)."""
        return {status: now - age for status, age in self.ages().items()}


def _seconds(value: Any) -> Any:
    total = getattr(value, "total_seconds", None)
    return total() if callable(total) else value


def check_retention(retention: object, history_limit: int) -> Retention:
    """The rule a scheduler keeps finished jobs by: ``retention``, or
    ``history_limit`` as a count where none is given.

    :raises TypeError: ``retention`` is not a :class:`Retention`.
    :raises ValueError: both are given (``history_limit`` changed from its
        default): ``max_finished`` is the count bound of a retention.
    """
    if retention is None:
        return Retention(max_finished=history_limit)
    if not isinstance(retention, Retention):
        raise TypeError(
            f"retention must be a jobsched.Retention, got {retention!r} "
            f"(e.g. retention=js.Retention(completed=86400, failed=timedelta(days=7)))"
        )
    if history_limit != HISTORY_LIMIT:
        raise ValueError(
            f"history_limit={history_limit!r} and retention= both bound the history: "
            f"give the count as Retention(max_finished={history_limit!r}) and leave "
            f"history_limit out"
        )
    return retention


#: ``JobScheduler``'s default ``history_limit``.
HISTORY_LIMIT = 10_000
