"""`jobsched worker` instrumented with OpenTelemetry the documented way
(docs/operating.md, "Tracing and metrics"): an ``--import``ed module whose
``jobsched_setup(scheduler)`` calls ``jobsched_otel.instrument``. The job is
enqueued by another process (a producer/worker split), and the worker
measures its queue wait from the stored run_at."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_cli import env_for
from test_cli_worker import Worker, enqueue, recorder, wait_until_ended

import jobsched as js

pytestmark = pytest.mark.timeout(180)


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
