"""instrument(): a submit hook that carries the trace context, a listener that traces attempts."""

from __future__ import annotations

import time
import weakref
from collections.abc import Iterable, Mapping
from contextvars import Token

from opentelemetry import context as otel_context
from opentelemetry import metrics, propagate, trace
from opentelemetry.context import Context
from opentelemetry.metrics import CallbackOptions, MeterProvider, Observation
from opentelemetry.trace import SpanKind, Status, StatusCode, TracerProvider

import jobsched as js

_RUNNING = js.JobStatus.RUNNING
_COMPLETED = js.JobStatus.COMPLETED
_CANCELLED = js.JobStatus.CANCELLED

#: Buckets for the two histograms, in seconds: from a no-op job's
#: milliseconds to an hour's batch job (the SDK's default buckets are
#: milliseconds-sized, 0 to 10,000).
SECONDS_BUCKETS = (
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
    30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0,
)  # fmt: skip

# The parent of an attempt whose job was submitted under no span: none.
_ROOT = Context()

# Schedulers instrumented now: a second instrument() would count everything twice.
_instrumented: weakref.WeakKeyDictionary[js.JobScheduler, Instrumentation] = (
    weakref.WeakKeyDictionary()
)


def instrument(
    scheduler: js.JobScheduler,
    *,
    tracer_provider: TracerProvider | None = None,
    meter_provider: MeterProvider | None = None,
) -> Instrumentation:
    """Trace and measure ``scheduler``'s jobs with OpenTelemetry.

    Each attempt gets a span (kind ``CONSUMER``) named after the job, a child of
    the span that was current when the job was submitted, also when another
    process runs it from a durable store. The metrics are
    ``jobsched.jobs.finished``, ``jobsched.attempt.duration``,
    ``jobsched.queue.wait`` and ``jobsched.jobs.running``.

    :param tracer_provider: where the spans go; the global one by default.
    :param meter_provider: where the metrics go; the global one by default.
    :returns: a handle whose :meth:`~Instrumentation.uninstrument` undoes this.
    :raises TypeError: ``scheduler`` is not a :class:`jobsched.JobScheduler`.
    :raises ValueError: ``scheduler`` is instrumented already.
    """
    if not isinstance(scheduler, js.JobScheduler):
        raise TypeError(f"instrument() takes a jobsched.JobScheduler, got {scheduler!r}")
    if scheduler in _instrumented:
        raise ValueError(
            f"{scheduler!r} is instrumented already; call uninstrument() on the handle "
            "instrument() returned before instrumenting it again"
        )
    handle = Instrumentation(scheduler, tracer_provider, meter_provider)
    _instrumented[scheduler] = handle
    return handle


class _Attempt:
    """A running attempt's span, when it started, and its place as the current span."""

    __slots__ = ("context", "job", "span", "started", "token")

    def __init__(
        self,
        job: js.Job,
        span: trace.Span,
        started: float,
        context: Context,
        token: Token[Context],
    ) -> None:
        self.job = job
        self.span = span
        self.started = started
        self.context = context
        self.token = token


