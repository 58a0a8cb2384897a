"""jobsched-otel: a span per attempt, linked to the submitting request (also across
processes, through a SQLite store), and the contract's metrics, read back with the
SDK's in-memory span exporter and metric reader."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from sample_jobs import FailTimes, Gate, Ok

import jobsched as js
import jobsched_otel

S = js.JobStatus
Make = Callable[..., js.JobScheduler]
TESTS = Path(__file__).resolve().parent


@dataclass
class Otel:
    """The SDK's providers, wired to in-memory readers, and a tracer for the 'request'."""

    exporter: InMemorySpanExporter
    reader: InMemoryMetricReader
    tracer_provider: TracerProvider
    meter_provider: MeterProvider

    def instrument(self, scheduler: js.JobScheduler) -> jobsched_otel.Instrumentation:
        return jobsched_otel.instrument(
            scheduler, tracer_provider=self.tracer_provider, meter_provider=self.meter_provider
        )

    def request(self) -> Any:
        """A span standing for the web request that submits the job."""
        return self.tracer_provider.get_tracer("app").start_as_current_span("request")

    def attempts(self) -> list[ReadableSpan]:
        """The attempt spans, in the order they ended."""
        return [s for s in self.exporter.get_finished_spans() if s.kind is SpanKind.CONSUMER]

    def metrics(self) -> dict[str, dict[frozenset[tuple[str, Any]], Any]]:
        """name -> attributes -> value (a sum) or (count, sum) (a histogram)."""
        out: dict[str, dict[frozenset[tuple[str, Any]], Any]] = {}
        data = self.reader.get_metrics_data()
        for resource in data.resource_metrics if data else ():
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    points = out.setdefault(metric.name, {})
                    for point in metric.data.data_points:
                        key = frozenset((point.attributes or {}).items())
                        points[key] = (
                            (point.count, point.sum) if hasattr(point, "count") else point.value
                        )
        return out


@pytest.fixture
def otel() -> Iterator[Otel]:
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    yield Otel(exporter, reader, tracer_provider, meter_provider)
    tracer_provider.shutdown()
    meter_provider.shutdown()


def labels(**attributes: str) -> frozenset[tuple[str, Any]]:
    return frozenset(attributes.items())


def current_span_ids() -> tuple[int, int]:
    """Run as a job: the trace and span ids of the span current inside it."""
    context = trace.get_current_span().get_span_context()
    return context.trace_id, context.span_id


async def current_span_ids_async() -> tuple[int, int]:
    return current_span_ids()


# ── spans ────────────────────────────────────────────────────────────────


@pytest.mark.anyio
async def test_a_completed_attempt_is_a_child_of_the_request(
    make_scheduler: Make, otel: Otel
) -> None:
    """One CONSUMER span per attempt, named after the job, child of the span current at submit."""
    async with make_scheduler() as s:
        otel.instrument(s)
        with otel.request() as request:
            job_id = s.submit(Ok(1, name="send report"))
        with anyio.fail_after(10):
            await s.join()
    (span,) = otel.attempts()
    assert span.name == "send report"
    assert dict(span.attributes or {}) == {
        "jobsched.job.id": job_id,
        "jobsched.job.name": "send report",
        "jobsched.job.attempt": 1,
        "jobsched.job.executor": "async",
        "jobsched.job.status": "completed",
    }
    assert span.status.status_code is StatusCode.UNSET
    assert span.context.trace_id == request.get_span_context().trace_id
    assert span.parent is not None and span.parent.span_id == request.get_span_context().span_id
    assert span.parent.is_remote  # it came through the job's headers, as from another process


@pytest.mark.anyio
async def test_a_job_submitted_under_no_span_starts_its_own_trace(
    make_scheduler: Make, otel: Otel
) -> None:
    """No span at submit: no headers, and a root span, even if the scheduler started under one."""
    with otel.request():
        s = make_scheduler()
        async with s:
            otel.instrument(s)
            with trace.use_span(trace.INVALID_SPAN):
                job_id = s.submit(Ok())
            with anyio.fail_after(10):
                await s.join()
    assert s.get(job_id).headers is None
    (span,) = otel.attempts()
    assert span.parent is None


@pytest.mark.anyio
async def test_a_failure_records_the_error(make_scheduler: Make, otel: Otel) -> None:
    """A failed attempt: status ERROR with last_error, and an exception event with the traceback."""
    async with make_scheduler() as s:
        otel.instrument(s)
        job_id = s.submit(FailTimes(5, retry=js.RetryPolicy(max_retries=0)))
        with anyio.fail_after(10):
            await s.join()
    (span,) = otel.attempts()
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description == "ConnectionError: attempt 1" == s.get(job_id).last_error
    assert span.attributes is not None and span.attributes["jobsched.job.status"] == "failed"
    (event,) = span.events
    attributes = dict(event.attributes or {})
    assert event.name == "exception"
    assert attributes["exception.type"] == "ConnectionError"
    assert attributes["exception.message"] == "attempt 1"
    assert 'raise self.exc(f"attempt {self.attempts}")' in attributes["exception.stacktrace"]


