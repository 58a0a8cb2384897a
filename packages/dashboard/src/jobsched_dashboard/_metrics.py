"""``/metrics``: the store's figures as Prometheus text.

A read like the pages: no token (the token guards actions that change
jobs), behind the same ``Host`` check and bind address. The figures are the
store's own (jobs by queue and status, every job by status and executor,
live members); the attempts' counters and histograms are each worker's
(``jobsched worker --metrics-port``), which the dashboard does not run.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from jobsched import JobStore


class Metrics:
    """The ``/metrics`` route's handler."""

    def __init__(self, store: JobStore) -> None:
        self._store = store

    async def metrics(self, request: Request) -> Response:
        try:
            from prometheus_client import CONTENT_TYPE_LATEST

            from jobsched._metrics import figures_text, read_store
        except ImportError:
            return PlainTextResponse(
                "/metrics needs prometheus_client: pip install 'jobsched-core[prometheus]'\n",
                status_code=501,
            )
        body = figures_text(await read_store(self._store))
        return Response(body, media_type=CONTENT_TYPE_LATEST)
