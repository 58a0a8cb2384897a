"""The Starlette application: routes, the store's lifetime, the action token.

Every read goes through the :class:`~jobsched.JobStore` interface (``counts``,
``jobs``, ``attempts``, ``schedules``, ``fetch``), each paged, so a page costs
the same on a store holding a million finished jobs as on an empty one. The
page (``/``) and a job's page (``/jobs/{id}``) each have a ``/live`` twin that
renders only their changing part; the page's script fetches it every few
seconds and swaps it in.
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import time
from collections.abc import AsyncIterator, Collection, Mapping
from typing import Any
from urllib.parse import parse_qs, urlencode

import jinja2
from starlette.applications import Starlette
from starlette.convertors import Convertor, register_url_convertor
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from jobsched import JobStatus, JobStore, StoreUnavailableError, open_store
from jobsched._jobs._job import check_own_id, own_number
from jobsched._time._scheduleinfo import PAUSED, from_store
from jobsched._time._scheduleinfo import read as read_schedule
from jobsched.store._args import LARGEST
from jobsched.store._base import MEMBER_EVERY, JobPage, StoredJob
from jobsched.store._codec import Codec, own_id_in

from . import _payload, _views

#: Seconds of history the chart and the timeline show (``?minutes=`` changes it).
WINDOW = 300.0
#: The ``minutes`` a page may ask for.
MINUTES = range(1, 61)
#: Attempts read for the chart and the timeline: the newest, when more fall in the
#: window. A 900-unit timeline shows no more bars usefully, and each costs the
#: page about 0.1 ms to render (W14 in benchmarks/).
ATTEMPTS_LIMIT = 1_000
#: Waiting jobs read for the queue (the newest), failures for their list.
WAITING_LIMIT = 200
FAILURES_LIMIT = 25
#: Jobs a page of the job list shows, and the most it looks at to find them
#: (``JobStore.job_page``): a page costs the same on any history.
PAGE_LIMIT = 50
PAGE_SCAN = 1_000
#: A bulk retry or cancel acts on at most this many jobs per request, and
#: looks at no more than ``BULK_PAGES`` pages of ``PAGE_SCAN`` to find them;
#: the page says when more are left (press again).
BULK_LIMIT = 1_000
BULK_PAGES = 20
#: The statuses each bulk action applies to (others in the filter are ignored).
UNFINISHED = (JobStatus.PENDING, JobStatus.RETRY_WAIT, JobStatus.RUNNING)
#: Members listed (the most recently seen), and after how many missed
#: reports one is marked stale.
MEMBERS_LIMIT = 200
STALE_AFTER = 3 * MEMBER_EVERY
#: Upstream jobs fetched to tell what blocked jobs wait on.
UPSTREAMS_LIMIT = 100
#: The page's script refreshes its live part this often (milliseconds).
REFRESH_MS = 2_000
#: The most bytes an action's form may have (the page sends about 50): a
#: larger body is refused with 413 before more of it is read.
MAX_BODY = 16_384
#: In ``allowed_hosts``: also serve any IP address (a wildcard bind, whose
#: addresses are the machine's; DNS rebinding always sends a name).
ANY_IP = "*ip*"

_SECURITY_HEADERS = {
    # Defence in depth behind autoescaping: no inline script runs, nothing is
    # loaded from elsewhere, and no other site may frame the page.
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "frame-ancestors 'none'; form-action 'self'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}


def create_app(
    store_url: str | JobStore,
    *,
    token: str | None = None,
    allowed_hosts: Collection[str] | None = None,
) -> Starlette:
    """The dashboard as an ASGI app; it opens the store at startup and closes it at shutdown.

    :param store_url: a store URL (``sqlite:///jobs.db``), or a :class:`JobStore`
        not yet opened.
    :param token: the secret that cancel and retry need (a form field ``token``
        or an ``Authorization: Bearer`` header); None disables the actions.
    :param allowed_hosts: the names (``Host`` header, without the port) it
        answers to; any other gets 400, so a web page cannot read it through
        DNS rebinding. None: any (behind a proxy that checks). :func:`serve`
        passes the address it binds and ``--allowed-host``.
    :raises ValueError: the URL is malformed, ``token`` is empty, or
        ``allowed_hosts`` is a string or holds an empty name.
    :raises StoreNotFoundError: no installed store serves the URL's scheme.
    """
    if token is not None and not token.strip():
        raise ValueError(
            "the dashboard token is empty; pass a real secret, or none to disable actions"
        )
    hosts = _check_hosts(allowed_hosts)
    store = open_store(store_url) if isinstance(store_url, str) else store_url
    if not isinstance(store, JobStore):
        raise TypeError(f"store_url must be a store URL or a jobsched.JobStore, got {store!r}")
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("jobsched_dashboard", "templates"),
        # Every value is escaped unless a template marks it safe (none does):
        # job names, errors and tracebacks come from user code.
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["clock"] = _clock
    env.filters["ago"] = _ago
    env.filters["member"] = _views.member_name
    env.filters["label"] = _label
    env.tests["paused"] = _paused
    dashboard = _Dashboard(store, token, env)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await store.open()
        try:
            yield
        finally:
            await store.close()

    routes = [
        Route("/", dashboard.index),
        Route("/live", dashboard.live),
        Route("/jobs", dashboard.job_list),
        Route("/members", dashboard.members),
        Route("/schedules", dashboard.schedules),
        Route("/schedules/{schedule_id:path}/pause", dashboard.pause_schedule, methods=["POST"]),
        Route("/schedules/{schedule_id:path}/resume", dashboard.resume_schedule, methods=["POST"]),
        Route("/jobs/retry", dashboard.bulk_retry, methods=["POST"]),
        Route("/jobs/cancel", dashboard.bulk_cancel, methods=["POST"]),
        Route("/jobs/{job_id:job}", dashboard.job),
        Route("/jobs/{job_id:job}/live", dashboard.job_live),
        Route("/jobs/{job_id:job}/cancel", dashboard.cancel, methods=["POST"]),
        Route("/jobs/{job_id:job}/retry", dashboard.retry, methods=["POST"]),
        Mount("/static", StaticFiles(packages=[("jobsched_dashboard", "static")]), name="static"),
    ]
    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={
            StoreUnavailableError: dashboard.unavailable,
            NotImplementedError: dashboard.unsupported,
            HTTPException: dashboard.http_error,
        },
    )
    app.state.store = store
    if hosts is not None:
        app.add_middleware(_HostCheck, hosts=hosts)
    return app


def _check_hosts(hosts: Collection[str] | None) -> frozenset[str] | None:
    if hosts is None:
        return None
    if isinstance(hosts, str):
        raise ValueError(f"allowed_hosts must be a collection of names, got {hosts!r}")
    names = [str(h).strip().lower().strip("[]") for h in hosts]
    if not names or not all(names):
        raise ValueError(f"allowed_hosts must hold host names, got {list(hosts)!r}")
    return frozenset(names)


def host_of(header: str) -> str:
    """The name in a ``Host`` header: without its port, lower-case, an IPv6
    address without its brackets."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:].partition("]")[0]
    return header.rpartition(":")[0] if header.count(":") == 1 else header


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class _HostCheck:
    """Answer only requests whose ``Host`` is one of ``hosts`` (400 otherwise)."""

    def __init__(self, app: ASGIApp, hosts: frozenset[str]) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            raw = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
            name = host_of(raw)
            if name not in self.hosts and not (ANY_IP in self.hosts and _is_ip(name)):
                served = ", ".join(sorted(h for h in self.hosts if h != ANY_IP))
                text = (
                    f"this dashboard does not serve the host {raw!r} (it serves {served}); "
                    "to serve that name, restart it with --allowed-host NAME\n"
                )
                response = Response(text, status_code=400, media_type="text/plain")
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


