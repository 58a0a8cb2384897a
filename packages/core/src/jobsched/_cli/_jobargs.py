"""What the job commands share: the ``JOB_ID`` and ``--status`` types, the
job a command names, fetched, and running one action on the open store.
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable
from datetime import datetime, timezone
from typing import Any

import anyio
import click

from .._enums import JobStatus
from .._jobs._ids import check_own_id, own_number
from ..store._args import LARGEST
from ..store._base import JobStore
from ..store._rows import StoredJob
from . import _format as fmt
from ._main import FloatParam, IntParam, StatusParam, UserError, opened


class JobRef(int):
    """A job's number as the command line named it: ``text`` is what to call it
    in messages (``job-12``, or the id given at submit as typed)."""

    text: str

    def __new__(cls, number: int, text: str) -> JobRef:
        ref = super().__new__(cls, number)
        ref.text = text
        return ref


class JobIdType(IntParam):
    """``job-12`` (as the scheduler prints ids) or ``12``: the job's number; or an
    id given at submit (``order-42``), or the number such a job is listed by
    (``job--5356850041204204794``)."""

    name = "JOB_ID"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> JobRef:
        if isinstance(value, JobRef):
            return value
        text = str(value)
        digits = text[4:] if text.startswith("job-") else text
        well_formed = digits.isascii() and digits.isdigit() and digits[0] != "0"
        if well_formed and len(digits) < 20 and int(digits) <= LARGEST:
            return JobRef(int(digits), fmt.job_id(int(digits)))
        if digits.startswith("-") and digits[1:].isascii() and digits[1:].isdigit():
            number = -int(digits[1:])  # an own id's number, as listed
            return JobRef(number, fmt.job_id(number))
        try:
            return JobRef(own_number(check_own_id(text)), repr(text))
        except (TypeError, ValueError):
            pass
        self.fail(
            f"{text!r} is not a job id: expected job-<n>, as 'jobsched jobs' shows, or an "
            "id given at submit",
            param,
            ctx,
        )


class StatusType(StatusParam):
    """A status value (``failed``, ``timed_out``; any case, ``-`` for ``_``)."""

    name = "STATUS"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> JobStatus:
        if isinstance(value, JobStatus):
            return value
        try:
            return JobStatus(str(value).strip().lower().replace("-", "_"))
        except ValueError:
            known = ", ".join(s.value for s in JobStatus)
            self.fail(f"{value!r} is not a status; use one of {known}", param, ctx)


_AGO = re.compile(r"(\d+(?:\.\d+)?)\s*([smhd])")
_UNIT = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


class SinceType(FloatParam):
    """A time ago (``30s``, ``15m``, ``2h``, ``3d``) or a time (UTC unless it
    has an offset), as wall-clock seconds."""

    name = "WHEN"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        if isinstance(value, float):
            return value
        text = str(value).strip()
        ago = _AGO.fullmatch(text.lower())
        if ago:
            return time.time() - float(ago.group(1)) * _UNIT[ago.group(2)]
        # Python 3.10's fromisoformat() refuses ISO 8601's "Z" for UTC.
        iso = text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text
        try:
            when = datetime.fromisoformat(iso)
        except ValueError:
            self.fail(
                f"{text!r} is neither a time ago (30s, 15m, 2h, 3d) nor a time "
                "(2026-12-01 14:00, ISO 8601)",
                param,
                ctx,
            )
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)  # the CLI shows UTC: it reads UTC
        return when.timestamp()


def run(url: str | None, action: Callable[[JobStore], Awaitable[None]]) -> None:
    async def main() -> None:
        async with opened(url) as store:
            await action(store)

    anyio.run(main)


def named(job: int) -> str:
    """What to call the job the command line named: as typed, for an own id."""
    return job.text if isinstance(job, JobRef) else fmt.job_id(job)


async def fetch(store: JobStore, number: int) -> StoredJob:
    job = await store.fetch(int(number))  # a plain int: a driver may not adapt a subclass
    if job is None:
        raise UserError(
            f"no job {named(number)} in {store.url}: never submitted there, or pruned "
            "(history_limit)"
        )
    return job


def print_json(value: object) -> None:
    click.echo(fmt.json_text(value))


json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON, for scripts.")


def arg_filters(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> dict[str, str]:
    """``--arg KEY=VALUE`` options as parameter name -> text, checked."""
    del ctx, param
    filters: dict[str, str] = {}
    for value in values:
        key, sep, text = value.partition("=")
        if not sep:
            raise click.BadParameter(
                f"{value!r} has no '='; write KEY=VALUE, e.g. --arg to=user5@example.com"
            )
        key = key.strip()
        if not key:
            raise click.BadParameter(
                f"{value!r} has no KEY before '='; name a parameter of the job "
                "function, e.g. --arg to=user5@example.com"
            )
        if not key.isidentifier():
            raise click.BadParameter(
                f"{key!r} in {value!r} is not a parameter name; KEY is the name of a "
                "parameter of the job function, e.g. to"
            )
        if key in filters and filters[key] != text:
            raise click.BadParameter(
                f"--arg {key}= is given twice ({filters[key]!r} and {text!r}); no job "
                "matches both: give it once"
            )
        filters[key] = text
    return filters
