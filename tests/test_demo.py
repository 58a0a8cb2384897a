"""The demo ends exactly as the seed's does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio
import pytest

import jobsched as js
from jobsched_examples import count_primes
from jobsched_examples.demo import format_outcome, run_demo

S = js.JobStatus


@pytest.mark.parametrize("store", ["memory", "sqlite"])
def test_demo_outcomes(store: str, tmp_path: Path) -> None:
    """Every job in the demo ends with the seed's status, attempts and result, on either store."""
    url = "memory" if store == "memory" else f"sqlite:///{tmp_path / 'demo.db'}"
    outcome = anyio.run(run_demo, url)
    export, primes, report, alert, flaky, broken, slow, notify, reminder = outcome.shown
    assert (export.status, export.result) == (S.COMPLETED, 4_200)
    assert (primes.status, primes.result) == (S.COMPLETED, 17_984)
    assert report.status is S.COMPLETED and alert.status is S.COMPLETED
    assert (flaky.status, flaky.attempts) == (S.COMPLETED, 3)
    assert (broken.status, broken.attempts) == (S.FAILED, 4)
    assert (slow.status, slow.attempts, slow.last_error) == (
        S.TIMED_OUT,
        1,
        "timed out after 0.1s",
    )
    assert notify.status is S.CANCELLED and notify.attempts == 0
    assert reminder.status is S.CANCELLED and reminder.attempts == 0
    assert outcome.heartbeats == 3 and outcome.schedule_cancelled
    assert outcome.peak_running == 3 == outcome.num_workers
    table = format_outcome(outcome)
    assert "count primes < 200000" in table and "peak concurrent jobs: 3 (workers: 3)" in table


def test_demo_console_script_runs() -> None:
    """`jobsched-demo` is installed and prints the table."""
    out = subprocess.run(
        [sys.executable, "-m", "jobsched_examples.demo"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "recurring heartbeat completed 3 runs, then was cancelled" in out.stdout
    # Issue 38: the deliberate failure's log line, one line, no traceback
    # before the table.
    assert "it ends FAILED" in out.stderr
    assert "Traceback" not in out.stderr, out.stderr
    assert all(line.startswith(("WARNING:", "ERROR:")) for line in out.stderr.splitlines())


def test_count_primes() -> None:
    """The sieve behind PrimeCountJob counts correctly."""
    assert [count_primes(n) for n in (0, 2, 3, 10, 100)] == [0, 0, 1, 4, 25]
    assert count_primes(200_000) == 17_984
