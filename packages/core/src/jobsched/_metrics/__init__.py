"""Prometheus text for ``jobsched worker --metrics-port`` and the dashboard's ``/metrics``.

Built on ``prometheus_client`` (the ``jobsched-core[prometheus]`` extra), the
Prometheus project's own client: stable, without dependencies, with the text
format and its parser. OpenTelemetry's Prometheus exporter would need the
SDK and is still a pre-release; an application that uses OpenTelemetry has
``jobsched-otel`` for the same figures.

Two halves, which never import each other's sources:

- the store's figures (:mod:`._store`): jobs by queue and status, every job
  by status and executor, live members; read at each scrape from the counts
  the stores keep incrementally (never a scan of the finished history), so
  a worker and the dashboard serve the same numbers;
- this process's attempts (:mod:`._attempts`): a listener that counts the
  attempts that ended here, by status, queue and executor, with their
  durations and queue waits as histograms. Only a worker has them.

Nothing here is imported unless a metrics endpoint is asked for. It may
import the parts below the CLI (the store seam, ``_jobs``, the leaves; the
engine for types only); the CLI's worker and the dashboard import it.
"""

from ._attempts import SECONDS_BUCKETS as SECONDS_BUCKETS
from ._attempts import AttemptMetrics as AttemptMetrics
from ._store import StoreFigures as StoreFigures
from ._store import figures_text as figures_text
from ._store import read_store as read_store
from ._store import store_families as store_families
