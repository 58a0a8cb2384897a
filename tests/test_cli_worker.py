"""`jobsched worker`'s fleet settings, checked in real worker processes.

Issue 33: the worker built its scheduler without the fleet's rate limits,
strategy, lease or history limit, so 20 jobs under a one-a-second rate
limit started within 0.05 s. Here two `jobsched worker` processes share a
store; the jobs record their start times in a file, and the tests assert on
those times and their order (with margins for a loaded two-core machine).
Then `--app MODULE:NAME`: the app's settings, the command line over them,
and every way to name the app wrongly; and a worker that lacks a job's
module hands the job back for one that has it (``--load-grace``).

Every test runs on a SQLite file and on PostgreSQL.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import durable_store
import pytest
from test_cli import SCRIPT, TESTS, env_for, jobsched
from worker_jobs import record, starts

import jobsched as js

#: The fixture: a durable store the test's processes share (see durable_store).
store_url = durable_store.store_url

pytestmark = pytest.mark.timeout(180)

S = js.JobStatus


class Worker:
    """`jobsched worker ARGS` in a subprocess (from tests/, so its modules
    import); its stderr read line by line."""

    def __init__(self, *args: str, env: dict[str, str] | None = None, cwd: Path = TESTS) -> None:
        self.process = subprocess.Popen(
            [SCRIPT, "worker", *args],
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
            cwd=cwd,
            env=env if env is not None else env_for(),
        )
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        with self.process.stderr:
            for line in self.process.stderr:
                self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def expect(self, text: str, timeout: float = 60) -> str:
        """The next stderr line containing ``text`` (fails at EOF or after ``timeout``)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no line with {text!r} in {timeout}s: {self.lines}")
            if line is None:
                self._queue.put(None)
                raise AssertionError(f"the worker ended without {text!r}: {self.lines}")
            self.lines.append(line)
            if text in line:
                return line

    def stop(self) -> str:
        """SIGTERM, then its stop summary line (it drains and exits 0)."""
        self.process.send_signal(signal.SIGTERM)
        line = self.expect("stopped (SIGTERM)")
        assert self.process.wait(timeout=60) == 0, self.lines
        return line

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


@pytest.fixture
def workers() -> Iterator[list[Worker]]:
    """Started workers, killed at the end if a test left one running."""
    started: list[Worker] = []
    yield started
    for worker in started:
        worker.kill()


def enqueue(url: str, *jobs: js.Job) -> list[str]:
    """Commit ``jobs`` from a producer that runs none of them."""

    async def main() -> list[str]:
        async with js.JobScheduler(store=url, num_workers=0) as producer:
            return [await producer.enqueue(job) for job in jobs]

    return anyio.run(main)


def statuses(url: str, ids: list[str]) -> list[Any]:
    async def main() -> list[Any]:
        async with js.JobScheduler(store=url, num_workers=0) as s:
            return [await s.fetch(i) for i in ids]

    return anyio.run(main)


def wait_until_ended(url: str, ids: list[str], timeout: float = 90) -> list[Any]:
    """The stored jobs once every one is finished (polled)."""
    deadline = time.monotonic() + timeout
    while True:
        jobs = statuses(url, ids)
        if all(job.status.is_terminal for job in jobs):
            return jobs
        assert time.monotonic() < deadline, [(j.job_id, j.status) for j in jobs]
        time.sleep(0.2)


def recorder(log: Path, label: str, **options: Any) -> js.FunctionJob[str]:
    return js.FunctionJob(record, (str(log), label), name=f"record {label}", **options)


# ── the fleet's settings as options ───────────────────────────────────────


