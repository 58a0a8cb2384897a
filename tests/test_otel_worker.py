"""`jobsched worker` instrumented with OpenTelemetry the documented way
(docs/operating.md, "Tracing and metrics"): an ``--import``ed module whose
``jobsched_setup(scheduler)`` calls ``jobsched_otel.instrument``. The job is
enqueued by another process (a producer/worker split), and the worker
measures its queue wait from the stored run_at."""

from __future__ import annotations

import json
import time
from pathlib import Path

import anyio
import durable_store
import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from test_cli import env_for
from test_cli_worker import Worker, enqueue, recorder, wait_until_ended

import jobsched as js
import jobsched_otel

pytestmark = pytest.mark.timeout(180)

#: The fixture: a durable store the producer and the worker share.
store_url = durable_store.store_url


def test_a_worker_instrumented_by_its_setup_hook(tmp_path: Path) -> None:
    """The worker's attempts are traced and measured, with their queue."""
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    dump = tmp_path / "otel.json"
    ids = enqueue(url, recorder(tmp_path / "log", "v", queue="video"))
    worker = Worker(
        "--store", url, "--import", "worker_jobs", "--import", "otel_worker_setup",
        env=env_for(OTEL_DUMP=str(dump)),
    )  # fmt: skip
    try:
        worker.expect("started on ")
        (job,) = wait_until_ended(url, ids)
        assert job.status is js.JobStatus.COMPLETED
        worker.stop()
    finally:
        worker.kill()
    seen = json.loads(dump.read_text())
    assert seen["spans"] == ["record v"]
    finished = [p for p in seen["metrics"] if p[0] == "jobsched.jobs.finished"]
    assert finished == [
        [
            "jobsched.jobs.finished",
            {"executor": "thread", "queue": "video", "status": "completed"},
            1,
            None,
        ]
    ]
    (duration,) = [p for p in seen["metrics"] if p[0] == "jobsched.attempt.duration"]
    assert duration[1]["queue"] == "video" and duration[3] == 1
    # Its queue wait, though another process enqueued it (issue 38): from
    # the stored run_at its claim carried, never below 0.
    (wait,) = [p for p in seen["metrics"] if p[0] == "jobsched.queue.wait"]
    assert wait[1] == {"executor": "thread", "queue": "video"} and wait[3] == 1
    assert 0 <= wait[2] < 120


async def noop() -> str:
    return "ok"


def test_a_worker_measures_the_wait_of_a_job_a_producer_submitted(store_url: str) -> None:
    """A producer (num_workers=0) submits a job due at once and stops; an
    instrumented worker scheduler on the same store (SQLite, PostgreSQL)
    runs it and records its one ``jobsched.queue.wait``, from the stored
    run_at its claim carried: at least 0, at most the whole run."""
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])

    async def main() -> float:
        began = time.monotonic()
        async with js.JobScheduler(store=store_url, num_workers=0) as producer:
            job_id = producer.submit(js.FunctionJob(noop, (), queue="net"), delay=0)
        async with js.JobScheduler(store=store_url, num_workers=1) as worker:
            jobsched_otel.instrument(worker, meter_provider=meter_provider)
            done = await worker.wait(job_id, timeout=60)
        assert done.status is js.JobStatus.COMPLETED
        return time.monotonic() - began

    try:
        elapsed = anyio.run(main)
        data = reader.get_metrics_data()
    finally:
        meter_provider.shutdown()
    assert data is not None
    waits = [
        (dict(point.attributes or {}), point.count, point.sum)
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name == "jobsched.queue.wait"
        for point in metric.data.data_points
    ]
    ((attributes, count, total),) = waits
    assert (attributes, count) == ({"executor": "async", "queue": "net"}, 1)
    assert 0 <= total <= elapsed + 1