class _Dashboard:
    """The route handlers, sharing the store, the token and the templates."""

    def __init__(self, store: JobStore, token: str | None, env: jinja2.Environment) -> None:
        self.store = store
        self.token = token
        self.env = env

    # ── rendering ─────────────────────────────────────────────────────────

    def render(self, template: str, status_code: int = 200, **context: Any) -> HTMLResponse:
        html = self.env.get_template(template).render(
            store_url=self.store.url,
            actions=self.token is not None,
            refresh_ms=REFRESH_MS,
            **context,
        )
        return HTMLResponse(html, status_code=status_code, headers=_SECURITY_HEADERS)

    def error(self, status_code: int, title: str, message: str) -> HTMLResponse:
        return self.render("error.html", status_code, title=title, message=message)

    # ── pages ─────────────────────────────────────────────────────────────

    async def index(self, request: Request) -> Response:
        return self.render("index.html", **await self.overview(_window(request)))

    async def live(self, request: Request) -> Response:
        return self.render("live.html", **await self.overview(_window(request)))

    async def job(self, request: Request) -> Response:
        context = await self.job_context(request.path_params["job_id"])
        return self.render("job.html", done=request.query_params.get("done"), **context)

    async def job_live(self, request: Request) -> Response:
        return self.render("job_live.html", **await self.job_context(request.path_params["job_id"]))

    async def job_list(self, request: Request) -> Response:
        """The job list: filtered, paged by id, and a lookup by id (``?id=job-12``)."""
        query = request.query_params
        lookup = query.get("id", "").strip()
        if lookup:
            job_id = _job_id(lookup)
            if await self.store.fetch(job_id) is None:
                raise HTTPException(404, f"no job-{job_id} in the store {self.store.url}")
            return RedirectResponse(f"/jobs/{job_id}", status_code=303)
        filters = _filters(request)
        before = _before(query.get("before"))
        page = await self.store.job_page(
            **filters.store_args(), limit=PAGE_LIMIT, before=before, scan=PAGE_SCAN
        )
        return self.render(
            "jobs.html",
            now=time.time(),
            page=page,
            filters=filters,
            before=before,
            all_statuses=_views.STATUS_ORDER,
            next_url=None
            if page.next_before is None
            else f"/jobs?{filters.query(before=page.next_before)}",
            first_url=f"/jobs?{filters.query()}",
            retry_url=f"/jobs/retry?{filters.query()}",
            cancel_url=f"/jobs/cancel?{filters.query()}",
            can_bulk_retry=bool(filters.narrowed(_views.RETRYABLE)),
            can_bulk_cancel=bool(filters.narrowed(UNFINISHED)),
            done=_done(request),
            page_scan=PAGE_SCAN,
            bulk_limit=BULK_LIMIT,
        )

    async def members(self, request: Request) -> Response:
        """Every member that reported: owner, host, pid, workers, busy, last heartbeat."""
        now = time.time()
        try:
            found = await self.store.members(limit=MEMBERS_LIMIT)
        except NotImplementedError:
            found, supported = [], False
        else:
            supported = True
        return self.render(
            "members.html",
            now=now,
            members=found,
            names=_views.member_names(m.owner for m in found),
            supported=supported,
            stale_after=STALE_AFTER,
            capped=len(found) >= MEMBERS_LIMIT,
            members_limit=MEMBERS_LIMIT,
        )

    async def schedules(self, request: Request) -> Response:
        codec = Codec(self.store.secrets)
        rows = await self.store.schedules()
        found = [
            (from_store(codec, r.id, r.payload, r.next_fire, r.last_job), r.owner) for r in rows
        ]
        found.sort(key=lambda pair: (pair[0].next_fire is None, pair[0].id))
        done = request.query_params.get("done")
        return self.render(
            "schedules.html",
            now=time.time(),
            schedules=found,
            done=done if done in ("pause", "resume") else None,
            done_id=request.query_params.get("schedule", ""),
        )

    async def pause_schedule(self, request: Request) -> Response:
        schedule_id = request.path_params["schedule_id"]
        refused = await self.refuse(request, "pause", "schedule")
        if refused is not None:
            return refused
        row = await self.stored_schedule(schedule_id)
        if isinstance(row, Response):
            return row
        if row.next_fire == PAUSED:
            return self.error(409, "Not paused", f"the schedule {schedule_id!r} is paused already")
        if not await self.store.pause_schedule(schedule_id):
            return self.no_schedule(schedule_id)
        return self.schedule_done("pause", schedule_id)

    async def resume_schedule(self, request: Request) -> Response:
        schedule_id = request.path_params["schedule_id"]
        refused = await self.refuse(request, "resume", "schedule")
        if refused is not None:
            return refused
        row = await self.stored_schedule(schedule_id)
        if isinstance(row, Response):
            return row
        if row.next_fire != PAUSED:
            return self.error(409, "Not resumed", f"the schedule {schedule_id!r} is not paused")
        try:
            # From now, from the trigger in the signed payload: fires missed
            # while paused are skipped.
            first = read_schedule(Codec(self.store.secrets), row.payload).resumed_fire(time.time())
        except Exception as exc:
            return self.error(
                409,
                "Not resumed",
                f"the schedule {schedule_id!r} cannot be read here ({exc}); start the "
                "dashboard with the store's key (JOBSCHED_SECRET) to resume it",
            )
        if not await self.store.resume_schedule(schedule_id, first):
            return self.no_schedule(schedule_id)
        return self.schedule_done("resume", schedule_id)

    async def stored_schedule(self, schedule_id: str) -> Any:
        for row in await self.store.schedules():
            if row.id == schedule_id:
                return row
        return self.no_schedule(schedule_id)

    def no_schedule(self, schedule_id: str) -> Response:
        return self.error(
            404, "No such schedule", f"no schedule {schedule_id!r} in the store {self.store.url}"
        )

    def schedule_done(self, action: str, schedule_id: str) -> Response:
        query = urlencode({"done": action, "schedule": schedule_id})
        return RedirectResponse(f"/schedules?{query}", status_code=303)

    async def overview(self, window: float) -> dict[str, Any]:
        """Everything the main page shows: five paged reads and a few fetches."""
        store = self.store
        now = time.time()
        counts = _views.counts_table(await store.counts())
        attempts = await store.attempts(since=now - window, limit=ATTEMPTS_LIMIT)
        waiting = await store.jobs(
            statuses=(JobStatus.PENDING, JobStatus.RETRY_WAIT), limit=WAITING_LIMIT
        )
        upstreams = await self.fetch_all(
            sorted({u for job in waiting for u in job.depends_on})[:UPSTREAMS_LIMIT]
        )
        failures = await store.jobs(statuses=_views.FAILURES, limit=FAILURES_LIMIT)
        schedules = await store.schedules()
        return {
            "now": now,
            "counts": counts,
            "minutes": round(window / 60),
            "chart": _views.throughput(attempts, now, window, bucket=window / 30),
            "timeline": _views.timeline(attempts, now, window),
            "attempts_capped": len(attempts) >= ATTEMPTS_LIMIT,
            "attempts_limit": ATTEMPTS_LIMIT,
            "queue": _views.queue(waiting, upstreams, now),
            "waiting_capped": len(waiting) >= WAITING_LIMIT,
            "waiting_limit": WAITING_LIMIT,
            "failures": failures,
            "failures_limit": FAILURES_LIMIT,
            "schedules": schedules,
        }

    async def job_context(self, job_id: int) -> dict[str, Any]:
        job = await self.store.fetch(job_id)
        if job is None:
            raise HTTPException(404, f"no job-{job_id} in the store {self.store.url}")
        now = time.time()
        attempts = await self.store.attempts(job_id=job_id)
        upstreams = await self.fetch_all(job.depends_on[:UPSTREAMS_LIMIT])
        # The member that ran it: the job row names only a live owner, and an
        # attempt row (or the job's last one) keeps who ran each.
        ran_by = job.owner or next((a.owner for a in reversed(attempts) if a.owner), None)
        return {
            "now": now,
            "job": job,
            "attempts": attempts,
            "ran_by": ran_by,
            "call": _payload.job(job.payload),
            "result": _payload.result(job.result),
            # (id, job or None when pruned) in the order the job names them.
            "upstreams": [(u, upstreams.get(u)) for u in job.depends_on[:UPSTREAMS_LIMIT]],
            "more_upstreams": max(0, len(job.depends_on) - UPSTREAMS_LIMIT),
            "can_cancel": not job.status.is_terminal,
            "can_retry": job.status in _views.RETRYABLE,
        }

    async def fetch_all(self, ids: Any) -> dict[int, StoredJob]:
        found = {}
        for job_id in ids:
            job = await self.store.fetch(job_id)
            if job is not None:
                found[job_id] = job
        return found

    # ── actions ───────────────────────────────────────────────────────────

    async def cancel(self, request: Request) -> Response:
        job_id = request.path_params["job_id"]
        refused = await self.refuse(request, "cancel")
        if refused is not None:
            return refused
        job = await self.store.fetch(job_id)
        if job is None:
            return self.error(404, "No such job", f"no job-{job_id} in the store {self.store.url}")
        if job.status.is_terminal:
            return self.error(
                409,
                "Not cancelled",
                f"job-{job_id} already ended {job.status.value}; only a job that has not "
                "ended can be cancelled",
            )
        await self.store.cancel([job_id], time.time())
        return RedirectResponse(f"/jobs/{job_id}?done=cancel", status_code=303)

    async def retry(self, request: Request) -> Response:
        job_id = request.path_params["job_id"]
        refused = await self.refuse(request, "retry")
        if refused is not None:
            return refused
        job = await self.store.fetch(job_id)
        if job is None:
            return self.error(404, "No such job", f"no job-{job_id} in the store {self.store.url}")
        if job_id not in await self.store.retry([job_id], time.time()):
            return self.error(
                409,
                "Not retried",
                f"job-{job_id} is {job.status.value}; only a failed, timed-out or "
                "cancelled job can be retried",
            )
        return RedirectResponse(f"/jobs/{job_id}?done=retry", status_code=303)

    async def bulk_retry(self, request: Request) -> Response:
        return await self.bulk(request, "retry")

    async def bulk_cancel(self, request: Request) -> Response:
        return await self.bulk(request, "cancel")

    async def bulk(self, request: Request, action: str) -> Response:
        """Retry or cancel the jobs the list's filters (in the query string) select."""
        refused = await self.refuse(request, action)
        if refused is not None:
            return refused
        filters = _filters(request)
        applies = _views.RETRYABLE if action == "retry" else UNFINISHED
        statuses = filters.narrowed(applies)
        if not statuses:
            wanted = ", ".join(s.value for s in filters.statuses)
            able = ", ".join(s.value for s in STATUS_NAMES if s in applies)
            return self.error(
                409,
                f"Nothing to {action}",
                f"the filter selects only {wanted} jobs; {action} applies to {able} jobs",
            )
        args = {**filters.store_args(), "statuses": statuses}
        done = 0
        before: int | None = None
        more = False
        now = time.time()
        for _ in range(BULK_PAGES):
            page: JobPage = await self.store.job_page(
                **args, limit=BULK_LIMIT - done, before=before, scan=PAGE_SCAN
            )
            ids = [job.id for job in page.jobs]
            if ids and action == "retry":
                done += len(await self.store.retry(ids, now))
            elif ids:
                await self.store.cancel(ids, now)
                done += len(ids)
            before = page.next_before
            if before is None:
                break
            if done >= BULK_LIMIT:
                more = True
                break
        else:
            more = before is not None
        done_query = urlencode({"done": action, "n": done, "more": int(more)})
        return RedirectResponse(f"/jobs?{filters.query()}&{done_query}", status_code=303)

    async def refuse(self, request: Request, action: str, thing: str = "job") -> Response | None:
        """A 403 page unless the request carries the configured token."""
        if self.token is None:
            return self.error(
                403,
                "Actions are disabled",
                f"this dashboard was started without a token, so it cannot {action} {thing}s; "
                "restart it with --token or JOBSCHED_DASHBOARD_TOKEN set",
            )
        # The header first: a request that carries it is answered without
        # reading its body, and a form's body is read only up to MAX_BODY.
        given = _bearer(request.headers)
        if given is None:
            body = await _form_body(request)
            if body is None:
                return self.error(
                    413,
                    "Request too large",
                    f"an action's form is at most {MAX_BODY} bytes; not {action}",
                )
            given = _form_field(body, "token")
        if given is None:
            return self.error(
                403,
                "Token required",
                f"to {action} a {thing}, enter the dashboard's token (or send it as an "
                "'Authorization: Bearer' header)",
            )
        if not hmac.compare_digest(given.encode(), self.token.encode()):
            return self.error(
                403, "Wrong token", f"the token is not this dashboard's; not {action}"
            )
        return None

    # ── errors ────────────────────────────────────────────────────────────

    async def unavailable(self, request: Request, exc: Exception) -> Response:
        return self.error(503, "Store unavailable", str(exc))

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