def test_two_workers_share_a_rate_limit_of_one_a_second(
    store_url: str, tmp_path: Path, workers: list[Worker]
) -> None:
    """Two workers with --rate-limit smtp=1/1 (a bucket of one token, one
    back a second, shared through the store): 6 smtp jobs start about a
    second apart in aggregate, never two close together, while a job
    without the key runs at once."""
    log = tmp_path / "starts"
    ids = enqueue(
        store_url,
        *(recorder(log, f"smtp{i}", rate_key="smtp") for i in range(6)),
        recorder(log, "free"),
    )
    for _ in range(2):
        worker = Worker("--store", store_url, "--import", "worker_jobs", "--rate-limit", "smtp=1/1")
        workers.append(worker)
        started = worker.expect("started on ")
        assert "rate limits smtp=1/1s" in started, started
    jobs = wait_until_ended(store_url, ids)
    assert [j.status for j in jobs] == [S.COMPLETED] * 7
    for worker in workers:
        worker.stop()
    recorded = starts(str(log))
    times = [when for when, label, _ in recorded if label.startswith("smtp")]
    assert len(times) == 6
    # Enqueued last, but with no key it waits for no token: not behind them.
    (free,) = [when for when, label, _ in recorded if label == "free"]
    assert free - times[0] < 3.0, (free - times[0], times)
    gaps = [b - a for a, b in zip(times, times[1:])]
    # One token a second: 5 s at least from the first start to the sixth
    # (less what a worker's pickup jitter takes off), none in a burst.
    assert times[-1] - times[0] >= 4.0, gaps
    assert min(gaps) >= 0.5, gaps


@pytest.mark.parametrize(
    ("weights", "b_in_first_four"), [((), 2), (("--weight", "a=3"), 1)], ids=["equal", "a=3"]
)
def test_fair_share_serves_tenants_by_turns(
    store_url: str,
    tmp_path: Path,
    workers: list[Worker],
    weights: tuple[str, ...],
    b_in_first_four: int,
) -> None:
    """Tenant a's 6 jobs were enqueued before tenant b's 2: with --strategy
    fair-share one worker starts them by turns (b's two among the first
    four; with --weight a=3, one), where priority order would start every
    job of a first."""
    log = tmp_path / "starts"
    ids = enqueue(
        store_url,
        *(recorder(log, f"a{i}", tenant="a") for i in range(6)),
        *(recorder(log, f"b{i}", tenant="b") for i in range(2)),
    )
    worker = Worker(
        "--store", store_url, "--import", "worker_jobs", "--workers", "1",
        "--strategy", "fair-share", *weights,
    )  # fmt: skip
    workers.append(worker)
    started = worker.expect("started on ")
    assert "strategy fair-share" in started, started
    assert all(j.status is S.COMPLETED for j in wait_until_ended(store_url, ids))
    worker.stop()
    order = [label for _, label, _ in starts(str(log))]
    assert sum(label.startswith("b") for label in order[:4]) == b_in_first_four, order


def test_a_worker_runs_only_its_queues(
    store_url: str, tmp_path: Path, workers: list[Worker]
) -> None:
    """--queue emails: the emails job runs, the reports job stays PENDING
    (another worker's)."""
    log = tmp_path / "starts"
    email, report = enqueue(
        store_url, recorder(log, "email", queue="emails"), recorder(log, "report", queue="reports")
    )
    worker = Worker("--store", store_url, "--import", "worker_jobs", "--queue", "emails")
    workers.append(worker)
    assert "queues emails" in worker.expect("started on ")
    (done,) = wait_until_ended(store_url, [email])
    assert done.status is S.COMPLETED
    worker.stop()
    (waiting,) = statuses(store_url, [report])
    assert (waiting.status, waiting.attempts) == (S.PENDING, 0)
    assert [label for _, label, _ in starts(str(log))] == ["email"]


def test_the_start_line_names_the_settings_in_effect(store_url: str, workers: list[Worker]) -> None:
    """Each option reaches the scheduler: the start line says so."""
    worker = Worker(
        "--store", store_url, "--import", "worker_jobs", "--rate-limit", "smtp=100/60:10",
        "--rate-limit", "sms=2/1", "--strategy", "fifo", "--lease", "12",
        "--history-limit", "50", "--load-grace", "7", "--queue", "video",
        "--queue", "emails", "--queue-limit", "video=2", "--queue-limit", "emails=5",
    )  # fmt: skip
    workers.append(worker)
    started = worker.expect("started on ")
    assert "rate limits sms=2/1s, smtp=100/60s:10, strategy fifo" in started, started
    assert "queues emails, video, queue limits emails=5, video=2" in started, started
    assert "lease 12s, load_grace 7s" in started, started
    worker.stop()


# ── the options' errors ──────────────────────────────────────────────────

_OPTS = ["worker", "--store", "sqlite:///{tmp}/jobs.db", "--import", "worker_jobs"]

