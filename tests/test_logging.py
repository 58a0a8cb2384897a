"""What the core logs about jobs: failures, retries, timeouts and cancellations.

Every record about a job comes from the ``jobsched`` logger and carries the
``job_id``, ``job_name`` and ``attempt`` fields, so a JSON formatter shows them.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

import anyio
import pytest
from sample_jobs import FailTimes, Gate, Ok

import jobsched as js

pytestmark = pytest.mark.anyio

S = js.JobStatus
Make = Callable[..., js.JobScheduler]
FAST = js.RetryPolicy(max_retries=1, base_delay=0.01, jitter=False)


class _Json(logging.Formatter):
    """The kind of formatter a user plugs in: the extra fields become JSON keys."""

    def format(self, record: logging.LogRecord) -> str:
        return json.dumps(
            {
                "level": record.levelname,
                "message": record.getMessage(),
                "job_id": getattr(record, "job_id", None),
                "job_name": getattr(record, "job_name", None),
                "attempt": getattr(record, "attempt", None),
            }
        )


def _about(caplog: pytest.LogCaptureFixture, job_id: str) -> list[dict[str, object]]:
    formatter = _Json()
    return [
        json.loads(formatter.format(r))
        for r in caplog.records
        if r.name == "jobsched" and getattr(r, "job_id", None) == job_id
    ]


async def test_a_retry_logs_a_warning_and_the_final_failure_an_error(
    make_scheduler: Make, caplog: pytest.LogCaptureFixture
) -> None:
    """Each failed attempt that is retried is a WARNING; the failure that ends the job an ERROR."""
    caplog.set_level(logging.DEBUG, logger="jobsched")
    async with make_scheduler() as s:
        job_id = s.submit(FailTimes(5, name="upload", retry=FAST))
        with anyio.fail_after(10):
            await s.join()
    records = _about(caplog, job_id)
    assert [(r["level"], r["attempt"], r["job_name"]) for r in records] == [
        ("WARNING", 1, "upload"),
        ("ERROR", 2, "upload"),
    ]
    assert records[0]["message"] == (
        f"{job_id} ('upload'): attempt 1 of 2 failed (ConnectionError: attempt 1); "
        "retrying in 0.01s"
    )
    assert records[1]["message"] == (
        f"{job_id} ('upload'): attempt 2 failed (ConnectionError: attempt 2); it ends FAILED"
    )
    final = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(final) == 1 and final[0].exc_info is not None
    assert "Traceback (most recent call last)" in caplog.text  # the traceback is in the log


async def test_a_non_retryable_failure_logs_an_error_at_once(
    make_scheduler: Make, caplog: pytest.LogCaptureFixture
) -> None:
    """NonRetryableError ends the job: one ERROR record with its traceback."""
    caplog.set_level(logging.DEBUG, logger="jobsched")
    async with make_scheduler() as s:
        job_id = s.submit(FailTimes(1, exc=js.NonRetryableError, name="fatal"))
        with anyio.fail_after(10):
            await s.join()
    records = _about(caplog, job_id)
    assert [(r["level"], r["attempt"]) for r in records] == [("ERROR", 1)]
    assert "NonRetryableError: attempt 1" in str(records[0]["message"])


async def test_timeouts_log_a_warning_then_an_error(
    make_scheduler: Make, caplog: pytest.LogCaptureFixture
) -> None:
    """A timed-out attempt that is retried is a WARNING; the one that ends the job an ERROR."""
    caplog.set_level(logging.DEBUG, logger="jobsched")
    async with make_scheduler() as s:
        job_id = s.submit(Ok("slow", seconds=3600, name="slow", timeout=0.5, retry=FAST))
        with anyio.fail_after(30):
            await s.join()
    assert s.get(job_id).status is S.TIMED_OUT
    records = _about(caplog, job_id)
    assert [(r["level"], r["attempt"], r["message"]) for r in records] == [
        (
            "WARNING",
            1,
            f"{job_id} ('slow'): attempt 1 of 2 timed out after 0.5s; retrying in 0.01s",
        ),
        ("ERROR", 2, f"{job_id} ('slow'): attempt 2 timed out after 0.5s; it ends TIMED_OUT"),
    ]


async def test_cancellations_log_at_info(
    make_scheduler: Make, caplog: pytest.LogCaptureFixture
) -> None:
    """Cancelling a queued or a running job, and the cascade to dependents, log at INFO."""
    caplog.set_level(logging.DEBUG, logger="jobsched")
    async with make_scheduler(num_workers=1) as s:
        gate = Gate(name="gate")
        running = s.submit(gate)
        queued = s.submit(Ok("queued", name="queued"))
        dependent = s.submit(Ok("dependent", name="dependent"), depends_on=[running])
        with anyio.fail_after(10):
            await gate.started.wait()
        assert s.cancel(queued) and s.cancel(running)
        with anyio.fail_after(10):
            await s.join()
    assert _about(caplog, queued) == [
        {
            "level": "INFO",
            "message": f"{queued} ('queued') cancelled",
            "job_id": queued,
            "job_name": "queued",
            "attempt": 0,
        }
    ]
    assert [(r["level"], r["attempt"], r["message"]) for r in _about(caplog, running)] == [
        ("INFO", 1, f"{running} ('gate') cancelled")
    ]
    assert [(r["level"], r["message"]) for r in _about(caplog, dependent)] == [
        ("INFO", f"{dependent} ('dependent') cancelled: upstream {running} cancelled")
    ]


async def test_shutdown_cancellation_says_why(
    make_scheduler: Make, caplog: pytest.LogCaptureFixture
) -> None:
    """stop(cancel_running=True) logs each cancelled attempt with the reason."""
    caplog.set_level(logging.DEBUG, logger="jobsched")
    s = make_scheduler()
    async with s:
        gate = Gate(name="gate")
        job_id = s.submit(gate)
        with anyio.fail_after(10):
            await gate.started.wait()
            await s.stop(cancel_running=True)
    said = (
        f"{job_id} ('gate') stopped: handed back to the store, to run again"
        if s._link is not None
        else f"{job_id} ('gate') cancelled: scheduler shut down"
    )
    assert [(r["level"], r["message"]) for r in _about(caplog, job_id)] == [("INFO", said)]


async def test_the_success_path_logs_nothing(
    make_scheduler: Make, caplog: pytest.LogCaptureFixture
) -> None:
    """Jobs that complete (suspending or not, with dependents) produce no record at all."""
    caplog.set_level(logging.DEBUG, logger="jobsched")
    async with make_scheduler() as s:
        first = s.submit(Ok(1))
        s.submit(Ok(2, seconds=0.01), depends_on=[first])
        s.submit(Ok(3), delay=0.01)
        with anyio.fail_after(10):
            await s.join()
    assert all(j.status is S.COMPLETED for j in s.jobs())
    records = [r for r in caplog.records if r.name.startswith("jobsched")]
    # The one record a start may give: SQLite without a secret (tests/test_unsigned_store.py).
    assert [r for r in records if "has no secret" not in r.getMessage()] == []
