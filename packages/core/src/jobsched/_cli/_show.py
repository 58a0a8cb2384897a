"""``jobsched show JOB``: one job, with its result, attempts, workflow,
progress and every upstream with its policy and state.

It reads through the :class:`~jobsched.JobStore` interface (no SQL here).
It unpickles nothing but a completed job's result, once its signature
verifies (else it says why); a registered job's arguments and result are
JSON, printed as they are.
"""

from __future__ import annotations

import time
from typing import Any

import click

from .._enums import JobStatus
from ..store._base import JobStore
from ..store._rows import EDGE_FAILED, EDGE_MET, StoredJob
from . import _format as fmt
from ._jobargs import JobIdType, fetch, json_option, print_json, run
from ._main import store_option
from ._wftree import policy, run_mark, workflow_id

#: The most upstreams the text lists (``--json`` has all of them).
UPSTREAMS_SHOWN = 20
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
                    **flow_json(stored),
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
            ("workflow", workflow_id(stored.workflow) if stored.workflow is not None else "-"),
            ("progress", progress_text(stored.progress, stored.progress_message)),
            ("depends on", depends_text(stored)),
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


def progress_text(fraction: float | None, message: str | None) -> str:
    """``40% reading page 4``, either part alone, or ``-`` for none."""
    parts = [f"{fraction * 100:.0f}%"] if fraction is not None else []
    if message:
        parts.append(fmt.one_line(message, 200))
    return " ".join(parts) or "-"


def edge_state(settled: int) -> str:
    """An edge's state as ``show`` names it: the upstream ``completed``,
    ``failed`` (ended without completing: failed, timed out or cancelled),
    or is still ``waiting`` to end."""
    return {EDGE_MET: "completed", EDGE_FAILED: "failed"}.get(settled, "waiting")


def depends_text(job: StoredJob) -> str:
    """Every upstream with its policy (``[run]`` marked; ``cancel`` is the
    default) and state; a store that keeps no settled edges gives only the
    upstreams still waited for."""
    if not job.deps:
        return ", ".join(fmt.job_id(n) for n in job.depends_on) or "-"
    shown = [
        f"{fmt.job_id(up)}{run_mark(on_failure)} ({edge_state(settled)})"
        for up, on_failure, settled in job.deps[:UPSTREAMS_SHOWN]
    ]
    more = len(job.deps) - UPSTREAMS_SHOWN
    return ", ".join(shown) + (f" and {more} more (--json lists all)" if more > 0 else "")


def flow_json(job: StoredJob) -> dict[str, Any]:
    """``show --json``'s workflow, progress and upstreams (every edge)."""
    return {
        "workflow": None if job.workflow is None else workflow_id(job.workflow),
        "progress": job.progress,
        "progress_message": job.progress_message,
        "upstreams": [
            {"job_id": fmt.job_id(up), "on_failure": policy(on_failure), "state": edge_state(s)}
            for up, on_failure, s in job.deps
        ],
    }