#: (arguments, what the one line must say).
OPTION_ERRORS = {
    "rate-no-period": ([*_OPTS, "--rate-limit", "smtp=1"], "'smtp=1' is not KEY=N/SECONDS[:BURST]"),
    "rate-no-key": (
        [*_OPTS, "--rate-limit", "=1/1"],
        "is not KEY=N/SECONDS[:BURST] (e.g. smtp=1/1",
    ),
    "rate-word": ([*_OPTS, "--rate-limit", "smtp=a/1"], "is not KEY=N/SECONDS[:BURST]"),
    "rate-zero": ([*_OPTS, "--rate-limit", "smtp=0/1"], "RateLimit rate must be a positive"),
    "rate-small-burst": (
        [*_OPTS, "--rate-limit", "smtp=1/1:0.5"],
        "burst must be a finite number >= 1",
    ),
    "strategy": ([*_OPTS, "--strategy", "lifo"], "'lifo' is not one of 'priority', 'fifo'"),
    "weight-alone": ([*_OPTS, "--weight", "a=2"], "a fair share: add --strategy fair-share"),
    "weight-bad": (
        [*_OPTS, "--strategy", "fair-share", "--weight", "a=0"],
        "NAME=N with N a whole number >= 1 (e.g. acme=3)",
    ),
    "lease-zero": ([*_OPTS, "--lease", "0"], "'--lease': 0.0 is not in the range x>0"),
    "history-negative": ([*_OPTS, "--history-limit", "-1"], "'--history-limit'"),
    "lease-inf": ([*_OPTS, "--lease", "inf"], "'inf' is not a finite number of seconds"),
    "keep-outcome": ([*_OPTS, "--keep", "done=1d"], "'done=1d' is not OUTCOME=AGE"),
    "keep-age": ([*_OPTS, "--keep", "failed=-1d"], "(e.g. failed=7d)"),
    "keep-and-history": (
        [*_OPTS, "--keep", "failed=7d", "--history-limit", "50"],
        "give the count as Retention(max_finished=50)",
    ),
    "max-finished-negative": ([*_OPTS, "--max-finished", "-1"], "'--max-finished'"),
    "load-grace-negative": ([*_OPTS, "--load-grace", "-1"], "'--load-grace'"),
    "load-grace-inf": ([*_OPTS, "--load-grace", "inf"], "'inf' is not a finite number of seconds"),
    "no-code": (
        ["worker", "--store", "sqlite:///{tmp}/jobs.db"],
        "Missing option '--import' (or --app MODULE:NAME)",
    ),
    "app-no-colon": (["worker", "--app", "worker_app"], "--app 'worker_app' is not MODULE:NAME"),
    "app-no-module": (
        ["worker", "--app", "no_such_module:app"],
        "--app 'no_such_module:app': cannot import 'no_such_module'",
    ),
    "app-no-attribute": (
        ["worker", "--app", "worker_app:nope"],
        "no attribute 'nope'; name the js.App it defines (e.g. --app worker_app:app)",
    ),
    "app-not-an-app": (
        ["worker", "--app", "worker_jobs:record"],
        "is a builtins.function object, not a js.App",
    ),
    "app-a-module": (["worker", "--app", "worker_app:js"], "is the module jobsched, not a js.App"),
    "app-memory": (["worker", "--app", "worker_app:app"], "keeps its jobs in the 'memory' store"),
}


@pytest.mark.parametrize("case", list(OPTION_ERRORS))
def test_a_bad_option_is_one_line_naming_the_fix(case: str, tmp_path: Path) -> None:
    args, expected = OPTION_ERRORS[case]
    done = jobsched(*(a.replace("{tmp}", str(tmp_path)) for a in args), env=env_for())
    assert done.returncode == 1, done
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert expected in done.stderr, done.stderr


# ── --app ────────────────────────────────────────────────────────────────


def test_app_gives_the_store_and_settings(
    store_url: str, tmp_path: Path, workers: list[Worker]
) -> None:
    """--app worker_app:app (no --store): the app's store, rate limit and
    queue; only the app's queue runs."""
    log = tmp_path / "starts"
    email, report = enqueue(
        store_url, recorder(log, "email", queue="emails"), recorder(log, "report", queue="reports")
    )
    env = env_for(WORKER_APP_STORE=store_url)
    worker = Worker("--app", "worker_app:app", "--import", "worker_jobs", env=env)
    workers.append(worker)
    started = worker.expect("started on ")
    assert "jobs from app worker_app:app (0 registered), worker_jobs" in started, started
    assert "rate limits smtp=1/1s" in started and "queues emails" in started, started
    (done,) = wait_until_ended(store_url, [email])
    assert done.status is S.COMPLETED
    worker.stop()
    assert statuses(store_url, [report])[0].status is S.PENDING


