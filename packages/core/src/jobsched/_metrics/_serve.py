"""``jobsched worker --metrics-port``: the Prometheus endpoint of one worker.

prometheus_client's own HTTP server answers on a thread of its own, so a
scrape never waits behind the event loop's jobs, nor they behind it; the
store's figures are read on the loop (through its token), where the store's
connections live, once per scrape.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import anyio
import anyio.from_thread
import anyio.lowlevel

from ._attempts import AttemptMetrics
from ._store import read_store, store_families

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric

    from .._engine._scheduler import JobScheduler
    from ..store._base import JobStore

log = logging.getLogger("jobsched.worker")

#: The longest a scrape waits for the store's figures: a store that does
#: not answer leaves them out of that scrape rather than hold the scraper.
READ_TIMEOUT = 10.0


class MetricsServer:
    """One worker's ``/metrics``: its attempts and the store's figures.

    :meth:`start` on the scheduler's event loop (once the scheduler runs),
    :meth:`stop` before the scheduler stops.
    """

    def __init__(self, scheduler: JobScheduler, store: JobStore, host: str, port: int) -> None:
        from prometheus_client import CollectorRegistry

        self.registry = CollectorRegistry(auto_describe=False)
        self.attempts = AttemptMetrics(self.registry)
        self._scheduler = scheduler
        self._store = store
        self._host, self._port = host, port
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self.port = port

    def start(self) -> None:
        """Listen (the bound port is :attr:`port`) and count this scheduler's attempts.

        :raises OSError: the address cannot be bound (the port is taken).
        """
        from prometheus_client import start_http_server

        self.registry.register(_StoreCollector(self._store, anyio.lowlevel.current_token()))
        self._server, self._thread = start_http_server(
            self._port, addr=self._host, registry=self.registry
        )
        self.port = self._server.server_port
        self._scheduler.add_listener(self.attempts)

    @property
    def url(self) -> str:
        """Where it answers: ``http://HOST:PORT/metrics``."""
        host = f"[{self._host}]" if ":" in self._host else self._host
        return f"http://{host}:{self.port}/metrics"

    def stop(self) -> None:
        """Stop answering; the last scrape in progress ends first."""
        self._scheduler.remove_listener(self.attempts)
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            assert self._thread is not None
            self._thread.join()
            self._server = None


class _StoreCollector:
    """The store's figures, read on the event loop at each scrape."""

    def __init__(self, store: JobStore, token: anyio.lowlevel.EventLoopToken) -> None:
        self._store = store
        self._token = token

    def collect(self) -> Iterator[Metric]:
        async def read() -> Any:
            with anyio.fail_after(READ_TIMEOUT):
                return await read_store(self._store)

        try:
            figures = anyio.from_thread.run(read, token=self._token)
        except Exception as exc:
            # A scrape still answers with this process's own metrics.
            log.warning("metrics: the store's figures could not be read: %s", exc)
            return
        yield from store_families(figures)
