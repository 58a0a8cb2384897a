"""The schedule commands: ``schedules`` and ``schedule pause|resume|trigger|remove``.

``schedules`` and ``pause`` and ``remove`` read and change the store's rows
alone. ``resume`` needs the trigger in the schedule's signed payload (the
store's key, ``JOBSCHED_SECRET``), and ``trigger`` calls its factory, so the
factory's module must import here (``--import``, or ``PYTHONPATH``): they act
through a producer scheduler (no workers), as an application would.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import click

from .._time._scheduleinfo import ScheduleInfo, from_store
from ..store._base import JobStore
from ..store._codec import Codec
from . import _format as fmt
from ._main import UserError, opened, store_option


def _run(url: str | None, action: Callable[[JobStore], Awaitable[None]]) -> None:
    async def main() -> None:
        async with opened(url) as store:
            await action(store)

    anyio.run(main)


async def listed(store: JobStore) -> list[tuple[ScheduleInfo, str | None]]:
    """Every stored schedule, soonest first (paused last), with the member
    firing it now, if one is."""
    codec = Codec(store.secrets)
    rows = await store.schedules()
    found = [(from_store(codec, r.id, r.payload, r.next_fire, r.last_job), r.owner) for r in rows]
    return sorted(found, key=lambda pair: (pair[0].next_fire is None, pair[0].id))


def as_dict(info: ScheduleInfo, owner: str | None) -> dict[str, Any]:
    """A schedule as ``jobsched schedules --json`` prints it."""
    fire = info.next_fire
    return {
        "id": info.id,
        "kind": info.kind,
        "spec": info.spec,
        "timezone": info.timezone,
        "misfire": info.misfire,
        "next_fire": None if fire is None else fmt.iso_time(fire.timestamp()),
        "paused": info.paused,
        "last_job_id": info.last_job_id,
        "firing_on": owner,
        "problem": info.problem,
    }


def spec_text(info: ScheduleInfo) -> str:
    if info.kind == "interval" and isinstance(info.spec, float | int):
        return f"every {info.spec:g}s"
    return "-" if info.spec is None else str(info.spec)


@click.command()
@store_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON, for scripts.")
def schedules(store_url: str | None, as_json: bool) -> None:
    """List the stored schedules: kind, spec, misfire, next fire, paused, last job."""

    async def action(store: JobStore) -> None:
        found = await listed(store)
        if as_json:
            click.echo(fmt.json_text([as_dict(info, owner) for info, owner in found]))
            return
        if not found:
            click.echo("no stored schedules")
            return
        rows = [
            [
                info.id,
                info.kind,
                spec_text(info),
                info.timezone or "-",
                info.misfire or "-",
                "paused" if info.next_fire is None else fmt.utc_time(info.next_fire.timestamp()),
                info.last_job_id or "-",
                owner or "-",
            ]
            for info, owner in found
        ]
        lines = [
            fmt.table(
                [
                    "SCHEDULE",
                    "KIND",
                    "SPEC",
                    "TIMEZONE",
                    "MISFIRE",
                    "NEXT FIRE",
                    "LAST JOB",
                    "FIRING ON",
                ],
                rows,
            )
        ]
        for info, _ in found:
            if info.problem is not None:
                lines.append(fmt.printable(f"{info.id}: cannot be read here: {info.problem}"))
        click.echo("\n".join(lines))

    _run(store_url, action)


@click.group()
def schedule() -> None:
    """Pause, resume, trigger or remove a stored schedule."""


def _schedule_id(value: str) -> str:
    if not value:
        raise UserError("the schedule id is empty; 'jobsched schedules' lists the ids")
    return value


async def _known(store: JobStore, schedule_id: str) -> ScheduleInfo:
    for info, _ in await listed(store):
        if info.id == schedule_id:
            return info
    raise UserError(
        f"no schedule {schedule_id!r} in the store {store.url}; 'jobsched schedules' lists them"
    )


@schedule.command()
@click.argument("schedule_id", metavar="ID")
@store_option
def pause(schedule_id: str, store_url: str | None) -> None:
    """Stop a schedule firing (on every member) until 'schedule resume'."""

    async def action(store: JobStore) -> None:
        info = await _known(store, _schedule_id(schedule_id))
        if info.paused:
            click.echo(f"{fmt.printable(schedule_id)} is paused already")
            return
        if not await store.pause_schedule(schedule_id):
            raise UserError(f"no schedule {schedule_id!r} in the store {store.url}")
        click.echo(f"{fmt.printable(schedule_id)} paused")

    _run(store_url, action)


@schedule.command()
@click.argument("schedule_id", metavar="ID")
@store_option
def remove(schedule_id: str, store_url: str | None) -> None:
    """Delete a stored schedule (the jobs it made stay)."""

    async def action(store: JobStore) -> None:
        await _known(store, _schedule_id(schedule_id))
        await store.remove_schedules([schedule_id])
        click.echo(f"{fmt.printable(schedule_id)} removed")

    _run(store_url, action)


@schedule.command()
@click.argument("schedule_id", metavar="ID")
@store_option
def resume(schedule_id: str, store_url: str | None) -> None:
    """Fire a paused schedule again, from its next fire after now (missed fires are skipped)."""

    async def action(s: Any) -> None:
        was = await _known(s._link.store, schedule_id)
        await s.resume_schedule(schedule_id)
        if not was.paused:
            click.echo(f"{fmt.printable(schedule_id)} is not paused")
            return
        (info,) = [i for i in await s.schedules() if i.id == schedule_id] or [was]
        fire = "-" if info.next_fire is None else fmt.utc_time(info.next_fire.timestamp())
        click.echo(f"{fmt.printable(schedule_id)} resumed; next fire {fire}")

    _schedule_id(schedule_id)
    _producer(store_url, action)


@schedule.command()
@click.argument("schedule_id", metavar="ID")
@store_option
def trigger(schedule_id: str, store_url: str | None) -> None:
    """Submit one job from the schedule now; its regular fires are unchanged.

    The schedule's factory runs here: its module must be importable (PYTHONPATH).
    """

    async def action(s: Any) -> None:
        await _known(s._link.store, schedule_id)
        job_id = await s.trigger_schedule(schedule_id)
        click.echo(f"{fmt.printable(schedule_id)} triggered: {job_id} (a worker runs it)")

    _schedule_id(schedule_id)
    _producer(store_url, action)


def _producer(url: str | None, action: Callable[[Any], Awaitable[None]]) -> None:
    """Run ``action`` on a producer scheduler (no workers) on the store."""
    from .._engine._scheduler import JobScheduler

    async def main() -> None:
        async with opened(url) as store:  # a store that exists, or the one-line error
            del store
        async with JobScheduler(num_workers=0, store=url or "") as s:
            await action(s)

    anyio.run(main)
