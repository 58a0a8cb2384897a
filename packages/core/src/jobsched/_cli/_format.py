"""How the CLI shows jobs: local times, human-sized durations, aligned tables, JSON.

The store keeps wall-clock seconds (``time.time()``); an operator reads local
time, and a script reads ISO 8601 with the offset, so both know the zone.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

from .._enums import JobStatus
from ..store._codec import own_id_in
from ..store._rows import Attempt, StoredJob
from ..store._waiting import waiting as waiting

#: Statuses whose ``run_at`` is when the job is due next.
WAITING = (JobStatus.PENDING, JobStatus.RETRY_WAIT)
#: The most characters of a result's repr that ``show`` prints.
RESULT_WIDTH = 1_000


def job_id(number: int) -> str:
    """The id a user sees (``job-<n>``), as the scheduler gives it."""
    return f"job-{number}"


def job_label(job: StoredJob) -> str:
    """The id the scheduler gave the job: ``job-<n>``, or the one given at
    submit (``receipt-42``), read from its payload without unpickling it;
    ``job--<n>`` (the number it is stored under) if it cannot be read there."""
    own = own_id_in(job.payload, job.id) if job.id < 0 else None
    return own if own is not None else job_id(job.id)


def due(job: StoredJob) -> float | None:
    """When a waiting (pending, retry-waiting) job is due; None for any other."""
    return job.run_at if job.status in WAITING else None


def cut(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, ``...`` where cut."""
    return text if len(text) <= width else text[: width - 3] + "..."


def utc_time(when: float | None) -> str:
    """``2026-12-01 14:03:07 UTC``: every time the CLI and the dashboard show
    is UTC, said so, whatever the machine's zone; ``-`` for no time."""
    if when is None or when == math.inf:  # inf: a paused schedule's next fire
        return "-"
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(when))


def next_fire(when: float) -> str:
    """A stored schedule's next fire: its time, or ``paused`` (stored as ``inf``)."""
    return "paused" if when == math.inf else utc_time(when)


def shown_status(job: StoredJob, now: float) -> str:
    """The status a table shows: a pending job's ``waiting`` state in its place."""
    return waiting(job, now) or job.status.value


def last_ran(job: StoredJob, attempts: Sequence[Attempt], now: float) -> float | None:
    """How long the job's last attempt ran: a retry-waiting job's is its last
    attempt's (its row's start stays, and the clock must not run on);
    another's runs from its start to its end, or to now while it runs."""
    if job.status is JobStatus.RETRY_WAIT:
        # Its history not read (a long listing): unknown, never the clock.
        ended = [a for a in attempts if a.finished_at is not None]
        return ended[-1].finished_at - ended[-1].started_at if ended else None  # type: ignore[operator]
    return run_time(job.started_at, job.finished_at, now)


def iso_time(when: float | None) -> str | None:
    """ISO 8601 in UTC (``+00:00``), to the millisecond; None stays None."""
    if when is None or when == math.inf:
        return None
    return datetime.fromtimestamp(when, timezone.utc).isoformat(timespec="milliseconds")


def duration(seconds: float | None) -> str:
    """``850ms``, ``12.3s``, ``4m05s``, ``2h03m``, ``3d04h``; ``-`` for none."""
    if seconds is None:
        return "-"
    seconds = max(0.0, seconds)
    if seconds < 1:
        return f"{seconds * 1000:.0f}ms"
    if seconds < 59.95:
        return f"{seconds:.1f}s"
    whole = round(seconds)
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    if whole < 86400:
        return f"{whole // 3600}h{whole % 3600 // 60:02d}m"
    return f"{whole // 86400}d{whole % 86400 // 3600:02d}h"


def run_time(started: float | None, finished: float | None, now: float) -> float | None:
    """How long an attempt ran: to its end, or so far while it runs."""
    if started is None:
        return None
    return (finished if finished is not None else now) - started


