"""What the page shows, computed from store reads: pure functions of the rows and ``now``.

Nothing here touches the store or renders HTML, so the geometry of the chart
and of the timeline (``_timeline``, with its lane packing) is tested with plain numbers.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from jobsched import JobStatus
from jobsched.store import Attempt, StoredJob

#: The statuses in the order the page lists them: live ones first.
STATUS_ORDER = (
    JobStatus.RUNNING,
    JobStatus.PENDING,
    JobStatus.RETRY_WAIT,
    JobStatus.COMPLETED,
    JobStatus.FAILED,
    JobStatus.TIMED_OUT,
    JobStatus.CANCELLED,
)
#: The statuses a job can be retried from (``JobStore.retry``).
RETRYABLE = frozenset({JobStatus.FAILED, JobStatus.TIMED_OUT, JobStatus.CANCELLED})
FAILURES = (JobStatus.FAILED, JobStatus.TIMED_OUT, JobStatus.CANCELLED)

#: The chart's drawing size, in user units (the SVG scales to its box).
CHART_WIDTH, CHART_HEIGHT = 600, 120


# ── members ─────────────────────────────────────────────────────────────────


def member_name(owner: str | None) -> str:
    """A member's id as a person reads it: ``host:pid`` (the id is
    ``host:pid:token``; the token only tells runs of one pid apart)."""
    if not owner:
        return ""
    host, _, rest = owner.rpartition(":")
    head, _, pid = host.rpartition(":")
    if head and pid.isdigit() and len(rest) == 8 and all(c in "0123456789abcdef" for c in rest):
        return host
    return owner


def member_names(owners: Iterable[str | None]) -> dict[str, str]:
    """Each owner id's readable name: ``host:pid``, or the whole id where two
    members share a ``host:pid`` (two schedulers in one process)."""
    ids = sorted({o for o in owners if o})
    short = {o: member_name(o) for o in ids}
    taken: dict[str, int] = {}
    for name in short.values():
        taken[name] = taken.get(name, 0) + 1
    return {o: (name if taken[name] == 1 else o) for o, name in short.items()}


# ── counts ──────────────────────────────────────────────────────────────────


@dataclass(slots=True)
class Counts:
    """Jobs by status (rows) and executor (columns), with totals."""

    executors: list[str]
    rows: list[tuple[JobStatus, list[int], int]]
    by_executor: list[int]
    total: int


def counts_table(counts: Mapping[tuple[JobStatus, str], int]) -> Counts:
    """The counts grid: every status a row (zeros too), executors sorted by name."""
    executors = sorted({executor for _, executor in counts})
    rows = []
    for status in STATUS_ORDER:
        cells = [counts.get((status, executor), 0) for executor in executors]
        rows.append((status, cells, sum(cells)))
    by_executor = [sum(counts.get((s, e), 0) for s in STATUS_ORDER) for e in executors]
    return Counts(executors, rows, by_executor, sum(by_executor))


# ── throughput ──────────────────────────────────────────────────────────────


@dataclass(slots=True)
class Chart:
    """Started and finished per second, one point per bucket, as SVG polylines."""

    started: str
    finished: str
    #: The highest rate on the y axis (per second).
    peak: float
    bucket: float
    window: float
    #: The rates of the last full bucket (per second).
    started_now: float
    finished_now: float
    width: int = CHART_WIDTH
    height: int = CHART_HEIGHT
    #: The y axis: (y, label) at 0, half the peak and the peak, per second.
    y_ticks: list[tuple[float, str]] = field(default_factory=list)
    #: The x axis: (x, label) every so many seconds back from now, and "now".
    x_ticks: list[tuple[float, str]] = field(default_factory=list)


def throughput(
    attempts: Iterable[Attempt], now: float, window: float = 300.0, bucket: float = 10.0
) -> Chart:
    """Attempts started and finished per second over the last ``window`` seconds."""
    n = max(1, math.ceil(window / bucket))
    start = now - n * bucket
    started = [0] * n
    finished = [0] * n
    for a in attempts:
        i = math.floor((a.started_at - start) / bucket)
        if 0 <= i < n:
            started[i] += 1
        if a.finished_at is not None:
            j = math.floor((a.finished_at - start) / bucket)
            if 0 <= j < n:
                finished[j] += 1
    rates_s = [c / bucket for c in started]
    rates_f = [c / bucket for c in finished]
    peak = _nice_ceiling(max([*rates_s, *rates_f, 0.0]))

    def line(rates: list[float]) -> str:
        step = CHART_WIDTH / max(1, n - 1)
        return " ".join(f"{i * step:.1f},{_rate_y(r, peak):.1f}" for i, r in enumerate(rates))

    # The newest bucket is still filling; the one before it is the last whole one.
    last = n - 2 if n > 1 else 0
    span = n * bucket
    y_ticks = [(_rate_y(r, peak), f"{_rate(r)}/s") for r in (0.0, peak / 2, peak)]
    step = _tick_step(span)
    x_ticks = [(CHART_WIDTH - back / span * CHART_WIDTH, f"-{_short(back)}")
               for back in _frange(step, span + step / 2, step)]  # fmt: skip
    x_ticks.append((float(CHART_WIDTH), "now"))
    return Chart(
        line(rates_s),
        line(rates_f),
        peak,
        bucket,
        span,
        rates_s[last],
        rates_f[last],
        y_ticks=y_ticks,
        x_ticks=sorted((round(x, 1), label) for x, label in x_ticks),
    )


def _rate_y(rate: float, peak: float) -> float:
    return round(CHART_HEIGHT - rate / peak * (CHART_HEIGHT - 4) - 2, 1)


def _rate(rate: float) -> str:
    """A rate as an axis label: ``0``, ``0.5``, ``20``."""
    return f"{rate:.2f}".rstrip("0").rstrip(".") if rate < 10 else f"{rate:.0f}"


def _nice_ceiling(x: float) -> float:
    """The smallest of 1, 2, 5 x 10^k at or above ``x`` (1 for an empty chart)."""
    if x <= 0:
        return 1.0
    exp = math.floor(math.log10(x))
    for m in (1, 2, 5, 10):
        if m * 10**exp >= x:
            return float(m * 10**exp)
    return float(10 ** (exp + 1))  # pragma: no cover - the loop always returns


def _tick_step(window: float) -> float:
    for step in (10, 30, 60, 120, 300, 600, 1800, 3600):
        if window / step <= 6:
            return float(step)
    return 3600.0


def _frange(start: float, stop: float, step: float) -> list[float]:
    out = []
    x = start
    while x < stop:
        out.append(x)
        x += step
    return out


def _short(seconds: float) -> str:
    if seconds >= 60 and seconds % 60 == 0:
        return f"{int(seconds // 60)} min"
    return f"{seconds:g} s"


# ── queue ───────────────────────────────────────────────────────────────────


@dataclass(slots=True)
class Queue:
    """The waiting jobs of one page of the store's newest, split by why they wait."""

    ready: list[StoredJob]
    #: Tenant -> ready jobs of the page, most first.
    tenants: list[tuple[str, int]]
    delayed: list[StoredJob]
    retrying: list[StoredJob]
    #: Each blocked job with the upstream jobs it still waits on.
    blocked: list[tuple[StoredJob, list[StoredJob]]]