def _window(request: Request) -> float:
    """The seconds of history asked for with ``?minutes=N`` (1 to 60), else :data:`WINDOW`."""
    text = request.query_params.get("minutes")
    if text is None:
        return WINDOW
    if not text.isdigit() or int(text) not in MINUTES:
        raise HTTPException(
            400, f"minutes must be a whole number from 1 to 60, got {text!r}; e.g. /?minutes=5"
        )
    return int(text) * 60.0


#: The statuses in the order the filters list them.
STATUS_NAMES = _views.STATUS_ORDER


class _Filters:
    """The job list's filters, from a query string: statuses, name, executor, tenant."""

    def __init__(
        self,
        statuses: tuple[JobStatus, ...],
        name: str | None,
        executor: str | None,
        tenant: str | None,
    ) -> None:
        self.statuses = statuses
        self.name = name
        self.executor = executor
        self.tenant = tenant

    def store_args(self) -> dict[str, Any]:
        return {
            "statuses": self.statuses,
            "name": self.name,
            "executor": self.executor,
            "tenant": self.tenant,
        }

    def narrowed(self, applies: Collection[JobStatus]) -> tuple[JobStatus, ...]:
        """The filter's statuses an action applies to (all of ``applies`` when none is chosen)."""
        chosen = self.statuses or STATUS_NAMES
        return tuple(s for s in chosen if s in applies)

    def query(self, **extra: Any) -> str:
        """The filters (and ``extra``) as a query string, escaped."""
        pairs: list[tuple[str, Any]] = [("status", s.value) for s in self.statuses]
        pairs += [
            (key, value)
            for key, value in (
                ("name", self.name),
                ("executor", self.executor),
                ("tenant", self.tenant),
            )
            if value is not None
        ]
        pairs += list(extra.items())
        return urlencode(pairs)