@pytest.mark.anyio
async def test_each_retry_is_a_span_of_its_own(make_scheduler: Make, otel: Otel) -> None:
    """Two failures then a success: three spans, attempts 1-3, all children of the request."""
    async with make_scheduler() as s:
        otel.instrument(s)
        with otel.request() as request:
            s.submit(FailTimes(2, retry=js.RetryPolicy(max_retries=3, base_delay=0.01)))
        with anyio.fail_after(10):
            await s.join()
    spans = otel.attempts()
    assert [(x.attributes or {})["jobsched.job.attempt"] for x in spans] == [1, 2, 3]
    assert [(x.attributes or {})["jobsched.job.status"] for x in spans] == [
        "retry_wait",
        "retry_wait",
        "completed",
    ]
    assert [x.status.status_code for x in spans] == [
        StatusCode.ERROR,
        StatusCode.ERROR,
        StatusCode.UNSET,
    ]
    parent = request.get_span_context().span_id
    assert all(x.parent is not None and x.parent.span_id == parent for x in spans)
    assert len({x.context.span_id for x in spans}) == 3


@pytest.mark.anyio
async def test_a_timeout_is_an_error_without_an_exception(make_scheduler: Make, otel: Otel) -> None:
    """A timed-out attempt: status ERROR "timed out after ...", no exception event."""
    async with make_scheduler() as s:
        otel.instrument(s)
        s.submit(Ok(seconds=60, timeout=0.2, retry=js.RetryPolicy(max_retries=0)))
        with anyio.fail_after(30):
            await s.join()
    (span,) = otel.attempts()
    assert span.attributes is not None and span.attributes["jobsched.job.status"] == "timed_out"
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description == "timed out after 0.2s"
    assert list(span.events) == []


@pytest.mark.anyio
@pytest.mark.memory_only("the running job holds an anyio.Event, which a store cannot pickle")
async def test_a_cancelled_attempt_is_not_an_error(make_scheduler: Make, otel: Otel) -> None:
    """Cancelled while running: the span ends, status cancelled with the reason, not ERROR;
    a job cancelled while queued has no attempt, so no span, but it counts as finished."""
    async with make_scheduler(num_workers=1) as s:
        otel.instrument(s)
        gate = Gate()
        running = s.submit(gate)
        queued = s.submit(Ok())
        with anyio.fail_after(10):
            await gate.started.wait()
        assert otel.metrics()["jobsched.jobs.running"] == {
            labels(executor="async", queue="default"): 1
        }
        assert s.cancel(queued) and s.cancel(running)
        with anyio.fail_after(10):
            await s.join()
    (span,) = otel.attempts()
    attributes = dict(span.attributes or {})
    assert attributes["jobsched.job.status"] == "cancelled"
    assert attributes["jobsched.job.error"] == "cancelled"
    assert span.status.status_code is StatusCode.UNSET
    metrics = otel.metrics()
    assert metrics["jobsched.jobs.finished"] == {
        labels(executor="async", queue="default", status="cancelled"): 2
    }
    assert metrics["jobsched.jobs.running"] == {labels(executor="async", queue="default"): 0}


@pytest.mark.anyio
async def test_the_attempt_span_is_current_inside_the_job(
    make_scheduler: Make, otel: Otel, virtual_time: bool
) -> None:
    """Spans the job makes (an HTTP client's, say) are children of its attempt: async and thread."""
    async with make_scheduler() as s:
        otel.instrument(s)
        with otel.request():
            ids = [s.submit(js.FunctionJob(current_span_ids_async))]
            if not virtual_time:  # a thread lives on the real clock, which the mock one skips
                ids.append(s.submit(js.FunctionJob(current_span_ids, executor="thread")))
        with anyio.fail_after(10):
            await s.join()
    by_job = {(x.attributes or {})["jobsched.job.id"]: x for x in otel.attempts()}
    for job_id in ids:
        span = by_job[job_id]
        assert tuple(s.get(job_id).result) == (span.context.trace_id, span.context.span_id)


