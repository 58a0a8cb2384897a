"""The command that lists the store's jobs: ``jobs`` (``show``: _show.py,
``stats``: _stats.py, workflows: _workflows.py).

Each opens the store, asks it through the :class:`~jobsched.JobStore`
interface (no SQL here), prints, and closes it. None unpickles a job: they
read what the store keeps beside the payload, so they need neither the jobs'
modules nor the store's secret. A registered job's arguments are JSON:
printed as they are, nothing unpickled.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import click

from .._enums import JobStatus
from .._jobs._options import check_queue
from ..store._args import LARGEST
from ..store._base import JobStore
from ..store._rows import Attempt, StoredJob
from . import _format as fmt
from ._jobargs import SinceType, StatusType, arg_filters, json_option, print_json, run
from ._main import Count, UserError, store_option

#: The most retry-waiting jobs of one listing whose attempts are read for
#: their RAN (a read each): a listing of thousands stays a few reads.
HISTORY_READS = 100


@click.command()
@store_option
@click.option(
    "--status",
    "statuses",
    type=StatusType(),
    multiple=True,
    metavar="S",
    help="Only jobs with status S (pending, running, retry_wait, completed, failed, "
    "timed_out, cancelled); repeat it for several.",
)
@click.option(
    "--limit",
    type=Count(max=LARGEST),
    default=50,
    show_default=True,
    metavar="N",
    help="At most N jobs, the newest.",
)
@click.option(
    "--queue",
    metavar="NAME",
    default=None,
    callback=lambda ctx, param, value: _queue_name(value),
    help="Only jobs of queue NAME.",
)
@click.option(
    "--arg",
    "args",
    metavar="KEY=VALUE",
    multiple=True,
    callback=arg_filters,
    help="Only registered jobs whose argument KEY (a parameter name) is VALUE: a string "
    "as it is, a number or boolean as its JSON (n=5, urgent=true); repeat it for several, "
    "all must match.",
)
@click.option("--name", metavar="NAME", default=None, help="Only jobs named NAME (exactly).")
@click.option(
    "--tenant", metavar="TENANT", default=None, help="Only jobs of tenant TENANT (exactly)."
)
@click.option(
    "--since",
    type=SinceType(),
    default=None,
    metavar="WHEN",
    help="Only jobs submitted since WHEN: a time ago (30s, 15m, 2h, 3d) or a UTC time "
    "(2026-12-01 14:00, or ISO 8601 with an offset).",
)
@json_option
def jobs(
    store_url: str | None,
    statuses: tuple[JobStatus, ...],
    limit: int,
    queue: str | None,
    args: dict[str, str],
    name: str | None,
    tenant: str | None,
    since: float | None,
    as_json: bool,
) -> None:
    """List jobs, newest first. A pending job shows as ready, delayed or blocked."""

    async def action(store: JobStore) -> None:
        filters = Filters(queue, args, name, tenant, since)
        if not filters.any:
            found = await store.jobs(statuses=statuses, limit=limit)
        else:
            found = await _filtered(store, statuses, limit, filters)
        now = time.time()
        # A retry-waiting job's RAN is its last attempt's: one read each,
        # for the first HISTORY_READS of them (past that, RAN is "-").
        waiting = [job for job in found if job.status is JobStatus.RETRY_WAIT]
        histories = await _histories(store, waiting[:HISTORY_READS])
        if as_json:
            print_json([fmt.job_json(job, now, histories.get(job.id, ())) for job in found])
            return
        if not found:
            click.echo(
                "no jobs"
                + (" with that status" if statuses else "")
                + (f" on queue {fmt.printable(queue)!r}" if queue is not None else "")
                + (f" named {fmt.printable(name)!r}" if name is not None else "")
                + (f" of tenant {fmt.printable(tenant)!r}" if tenant is not None else "")
                + (" with those arguments" if args else "")
                + (f" submitted since {fmt.utc_time(since)}" if since is not None else "")
            )
            return
        rows = [
            [
                fmt.job_label(job),
                fmt.one_line(job.name, 30),
                fmt.one_line(job.queue, 20),
                fmt.shown_status(job, now),
                str(job.attempts),
                fmt.utc_time(job.submitted_at),
                fmt.utc_time(fmt.due(job)),
                fmt.duration(fmt.last_ran(job, histories.get(job.id, ()), now)),
                fmt.one_line(job.last_error),
            ]
            for job in found
        ]
        headers = [
            "JOB",
            "NAME",
            "QUEUE",
            "STATUS",
            "ATTEMPTS",
            "SUBMITTED",
            "DUE",
            "RAN",
            "LAST ERROR",
        ]
        click.echo(fmt.table(headers, rows, right=[4]))

    run(store_url, action)


def _queue_name(value: str | None) -> str | None:
    if value is None:
        return None
    try:
        return check_queue(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


@dataclass(frozen=True)
class Filters:
    """The filters of ``jobsched jobs`` beyond the status."""

    queue: str | None
    args: dict[str, str]
    name: str | None
    tenant: str | None
    #: Wall-clock seconds: only jobs submitted at or after it.
    since: float | None

    @property
    def any(self) -> bool:
        return bool(
            self.queue is not None
            or self.args
            or self.name is not None
            or self.tenant is not None
            or self.since is not None
        )


async def _filtered(
    store: JobStore,
    statuses: tuple[JobStatus, ...],
    limit: int,
    filters: Filters,
) -> list[StoredJob]:
    """The newest ``limit`` jobs that match ``filters``: pages of the
    store's ``job_page`` until enough are found or none is left (an
    operator's look, so it may read as far back as the jobs go). With
    ``since`` too: ids do not follow the submits across members (each
    numbers from its own block of ids, so a quiet member's job of a minute
    ago can sit below a busy one's of last week), so no page of older jobs
    says that none newer is left below it."""
    found: list[StoredJob] = []
    before: int | None = None
    # Only the filters given: a store written before one takes the others.
    named: dict[str, object] = {
        key: value
        for key, value in (
            ("queue", filters.queue),
            ("name", filters.name),
            ("tenant", filters.tenant),
        )
        if value is not None
    }
    if filters.args:
        named["args"] = filters.args
    since = filters.since
    while len(found) < limit:
        try:
            page = await store.job_page(
                statuses=statuses,
                limit=limit - len(found),
                before=before,
                scan=10_000,
                **named,  # type: ignore[arg-type]
            )
        except TypeError as exc:  # a store written before queues or arguments
            what = "argument" if filters.args else "queue"
            raise UserError(f"this store cannot filter jobs by {what} ({exc})") from None
        if since is None:
            found += page.jobs
        else:
            found += [job for job in page.jobs if job.submitted_at >= since]
        if page.next_before is None:
            break
        before = page.next_before
    return found[:limit]


async def _histories(store: JobStore, jobs: list[StoredJob]) -> dict[int, list[Attempt]]:
    """The attempts of ``jobs``; none from a store that keeps no attempts (RAN is "-")."""
    try:
        return {job.id: await store.attempts(job_id=job.id) for job in jobs}
    except NotImplementedError:
        return {}