def _filters(request: Request) -> _Filters:
    query = request.query_params
    statuses = []
    for text in query.getlist("status"):
        if not text:
            continue
        try:
            statuses.append(JobStatus(text.strip().lower()))
        except ValueError:
            known = ", ".join(s.value for s in STATUS_NAMES)
            raise HTTPException(
                400, f"status must be one of {known}, got {text!r}; e.g. /jobs?status=failed"
            ) from None
    texts = {}
    for key in ("name", "executor", "tenant"):
        value = query.get(key, "")
        texts[key] = value if value.strip() else None
    return _Filters(tuple(dict.fromkeys(statuses)), **texts)


def _label(job: StoredJob) -> str:
    """The id the scheduler gave the job: ``job-<n>``, or the one given at
    submit, read from its payload without unpickling (see ``own_id_in``)."""
    own = own_id_in(job.payload, job.id) if job.id < 0 else None
    return own if own is not None else f"job-{job.id}"


def _job_id(text: str) -> int:
    """A job's number as typed into the lookup: ``job-12`` or ``12``, the
    number an id of your own is listed by (``job--53568``), or that id itself
    (``order-42``), as the CLI takes them."""
    typed = text.strip()
    digits = typed[4:] if typed.lower().startswith("job-") else typed
    number = _number(digits)
    if number is not None:
        return number
    try:
        return own_number(check_own_id(typed))
    except (TypeError, ValueError):
        raise HTTPException(
            400, f"{text!r} is not a job id; look up job-12, 12 or an id given at submit"
        ) from None


