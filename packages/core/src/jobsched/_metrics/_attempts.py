"""This process's attempts as Prometheus counters and histograms: a listener."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from .._enums import JobStatus

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

    from .._jobs._job import Job

_RUNNING = JobStatus.RUNNING

#: Histogram buckets in seconds, from a no-op job's milliseconds to an hour's
#: batch (as jobsched-otel's; prometheus_client's default stops at 10 s).
SECONDS_BUCKETS = (
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
    30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0,
)  # fmt: skip


class AttemptMetrics:
    """A scheduler listener (``scheduler.add_listener(metrics)``) that counts
    the attempts ending in this process, with their durations and queue waits.

    - ``jobsched_attempts_total{queue, executor, status}``: attempts that
      ended here, by the status each led to (``retry_wait`` for a failure
      that is retried), a takeover's "worker lost" attempt too;
    - ``jobsched_attempt_duration_seconds{queue, executor, status}``: how
      long each attempt that started here ran;
    - ``jobsched_queue_wait_seconds{queue, executor}``: from when the
      attempt could start (the job's ``run_at``) to its start, wherever the
      job was submitted: a job claimed from a store brings its stored
      ``run_at`` (``Claimed.run_at``), read against this machine's wall
      clock. Only a third-party store whose claims leave it out leaves a
      claimed job's wait unmeasured.
    """

    def __init__(self, registry: CollectorRegistry) -> None:
        from prometheus_client import Counter, Histogram

        self.attempts = Counter(
            "jobsched_attempts",
            "Attempts that ended in this process, by queue, executor and the status each led to.",
            ["queue", "executor", "status"],
            registry=registry,
        )
        self.duration = Histogram(
            "jobsched_attempt_duration_seconds",
            "How long each attempt ran, by queue, executor and the status it led to.",
            ["queue", "executor", "status"],
            buckets=SECONDS_BUCKETS,
            registry=registry,
        )
        self.wait = Histogram(
            "jobsched_queue_wait_seconds",
            "From when an attempt could start (its job's run_at) to its start.",
            ["queue", "executor"],
            buckets=SECONDS_BUCKETS,
            registry=registry,
        )
        # By id(job): a job class may define __eq__ and so be unhashable.
        self._started: dict[int, float] = {}

    def __call__(self, job: Job, old: JobStatus, new: JobStatus) -> None:
        """The listener: ``scheduler.add_listener(metrics)``."""
        if new is _RUNNING:
            self._started[id(job)] = time.perf_counter()
            # run_at is on this process's clock where the job was submitted
            # (seq set: run_at may be 0.0 on a test's clock), its retry
            # decided, or it was claimed with its stored run_at; left 0.0
            # only by a store whose claims do not carry it: not measured.
            if (job.seq or job.run_at) and job.started_at is not None:
                wait = max(0.0, job.started_at - job.run_at)
                self.wait.labels(job.queue, job.executor).observe(wait)
            return
        if old is not _RUNNING:
            return  # not an attempt: cancelled while queued, released, ...
        queue, executor, status = job.queue, job.executor, new.value
        self.attempts.labels(queue, executor, status).inc()
        started = self._started.pop(id(job), None)
        if started is not None:
            # Else it ran in a member that died: ended here, not timed here.
            elapsed = time.perf_counter() - started
            self.duration.labels(queue, executor, status).observe(elapsed)
