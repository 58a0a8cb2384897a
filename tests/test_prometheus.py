"""Prometheus text (issue 38): `jobsched worker --metrics-port` and the
dashboard's `/metrics`, scraped, parsed with prometheus_client's own parser,
and every number checked against the store it describes (SQLite and
PostgreSQL); the attempts' listener on its own; and each way the endpoint
can fail to start or to read."""

from __future__ import annotations

import logging
import socket
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import durable_store
import pytest
from prometheus_client.parser import text_string_to_metric_families
from starlette.testclient import TestClient
from test_cli import jobsched
from test_cli_worker import Worker, enqueue, recorder, wait_until_ended
from worker_jobs import fail

import jobsched as js
from jobsched._metrics import AttemptMetrics, StoreFigures, figures_text, read_store
from jobsched_dashboard import create_app

#: The fixture: a durable store the test's processes share (see durable_store).
store_url = durable_store.store_url

pytestmark = pytest.mark.timeout(180)

S = js.JobStatus
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


@pytest.fixture
def workers() -> Iterator[list[Worker]]:
    started: list[Worker] = []
    yield started
    for worker in started:
        worker.kill()


def parse(text: str) -> Samples:
    """Every sample of a scrape, by (name, sorted labels), through prometheus_client's parser."""
    out: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[sample.name, tuple(sorted(sample.labels.items()))] = sample.value
    return out