def queue(waiting: Sequence[StoredJob], upstreams: Mapping[int, StoredJob], now: float) -> Queue:
    """Sort PENDING and RETRY_WAIT jobs into ready, delayed, retry-waiting and blocked.

    A job waits on each upstream that has not completed. An upstream missing
    from ``upstreams`` was pruned, and prune deletes only finished jobs (a
    failed one would have cancelled this job), so it counts as done.
    """
    ready, delayed, retrying, blocked = [], [], [], []
    for job in waiting:
        open_ups = [
            up
            for u in job.depends_on
            if (up := upstreams.get(u)) is not None and up.status is not JobStatus.COMPLETED
        ]
        if open_ups:
            blocked.append((job, open_ups))
        elif job.status is JobStatus.RETRY_WAIT:
            retrying.append(job)
        elif job.run_at > now:
            delayed.append(job)
        else:
            ready.append(job)
    tally: dict[str, int] = {}
    for job in ready:
        key = job.tenant if job.tenant is not None else "(no tenant)"
        tally[key] = tally.get(key, 0) + 1
    delayed.sort(key=lambda j: j.run_at)
    retrying.sort(key=lambda j: j.run_at)
    return Queue(
        ready, sorted(tally.items(), key=lambda kv: (-kv[1], kv[0])), delayed, retrying, blocked
    )
