"""The job and member timelines: attempts as bars in lanes, one lane set per member.

A pure function of the attempts and ``now``, like the rest of ``_views``
(whose axis helpers it shares), so the lane packing is tested with plain
numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from jobsched import JobStatus
from jobsched.store import Attempt

from ._views import _frange, _short, _tick_step, member_names

#: The drawing size, in user units (the SVG scales to its box).
TIMELINE_WIDTH, LANE_HEIGHT = 900, 16
#: A bar is never thinner than this, so a 1 ms attempt is still visible.
MIN_BAR = 2.0


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