def named(samples: Samples, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    return {labels: value for (n, labels), value in samples.items() if n == name}


def store_reads(url: str) -> tuple[Any, Any, Any]:
    """The store's counts, per-queue counts and members, read directly."""

    async def main() -> tuple[Any, Any, Any]:
        store = js.open_store(url)
        await store.open()
        try:
            return await store.counts(), await store.queue_counts(), await store.members()
        finally:
            await store.close()

    return anyio.run(main)


def expected_store_samples(counts: Any, queues: Any) -> tuple[dict[Any, float], dict[Any, float]]:
    by_queue: dict[Any, float] = {}
    for queue in {"default", *(q for q, _ in queues)}:
        for status in (S.PENDING, S.RETRY_WAIT, S.RUNNING):
            labels = (("queue", queue), ("status", status.value))
            by_queue[labels] = float(queues.get((queue, status), 0))
    stored = {
        (("executor", executor), ("status", status.value)): float(n)
        for (status, executor), n in counts.items()
    }
    return by_queue, stored


def scrape(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as answer:
        assert answer.status == 200
        assert answer.headers["Content-Type"].startswith("text/plain")
        return answer.read().decode()


def test_a_workers_scrape_matches_the_store(
    store_url: str, tmp_path: Path, workers: list[Worker]
) -> None:
    """A worker serving two queues runs 3 jobs that complete and one that
    fails after a retry; a third queue's job waits. Its
    scrape's attempts are exactly those; its store figures equal the
    store's own counts, per queue and status, per status and executor; one
    live member with its 4 worker slots."""
    log = tmp_path / "starts"
    once = js.RetryPolicy(max_retries=1, base_delay=0.01, jitter=False)
    ids = enqueue(
        store_url,
        recorder(log, "a"),
        recorder(log, "b"),
        recorder(log, "v", queue="video"),
        js.FunctionJob(fail, ("f",), name="fails", queue="video", retry=once),
    )
    enqueue(store_url, recorder(log, "elsewhere", queue="reports"))
    worker = Worker(
        "--store", store_url, "--import", "worker_jobs", "--queue", "default",
        "--queue", "video", "--metrics-port", "0",
    )  # fmt: skip
    workers.append(worker)
    started = worker.expect("started on ")
    metrics_url = started.split("metrics on ")[1].split(";")[0]
    assert metrics_url.startswith("http://127.0.0.1:") and metrics_url.endswith("/metrics")
    ended = wait_until_ended(store_url, ids)
    assert [job.status for job in ended] == [S.COMPLETED] * 3 + [S.FAILED]
    # The worker's first report to the members list comes with its first
    # heartbeat: wait for it (the store is quiet then: nothing else runs).
    deadline = time.monotonic() + 60
    while not store_reads(store_url)[2]:
        assert time.monotonic() < deadline, "the worker never reported itself"
        time.sleep(0.2)
    samples = parse(scrape(metrics_url))

    attempts = named(samples, "jobsched_attempts_total")
    want = {
        (("executor", "thread"), ("queue", "default"), ("status", "completed")): 2.0,
        (("executor", "thread"), ("queue", "video"), ("status", "completed")): 1.0,
        (("executor", "thread"), ("queue", "video"), ("status", "retry_wait")): 1.0,
        (("executor", "thread"), ("queue", "video"), ("status", "failed")): 1.0,
    }
    assert attempts == want
    # Each attempt started here was timed.
    durations = named(samples, "jobsched_attempt_duration_seconds_count")
    assert durations == want
    # Every attempt's wait: the first ones from the stored run_at their
    # claims carried (the jobs were enqueued by another process), the retry
    # from the time this worker decided.
    waits = named(samples, "jobsched_queue_wait_seconds_count")
    assert waits == {
        (("executor", "thread"), ("queue", "default")): 2.0,
        (("executor", "thread"), ("queue", "video")): 3.0,
    }

    counts, queues, members = store_reads(store_url)
    by_queue, stored = expected_store_samples(counts, queues)
    assert named(samples, "jobsched_jobs") == by_queue
    assert by_queue[("queue", "reports"), ("status", "pending")] == 1.0
    assert named(samples, "jobsched_jobs_stored") == stored
    assert stored[("executor", "thread"), ("status", "completed")] == 3.0
    assert stored[("executor", "thread"), ("status", "failed")] == 1.0
    assert len(members) == 1
    assert named(samples, "jobsched_members") == {(): 1.0}
    assert named(samples, "jobsched_member_workers") == {(): 4.0}
    worker.stop()


def test_the_dashboards_metrics_match_the_store(store_url: str) -> None:
    """/metrics on the dashboard: the store's figures, equal to its counts,
    read without the actions' token; the Host check applies as to a page."""
    ids = enqueue(
        store_url,
        js.FunctionJob(fail, ("x",), name="fails", retry=js.RetryPolicy(max_retries=0)),
        recorder(Path("/nonexistent/log"), "never", queue="video"),
    )

    async def run_one() -> None:
        async with js.JobScheduler(store=store_url, queues=["default"]) as s:
            with anyio.fail_after(60):
                await s.wait(ids[0])

    anyio.run(run_one)
    app = create_app(store_url, token="t0ken", allowed_hosts=["testserver"])
    with TestClient(app) as client:
        answer = client.get("/metrics")
        assert answer.status_code == 200, answer.text
        assert answer.headers["content-type"].startswith("text/plain")
        samples = parse(answer.text)
        refused = client.get("/metrics", headers={"Host": "evil.example"})
        assert refused.status_code == 400
    counts, queues, _ = store_reads(store_url)
    by_queue, stored = expected_store_samples(counts, queues)
    assert named(samples, "jobsched_jobs") == by_queue
    assert by_queue[("queue", "video"), ("status", "pending")] == 1.0
    assert named(samples, "jobsched_jobs_stored") == stored
    assert stored[("executor", "thread"), ("status", "failed")] == 1.0
    # The scheduler that ran the job stopped cleanly: no live member.
    assert named(samples, "jobsched_members") == {(): 0.0}
    # A worker's attempts are not the dashboard's to report.
    assert named(samples, "jobsched_attempts_total") == {}


def test_the_dashboard_without_prometheus_client_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the extra, /metrics is a 501 naming it; the pages still work."""
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    enqueue(url, recorder(tmp_path / "log", "x"))
    monkeypatch.setitem(sys.modules, "prometheus_client", None)
    with TestClient(create_app(url)) as client:
        answer = client.get("/metrics")
        assert answer.status_code == 501
        assert "pip install 'jobsched-core[prometheus]'" in answer.text
        assert client.get("/").status_code == 200


# ── the attempts' listener, in one process ──────────────────────────────


async def flaky(tries: list[int]) -> str:
    tries.append(1)
    if len(tries) < 2:
        raise ConnectionError("reset")
    return "ok"


@pytest.mark.anyio
async def test_the_listener_counts_attempts_and_waits_of_jobs_submitted_here() -> None:
    """In the submitting process every wait is known: a delayed job waits from
    its due time, a retry from its retry time; every attempt ends in the
    counter and the duration histogram by queue, executor and status."""
    from prometheus_client import CollectorRegistry, generate_latest

    registry = CollectorRegistry()
    metrics = AttemptMetrics(registry)
    tries: list[int] = []
    again = js.RetryPolicy(max_retries=1, base_delay=0.01, jitter=False)
    began = time.time()
    async with js.JobScheduler(num_workers=2) as s:
        s.add_listener(metrics)
        s.submit(js.FunctionJob(flaky, (tries,), queue="net", retry=again))
        cancelled = s.submit(js.FunctionJob(flaky, ([],)), delay=3600)
        s.cancel(cancelled)  # never ran: not an attempt
        with anyio.fail_after(30):
            await s.join()
    elapsed = time.time() - began
    samples = parse(generate_latest(registry).decode())
    net = (("executor", "async"), ("queue", "net"))
    assert named(samples, "jobsched_attempts_total") == {
        (*net, ("status", "retry_wait")): 1.0,
        (*net, ("status", "completed")): 1.0,
    }
    assert named(samples, "jobsched_attempt_duration_seconds_count") == {
        (*net, ("status", "retry_wait")): 1.0,
        (*net, ("status", "completed")): 1.0,
    }
    assert named(samples, "jobsched_queue_wait_seconds_count") == {net: 2.0}
    # Each wait lies inside the run (no clock of another kind, no stray epoch).
    assert 0 <= named(samples, "jobsched_queue_wait_seconds_sum")[net] <= 2 * elapsed


async def noop() -> str:
    return "ok"


def test_a_worker_measures_the_wait_of_a_job_a_producer_submitted(store_url: str) -> None:
    """Issue 38: a producer (num_workers=0) submits a job due at once and
    stops; a worker scheduler on the same store runs it, and its listener
    records the job's one queue wait, from the stored run_at the claim
    carried: at least 0, at most the time between the submit and the end."""
    from prometheus_client import CollectorRegistry, generate_latest

    registry = CollectorRegistry()
    metrics = AttemptMetrics(registry)

    async def main() -> float:
        began = time.monotonic()
        async with js.JobScheduler(store=store_url, num_workers=0) as producer:
            job_id = producer.submit(js.FunctionJob(noop, (), queue="net"), delay=0)
        async with js.JobScheduler(store=store_url, num_workers=1) as worker:
            worker.add_listener(metrics)
            done = await worker.wait(job_id, timeout=60)
        assert done.status is S.COMPLETED
        return time.monotonic() - began

    elapsed = anyio.run(main)
    samples = parse(generate_latest(registry).decode())
    net = (("executor", "async"), ("queue", "net"))
    assert named(samples, "jobsched_queue_wait_seconds_count") == {net: 1.0}
    assert 0 <= named(samples, "jobsched_queue_wait_seconds_sum")[net] <= elapsed + 1


# ── failures ────────────────────────────────────────────────────────────


def test_a_taken_port_is_one_line_and_exit_1(tmp_path: Path) -> None:
    """--metrics-port on a port in use: the worker says so and exits 1."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = jobsched(
            "worker", "--store", f"sqlite:///{tmp_path / 'jobs.db'}", "--import", "worker_jobs",
            "--metrics-port", str(port),
        )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert f"jobsched: error: --metrics-port cannot listen on 127.0.0.1:{port}" in done.stderr


def test_without_prometheus_client_the_worker_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The option's check runs before any store or import."""
    from jobsched._cli import _workermetrics
    from jobsched._cli._main import UserError

    monkeypatch.setitem(sys.modules, "prometheus_client", None)
    with pytest.raises(UserError, match=r"pip install 'jobsched-core\[prometheus\]'"):
        _workermetrics.need_prometheus()


class _Broken:
    """A store whose counts cannot be read."""

    async def counts(self) -> Any:
        raise js.StoreUnavailableError("the database is down")


def test_a_store_that_cannot_be_read_leaves_its_figures_out(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The scrape still answers with this process's own metrics, and the
    worker's log says why the store's figures are missing."""
    from prometheus_client import CollectorRegistry, generate_latest

    from jobsched._metrics._serve import _StoreCollector

    async def main() -> bytes:
        registry = CollectorRegistry()
        AttemptMetrics(registry)
        registry.register(_StoreCollector(_Broken(), anyio.lowlevel.current_token()))  # type: ignore[arg-type]
        return await anyio.to_thread.run_sync(generate_latest, registry)

    with caplog.at_level(logging.WARNING, "jobsched.worker"):
        text = anyio.run(main).decode()
    assert "jobsched_attempt_duration_seconds" in text
    assert "jobsched_jobs{" not in text
    assert "the store's figures could not be read: the database is down" in caplog.text


def test_figures_text_keeps_every_unfinished_status_of_a_seen_queue() -> None:
    """A drained queue reads 0, not "no data"; finished counts by executor."""
    figures = StoreFigures({("video", S.PENDING): 2}, {(S.COMPLETED, "async"): 7}, 2, 8)
    samples = parse(figures_text(figures).decode())
    assert named(samples, "jobsched_jobs") == {
        (("queue", q), ("status", s)): float(2 if (q, s) == ("video", "pending") else 0)
        for q in ("default", "video")
        for s in ("pending", "retry_wait", "running")
    }
    assert named(samples, "jobsched_jobs_stored") == {
        (("executor", "async"), ("status", "completed")): 7.0
    }
    assert named(samples, "jobsched_members") == {(): 2.0}
    assert named(samples, "jobsched_member_workers") == {(): 8.0}


def test_read_store_counts_only_live_members() -> None:
    """A member silent for more than three reports is not live."""
    from jobsched.store import Member

    class Store:
        async def counts(self) -> Any:
            return {}

        async def queue_counts(self) -> Any:
            raise NotImplementedError

        async def members(self) -> list[Member]:
            return [Member("h:1:a", 4, 0, 0.0, 990.0), Member("h:2:b", 2, 0, 0.0, 980.0)]

    figures = anyio.run(read_store, Store(), 1000.0)
    assert (figures.members, figures.workers, figures.queues) == (1, 4, {})
