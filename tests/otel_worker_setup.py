"""Instruments `jobsched worker` with OpenTelemetry, as docs/operating.md shows:
imported with ``--import otel_worker_setup``, whose ``jobsched_setup`` is
called once the scheduler runs. For the test, the SDK's in-memory reader
and exporter, written as JSON to ``$OTEL_DUMP`` when the worker exits."""

from __future__ import annotations

import atexit
import json
import os

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import jobsched as js
import jobsched_otel

spans = InMemorySpanExporter()
tracer_provider = TracerProvider()
tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
reader = InMemoryMetricReader()
meter_provider = MeterProvider(metric_readers=[reader])


def jobsched_setup(scheduler: js.JobScheduler) -> None:
    jobsched_otel.instrument(
        scheduler, tracer_provider=tracer_provider, meter_provider=meter_provider
    )


@atexit.register
def _dump() -> None:
    data = reader.get_metrics_data()
    points = []
    for resource in data.resource_metrics if data else []:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                for point in metric.data.data_points:
                    # A histogram's sum (a wait's, a duration's): none has a value.
                    value = getattr(point, "value", getattr(point, "sum", None))
                    count = getattr(point, "count", None)
                    points.append([metric.name, dict(point.attributes or {}), value, count])
    names = [span.name for span in spans.get_finished_spans()]
    with open(os.environ["OTEL_DUMP"], "w") as out:
        json.dump({"metrics": points, "spans": names}, out)
