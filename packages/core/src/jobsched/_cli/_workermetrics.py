"""``jobsched worker --metrics-port``: the worker's Prometheus endpoint,
checked before anything starts and started once the scheduler is."""

from __future__ import annotations

from typing import Any

from .._engine._scheduler import JobScheduler
from ._main import UserError


def need_prometheus() -> None:
    """UserError naming the install if prometheus_client is missing."""
    try:
        import prometheus_client  # noqa: F401
    except ImportError:
        raise UserError(
            "--metrics-port needs prometheus_client: pip install 'jobsched-core[prometheus]'"
        ) from None


def serve_metrics(scheduler: JobScheduler, host: str, port: int) -> tuple[Any, UserError | None]:
    """The started metrics endpoint, or why it could not start."""
    from .._metrics._serve import MetricsServer

    server = MetricsServer(scheduler, scheduler._link.store, host, port)  # type: ignore[union-attr]
    try:
        server.start()
    except OSError as exc:
        return None, UserError(f"--metrics-port cannot listen on {host}:{port}: {exc}")
    return server, None
