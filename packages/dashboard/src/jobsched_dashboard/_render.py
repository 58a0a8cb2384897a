"""Turning what the page shows into HTML: the templates, their filters, the
timeline's bars, the security headers, and the error page.

Every value is escaped unless it is :class:`~markupsafe.Markup` made here by
:func:`timeline_bars`, which escapes every text it puts in and formats only
numbers itself: job names, errors and tracebacks come from user code.
"""

from __future__ import annotations

import time
from typing import Any

import jinja2
from markupsafe import Markup, escape
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from jobsched import JobStore
from jobsched._jobs._ids import id_number
from jobsched._time._scheduleinfo import PAUSED
from jobsched.store import StoredJob
from jobsched.store._codec import own_id_in
from jobsched.store._waiting import waiting

from . import _limits, _timeline, _views
from ._session import Session

SECURITY_HEADERS = {
    # Defence in depth behind autoescaping: no inline script runs, nothing is
    # loaded from elsewhere, and no other site may frame the page.
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "frame-ancestors 'none'; form-action 'self'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}


def environment() -> jinja2.Environment:
    """The templates, autoescaped, with the page's filters."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("jobsched_dashboard", "templates"),
        # Every value is escaped unless it is Markup (see the module's doc):
        # job names, errors and tracebacks come from user code.
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["clock"] = clock
    env.filters["ago"] = ago
    env.filters["member"] = _views.member_name
    env.filters["label"] = label
    env.filters["bars"] = timeline_bars
    env.filters["waiting"] = waiting
    # Job pages are by number ("job-7" is 7; an id of the caller's own, negative).
    env.filters["job_number"] = id_number
    env.tests["paused"] = paused
    return env


class Handlers:
    """What the route handlers share: the store, the action token, the templates."""

    def __init__(self, store: JobStore, token: str | None, env: jinja2.Environment) -> None:
        self.store = store
        self.token = token
        self.env = env
        # The remembered token (see _session): one per dashboard, shared by
        # the pages (which hide the token field) and the actions.
        self.session = Session(token) if token is not None else None

    def remembered(self, request: Request) -> bool:
        """The browser holds this dashboard's remembered-token cookie."""
        return self.session is not None and self.session.valid(request)

    def render(self, template: str, status_code: int = 200, **context: Any) -> HTMLResponse:
        context.setdefault("remembered", False)
        html = self.env.get_template(template).render(
            store_url=self.store.url,
            actions=self.token is not None,
            refresh_ms=_limits.REFRESH_MS,
            **context,
        )
        return HTMLResponse(html, status_code=status_code, headers=SECURITY_HEADERS)

    def error(self, status_code: int, title: str, message: str) -> HTMLResponse:
        return self.render("error.html", status_code, title=title, message=message)

    # ── the exception handlers ────────────────────────────────────────────

    async def unavailable(self, request: Request, exc: Exception) -> Response:
        return self.error(503, "Store unavailable", str(exc))

    async def missing(self, request: Request, exc: Exception) -> Response:
        return self.error(503, "No jobsched store", str(exc))

    async def unsupported(self, request: Request, exc: Exception) -> Response:
        return self.error(
            501,
            "Not supported by this store",
            f"{exc}; the dashboard needs a store that implements the operator reads "
            "(jobs, counts, attempts, schedules)",
        )

    async def http_error(self, request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        return self.error(
            exc.status_code, "Not found" if exc.status_code == 404 else "Error", str(exc.detail)
        )


def timeline_bars(timeline: _timeline.Timeline) -> Markup:
    """The timeline's bars as SVG, each a link to its job.

    What the template's loop made, byte for byte, in a fraction of its time
    (a thousand bars were most of the page's rendering, W15 in benchmarks/):
    numbers are formatted here (``int()``, ``:.1f``: nothing else gets in;
    the views round each to a tenth, so ``:.1f`` writes what ``str()`` did,
    in half the time), and every text is escaped by :func:`markupsafe.escape`.
    """
    parts = []
    for b in timeline.bars:
        job = int(b.job_id)
        retry = " retry" if b.attempt > 1 else ""
        parts.append(
            f'<a href="/jobs/{job}"><rect class="bar o-{escape(b.status)}{retry}" '
            f'data-job="{job}" x="{b.x:.1f}" y="{b.y + 2:.1f}" '
            f'width="{b.width:.1f}" height="12"><title>{escape(b.title)}</title></rect></a>'
        )
    return Markup("".join(parts))


def label(job: StoredJob) -> str:
    """The id the scheduler gave the job: ``job-<n>``, or the one given at
    submit, read from its payload without unpickling (see ``own_id_in``)."""
    own = own_id_in(job.payload, job.id) if job.id < 0 else None
    return own if own is not None else f"job-{job.id}"


def paused(ts: float | None) -> bool:
    """A stored schedule's next fire while it is paused (``inf``)."""
    return ts == PAUSED


def clock(ts: float | None) -> str:
    """A wall-clock time as ``HH:MM:SS UTC`` (the date too when not today's):
    UTC, said so, as the CLI shows every time."""
    if ts is None or ts == PAUSED:
        return "—"
    here = time.gmtime(ts)
    if time.strftime("%Y-%m-%d", here) != time.strftime("%Y-%m-%d", time.gmtime()):
        return time.strftime("%Y-%m-%d %H:%M:%S UTC", here)
    return time.strftime("%H:%M:%S UTC", here)


def ago(ts: float | None, now: float) -> str:
    """``ts`` relative to ``now``: ``12 s ago`` or ``in 3 min``."""
    if ts is None or ts == PAUSED:
        return ""
    delta = ts - now
    span = abs(delta)
    if span < 1:
        return "now"
    if span < 120:
        text = f"{span:.0f} s"
    elif span < 7200:
        text = f"{span / 60:.0f} min"
    else:
        text = f"{span / 3600:.1f} h"
    return f"in {text}" if delta > 0 else f"{text} ago"
