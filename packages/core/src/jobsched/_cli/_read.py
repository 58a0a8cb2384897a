"""The store commands: ``jobs``, ``show``, ``cancel``, ``retry``, ``stats``.

Each opens the store, asks it through the :class:`~jobsched.JobStore`
interface (no SQL here), prints, and closes it. None unpickles a job: they
read what the store keeps beside the payload, so they need neither the jobs'
modules nor the store's secret. Only ``show`` unpickles anything: a completed
job's result, once its signature verifies (else it says why).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import click

from .._enums import JobStatus
from .._jobs._job import check_own_id, own_number
from ..store._args import LARGEST
from ..store._base import JobStore, StoredJob
from . import _format as fmt
from ._main import Count, IntParam, StatusParam, UserError, cli, opened, store_option

#: What ``retry`` may requeue.
RETRYABLE = (JobStatus.FAILED, JobStatus.TIMED_OUT, JobStatus.CANCELLED)


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


def _run(url: str | None, action: Callable[[JobStore], Awaitable[None]]) -> None:
    async def main() -> None:
        async with opened(url) as store:
            await action(store)

    anyio.run(main)


def _named(job: int) -> str:
    """What to call the job the command line named: as typed, for an own id."""
    return job.text if isinstance(job, JobRef) else fmt.job_id(job)


async def _fetch(store: JobStore, number: int) -> StoredJob:
    job = await store.fetch(int(number))  # a plain int: a driver may not adapt a subclass
    if job is None:
        raise UserError(
            f"no job {_named(number)} in {store.url}: never submitted there, or pruned "
            "(history_limit)"
        )
    return job


def _result(store: JobStore, job: StoredJob) -> tuple[str | None, str | None]:
    """A completed job's result as (its repr, cut at RESULT_WIDTH; why it
    cannot be shown), both None for any other job.

    Only a result whose signature verifies under the store's keys is
    unpickled (the codec's ``loads``); one that does not verify, or does not
    load here, says why instead.
    """
    from ..store._codec import BadSignature, Codec, Unloadable

    if job.status is not JobStatus.COMPLETED:
        return None, None
    if job.result is None:
        return "None", None  # a job that returned None: nothing was stored
    try:
        value = Codec(store.secrets).loads(job.result)
    except (BadSignature, Unloadable) as exc:
        return None, f"the stored result cannot be loaded: {exc}"
    try:
        text = repr(value)
    except Exception as exc:  # a result's own __repr__ may fail
        return None, f"the result's repr() failed ({type(exc).__name__}: {exc})"
    return fmt.cut(text, fmt.RESULT_WIDTH), None


def _print_json(value: object) -> None:
    click.echo(fmt.json_text(value))


json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON, for scripts.")


@cli.command()
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
@json_option
def jobs(store_url: str | None, statuses: tuple[JobStatus, ...], limit: int, as_json: bool) -> None:
    """List jobs, newest first."""

    async def action(store: JobStore) -> None:
        found = await store.jobs(statuses=statuses, limit=limit)
        now = time.time()
        if as_json:
            _print_json([fmt.job_json(job, now) for job in found])
            return
        if not found:
            click.echo("no jobs" + (" with that status" if statuses else ""))
            return
        rows = [
            [
                fmt.job_label(job),
                fmt.one_line(job.name, 30),
                job.status.value,
                str(job.attempts),
                fmt.utc_time(job.submitted_at),
                fmt.utc_time(fmt.due(job)),
                fmt.duration(fmt.run_time(job.started_at, job.finished_at, now)),
                fmt.one_line(job.last_error),
            ]
            for job in found
        ]
        headers = ["JOB", "NAME", "STATUS", "ATTEMPTS", "SUBMITTED", "DUE", "RAN", "LAST ERROR"]
        click.echo(fmt.table(headers, rows, right=[3]))

    _run(store_url, action)


@cli.command()
@click.argument("job", type=JobIdType(), metavar="JOB_ID")
@store_option
@json_option
def show(job: int, store_url: str | None, as_json: bool) -> None:
    """Show one job: its status, times, result, last error and every attempt."""

    async def action(store: JobStore) -> None:
        stored = await _fetch(store, job)
        attempts = await store.attempts(job_id=int(job))
        now = time.time()
        result, unshown = _result(store, stored)
        if as_json:
            _print_json(
                {
                    **fmt.job_json(stored, now),
                    "result": result,
                    "result_error": unshown,
                    "last_traceback": stored.last_traceback,
                    "history": [fmt.attempt_json(a, now) for a in attempts],
                }
            )
            return
        ran = fmt.run_time(stored.started_at, stored.finished_at, now)
        fields = [
            ("status", f"{stored.status.value} ({_attempts(stored.attempts)})"),
            ("executor", stored.executor),
            ("tenant", stored.tenant or "-"),
            ("submitted", fmt.utc_time(stored.submitted_at)),
            ("run at", fmt.utc_time(stored.run_at)),
            ("started", fmt.utc_time(stored.started_at)),
            ("finished", fmt.utc_time(stored.finished_at)),
            ("ran", fmt.duration(ran)),
            ("owner", stored.owner or "-"),
            ("depends on", ", ".join(fmt.job_id(n) for n in stored.depends_on) or "-"),
            ("last error", stored.last_error or "-"),
        ]
        if stored.status is JobStatus.COMPLETED:
            fields.append(("result", f"not shown: {unshown}" if unshown else result or "-"))
        lines = [f"{fmt.job_label(stored)}  {fmt.printable(stored.name)}"]
        lines += [f"  {key:<11} {fmt.printable(value)}" for key, value in fields]
        if attempts:
            rows = [
                [
                    str(a.attempt),
                    "retried" if a.status is JobStatus.RETRY_WAIT else a.status.value,
                    fmt.utc_time(a.started_at),
                    fmt.duration(fmt.run_time(a.started_at, a.finished_at, now)),
                    a.owner or "-",
                    fmt.one_line(a.error),
                ]
                for a in attempts
            ]
            headers = ["ATTEMPT", "ENDED", "STARTED", "RAN", "OWNER", "ERROR"]
            lines += ["", fmt.table(headers, rows, right=[0])]
        if stored.last_traceback:
            tb = fmt.printable(stored.last_traceback.rstrip(), keep="\n")
            lines += ["", "last traceback:", tb]
        click.echo("\n".join(lines))

    _run(store_url, action)


def _attempts(n: int) -> str:
    return f"{n} attempt" if n == 1 else f"{n} attempts"


@cli.command()
@click.argument("job", type=JobIdType(), metavar="JOB_ID")
@store_option
def cancel(job: int, store_url: str | None) -> None:
    """Cancel a job: at once if it waits, within a second if it runs."""

    async def action(store: JobStore) -> None:
        stored = await _fetch(store, job)
        name = _named(job)
        if stored.status.is_terminal:
            raise UserError(f"{name} already ended {stored.status.value}: nothing to cancel")
        await store.cancel([int(job)], time.time())
        after = await _fetch(store, job)
        if after.status is JobStatus.RUNNING:
            click.echo(
                f"{name} is running on {fmt.printable(after.owner or '-')}: asked it to stop "
                "(its worker cancels it within a second)"
            )
        elif after.status is JobStatus.CANCELLED:
            click.echo(f"{name} cancelled")
        else:
            click.echo(f"{name} {after.status.value}")

    _run(store_url, action)


#: ``retry --all`` looks at this many jobs a page and requeues each page's at once.
RETRY_PAGE = 1_000


@cli.command()
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
        stored = await _fetch(store, job)
        label = _named(job)
        if stored.status not in RETRYABLE:
            raise UserError(
                f"{label} is {stored.status.value}: only failed, timed_out or cancelled jobs "
                "can be retried"
            )
        if job not in await store.retry([int(job)], time.time()):
            after = await _fetch(store, job)
            raise UserError(f"{label} is {after.status.value} now: not retried")
        click.echo(
            f"{label} queued again (attempt {stored.attempts + 1} runs when a worker is free)"
        )

    _run(store_url, retry_all if every else retry_one)


@cli.command()
@store_option
@json_option
def stats(store_url: str | None, as_json: bool) -> None:
    """Count jobs by status and executor; list schedules and jobs waiting for a key."""

    async def action(store: JobStore) -> None:
        counts = await store.counts()
        schedules = await store.schedules()
        # Keys this command was not given (JOBSCHED_SECRET): their jobs wait
        # for a member that holds them, which no member may.
        unknown = {key.hex(): n for key, n in sorted((await store.waiting_for_keys()).items())}
        executors = sorted({executor for _, executor in counts})
        by_status = {s.value: 0 for s in JobStatus}
        by_executor: dict[str, dict[str, int]] = {e: {} for e in executors}
        for (status, executor), n in counts.items():
            by_status[status.value] += n
            by_executor[executor][status.value] = n
        total = sum(by_status.values())
        if as_json:
            _print_json(
                {
                    "total": total,
                    "by_status": by_status,
                    "by_executor": by_executor,
                    "schedules": [
                        {"id": s.id, "next_fire": fmt.iso_time(s.next_fire), "owner": s.owner}
                        for s in schedules
                    ],
                    "waiting_for_unknown_key": unknown,
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
        if schedules:
            lines += ["", f"{len(schedules)} stored schedule(s):"]
            lines += [
                fmt.table(
                    ["SCHEDULE", "NEXT FIRE", "FIRING ON"],
                    [[s.id, fmt.utc_time(s.next_fire), s.owner or "-"] for s in schedules],
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
        click.echo("\n".join(lines))

    _run(store_url, action)