def test_workers_of_an_app_keep_its_rate_limit(
    store_url: str, tmp_path: Path, workers: list[Worker]
) -> None:
    """The issue's case: the app says smtp=1/1 and two `jobsched worker
    --app` processes, given no rate option, start 6 smtp jobs about a second
    apart, never two together (before, a worker ignored the limit and
    started all at once)."""
    log = tmp_path / "starts"
    ids = enqueue(
        store_url, *(recorder(log, f"smtp{i}", rate_key="smtp", queue="emails") for i in range(6))
    )
    env = env_for(WORKER_APP_STORE=store_url)
    for _ in range(2):
        worker = Worker("--app", "worker_app:app", "--import", "worker_jobs", env=env)
        workers.append(worker)
        worker.expect("started on ")
    jobs = wait_until_ended(store_url, ids)
    assert [j.status for j in jobs] == [S.COMPLETED] * 6
    for worker in workers:
        worker.stop()
    times = [when for when, _, _ in starts(str(log))]
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert times[-1] - times[0] >= 4.0, gaps
    assert min(gaps) >= 0.5, gaps


def test_workers_of_an_app_keep_its_fair_share(
    store_url: str, tmp_path: Path, workers: list[Worker]
) -> None:
    """The app's FairShareStrategy(weights={"a": 3}) reaches `jobsched worker
    --app` with no strategy option: b's first job among the first four."""
    log = tmp_path / "starts"
    ids = enqueue(
        store_url,
        *(recorder(log, f"a{i}", tenant="a") for i in range(6)),
        *(recorder(log, f"b{i}", tenant="b") for i in range(2)),
    )
    env = env_for(WORKER_APP_STORE=store_url)
    worker = Worker(
        "--app", "worker_app:fair", "--import", "worker_jobs", "--workers", "1", env=env
    )
    workers.append(worker)
    worker.expect("started on ")
    assert all(j.status is S.COMPLETED for j in wait_until_ended(store_url, ids))
    worker.stop()
    order = [label for _, label, _ in starts(str(log))]
    assert sum(label.startswith("b") for label in order[:4]) == 1, order


def test_options_override_the_app(store_url: str, tmp_path: Path, workers: list[Worker]) -> None:
    """--queue replaces the app's queues; --rate-limit overrides its key;
    --store the app's store (here the app has none)."""
    log = tmp_path / "starts"
    (report,) = enqueue(store_url, recorder(log, "report", queue="reports"))
    worker = Worker(
        "--app", "worker_app:app", "--import", "worker_jobs", "--store", store_url,
        "--queue", "reports", "--rate-limit", "smtp=5/1", "--strategy", "fifo",
    )  # fmt: skip
    workers.append(worker)
    started = worker.expect("started on ")
    assert "rate limits smtp=5/1s, strategy fifo, queues reports" in started, started
    (done,) = wait_until_ended(store_url, [report])
    assert done.status is S.COMPLETED
    worker.stop()


# ── a job whose module this worker lacks ─────────────────────────────────