def _number(text: str) -> int | None:
    """A job's number (negative for an id of your own), or None."""
    body = text[1:] if text.startswith("-") else text
    if not (body.isascii() and body.isdigit() and len(body) < 20) or int(body) > LARGEST:
        return None
    return -int(body) if text.startswith("-") else int(body)


def _before(text: str | None) -> int | None:
    if text is None or text == "":
        return None
    number = _number(text)
    if number is None:
        raise HTTPException(400, f"before must be a job's number, got {text!r}")
    return number


class _JobNumber(Convertor[int]):
    """A job's number in a path: negative for an id given at submit (the
    built-in ``int`` takes digits only, so those jobs' pages were 404)."""

    regex = "-?[0-9]+"

    def convert(self, value: str) -> int:
        return int(value)

    def to_string(self, value: int) -> str:
        return str(value)


register_url_convertor("job", _JobNumber())


def _done(request: Request) -> dict[str, Any] | None:
    """What a bulk action's redirect reports (``done``, ``n``, ``more``), if well formed."""
    query = request.query_params
    action, n = query.get("done"), query.get("n", "")
    if action not in ("retry", "cancel") or not (n.isascii() and n.isdigit() and len(n) < 10):
        return None
    return {"action": action, "n": int(n), "more": query.get("more") == "1"}


