"""``jobsched worker --keep OUTCOME=AGE`` and ``--max-finished N``: a
``js.Retention`` from the command line, for a worker without an app (or
over the app's, field by field)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import click

from .._retention import Retention

F = TypeVar("F", bound=Callable[..., Any])

if TYPE_CHECKING:
    # Generic from click 8.4 on (see _main): for the type checkers only.
    AgeParam = click.ParamType[tuple[str, float]]
else:
    AgeParam = click.ParamType

#: The outcomes ``--keep`` names: Retention's age fields.
OUTCOMES = ("completed", "failed", "cancelled")
_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


class KeepType(AgeParam):
    """``OUTCOME=AGE``: an outcome and seconds, or a number with s, m, h or d."""

    name = "OUTCOME=AGE"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> tuple[str, float]:
        if isinstance(value, tuple):
            return value
        outcome, sep, age = str(value).partition("=")
        outcome, age = outcome.strip(), age.strip().lower()
        unit = _UNITS.get(age[-1:])
        number = age[:-1] if unit is not None else age
        try:
            seconds = float(number) * (unit or 1.0)
        except ValueError:
            seconds = math.nan
        if not sep or outcome not in OUTCOMES or not (0 < seconds < math.inf):
            self.fail(
                f"{value!r} is not OUTCOME=AGE with OUTCOME one of {', '.join(OUTCOMES)} and "
                "AGE a positive number of seconds, or of minutes, hours or days with m, h or d "
                "(e.g. failed=7d)",
                param,
                ctx,
            )
        return outcome, seconds


def keep_options(command: F) -> F:
    """The worker's ``--keep`` and ``--max-finished``."""
    command = click.option(
        "--max-finished",
        type=click.IntRange(min=0),
        metavar="N",
        help="At most N finished jobs kept, oldest first whatever their outcome (with --keep, "
        "in place of --history-limit).",
    )(command)
    return click.option(
        "--keep",
        "keep",
        type=KeepType(),
        multiple=True,
        help="Keep finished jobs of OUTCOME (completed, failed, cancelled; failed covers "
        "timed out) for AGE, e.g. --keep completed=1d --keep failed=30d; over the app's "
        "retention.",
    )(command)


def retention_over(
    base: Retention | None, keep: Mapping[str, float], max_finished: int | None
) -> Retention | None:
    """The app's retention (``base``) with the command line's fields over it;
    None where neither gives one."""
    fields: dict[str, Any] = dict(keep)
    if max_finished is not None:
        fields["max_finished"] = max_finished
    if not fields:
        return base
    return dataclasses.replace(base, **fields) if base is not None else Retention(**fields)