# C0 and C1 controls and DEL, and the bidirectional overrides and isolates
# that reorder what follows them on screen ("Trojan Source").
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def printable(text: str, keep: str = "") -> str:
    """``text`` with its control characters written as Python escapes
    (``\\x1b``, ``\\u202e``), except those in ``keep`` (``"\\n"`` for a traceback).

    A job's name and error are anyone's text: printed raw, ``ESC[2J`` clears
    the operator's terminal and ``ESC]0;...BEL`` retitles it.
    """

    def escape(match: re.Match[str]) -> str:
        char = match.group()
        return char if char in keep else char.encode("unicode_escape").decode("ascii")

    return _CONTROL.sub(escape, text)


# What json.dumps(ensure_ascii=False) leaves raw: DEL, the C1 controls and
# the bidirectional ones (it escapes only those below U+0020).
_JSON_RAW = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def json_text(value: object) -> str:
    """``value`` as indented JSON, non-ASCII text kept readable but every
    control character escaped (``\\u009b``): valid JSON, inert on a terminal."""
    text = json.dumps(value, indent=2, ensure_ascii=False)
    # Such characters can only stand inside strings, where \uXXXX means them.
    return _JSON_RAW.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def stored_json(text: str | bytes) -> Any:
    """A registered job's arguments or JSON result as the store keeps them
    (their tagged JSON, shown as it is: ``{"$dt": ...}`` stays), parsed;
    text that is not JSON comes back as the text itself."""
    try:
        return json.loads(text)
    except ValueError:
        return text if isinstance(text, str) else text.decode("utf-8", "replace")


def args_json(job: StoredJob) -> Any:
    """A registered job's arguments, parsed (None for a pickled job)."""
    return None if job.args is None else stored_json(job.args)


def one_line(text: str | None, width: int = 60) -> str:
    """``text`` on one line, control characters escaped, cut to ``width``
    characters (``...`` where cut)."""
    if not text:
        return "-"
    flat = printable(" ".join(text.split()))
    return flat if len(flat) <= width else flat[: width - 3] + "..."


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[int] = ()) -> str:
    """Columns padded to their widest cell, two spaces apart; ``right``: the
    indexes of right-aligned (numeric) columns. Control characters are escaped."""
    rows = [[printable(cell) for cell in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(cell)) for w, cell in zip(widths, row, strict=True)]
    lines = []
    for row in (headers, *rows):
        cells = [
            cell.rjust(w) if i in right else cell.ljust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def job_json(job: StoredJob, now: float, attempts: Sequence[Attempt] = ()) -> dict[str, Any]:
    """A job as ``--json`` prints it (``attempts``: its history, for a
    retry-waiting job's last duration)."""
    ran = last_ran(job, attempts, now)
    return {
        "job_id": job_label(job),
        "name": job.name,
        "status": job.status.value,
        "waiting": waiting(job, now),
        "attempts": job.attempts,
        "last_error": job.last_error,
        "executor": job.executor,
        "tenant": job.tenant,
        "queue": job.queue,
        "submitted_at": iso_time(job.submitted_at),
        "run_at": iso_time(job.run_at),
        "started_at": iso_time(job.started_at),
        "finished_at": iso_time(job.finished_at),
        "duration": None if ran is None else round(ran, 3),
        "owner": job.owner,
        "depends_on": [job_id(n) for n in job.depends_on],
        "schedule": job.schedule,
        "args": args_json(job),
    }


def attempt_end(attempt: Attempt) -> str:
    """How an attempt ended, as ``show`` says it: ``handed back`` (a stop cut
    it short; its number ran again), ``retried`` (it failed and the job was
    retried), else its status."""
    if attempt.handed_back:
        return "handed back"
    return "retried" if attempt.status is JobStatus.RETRY_WAIT else attempt.status.value


def attempt_json(attempt: Attempt, now: float) -> dict[str, Any]:
    """One attempt as ``show --json`` prints it."""
    ran = run_time(attempt.started_at, attempt.finished_at, now)
    return {
        "attempt": attempt.attempt,
        "status": attempt.status.value,
        "owner": attempt.owner,
        "started_at": iso_time(attempt.started_at),
        "finished_at": iso_time(attempt.finished_at),
        "duration": None if ran is None else round(ran, 3),
        "error": attempt.error,
        "handed_back": attempt.handed_back,
    }
