"""kill -9 in the middle of a 1,000-job fan-out/fan-in (issue 37): the
fan-in runs once, with all 1,000 results in order.

A worker process (tests/wf_crash_member.py) enqueues one workflow of 1,000
steps and a fan-in taking ``results_of`` all of them, and runs it; each step
logs its id when its work is done. Once half the steps have logged, the
worker is SIGKILLed; a new worker on the same store (a SQLite file, or a
PostgreSQL schema) drains it. Every wait is on a state (the log, the store, a
process's answer) with a generous bound; nothing sleeps to synchronise.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from test_fleet import TESTS, Member, wait_for
from wf_crash_jobs import value

pytestmark = pytest.mark.timeout(300)

STEPS = 1000
#: Steps ended before the kill: about half, so the kill lands mid-fan-out.
HALF = STEPS // 2
#: The killed worker's lease: how long its claimed steps wait for the next.
LEASE = "2"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new store both workers open: a SQLite file or a PostgreSQL schema."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'jobs.db'}"
    from pg import schema_url

    return schema_url(request.getfixturevalue("pg_session_database"))


class Worker(Member):
    """A worker of tests/wf_crash_member.py, spoken to as a fleet member is."""

    def __init__(self, url: str, folder: Path, *flags: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(TESTS / "wf_crash_member.py"), url, str(folder), *flags],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(TESTS)},
        )
        self.lines = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.pid = self.process.pid


@pytest.fixture
def workers(store_url: str, tmp_path: Path) -> Iterator[Callable[..., Worker]]:
    """Starts workers on the store, logging under tmp_path; kills what is left."""
    started: list[Worker] = []

    def start(*flags: str) -> Worker:
        worker = Worker(store_url, tmp_path, *flags)
        started.append(worker)
        worker.ready()
        return worker

    try:
        yield start
    finally:
        for worker in started:
            worker.kill()


def logged(path: Path) -> list[list[str]]:
    """A log's complete lines, split: a line being written has no newline yet."""
    if not path.exists():
        return []
    return [line.split() for line in path.read_text().split("\n")[:-1]]


def test_killed_mid_fan_out_the_fan_in_runs_once_with_all_results(
    workers: Callable[..., Worker], tmp_path: Path
) -> None:
    steps_log, fan_in_log = tmp_path / "steps", tmp_path / "fan-in"
    first = workers("--lease", LEASE)
    plan = json.loads(first.ask(f"enqueue {STEPS}", timeout=60))
    steps: list[str] = plan["steps"]
    assert len(set(steps)) == STEPS

    wait_for("half the steps ended", lambda: len(logged(steps_log)) >= HALF, timeout=120)
    first.kill()
    ended_before = {job_id for job_id, _ in logged(steps_log)}
    # The kill landed mid-fan-out: some steps still to run, the fan-in not begun.
    assert HALF <= len(ended_before) < STEPS, len(ended_before)
    assert logged(fan_in_log) == []

    second = workers()
    assert second.ask("join", timeout=120) == "joined"

    fan_in = second.fetch(plan["fan_in"])
    assert (fan_in["status"], fan_in["last_error"]) == ("completed", None)
    assert fan_in["attempts"] == 1
    assert fan_in["workflow_id"] == plan["workflow"]
    assert fan_in["result"] == [value(n) for n in range(STEPS)]
    assert logged(fan_in_log) == [[plan["fan_in"], "1", str(STEPS)]]

    runs: dict[str, list[int]] = {}
    for job_id, attempt in logged(steps_log):
        runs.setdefault(job_id, []).append(int(attempt))
    assert set(runs) == set(steps)
    counted: list[int] = []
    for n, job_id in enumerate(steps):
        job = second.fetch(job_id)
        counted.append(job["attempts"])
        assert (job["status"], job["result"]) == ("completed", value(n)), (job_id, job)
        assert job["workflow_id"] == plan["workflow"]
        # At least once: a step the kill caught after its work but before its
        # outcome was committed runs again, never under an attempt the store
        # did not count.
        assert max(runs[job_id]) <= job["attempts"], (job_id, runs[job_id], job)
    # Eight workers were mid-step when the kill came: their attempts were
    # lost and counted, so the drain really recovered work from the kill.
    assert max(counted) > 1
    info = json.loads(second.ask(f"workflow {plan['workflow']}"))
    assert info == {"counts": {"completed": STEPS + 1}, "finished": True}
    assert second.stop() == 0