@pytest.mark.anyio
@pytest.mark.memory_only("the parent job's function is a closure, which a store cannot pickle")
async def test_a_job_submitted_by_a_job_is_a_child_of_its_attempt(
    make_scheduler: Make, otel: Otel
) -> None:
    """Work a job fans out is part of the same trace, under the attempt that submitted it."""
    children: list[str] = []

    async def fan_out() -> None:
        children.append(s.submit(Ok(name="child")))

    async with make_scheduler() as s:
        otel.instrument(s)
        parent = s.submit(js.FunctionJob(fan_out, name="parent"))
        with anyio.fail_after(10):
            await s.join()
    by_job = {(x.attributes or {})["jobsched.job.id"]: x for x in otel.attempts()}
    (child,) = children
    assert by_job[parent].parent is None
    assert by_job[child].parent is not None
    assert by_job[child].parent.span_id == by_job[parent].context.span_id
    assert by_job[child].context.trace_id == by_job[parent].context.trace_id


@pytest.mark.anyio
async def test_submit_threadsafe_carries_the_calling_threads_span(
    make_scheduler: Make, otel: Otel
) -> None:
    """A request thread (Flask, Django) submits through submit_threadsafe: still its child."""
    parents: list[int] = []

    def request_thread() -> None:
        with otel.request() as request:
            parents.append(request.get_span_context().span_id)
            s.submit_threadsafe(Ok())

    async with make_scheduler() as s:
        otel.instrument(s)
        thread = threading.Thread(target=request_thread)
        thread.start()
        await anyio.to_thread.run_sync(thread.join)
        with anyio.fail_after(10):
            await s.join()
    (span,) = otel.attempts()
    assert span.parent is not None and [span.parent.span_id] == parents


# ── metrics ──────────────────────────────────────────────────────────────


@pytest.mark.anyio
async def test_metrics_count_what_happened(make_scheduler: Make, otel: Otel) -> None:
    """finished by status, one duration and one queue wait per attempt, nothing left running."""
    async with make_scheduler() as s:
        otel.instrument(s)
        for _ in range(3):
            s.submit(Ok())
        s.submit(FailTimes(1, retry=js.RetryPolicy(max_retries=1, base_delay=0.01)))
        s.submit(FailTimes(9, retry=js.RetryPolicy(max_retries=0)))
        with anyio.fail_after(10):
            await s.join()
    metrics = otel.metrics()
    assert metrics["jobsched.jobs.finished"] == {
        labels(executor="async", queue="default", status="completed"): 4,
        labels(executor="async", queue="default", status="failed"): 1,
    }
    durations = metrics["jobsched.attempt.duration"]
    assert {k: count for k, (count, _) in durations.items()} == {
        labels(executor="async", queue="default", status="completed"): 4,
        labels(executor="async", queue="default", status="retry_wait"): 1,
        labels(executor="async", queue="default", status="failed"): 1,
    }
    assert all(total >= 0 for _, total in durations.values())
    (waits,) = metrics["jobsched.queue.wait"].items()
    assert (
        waits[0] == labels(executor="async", queue="default") and waits[1][0] == 6
    )  # six attempts
    assert metrics["jobsched.jobs.running"] == {labels(executor="async", queue="default"): 0}


@pytest.mark.anyio
async def test_every_metric_says_the_jobs_queue(make_scheduler: Make, otel: Otel) -> None:
    """Issue 38: a queue attribute on each metric, so a slow queue shows apart."""
    async with make_scheduler() as s:
        otel.instrument(s)
        s.submit(Ok(queue="video"))
        s.submit(Ok())
        with anyio.fail_after(10):
            await s.join()
    metrics = otel.metrics()
    video, default = labels(queue="video"), labels(queue="default")
    assert metrics["jobsched.jobs.finished"] == {
        labels(executor="async", queue=q, status="completed"): 1 for q in ("video", "default")
    }
    for name in ("jobsched.attempt.duration", "jobsched.queue.wait"):
        assert {k & (video | default) for k in metrics[name]} == {video, default}, name
    assert metrics["jobsched.jobs.running"] == {
        labels(executor="async", queue=q): 0 for q in ("video", "default")
    }


@pytest.mark.anyio
@pytest.mark.memory_only("the wait is timed on the virtual clock, which SQLite runs leave out")
async def test_queue_wait_is_how_long_a_runnable_job_waited(
    make_scheduler: Make, otel: Otel, virtual_time: bool
) -> None:
    """One worker, two 5-second jobs: the second waited about 5 s for the worker, not its delay."""
    if not virtual_time:
        pytest.skip("exact waits need trio's mock clock; asyncio runs the same code above")
    async with make_scheduler(num_workers=1) as s:
        otel.instrument(s)
        s.submit(Ok(seconds=5), delay=100)  # its delay is not waiting
        s.submit(Ok(seconds=5))
        s.submit(Ok(seconds=5))
        with anyio.fail_after(300):
            await s.join()
    ((count, total),) = otel.metrics()["jobsched.queue.wait"].values()
    assert count == 3
    assert total == pytest.approx(5.0, abs=0.01)


