"""The commands that change jobs: ``cancel`` and ``retry``.

Both act through the :class:`~jobsched.JobStore` interface on the store's
rows (no job is unpickled), then say what the store did.
"""

from __future__ import annotations

import time

import click

from .._enums import JobStatus
from ..store._base import JobStore
from . import _format as fmt
from ._jobargs import JobIdType, StatusType, fetch, named, run
from ._main import UserError, store_option

#: What ``retry`` may requeue.
RETRYABLE = (JobStatus.FAILED, JobStatus.TIMED_OUT, JobStatus.CANCELLED)


@click.command()
@click.argument("job", type=JobIdType(), metavar="JOB_ID")
@store_option
def cancel(job: int, store_url: str | None) -> None:
    """Cancel a job: at once if it waits, within a second if it runs."""

    async def action(store: JobStore) -> None:
        stored = await fetch(store, job)
        name = named(job)
        if stored.status.is_terminal:
            raise UserError(f"{name} already ended {stored.status.value}: nothing to cancel")
        await store.cancel([int(job)], time.time())
        after = await fetch(store, job)
        if after.status is JobStatus.RUNNING:
            click.echo(
                f"{name} is running on {fmt.printable(after.owner or '-')}: asked it to stop "
                "(its worker cancels it within a second)"
            )
        elif after.status is JobStatus.CANCELLED:
            click.echo(f"{name} cancelled")
        else:
            click.echo(f"{name} {after.status.value}")

    run(store_url, action)


#: ``retry --all`` looks at this many jobs a page and requeues each page's at once.
RETRY_PAGE = 1_000


@click.command()
@click.argument("job", type=JobIdType(), metavar="[JOB_ID]", required=False)
@store_option
@click.option(
    "--all",
    "every",
    is_flag=True,
    help="Retry every failed, timed-out and cancelled job that matches the filters below.",
)
@click.option(
    "--status",
    "statuses",
    type=StatusType(),
    multiple=True,
    metavar="S",
    help="With --all: only jobs with status S (failed, timed_out, cancelled); repeatable.",
)
@click.option("--name", metavar="NAME", help="With --all: only jobs with this name.")
@click.option("--executor", metavar="NAME", help="With --all: only jobs on this executor.")
@click.option("--tenant", metavar="T", help="With --all: only this tenant's jobs.")
def retry(
    job: int | None,
    store_url: str | None,
    every: bool,
    statuses: tuple[JobStatus, ...],
    name: str | None,
    executor: str | None,
    tenant: str | None,
) -> None:
    """Run a failed, timed-out or cancelled job again (or, with --all, every one that matches)."""
    filtered = bool(statuses) or name is not None or executor is not None or tenant is not None
    if every and job is not None:
        raise UserError("give a JOB_ID or --all, not both")
    if filtered and not every:
        raise UserError(
            "--status, --name, --executor and --tenant select jobs for --all; add --all"
        )
    if not every and job is None:
        raise UserError(
            "give a JOB_ID to retry one job, or --all (with --status, --name, --executor, "
            "--tenant) to retry every one that matches"
        )
    wrong = [s.value for s in statuses if s not in RETRYABLE]
    if wrong:
        raise UserError(
            f"--status {', '.join(wrong)}: only failed, timed_out or cancelled jobs can be retried"
        )

    async def retry_all(store: JobStore) -> None:
        before: int | None = None
        requeued = 0
        while True:
            page = await store.job_page(
                statuses=statuses or RETRYABLE,
                name=name,
                executor=executor,
                tenant=tenant,
                limit=RETRY_PAGE,
                before=before,
                scan=RETRY_PAGE,
            )
            if page.jobs:
                requeued += len(await store.retry([j.id for j in page.jobs], time.time()))
            if page.next_before is None:
                break
            before = page.next_before
        click.echo(f"{requeued} job(s) queued again" if requeued else "no job to retry matches")

    async def retry_one(store: JobStore) -> None:
        assert job is not None
        stored = await fetch(store, job)
        label = named(job)
        if stored.status not in RETRYABLE:
            raise UserError(
                f"{label} is {stored.status.value}: only failed, timed_out or cancelled jobs "
                "can be retried"
            )
        if job not in await store.retry([int(job)], time.time()):
            after = await fetch(store, job)
            raise UserError(f"{label} is {after.status.value} now: not retried")
        click.echo(
            f"{label} queued again (attempt {stored.attempts + 1} runs when a worker is free)"
        )

    run(store_url, retry_all if every else retry_one)
