"""The commands that read the store: ``jobs``, ``show``, ``stats``.

Each opens the store, asks it through the :class:`~jobsched.JobStore`
interface (no SQL here), prints, and closes it. None unpickles a job: they
read what the store keeps beside the payload, so they need neither the jobs'
modules nor the store's secret. Only ``show`` unpickles anything: a completed
job's result, once its signature verifies (else it says why).
"""

from __future__ import annotations

import time

import click

from .._enums import JobStatus
from .._jobs._options import check_queue
from ..store._args import LARGEST
from ..store._base import JobStore
from ..store._rows import StoredJob
from . import _format as fmt
from ._jobargs import JobIdType, StatusType, fetch, json_option, print_json, run
from ._main import Count, UserError, store_option


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
@json_option
def jobs(
    store_url: str | None,
    statuses: tuple[JobStatus, ...],
    limit: int,
    queue: str | None,
    as_json: bool,
) -> None:
    """List jobs, newest first."""

    async def action(store: JobStore) -> None:
        if queue is None:
            found = await store.jobs(statuses=statuses, limit=limit)
        else:
            found = await _of_queue(store, queue, statuses, limit)
        now = time.time()
        if as_json:
            print_json([fmt.job_json(job, now) for job in found])
            return
        if not found:
            click.echo(
                "no jobs"
                + (" with that status" if statuses else "")
                + (f" on queue {fmt.printable(queue)!r}" if queue is not None else "")
            )
            return
        rows = [
            [
                fmt.job_label(job),
                fmt.one_line(job.name, 30),
                fmt.one_line(job.queue, 20),
                job.status.value,
                str(job.attempts),
                fmt.utc_time(job.submitted_at),
                fmt.utc_time(fmt.due(job)),
                fmt.duration(fmt.run_time(job.started_at, job.finished_at, now)),
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


async def _of_queue(
    store: JobStore, queue: str, statuses: tuple[JobStatus, ...], limit: int
) -> list[StoredJob]:
    """The newest ``limit`` jobs of ``queue``: pages of the store's
    ``job_page`` until enough are found or none is left (an operator's
    look, so it may read as far back as the queue's jobs go)."""
    found: list[StoredJob] = []
    before: int | None = None
    while len(found) < limit:
        try:
            page = await store.job_page(
                statuses=statuses, queue=queue, limit=limit - len(found), before=before, scan=10_000
            )
        except TypeError as exc:  # a store written before queues
            raise UserError(f"this store cannot filter jobs by queue ({exc})") from None
        found += page.jobs
        if page.next_before is None:
            break
        before = page.next_before
    return found


@click.command()
@click.argument("job", type=JobIdType(), metavar="JOB_ID")
@store_option
@json_option
def show(job: int, store_url: str | None, as_json: bool) -> None:
    """Show one job: its status, times, result, last error and every attempt."""

    async def action(store: JobStore) -> None:
        stored = await fetch(store, job)
        attempts = await store.attempts(job_id=int(job))
        now = time.time()
        result, unshown = _result(store, stored)
        if as_json:
            print_json(
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
            ("queue", stored.queue),
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
        # An id given at submit is anyone's text, as the name is.
        lines = [f"{fmt.printable(fmt.job_label(stored))}  {fmt.printable(stored.name)}"]
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

    run(store_url, action)


def _attempts(n: int) -> str:
    return f"{n} attempt" if n == 1 else f"{n} attempts"


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
    list schedules and jobs waiting for a key."""

    async def action(store: JobStore) -> None:
        counts = await store.counts()
        by_queue = await _by_queue(store)
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
            print_json(
                {
                    "total": total,
                    "by_status": by_status,
                    "by_executor": by_executor,
                    "by_queue": by_queue,
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

    run(store_url, action)