@pytest.mark.anyio
async def test_attempt_duration_is_in_seconds(
    make_scheduler: Make, otel: Otel, virtual_time: bool
) -> None:
    """A 0.2 s job records at least 0.2 s (on the real clock), in the seconds-sized buckets."""
    if virtual_time:
        pytest.skip("the mock clock's sleeps take no real time")
    async with make_scheduler() as s:
        otel.instrument(s)
        s.submit(Ok(seconds=0.2))
        with anyio.fail_after(10):
            await s.join()
    ((count, total),) = otel.metrics()["jobsched.attempt.duration"].values()
    assert count == 1 and 0.2 <= total < 30
    data = otel.reader.get_metrics_data()
    assert data is not None
    (histogram,) = [
        m
        for r in data.resource_metrics
        for sc in r.scope_metrics
        for m in sc.metrics
        if m.name == "jobsched.attempt.duration"
    ]
    assert histogram.unit == "s"
    assert (
        tuple(histogram.data.data_points[0].explicit_bounds)
        == jobsched_otel._instrument.SECONDS_BUCKETS
    )


# ── instrument() itself ──────────────────────────────────────────────────


def test_instrument_refuses_what_it_cannot_instrument(otel: Otel) -> None:
    """Not a scheduler: TypeError; a scheduler instrumented twice: ValueError naming the fix."""
    with pytest.raises(TypeError, match="instrument\\(\\) takes a jobsched.JobScheduler, got 42"):
        jobsched_otel.instrument(42)  # type: ignore[arg-type]
    s = js.JobScheduler()
    handle = otel.instrument(s)
    with pytest.raises(ValueError, match="instrumented already; call uninstrument"):
        otel.instrument(s)
    handle.uninstrument()
    otel.instrument(s).uninstrument()  # and again after uninstrument


@pytest.mark.anyio
@pytest.mark.memory_only("the running job holds an anyio.Event, which a store cannot pickle")
async def test_uninstrument_stops_tracing_and_ends_open_spans(
    make_scheduler: Make, otel: Otel
) -> None:
    """After uninstrument(): a running attempt's span ends, nothing new is traced or counted."""
    async with make_scheduler() as s:
        handle = otel.instrument(s)
        gate = Gate()
        s.submit(gate)
        with anyio.fail_after(10):
            await gate.started.wait()
        handle.uninstrument()
        (span,) = otel.attempts()
        assert (span.attributes or {})["jobsched.job.status"] == "uninstrumented"
        gate.release.set()
        with otel.request():
            later = s.submit(Ok())
        with anyio.fail_after(10):
            await s.join()
    assert len(otel.attempts()) == 1
    assert s.get(later).headers is None
    assert otel.metrics()["jobsched.jobs.running"] == {labels(executor="async", queue="default"): 0}
    assert "jobsched.jobs.finished" not in otel.metrics()


def test_the_core_does_not_import_opentelemetry() -> None:
    """`import jobsched` (and making a scheduler) loads no OpenTelemetry module."""
    code = (
        "import sys, jobsched; jobsched.JobScheduler(); "
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]"


# ── across processes ─────────────────────────────────────────────────────

WORKER = """
import json, sys
import anyio
import jobsched as js
import jobsched_otel
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))

async def main():
    async with js.JobScheduler(store=sys.argv[1]) as s:
        jobsched_otel.instrument(s, tracer_provider=provider)
        with anyio.fail_after(30):
            await s.join()

anyio.run(main, backend=sys.argv[2])
print(json.dumps([
    {
        "name": span.name,
        "trace_id": span.context.trace_id,
        "parent": span.parent.span_id if span.parent else None,
        "attributes": dict(span.attributes),
    }
    for span in exporter.get_finished_spans()
]))
"""


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_the_link_survives_a_durable_store_and_a_process(
    tmp_path: Path, otel: Otel, backend: str
) -> None:
    """Submitted under a span into SQLite here, run by a scheduler in another process with its
    own exporter: that process's attempt span is a child of this process's request span."""
    url = f"sqlite:///{tmp_path / 'jobs.db'}"

    async def submit() -> tuple[str, Any]:
        s = js.JobScheduler(store=url)  # never started: stop() writes the job, then closes
        otel.instrument(s)
        with otel.request() as request:
            job_id = s.submit(Ok("done", name="stored job"))
        await s.stop()
        return job_id, request.get_span_context()

    job_id, request = anyio.run(submit, backend=backend)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-c", WORKER, url, backend],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    (span,) = json.loads(done.stdout.strip().splitlines()[-1])
    assert span["name"] == "stored job"
    assert span["attributes"]["jobsched.job.id"] == job_id
    assert span["attributes"]["jobsched.job.status"] == "completed"
    assert span["trace_id"] == request.trace_id
    assert span["parent"] == request.span_id
    assert otel.attempts() == []  # nothing ran here
