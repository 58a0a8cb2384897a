"""The commands that read the store's jobs: ``jobs`` and ``show`` (``stats``: _stats.py).

Each opens the store, asks it through the :class:`~jobsched.JobStore`
interface (no SQL here), prints, and closes it. None unpickles a job: they
read what the store keeps beside the payload, so they need neither the jobs'
modules nor the store's secret. Only ``show`` unpickles anything: a completed
job's result, once its signature verifies (else it says why). A registered
job's arguments and result are JSON: printed as they are, nothing unpickled.
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
from ._jobargs import (
    JobIdType,
    SinceType,
    StatusType,
    arg_filters,
    fetch,
    json_option,
    print_json,
    run,
)
from ._main import Count, UserError, store_option

#: The most retry-waiting jobs of one listing whose attempts are read for
#: their RAN (a read each): a listing of thousands stays a few reads.
HISTORY_READS = 100
#: A registered job's result: this byte, then its JSON (UTF-8).
JSON_RESULT = b"J"


def _result(store: JobStore, job: StoredJob) -> tuple[str | None, str | None]:
    """A completed job's result as (its repr, cut at RESULT_WIDTH; why it
    cannot be shown), both None for any other job.

    Only a result whose signature verifies under the store's keys is
    unpickled (the codec's ``loads``); one that does not verify, or does not
    load here, says why instead. A registered job's JSON result is its JSON.
    """
    from ..store._codec import BadSignature, Codec, Unloadable

    if job.status is not JobStatus.COMPLETED:
        return None, None
    if job.result is None:
        return "None", None  # a job that returned None: nothing was stored
    if job.result.startswith(JSON_RESULT):
        return fmt.json_text(fmt.stored_json(job.result[1:])), None
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
        registered = stored.result is not None and stored.result.startswith(JSON_RESULT)
        if as_json:
            print_json(
                {
                    **fmt.job_json(stored, now, attempts),
                    # A registered job's result as its JSON; another's repr.
                    "result": fmt.stored_json(stored.result[1:])  # type: ignore[index]
                    if registered and stored.status is JobStatus.COMPLETED
                    else result,
                    "result_error": unshown,
                    "last_traceback": stored.last_traceback,
                    "options": None if stored.args is not None else _payload_options(stored),
                    "history": [fmt.attempt_json(a, now) for a in attempts],
                }
            )
            return
        ran = fmt.last_ran(stored, attempts, now)
        waiting = fmt.waiting(stored, now)
        status = stored.status.value + (f", {waiting}" if waiting else "")
        fields = [
            ("status", f"{status} ({_attempts(stored.attempts)})"),
            ("executor", stored.executor),
            ("queue", stored.queue),
            ("tenant", stored.tenant or "-"),
            *_options(stored),
            ("submitted", fmt.utc_time(stored.submitted_at)),
            ("run at", fmt.utc_time(stored.run_at)),
            ("started", fmt.utc_time(stored.started_at)),
            ("finished", fmt.utc_time(stored.finished_at)),
            ("ran", fmt.duration(ran)),
            ("owner", stored.owner or "-"),
            ("depends on", ", ".join(fmt.job_id(n) for n in stored.depends_on) or "-"),
            ("schedule", stored.schedule or "-"),
            ("last error", stored.last_error or "-"),
        ]
        if stored.args is not None:
            fields.append(("arguments", _indented(fmt.json_text(fmt.args_json(stored)))))
        if stored.status is JobStatus.COMPLETED:
            shown = f"not shown: {unshown}" if unshown else result or "-"
            fields.append(("result", _indented(shown) if registered else shown))
        # An id given at submit is anyone's text, as the name is.
        lines = [f"{fmt.printable(fmt.job_label(stored))}  {fmt.printable(stored.name)}"]
        # JSON's lines stay lines (json_text escaped every control in it).
        multiline = {"arguments", "result"} if registered else {"arguments"}
        lines += [
            f"  {key:<11} {fmt.printable(value, keep=chr(10) if key in multiline else '')}"
            for key, value in fields
        ]
        if attempts:
            rows = [
                [
                    str(a.attempt),
                    fmt.attempt_end(a),
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


def _payload_options(job: StoredJob) -> dict[str, str] | None:
    """A pickled job's priority, timeout and retry, read without unpickling it."""
    from ..store._peek import options

    found = options(job.payload)
    return None if found is None else dict(found)


def _options(job: StoredJob) -> list[tuple[str, str]]:
    """``show``'s priority, timeout and retry lines (a registered job's are
    its app's registration's, where it runs: not in the row)."""
    if job.args is not None:
        return [("options", "priority, timeout, retry as the app registers the job")]
    found = _payload_options(job)
    if found is None:
        return [("options", "not readable from the stored job")]
    return list(found.items())


def _indented(text: str) -> str:
    """Multi-line JSON under its field's name: later lines indented past the name."""
    return text.replace("\n", "\n" + " " * 14)


def _attempts(n: int) -> str:
    return f"{n} attempt" if n == 1 else f"{n} attempts"
