"""Every attempt on record (issue 38, item 2), with real `jobsched worker`
processes on SQLite and PostgreSQL: an attempt a worker's SIGTERM cut short
past its grace, and one whose worker was killed (SIGKILL) and taken over,
each stay in the job's history (`jobsched show`) with their member, start
and end, next to the attempt that ran after them."""

from __future__ import annotations

import signal
import time
from typing import Any

import durable_store
import pytest
from cli_jobs import Waits
from test_cli import Worker, as_json, fetch, ok, submit, workers  # noqa: F401 - the fixture

import jobsched as js

#: The fixture: a durable store the test's processes share (see durable_store).
store_url = durable_store.store_url

pytestmark = pytest.mark.timeout(180)


def _history(url: str, job: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    shown = as_json("show", job, "--store", url)
    return shown, shown["history"]


def _member_of(worker: Worker) -> str:
    """What a worker's owner id holds (``host:pid:token``): its pid."""
    return f":{worker.process.pid}:"


def test_a_hand_back_and_the_run_after_it_are_both_in_the_history(
    store_url: str,
    workers: list[Worker],  # noqa: F811
) -> None:
    """A deploy's SIGTERM cuts attempt 1 short past a 0.2 s grace; the next
    worker runs it to the end. `show` lists both, attempt 1 each (a hand-back
    uses up no retry): the first "handed back" by the first worker, "handed
    back at stop", before the second's completed run."""
    (job,) = submit(store_url, Waits(3.0, value="done", name="deployed"))
    first = Worker(store_url, "--grace", "0.2")
    workers.append(first)
    first.expect(f"cli-test: start {job}")
    first.signal(signal.SIGTERM)
    assert first.wait() == 0, first.lines
    assert "1 cut short and handed back to the store" in first.lines[-1], first.lines
    second = Worker(store_url)
    workers.append(second)
    second.expect(f"cli-test: start {job}")
    second.signal(signal.SIGTERM)  # the grace (30 s) lets it finish
    assert second.wait() == 0, second.lines
    assert "1 completed" in second.lines[-1], second.lines
    shown, history = _history(store_url, job)
    assert (shown["status"], shown["attempts"]) == ("completed", 1)
    assert [(h["attempt"], h["status"], h["handed_back"], h["error"]) for h in history] == [
        (1, "retry_wait", True, "handed back at stop"),
        (1, "completed", False, None),
    ]
    cut, ran = history
    assert _member_of(first) in cut["owner"] and _member_of(second) in ran["owner"]
    # Its own start and end: cut short within the grace, before the next run.
    assert cut["started_at"] < cut["finished_at"] <= ran["started_at"] < ran["finished_at"]
    assert 0 < cut["duration"] < 3.0
    text = ok("show", job, "--store", store_url)
    table = text[text.index("ATTEMPT") :].splitlines()
    assert "handed back" in table[1] and "handed back at stop" in table[1], text
    assert first.process.pid and f":{first.process.pid}:" in table[1], text
    assert "completed" in table[2] and f":{second.process.pid}:" in table[2], text


def test_a_taken_over_attempt_names_the_lost_member(
    store_url: str,
    workers: list[Worker],  # noqa: F811
) -> None:
    """A worker killed (SIGKILL) mid-attempt: the next worker takes the attempt
    over as lost and runs attempt 2. `show` lists attempt 1 "worker lost"
    under the dead worker, with its start and end, then attempt 2."""
    retry = js.RetryPolicy(max_retries=1, base_delay=0.01, jitter=False)
    (job,) = submit(store_url, Waits(2.0, value="done", name="lost once", retry=retry))
    first = Worker(store_url)
    workers.append(first)
    first.expect(f"cli-test: start {job}")
    # Its start committed: a start still in the group commit is no attempt
    # yet (a claim ahead), and the takeover would hand it back uncounted.
    deadline = time.monotonic() + 30
    while fetch(store_url, job).started_at is None:
        assert time.monotonic() < deadline, "the start was never stored"
        time.sleep(0.05)
    first.process.send_signal(signal.SIGKILL)
    first.process.wait()
    second = Worker(store_url)
    workers.append(second)
    second.expect(f"cli-test: start {job}")
    second.signal(signal.SIGTERM)
    assert second.wait() == 0, second.lines
    shown, history = _history(store_url, job)
    assert (shown["status"], shown["attempts"]) == ("completed", 2)
    assert [(h["attempt"], h["status"], h["handed_back"], h["error"]) for h in history] == [
        (1, "retry_wait", False, "worker lost"),
        (2, "completed", False, None),
    ]
    lost, ran = history
    assert _member_of(first) in lost["owner"] and _member_of(second) in ran["owner"]
    assert lost["started_at"] <= lost["finished_at"] <= ran["started_at"]
    text = ok("show", job, "--store", store_url)
    table = text[text.index("ATTEMPT") :].splitlines()
    assert "retried" in table[1] and "worker lost" in table[1], text
    assert f":{first.process.pid}:" in table[1], text
