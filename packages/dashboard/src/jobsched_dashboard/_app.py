"""The Starlette application: the routes, the store's lifetime, the error pages.

Every read goes through the :class:`~jobsched.JobStore` interface (``counts``,
``jobs``, ``attempts``, ``schedules``, ``fetch``), each paged, so a page costs
the same on a store holding a million finished jobs as on an empty one. The
page (``/``) and a job's page (``/jobs/{id}``) each have a ``/live`` twin that
renders only their changing part; the page's script fetches it every few
seconds and swaps it in.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Collection
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from jobsched import JobStore, StoreUnavailableError, open_store

from ._actions import Actions
from ._hosts import HostCheck, check_hosts
from ._lifetime import MissingStoreError, StoreGate
from ._metrics import Metrics
from ._pages import Pages
from ._render import environment
from ._workflows import WorkflowPages


def create_app(
    store_url: str | JobStore,
    *,
    token: str | None = None,
    allowed_hosts: Collection[str] | None = None,
) -> Starlette:
    """The dashboard as an ASGI app; it opens the store at startup and closes it at shutdown.

    It never creates a store: while the URL names none (no file, no jobsched
    tables), every page is a 503 saying so, until a worker or a scheduler
    has made it.

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
    hosts = check_hosts(allowed_hosts)
    store = open_store(store_url) if isinstance(store_url, str) else store_url
    if not isinstance(store, JobStore):
        raise TypeError(f"store_url must be a store URL or a jobsched.JobStore, got {store!r}")
    env = environment()
    pages, actions = Pages(store, token, env), Actions(store, token, env)
    flows = WorkflowPages(store, token, env)
    actions.session = pages.session  # one remembered token for the dashboard
    gate = StoreGate(store)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await gate.start()
        try:
            yield
        finally:
            await gate.stop()

    g = gate.guard

    def act(endpoint: Any) -> Any:
        """An action, answered by its handler; a success whose form carried
        the right token sets the remembered-token cookie (see _session)."""

        async def acted(request: Request) -> Response:
            response: Response = await endpoint(request)
            remember = getattr(request.state, "remember", False)
            if remember and response.status_code < 400 and actions.session is not None:
                actions.session.remember(request, response)
            return response

        acted.__name__ = getattr(endpoint, "__name__", "action")
        return g(acted)

    routes: list[BaseRoute] = [
        Route("/", g(pages.index)),
        Route("/live", g(pages.live)),
        Route("/jobs", g(pages.job_list)),
        Route("/members", g(pages.members)),
        Route("/workflows", g(flows.workflows)),
        Route("/workflows/{workflow_id:workflow}", g(flows.workflow)),
        Route("/workflows/{workflow_id:workflow}/live", g(flows.workflow_live)),
        Route(
            "/workflows/{workflow_id:workflow}/cancel",
            act(actions.cancel_workflow),
            methods=["POST"],
        ),
        Route("/schedules", g(pages.schedules)),
        # GET only, and a suffix of its own: a GET of .../pause stays a 405.
        Route("/schedules/{schedule_id:path}/fires", g(pages.schedule)),
        Route("/metrics", g(Metrics(store).metrics)),
        Route("/schedules/{schedule_id:path}/pause", act(actions.pause_schedule), methods=["POST"]),
        Route(
            "/schedules/{schedule_id:path}/resume", act(actions.resume_schedule), methods=["POST"]
        ),
        Route(
            "/schedules/{schedule_id:path}/trigger",
            act(actions.trigger_schedule),
            methods=["POST"],
        ),
        Route("/jobs/retry", act(actions.bulk_retry), methods=["POST"]),
        Route("/jobs/cancel", act(actions.bulk_cancel), methods=["POST"]),
        Route("/jobs/{job_id:job}", g(pages.job)),
        Route("/jobs/{job_id:job}/live", g(pages.job_live)),
        Route("/jobs/{job_id:job}/cancel", act(actions.cancel), methods=["POST"]),
        Route("/jobs/{job_id:job}/retry", act(actions.retry), methods=["POST"]),
        Mount("/static", StaticFiles(packages=[("jobsched_dashboard", "static")]), name="static"),
    ]
    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={
            MissingStoreError: pages.missing,
            StoreUnavailableError: pages.unavailable,
            NotImplementedError: pages.unsupported,
            HTTPException: pages.http_error,
        },
    )
    app.state.store = store
    if hosts is not None:
        app.add_middleware(HostCheck, hosts=hosts)
    return app
