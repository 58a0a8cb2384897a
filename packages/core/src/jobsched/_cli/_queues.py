"""The queue commands: ``queues`` and ``queue pause|resume NAME``.

They read and change the store's rows alone (counts, pauses, the members
list), so they need neither the jobs' code nor the store's key. A pause is
honoured by every member's next claim (running attempts finish).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import click

from .._jobs._options import check_queue
from .._queueinfo import LIVE, QueueInfo, queue_infos
from ..store._base import JobStore
from . import _format as fmt
from ._main import UserError, opened, store_option

#: What the SERVED BY column says of a queue no live member serves.
UNSERVED = "none: no live member serves it"


def _run(url: str | None, action: Callable[[JobStore], Awaitable[None]]) -> None:
    async def main() -> None:
        async with opened(url) as store:
            await action(store)

    anyio.run(main)


async def listed(store: JobStore) -> list[QueueInfo]:
    """The store's queues as ``JobScheduler.queues()`` gives them."""
    try:
        members = await store.members()
    except NotImplementedError:
        members = []  # a store without a members list: nobody is known to serve
    counts = await store.queue_counts()
    return queue_infos(counts, await store.paused_queues(), members, time.time())


def as_dict(info: QueueInfo) -> dict[str, Any]:
    """A queue as ``jobsched queues --json`` prints it."""
    return {
        "name": info.name,
        "paused": info.paused,
        "counts": {status.value: n for status, n in info.counts.items()},
        "served_by": list(info.served_by),
    }


@click.command()
@store_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON, for scripts.")
def queues(store_url: str | None, as_json: bool) -> None:
    """List the queues: paused, unfinished jobs, and the live members serving each."""

    async def action(store: JobStore) -> None:
        found = await listed(store)
        if as_json:
            click.echo(fmt.json_text([as_dict(info) for info in found]))
            return
        if not found:
            click.echo("no queues: no unfinished job, pause or live member")
            return
        rows = [
            [
                fmt.printable(info.name),
                "paused" if info.paused else "-",
                *(str(info.counts.get(status, 0)) for status in LIVE),
                ", ".join(info.served_by) or UNSERVED,
            ]
            for info in found
        ]
        headers = ["QUEUE", "PAUSED", *(s.value.upper() for s in LIVE), "SERVED BY"]
        click.echo(fmt.table(headers, rows, right=(2, 3, 4)))

    _run(store_url, action)


@click.group()
def queue() -> None:
    """Pause or resume a queue, for every member."""


def _name(value: str) -> str:
    try:
        return check_queue(value)
    except ValueError as exc:
        raise UserError(f"{exc}; 'jobsched queues' lists the queues") from None


@queue.command()
@click.argument("name", metavar="NAME")
@store_option
def pause(name: str, store_url: str | None) -> None:
    """Stop every member claiming the queue's jobs until 'queue resume' (running ones finish)."""
    _name(name)

    async def action(store: JobStore) -> None:
        if await store.pause_queue(name):
            click.echo(f"{name} paused: no member claims its jobs until 'jobsched queue resume'")
        else:
            click.echo(f"{name} is paused already")

    _run(store_url, action)


@queue.command()
@click.argument("name", metavar="NAME")
@store_option
def resume(name: str, store_url: str | None) -> None:
    """Let members claim the queue's jobs again."""
    _name(name)

    async def action(store: JobStore) -> None:
        if await store.resume_queue(name):
            click.echo(f"{name} resumed")
        else:
            click.echo(f"{name} is not paused")

    _run(store_url, action)
