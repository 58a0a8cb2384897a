"""``jobsched stats``: the store's counts, its queues, its schedules, and the
jobs waiting for something no member has (a key, a registered name).

Like the other reads it asks the store through :class:`~jobsched.JobStore`
(no SQL here) and unpickles nothing.
"""

from __future__ import annotations

import math

import click

from .._enums import JobStatus
from ..store._base import JobStore
from . import _format as fmt
from ._jobargs import json_option, print_json, run
from ._main import store_option

#: The statuses ``queue_counts`` counts, in the order the table shows them.
_LIVE = (JobStatus.PENDING, JobStatus.RUNNING, JobStatus.RETRY_WAIT)


async def _by_queue(store: JobStore) -> dict[str, dict[str, int]] | None:
    """queue -> status -> unfinished jobs, queues by name; None when the
    store cannot count per queue."""
    try:
        counts = await store.queue_counts()
    except NotImplementedError:
        return None
    by_queue: dict[str, dict[str, int]] = {}
    for (queue, status), n in sorted(counts.items(), key=lambda item: item[0][0]):
        by_queue.setdefault(queue, {})[status.value] = n
    return by_queue


@click.command()
@store_option
@json_option
def stats(store_url: str | None, as_json: bool) -> None:
    """Count jobs by status and executor, and the unfinished ones by queue;
    list schedules and jobs waiting for a key or for a member that knows their name."""

    async def action(store: JobStore) -> None:
        counts = await store.counts()
        by_queue = await _by_queue(store)
        schedules = await store.schedules()
        # Keys this command was not given (JOBSCHED_SECRET): their jobs wait
        # for a member that holds them, which no member may.
        unknown = {key.hex(): n for key, n in sorted((await store.waiting_for_keys()).items())}
        # Registered jobs no live member knows: a deploy's new job waits for
        # its workers (issue 33), and this says so instead of nothing.
        nameless = await store.waiting_for_unknown_names()
        executors = sorted({executor for _, executor in counts})
        by_status = {s.value: 0 for s in JobStatus}
        by_executor: dict[str, dict[str, int]] = {e: {} for e in executors}
        for (status, executor), n in counts.items():
            by_status[status.value] += n
            by_executor[executor][status.value] = n
        total = sum(by_status.values())
        if as_json:
            print_json(
                {
                    "total": total,
                    "by_status": by_status,
                    "by_executor": by_executor,
                    "by_queue": by_queue,
                    "schedules": [
                        {
                            "id": s.id,
                            "next_fire": fmt.iso_time(s.next_fire),
                            "paused": s.next_fire == math.inf,
                            "owner": s.owner,
                        }
                        for s in schedules
                    ],
                    "waiting_for_unknown_key": unknown,
                    "waiting_for_unknown_name": nameless,
                }
            )
            return
        statuses = [s.value for s in JobStatus]
        rows = [
            [e, *(str(counted.get(s, 0)) for s in statuses), str(sum(counted.values()))]
            for e, counted in by_executor.items()
        ]
        rows.append(["all", *(str(by_status[s]) for s in statuses), str(total)])
        numeric = range(1, len(statuses) + 2)
        lines = [fmt.table(["EXECUTOR", *(s.upper() for s in statuses), "TOTAL"], rows, numeric)]
        if by_queue:
            live = [s.value for s in _LIVE]
            queue_rows = [
                [fmt.one_line(q, 40), *(str(counted.get(s, 0)) for s in live)]
                for q, counted in by_queue.items()
            ]
            lines += [
                "",
                "unfinished jobs by queue:",
                fmt.table(
                    ["QUEUE", *(s.upper() for s in live)], queue_rows, range(1, len(live) + 1)
                ),
            ]
        if schedules:
            lines += ["", f"{len(schedules)} stored schedule(s):"]
            lines += [
                fmt.table(
                    ["SCHEDULE", "NEXT FIRE", "FIRING ON"],
                    [[s.id, fmt.next_fire(s.next_fire), s.owner or "-"] for s in schedules],
                )
            ]
        else:
            lines += ["", "no stored schedules"]
        if unknown:
            lines += [
                "",
                f"{sum(unknown.values())} job(s) wait for a key this command does not hold "
                "(JOBSCHED_SECRET); a member started with that key runs them:",
                fmt.table(
                    ["KEY ID", "JOBS"], [[kid, str(n)] for kid, n in unknown.items()], range(1, 2)
                ),
            ]
        if nameless:
            lines += [""]
            lines += [
                f"waiting for a member that knows {fmt.printable(name)}: {n}"
                for name, n in nameless.items()
            ]
        click.echo("\n".join(lines))

    run(store_url, action)
