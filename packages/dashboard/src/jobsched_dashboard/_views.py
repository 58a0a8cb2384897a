"""What the page shows, computed from store reads: pure functions of the rows and ``now``.

Nothing here touches the store or renders HTML, so the geometry of the chart
and the timeline (and its lane packing) is tested with plain numbers.
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

#: The drawing sizes of the SVGs, in user units (the SVG scales to its box).
CHART_WIDTH, CHART_HEIGHT = 600, 120
TIMELINE_WIDTH, LANE_HEIGHT = 900, 16
#: A bar is never thinner than this, so a 1 ms attempt is still visible.
MIN_BAR = 2.0


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


# ── timeline ────────────────────────────────────────────────────────────────


@dataclass(slots=True)
class Bar:
    """One attempt on the timeline."""

    x: float
    y: float
    width: float
    status: str
    title: str
    job_id: int
    attempt: int


@dataclass(slots=True)
class Wait:
    """The wait before a retry: from the previous attempt's end to this one's start."""

    x1: float
    y1: float
    x2: float
    y2: float
    title: str


@dataclass(slots=True)
class Lane:
    """One worker slot of one member: attempts that never overlap."""

    owner: str
    slot: int
    y: float
    #: The member as the page names it (see :func:`member_names`).
    label: str = ""


@dataclass(slots=True)
class Timeline:
    """The timeline's lanes, bars and retry waits, in SVG units."""

    lanes: list[Lane] = field(default_factory=list)
    bars: list[Bar] = field(default_factory=list)
    waits: list[Wait] = field(default_factory=list)
    window: float = 300.0
    width: int = TIMELINE_WIDTH
    height: float = 0.0
    #: Grid lines: (x, label) every so many seconds back from now.
    ticks: list[tuple[float, str]] = field(default_factory=list)


def pack(spans: Sequence[tuple[float, float]]) -> list[int]:
    """The sub-lane of each ``(start, end)`` span: the first lane free at its start.

    Spans sorted by start keep each lane's attempts apart; the number of lanes
    is the most spans that overlap at once (interval partitioning), which is
    how many worker slots the member had busy at that moment.
    """
    order = sorted(range(len(spans)), key=lambda i: spans[i])
    ends: list[float] = []
    lane = [0] * len(spans)
    for i in order:
        start, end = spans[i]
        for k, free_at in enumerate(ends):
            if free_at <= start:
                ends[k] = end
                lane[i] = k
                break
        else:
            ends.append(end)
            lane[i] = len(ends) - 1
    return lane


def timeline(attempts: Sequence[Attempt], now: float, window: float = 300.0) -> Timeline:
    """Lanes per member and worker slot, a bar per attempt in the last ``window`` seconds."""
    t0 = now - window
    scale = TIMELINE_WIDTH / window
    by_owner: dict[str, list[Attempt]] = {}
    for a in attempts:
        end = now if a.finished_at is None else a.finished_at
        if end < t0 or a.started_at > now:
            continue
        by_owner.setdefault(a.owner or "(no member)", []).append(a)
    out = Timeline(window=window)
    placed: dict[tuple[int, int], Bar] = {}
    bars = out.bars
    width = float(TIMELINE_WIDTH)
    retry_wait = JobStatus.RETRY_WAIT
    y = 0.0
    names = member_names(by_owner)
    for owner in sorted(by_owner):
        rows = by_owner[owner]
        spans = [(a.started_at, now if a.finished_at is None else a.finished_at) for a in rows]
        slots = pack(spans)
        for slot in range(max(slots) + 1):
            out.lanes.append(Lane(owner, slot, y + slot * LANE_HEIGHT, names.get(owner, owner)))
        for a, (start, end), slot in zip(rows, spans, slots, strict=True):
            x = max(0.0, (start - t0) * scale)
            x_end = min(width, (end - t0) * scale)
            # (``_value_``: the plain attribute; ``value`` is a property,
            # and this loop runs for every bar of every refresh.)
            status = a.status
            retried = status is retry_wait
            # One decimal is a tenth of a unit at most, and a shorter page.
            bar = Bar(
                round(x, 1),
                y + slot * LANE_HEIGHT,
                round(max(MIN_BAR, x_end - x), 1),
                "retried" if retried else status._value_,
                _bar_title(a, end, retried),
                a.job_id,
                a.attempt,
            )
            bars.append(bar)
            if not a.handed_back:  # its number ran again: waits join the counted ones
                placed[a.job_id, a.attempt] = bar
        y += (max(slots) + 1) * LANE_HEIGHT
    middle = LANE_HEIGHT / 2
    for a in attempts:
        if a.attempt < 2 or a.handed_back:
            continue  # the first attempt, or one cut short: no wait drawn to it
        previous = placed.get((a.job_id, a.attempt - 1))
        here = placed.get((a.job_id, a.attempt))
        if previous is None or here is None:
            continue
        out.waits.append(
            Wait(
                round(previous.x + previous.width, 1),
                previous.y + middle,
                here.x,
                here.y + middle,
                f"{a.name} (job-{a.job_id}): waited before attempt {a.attempt}",
            )
        )
    out.height = max(y, LANE_HEIGHT)
    step = _tick_step(window)
    out.ticks = [
        ((window - back) * scale, f"-{_short(back)}") for back in _frange(step, window, step)
    ]
    return out


def _bar_title(a: Attempt, end: float, retried: bool) -> str:
    if a.handed_back:
        ended = "handed back"
    elif retried:
        ended = "failed, retried"
    else:
        ended = "running" if a.finished_at is None else a.status._value_
    text = f"{a.name} (job-{a.job_id}) attempt {a.attempt}: {ended}, {end - a.started_at:.2f} s"
    if a.error:
        text += f": {a.error}"
    return text


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
