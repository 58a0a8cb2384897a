"""The ``members`` command: every scheduler on the store as it last reported
itself, with the schema level its code writes. During a rolling upgrade it
tells which workers still run code older than workflows: a producer refuses
workflow features until none is live (docs/fleet.md, "Upgrading a fleet").
It reads the members list alone, so it needs neither the jobs' code nor the
store's key.
"""

from __future__ import annotations

import time
from typing import Any

import anyio
import click

from ..store._base import JobStore
from ..store._rows import MEMBER_EVERY, Member
from . import _format as fmt
from ._main import opened, store_option

#: A member is live within three missed reports (as the dashboard marks it).
LIVE_WITHIN = 3 * MEMBER_EVERY


def state(member: Member, now: float, need: int | None) -> str:
    """``live``, ``stale`` (no report in LIVE_WITHIN seconds), and ``old`` for a
    live worker whose level is below the store's workflow level."""
    if now - member.seen_at > LIVE_WITHIN:
        return "stale"
    old = member.workers > 0 and need is not None and (member.level or 0) < need
    return "old: upgrade it" if old else "live"


def as_dict(member: Member, now: float, need: int | None) -> dict[str, Any]:
    """A member as ``jobsched members --json`` prints it."""
    return {
        "owner": member.owner,
        "workers": member.workers,
        "busy": member.busy,
        "queues": None if member.queues is None else list(member.queues),
        "level": member.level,
        "started_at": member.started_at,
        "seen_at": member.seen_at,
        "state": state(member, now, need).partition(":")[0],
    }


@click.command()
@store_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON, for scripts.")
def members(store_url: str | None, as_json: bool) -> None:
    """List the schedulers on the store: workers, queues, the schema level of their code."""

    async def main() -> None:
        async with opened(store_url) as store:
            await show(store, as_json)

    anyio.run(main)


async def show(store: JobStore, as_json: bool) -> None:
    found = await store.members()
    need = store.workflow_level
    now = time.time()
    if as_json:
        click.echo(fmt.json_text([as_dict(m, now, need) for m in found]))
        return
    if not found:
        click.echo("no members: no scheduler reported to this store in the last day")
        return
    rows = [
        [
            fmt.printable(m.owner),
            str(m.workers),
            str(m.busy),
            "all" if m.queues is None else fmt.printable(", ".join(m.queues)),
            "none" if m.level is None else str(m.level),
            f"{max(now - m.seen_at, 0.0):.0f}s ago",
            state(m, now, need),
        ]
        for m in found
    ]
    headers = ["OWNER", "WORKERS", "BUSY", "QUEUES", "LEVEL", "SEEN", "STATE"]
    click.echo(fmt.table(headers, rows, right=(1, 2, 4)))
    if any(row[-1].startswith("old") for row in rows):
        click.echo(
            f"workflow features need level {need} on every live worker: upgrade the old "
            "ones first (a producer refuses them meanwhile)"
        )
