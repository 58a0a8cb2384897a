"""W1otel: what jobsched-otel costs, as W1 with instrument() on over W1 without, in one process.

Run as ``python -m benchmarks._otel SYSTEM W1otel SIZE`` (the suite's child
protocol, see :mod:`benchmarks._child`). Both halves run in the same process,
after a warm-up of each, so the ratio is free of run-to-run noise (as W2p's).
The instrumentation is the SDK's tracer provider, every span sampled and
handed to a span processor whose exporter drops it, and the SDK's meter
provider; every job is submitted under a request span, so every attempt
extracts a parent from the job's headers. The processor is the simple
(synchronous) one: production's batch processor exports on a thread of its
own, and on a loaded 2-CPU machine that thread's contention for the GIL cost
up to 2 ms per span, swamping what is measured here (the CPU cost of
recording, which the loop pays either way). ``raw`` is the same cost on plain asyncio: one span
and the same metric calls per task, over the bare tasks, as a floor for what
any instrumentation of a no-op job costs.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Sequence
from typing import Any

from benchmarks import _jobsched, _raw
from benchmarks._work import noop
from benchmarks._workloads import Metric, Workload

W1OTEL = Workload(
    "W1otel",
    "W1 with jobsched_otel.instrument() on (SDK tracer and meter, every span sampled, "
    "exported to a no-op; jobs submitted under a span), over W1 without, both in one process; raw: "
    "plain asyncio with one span and the same metric calls per task, over without",
    (100_000,),
    (10_000,),
    (
        Metric("on_vs_off", "throughput on / off", "x", True),
        Metric("added_us", "added per job", "µs/job", False),
    ),
)
WARM_UP = 64


def _providers() -> tuple[Any, Any]:
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import (
        SimpleSpanProcessor,
        SpanExporter,
        SpanExportResult,
    )

    class Drop(SpanExporter):
        """Accepts every batch and keeps nothing: the export's network cost is not ours."""

        def export(self, spans: Sequence[Any]) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(Drop()))
    return tracer_provider, MeterProvider(metric_readers=[InMemoryMetricReader()])


async def _on_jobsched(size: int, on: bool, providers: tuple[Any, Any]) -> float:
    import jobsched as js
    import jobsched_otel

    tracer_provider, meter_provider = providers
    scheduler = js.JobScheduler(num_workers=4)
    if on:
        jobsched_otel.instrument(
            scheduler, tracer_provider=tracer_provider, meter_provider=meter_provider
        )
    with tracer_provider.get_tracer("bench").start_as_current_span("request"):
        for _ in range(size):
            scheduler.submit(_jobsched.Noop("noop"))
    return size / await _jobsched._drain(scheduler)


async def _plain(size: int, on: bool, providers: tuple[Any, Any]) -> float:
    """W1 on plain asyncio; with ``on``, each task in a span with the same metric calls."""
    tracer_provider, meter_provider = providers
    tracer = tracer_provider.get_tracer("bench")
    meter = meter_provider.get_meter("bench")
    finished = meter.create_counter("finished")
    duration = meter.create_histogram("duration")
    wait = meter.create_histogram("wait")
    labels = {"executor": "async"}
    ended = {"executor": "async", "status": "completed"}
    running = [0]  # jobs.running is observed at collection, as jobsched-otel's is

    async def traced() -> None:
        t0 = time.perf_counter()
        span = tracer.start_span("noop", attributes={"job": "noop"})
        running[0] += 1
        wait.record(0.0, labels)
        await noop()
        running[0] -= 1
        duration.record(time.perf_counter() - t0, ended)
        finished.add(1, ended)
        span.end()

    queue: asyncio.Queue[Any] = asyncio.Queue()
    for _ in range(size):
        queue.put_nowait(traced if on else noop)
    t0 = time.perf_counter()
    await _raw._drain_queue(queue, 4)
    return size / (time.perf_counter() - t0)


async def _ratio(system: str, size: int) -> dict[str, float]:
    providers = _providers()
    run = _plain if system == "raw" else _on_jobsched
    for on in (False, True):
        await run(WARM_UP, on, providers)
    off = await run(size, False, providers)
    on = await run(size, True, providers)
    providers[0].shutdown()
    providers[1].shutdown()
    return {"on_vs_off": on / off, "added_us": (1 / on - 1 / off) * 1e6}


def run(system: str, size: int) -> dict[str, float]:
    """One measurement of W1otel on ``system`` (``raw`` or ``jobsched``)."""
    return asyncio.run(_ratio(system, size))


if __name__ == "__main__":
    system, _, size = sys.argv[1:4]
    print(json.dumps(run(system, int(size))))