def _bearer(headers: Mapping[str, str]) -> str | None:
    scheme, _, value = headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer":
        return None
    return value.strip() or None


async def _form_body(request: Request) -> bytes | None:
    """A urlencoded form's body (empty for any other kind, which is not read);
    None when it is larger than :data:`MAX_BODY`, read no further."""
    # A urlencoded form is all the page sends: parse it with the standard
    # library instead of pulling in python-multipart for Starlette's parser.
    if request.headers.get("content-type", "").split(";")[0].strip() != (
        "application/x-www-form-urlencoded"
    ):
        return b""
    declared = request.headers.get("content-length", "0")
    if not declared.isdigit() or int(declared) > MAX_BODY:
        return None
    body = b""
    # Closed when left early, not when the garbage collector finds it.
    async with contextlib.aclosing(request.stream()) as chunks:
        async for chunk in chunks:
            body += chunk
            if len(body) > MAX_BODY:  # a Content-Length that lied, or none (chunked)
                return None
    return body


def _form_field(body: bytes, name: str) -> str | None:
    values = parse_qs(body.decode("utf-8", "replace")).get(name)
    return values[0] if values and values[0] else None


def _paused(ts: float | None) -> bool:
    """A stored schedule's next fire while it is paused (``inf``)."""
    return ts == PAUSED


def _clock(ts: float | None) -> str:
    """A wall-clock time as ``HH:MM:SS UTC`` (the date too when not today's):
    UTC, said so, as the CLI shows every time."""
    if ts is None or ts == PAUSED:
        return "—"
    here = time.gmtime(ts)
    if time.strftime("%Y-%m-%d", here) != time.strftime("%Y-%m-%d", time.gmtime()):
        return time.strftime("%Y-%m-%d %H:%M:%S UTC", here)
    return time.strftime("%H:%M:%S UTC", here)


def _ago(ts: float | None, now: float) -> str:
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