class Instrumentation:
    """What :func:`instrument` added to one scheduler; :meth:`uninstrument` removes it."""

    def __init__(
        self,
        scheduler: js.JobScheduler,
        tracer_provider: TracerProvider | None,
        meter_provider: MeterProvider | None,
    ) -> None:
        from importlib.metadata import version

        own = version("jobsched-otel")
        self.scheduler = scheduler
        self._tracer = trace.get_tracer(__package__ or "jobsched_otel", own, tracer_provider)
        meter = metrics.get_meter(__package__ or "jobsched_otel", own, meter_provider)
        self._finished = meter.create_counter(
            "jobsched.jobs.finished",
            unit="{job}",
            description="Jobs that reached a final status, by status, executor and queue.",
        )
        self._duration = meter.create_histogram(
            "jobsched.attempt.duration",
            unit="s",
            description="How long each attempt ran, by executor, queue and the status it led to.",
            explicit_bucket_boundaries_advisory=SECONDS_BUCKETS,
        )
        self._wait = meter.create_histogram(
            "jobsched.queue.wait",
            unit="s",
            description="How long an attempt waited between when it could start and when it did.",
            explicit_bucket_boundaries_advisory=SECONDS_BUCKETS,
        )
        # Observed when a reader collects, from a count kept here: an attempt
        # pays two plain additions, not two SDK calls. By (executor, queue).
        self._running: dict[tuple[str, str], int] = {}
        meter.create_observable_up_down_counter(
            "jobsched.jobs.running",
            callbacks=[self._observe_running],
            unit="{job}",
            description="Attempts running now, by executor and queue.",
        )
        # By id(job): a job class may define __eq__ and so be unhashable.
        self._attempts: dict[int, _Attempt] = {}
        # Attribute sets repeat (a few executors, seven statuses): one dict each.
        self._labels: dict[tuple[str, ...], Mapping[str, str]] = {}
        scheduler.add_submit_hook(self._on_submit)
        scheduler.add_listener(self._on_transition)

    def uninstrument(self) -> None:
        """Stop tracing and measuring; attempts running now end their spans here."""
        self.scheduler.remove_submit_hook(self._on_submit)
        self.scheduler.remove_listener(self._on_transition)
        if _instrumented.get(self.scheduler) is self:
            del _instrumented[self.scheduler]
        for attempt in list(self._attempts.values()):
            attempt.span.set_attribute("jobsched.job.status", "uninstrumented")
            attempt.span.end()
        self._attempts.clear()
        # The meter keeps calling back (the API cannot unregister a callback):
        # nothing runs under this instrumentation any more.
        self._running = dict.fromkeys(self._running, 0)

    def _observe_running(self, options: CallbackOptions) -> Iterable[Observation]:
        # A copy, taken at once: a periodic reader calls this from its thread.
        running = dict(self._running)
        return [Observation(n, self._label(*key)) for key, n in running.items()]

    # ── the hook and the listener ────────────────────────────────────────

    def _on_submit(self, job: js.Job) -> None:
        """Carry the current trace context (and baggage) in the job's headers."""
        if not trace.get_current_span().get_span_context().is_valid:
            return  # nothing to link to: submit pays one lookup
        carrier: dict[str, str] = {}
        propagate.inject(carrier)
        if carrier:
            headers = job.headers
            job.headers = {**headers, **carrier} if headers else carrier

    def _on_transition(self, job: js.Job, old: js.JobStatus, new: js.JobStatus) -> None:
        if new is _RUNNING:
            self._start(job)
            return
        if old is _RUNNING:
            self._end(job, new)
        if new.is_terminal:
            self._finished.add(1, self._label(job.executor, job.queue, new.value))

    def _start(self, job: js.Job) -> None:
        headers = job.headers
        # Submitted under no span: a trace of its own, never a child of whatever
        # was current when the worker task started.
        parent = propagate.extract(headers, Context()) if headers else _ROOT
        executor = job.executor
        span = self._tracer.start_span(
            job.name,
            context=parent,
            kind=SpanKind.CONSUMER,
            attributes={
                "jobsched.job.id": job.job_id,
                "jobsched.job.name": job.name,
                "jobsched.job.attempt": job.attempts,
                "jobsched.job.executor": executor,
            },
        )
        # Current while the job runs, so the job's own spans (an HTTP client's)
        # are children of its attempt. The listener runs on the worker's task
        # just before the job's first step, and a thread job's context is a
        # copy of it.
        context = trace.set_span_in_context(span, parent)
        token = otel_context.attach(context)
        self._attempts[id(job)] = _Attempt(job, span, time.perf_counter(), context, token)
        key = (executor, job.queue)
        self._running[key] = self._running.get(key, 0) + 1
        # run_at is on this process's clock where the job was submitted (seq
        # set: run_at may be 0.0 on a test's clock), its retry decided, or it
        # was claimed with its stored run_at (Claimed.run_at), so a worker
        # measures the wait of a producer's job; left 0.0 only by a store
        # whose claims do not carry it: not measured.
        if (job.seq or job.run_at) and job.started_at is not None:
            self._wait.record(max(0.0, job.started_at - job.run_at), self._label(*key))

    def _end(self, job: js.Job, new: js.JobStatus) -> None:
        attempt = self._attempts.pop(id(job), None)
        if attempt is None:
            # Not started under this instrumentation: a store's "worker lost"
            # attempt, or one running when instrument() was called.
            return
        if otel_context.get_current() is attempt.context:
            otel_context.detach(attempt.token)
        # Else it ended on another task (abandoned after its cancel grace): its
        # worker's context is not ours to reset.
        elapsed = time.perf_counter() - attempt.started
        key = (job.executor, job.queue)
        self._running[key] -= 1
        self._duration.record(elapsed, self._label(*key, new.value))
        span = attempt.span
        span.set_attribute("jobsched.job.status", new.value)
        if new is not _COMPLETED:
            error = job.last_error
            if error is not None:
                span.set_attribute("jobsched.job.error", error)
            if new is not _CANCELLED:
                if job.last_traceback is not None:
                    span.add_event("exception", _exception_attributes(error, job.last_traceback))
                span.set_status(Status(StatusCode.ERROR, error))
        span.end()

    def _label(self, executor: str, queue: str, status: str | None = None) -> Mapping[str, str]:
        key = (executor, queue) if status is None else (executor, queue, status)
        labels = self._labels.get(key)
        if labels is None:
            labels = {"executor": executor, "queue": queue}
            if status is not None:
                labels["status"] = status
            self._labels[key] = labels
        return labels


def _exception_attributes(error: str | None, stacktrace: str) -> dict[str, str]:
    """The semantic conventions' ``exception`` event, from a job's last_error and traceback.

    The listener sees the job, not the exception object, so the type comes
    from ``last_error`` (``"ValueError: boom"``), as the scheduler wrote it.
    """
    attributes = {"exception.stacktrace": stacktrace}
    if error is not None:
        kind, sep, message = error.partition(": ")
        if sep and kind.replace(".", "").replace("_", "").isalnum():
            attributes["exception.type"] = kind
            attributes["exception.message"] = message
        else:
            attributes["exception.message"] = error
    return attributes