def test_a_job_only_newer_workers_can_load_waits_for_one(
    store_url: str, tmp_path: Path, workers: list[Worker]
) -> None:
    """The producer has module newjobs; the first worker does not: it hands
    the job back (one WARNING, counted in its stop summary), attempts
    unchanged. A worker that has the module then runs it, as attempt 1."""
    code = tmp_path / "new_code"
    code.mkdir()
    (code / "newjobs.py").write_text(
        textwrap.dedent(
            """
            def sync_customer(n):
                return n + 1
            """
        )
    )
    producer_env = {**os.environ, "PYTHONPATH": f"{code}{os.pathsep}{TESTS}"}
    job_id = subprocess.run(
        [
            "python", "-c",
            "import sys, anyio, jobsched as js, newjobs\n"
            "async def main():\n"
            f"    async with js.JobScheduler(store={store_url!r}, num_workers=0) as p:\n"
            "        print(await p.enqueue(js.FunctionJob(newjobs.sync_customer, (41,))))\n"
            "anyio.run(main)\n",
        ],
        env=producer_env, capture_output=True, text=True, check=True, timeout=60,
    ).stdout.strip()  # fmt: skip
    old = Worker("--store", store_url, "--import", "worker_jobs")
    workers.append(old)
    warning = old.expect("is handed back")
    assert f"{job_id} is handed back" in warning and "WARNING" in warning, warning
    assert "newjobs" in warning, warning
    # Written by the worker's heartbeat just after the line (and claimed
    # again every 5 s): seen waiting, uncounted, with the reason.
    deadline = time.monotonic() + 30
    while True:
        (waiting,) = statuses(store_url, [job_id])
        if waiting.status is S.PENDING and waiting.last_error:
            break
        assert time.monotonic() < deadline, (waiting.status, waiting.last_error)
        time.sleep(0.05)
    assert waiting.attempts == 0 and "cannot load the job" in waiting.last_error
    summary = old.stop()
    assert "1 could not be loaded here and went back to the store" in summary, summary
    new = Worker(
        "--store", store_url, "--import", "worker_jobs",
        env=env_for(PYTHONPATH=f"{code}{os.pathsep}{TESTS}"),
    )  # fmt: skip
    workers.append(new)
    (ran,) = wait_until_ended(store_url, [job_id])
    assert (ran.status, ran.attempts) == (S.COMPLETED, 1)
    new.stop()
    assert not any("is handed back" in line for line in new.lines), new.lines


def test_with_a_short_load_grace_the_job_fails(
    store_url: str, tmp_path: Path, workers: list[Worker]
) -> None:
    """--load-grace 1: no worker has the module, so after a second of
    hand-backs the job ends FAILED naming the module and the grace."""
    code = tmp_path / "gone_code"
    code.mkdir()
    (code / "gonejobs.py").write_text("def work():\n    return 1\n")
    producer_env = {**os.environ, "PYTHONPATH": f"{code}{os.pathsep}{TESTS}"}
    job_id = subprocess.run(
        [
            "python", "-c",
            "import anyio, jobsched as js, gonejobs\n"
            "async def main():\n"
            f"    async with js.JobScheduler(store={store_url!r}, num_workers=0) as p:\n"
            "        print(await p.enqueue(js.FunctionJob(gonejobs.work)))\n"
            "anyio.run(main)\n",
        ],
        env=producer_env, capture_output=True, text=True, check=True, timeout=60,
    ).stdout.strip()  # fmt: skip
    worker = Worker("--store", store_url, "--import", "worker_jobs", "--load-grace", "1")
    workers.append(worker)
    worker.expect(f"{job_id} is handed back")
    worker.expect(f"{job_id} FAILED: no member loaded it within load_grace (1s)")
    (failed,) = wait_until_ended(store_url, [job_id])
    assert failed.status is S.FAILED
    assert "gonejobs" in failed.last_error and "load_grace, 1s" in failed.last_error
    worker.stop()


def test_record_is_importable_by_reference() -> None:
    """The jobs above pickle ``worker_jobs.record`` by reference: it must be
    the module's own function (a sanity check of the helper module)."""
    assert record.__module__ == "worker_jobs"


def test_command_line_limits_override_the_app_s_key_by_key() -> None:
    """What `--app` passes to ``app.scheduler(**overrides)``: the limits
    merged over the app's key by key, the other options replacing the
    app's, and only what the command line gave (besides --workers)."""
    from jobsched._cli._workeropts import Options

    app_rate, cli_rate = js.RateLimit(1), js.RateLimit(5)
    app_settings = {
        "rate_limits": {"smtp": app_rate, "sms": app_rate},
        "executor_limits": {"process": 2},
        "queues": ["emails", "reports"],
    }
    options = Options(
        store_url=None,
        workers=8,
        rate_limits={"smtp": cli_rate},
        queues=("reports",),
        strategy="fair-share",
        weights={"acme": 3},
        load_grace=5.0,
    )
    overrides = options.overrides(app_settings)
    strategy = overrides.pop("strategy")
    assert isinstance(strategy, js.FairShareStrategy) and strategy.weights == {"acme": 3}
    assert overrides == {
        "num_workers": 8,
        "rate_limits": {"smtp": cli_rate, "sms": app_rate},
        "queues": ["reports"],
        "load_grace": 5.0,
    }
    assert Options(store_url=None, workers=4).overrides(app_settings) == {"num_workers": 4}
