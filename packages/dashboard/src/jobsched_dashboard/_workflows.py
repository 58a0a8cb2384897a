"""The workflow pages: the list (newest first, paged by id) and a workflow's
page, whose graph is server-rendered SVG (:mod:`._graph` lays it out,
:mod:`._graphsvg` draws it) with a live twin the page's script refreshes,
as a job's page has.

Each page is one or two store reads (``JobStore.workflows``,
``workflow_graph``), bounded by :mod:`._limits`: a workflow of 10,000 jobs
costs its first ``GRAPH_LIMIT`` by id, and the page says so.
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import urlencode

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from jobsched import JobStatus

from . import _graph, _graphsvg, _limits, _params, _views
from ._render import Handlers


def workflow_id(number: int) -> str:
    """A workflow's id as users see it (and the CLI prints it): ``wf-<n>``."""
    return f"wf-{number}"


def ordered(counts: dict[JobStatus, int]) -> list[tuple[JobStatus, int]]:
    """A workflow's counts in the page's status order, zeros left out."""
    return [(s, counts[s]) for s in _views.STATUS_ORDER if counts.get(s)]


class WorkflowPages(Handlers):
    """The workflow pages' route handlers (GET)."""

    async def workflows(self, request: Request) -> Response:
        query = request.query_params
        unfinished = query.get("unfinished") == "1"
        before = _params.workflow_before(query.get("before"))
        limit = _limits.WORKFLOWS_LIMIT
        rows = await self.store.workflows(limit=limit, before=before, unfinished=unfinished)
        keep = [("unfinished", "1")] if unfinished else []
        return self.render(
            "workflows.html",
            now=time.time(),
            rows=[(row, workflow_id(row.id), ordered(row.counts)) for row in rows],
            unfinished=unfinished,
            before=before,
            first_url="/workflows" + (f"?{urlencode(keep)}" if keep else ""),
            next_url=(
                f"/workflows?{urlencode([*keep, ('before', rows[-1].id)])}"
                if len(rows) >= limit
                else None
            ),
        )

    async def workflow(self, request: Request) -> Response:
        context = await self.context(request.path_params["workflow_id"])
        # A graph past FOLD_PAST jobs is up to half a megabyte of SVG: fetched
        # less often, so an open tab does not stream it every two seconds.
        slow = context["shown"] > _graph.FOLD_PAST
        live_ms = _limits.REFRESH_MS * (_limits.BIG_GRAPH_SLOWER if slow else 1)
        # What a cancel's redirect reports: how many jobs it cancelled.
        query = request.query_params
        n = query.get("n", "")
        cancelled = None
        if query.get("done") == "cancel" and n.isascii() and n.isdigit() and len(n) < 10:
            cancelled = int(n)
        return self.render(
            "workflow.html",
            live_ms=live_ms,
            cancelled=cancelled,
            remembered=self.remembered(request),
            **context,
        )

    async def workflow_live(self, request: Request) -> Response:
        context = await self.context(request.path_params["workflow_id"])
        return self.render("workflow_live.html", **context)

    async def context(self, number: int) -> dict[str, Any]:
        """What a workflow's page shows: its row, its counts and its graph."""
        graph = await self.store.workflow_graph(number, limit=_limits.GRAPH_LIMIT)
        if graph is None:
            raise HTTPException(
                404,
                f"no workflow {workflow_id(number)} in the store {self.store.url}: never "
                "enqueued there, or pruned with its last job",
            )
        drawn = _graph.layout(graph.jobs, graph.edges)
        row = graph.workflow
        return {
            "now": time.time(),
            "workflow": row,
            "wf_id": workflow_id(row.id),
            "counts": ordered(row.counts),
            "held": sum(row.counts.values()),
            "shown": len(graph.jobs),
            "truncated": graph.truncated,
            "layout": drawn,
            "graph_svg": _graphsvg.svg(drawn),
            "fold_past": _graph.FOLD_PAST,
        }
