"""The installed `jobsched` console script, run as a subprocess against a real store.

Jobs are put in the store by a scheduler in the test; the script then lists,
shows, cancels and retries them, and `jobsched worker` runs them until a
signal. Every store URL fixture param is one store kind (SQLite now;
PostgreSQL joins the params when the fleet store lands).
"""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import anyio
import click
import durable_store
import pytest
from cli_jobs import Shouts, Waits, boom

import jobsched as js

#: The fixture: a durable store the test's processes share (see durable_store).
store_url = durable_store.store_url

if sys.version_info < (3, 11):
    from exceptiongroup import ExceptionGroup

TESTS = Path(__file__).parent


def _script() -> str:
    # The environment's own script (uv run puts its bin first on PATH, but a
    # stray `jobsched` elsewhere on PATH must not be the one tested).
    here = Path(sys.prefix) / ("Scripts" if os.name == "nt" else "bin") / "jobsched"
    found = str(here) if here.exists() else shutil.which("jobsched")
    assert found, "the jobsched console script is not installed: run `uv sync`"
    return found


SCRIPT = _script()


def env_for(**extra: str) -> dict[str, str]:
    """The test's environment without a JOBSCHED_STORE of its own, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k != "JOBSCHED_STORE"}
    env["PYTHONPATH"] = str(TESTS)
    env.update(extra)
    return env


def jobsched(
    *args: str, env: dict[str, str] | None = None, cwd: Path = TESTS
) -> subprocess.CompletedProcess[str]:
    """Run the installed script to its end."""
    return subprocess.run(
        [SCRIPT, *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env if env is not None else env_for(),
        cwd=cwd,
    )


def ok(*args: str, env: dict[str, str] | None = None) -> str:
    """Run the script, expect exit 0 and a quiet stderr; its stdout."""
    done = jobsched(*args, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    return done.stdout


def as_json(*args: str) -> Any:
    return json.loads(ok(*args, "--json"))


def fetch(url: str, job_id: str) -> Any:
    """The job as the store has it, read in this process."""

    async def read() -> Any:
        store = js.open_store(url)
        await store.open()
        try:
            return await store.fetch(int(job_id.removeprefix("job-")))
        finally:
            await store.close()

    return anyio.run(read)


# ── a store with a job in each state ──────────────────────────────────────


def populate(url: str) -> dict[str, str]:
    """Jobs that completed, failed (twice), timed out, were cancelled, and wait."""

    async def main() -> dict[str, str]:
        async with js.JobScheduler(store=url) as s:
            ids = {
                "completed": s.submit(Waits(0.0, value=42, name="adds up")),
                "failed": s.submit(
                    js.FunctionJob(
                        boom,
                        ("bad input",),
                        name="breaks",
                        retry=js.RetryPolicy(max_retries=1, base_delay=0.01),
                    )
                ),
                "timed_out": s.submit(
                    Waits(30.0, name="too slow", timeout=0.2, retry=js.RetryPolicy(max_retries=0))
                ),
            }
            with anyio.fail_after(30):
                await s.join()
            ids["cancelled"] = s.submit(Waits(0.0, name="not wanted"), delay=3600)
            ids["pending"] = s.submit(Waits(0.0, name="later"), delay=3600)
            await s.flush()
            assert s.cancel(ids["cancelled"])
            await s.flush()
        return ids

    return anyio.run(main)


@pytest.fixture
def populated(store_url: str) -> dict[str, str]:
    """Status -> the id of a job in that status, in the store at ``store_url``."""
    return populate(store_url)


# ── reading ───────────────────────────────────────────────────────────────


def test_every_command_has_help() -> None:
    """`--help` works on the script and on each command, each naming --store."""
    top = ok("--help")
    commands = ["worker", "jobs", "show", "cancel", "retry", "stats", "dashboard"]
    for command in commands:
        assert command in top
        text = ok(command, "--help")
        assert f"Usage: jobsched {command}" in text
        assert "--store URL" in text and "JOBSCHED_STORE" in text
    assert ok() == top  # plain `jobsched` shows the same help
    assert ok("--version").startswith("jobsched, version ")


def test_jobs_lists_newest_first(store_url: str, populated: dict[str, str]) -> None:
    """`jobs` prints an aligned table, newest job first, with status and attempts."""
    lines = ok("jobs", "--store", store_url).splitlines()
    assert (
        " ".join(lines[0].split()) == "JOB NAME QUEUE STATUS ATTEMPTS SUBMITTED DUE RAN LAST ERROR"
    )
    order = ["pending", "cancelled", "timed_out", "failed", "completed"]
    assert [line.split()[0] for line in lines[1:]] == [populated[s] for s in order]
    failed = next(line for line in lines if line.startswith(populated["failed"] + " "))
    assert " failed " in failed and "ValueError: bad input" in failed
    # Columns line up: every row's STATUS starts where the header's does; a
    # pending job says why it waits.
    column = lines[0].index("STATUS")
    shown = {s.value for s in js.JobStatus} | {"ready", "delayed", "blocked"}
    assert all(line[column:].split()[0] in shown for line in lines[1:])


def test_jobs_json(store_url: str, populated: dict[str, str]) -> None:
    """`jobs --json` is a list of objects with the fields scripts rely on."""
    rows = as_json("jobs", "--store", store_url)
    by_id = {row["job_id"]: row for row in rows}
    assert set(by_id) == set(populated.values())
    for status, job_id in populated.items():
        assert by_id[job_id]["status"] == status
    failed = by_id[populated["failed"]]
    assert failed["name"] == "breaks"
    assert failed["attempts"] == 2
    assert failed["last_error"] == "ValueError: bad input"
    assert failed["executor"] == "thread"
    assert by_id[populated["completed"]]["last_error"] is None
    assert {row["queue"] for row in rows} == {"default"}
    # UTC, said so, and durations in seconds.
    assert by_id[populated["completed"]]["finished_at"].endswith("+00:00")
    assert isinstance(by_id[populated["completed"]]["duration"], float)
    assert by_id[populated["pending"]]["started_at"] is None


def test_jobs_filters_and_limits(store_url: str, populated: dict[str, str]) -> None:
    """`--status` picks statuses (repeatable, any case), `--limit` the newest N."""
    failed = as_json("jobs", "--store", store_url, "--status", "failed")
    assert [row["job_id"] for row in failed] == [populated["failed"]]
    two = as_json("jobs", "--store", store_url, "--status", "FAILED", "--status", "timed-out")
    assert {row["job_id"] for row in two} == {populated["failed"], populated["timed_out"]}
    newest = as_json("jobs", "--store", store_url, "--limit", "2")
    assert [row["job_id"] for row in newest] == [populated["pending"], populated["cancelled"]]
    assert ok("jobs", "--store", store_url, "--status", "running") == "no jobs with that status\n"


def _waiting_jobs(url: str) -> dict[str, str]:
    """A ready job (no member runs it), a delayed one and one blocked on it,
    and a job in RETRY_WAIT for an hour after a failed attempt."""

    async def main() -> dict[str, str]:
        later = js.RetryPolicy(max_retries=1, base_delay=3600, jitter=False)
        async with js.JobScheduler(store=url) as s:
            failing = s.submit(js.FunctionJob(boom, ("once",), name="retries", retry=later))
            with anyio.fail_after(30):
                while (await s.fetch(failing)).status is not js.JobStatus.RETRY_WAIT:  # noqa: ASYNC110
                    await anyio.sleep(0.02)
        async with js.JobScheduler(store=url, num_workers=0) as producer:
            ready = producer.submit(Waits(0.0, name="ready one", tenant="acme"))
            delayed = producer.submit(Waits(0.0, name="delayed one"), delay=3600)
            blocked = producer.submit(Waits(0.0, name="blocked one"), depends_on=[delayed])
            await producer.flush()
        return {"ready": ready, "delayed": delayed, "blocked": blocked, "retry_wait": failing}

    return anyio.run(main)


def test_a_pending_job_says_why_it_waits(store_url: str) -> None:
    """Issue 38: ready, delayed and blocked show apart from "pending" (in the
    table, in `show`, and as `waiting` in JSON, whose status stays pending)."""
    ids = _waiting_jobs(store_url)
    lines = ok("jobs", "--store", store_url).splitlines()
    column = lines[0].index("STATUS")
    shown = {line.split()[0]: line[column:].split()[0] for line in lines[1:]}
    assert shown == {ids[k]: k for k in ("ready", "delayed", "blocked", "retry_wait")}
    rows = {row["job_id"]: row for row in as_json("jobs", "--store", store_url)}
    for kind in ("ready", "delayed", "blocked"):
        assert (rows[ids[kind]]["status"], rows[ids[kind]]["waiting"]) == ("pending", kind)
    assert rows[ids["retry_wait"]]["waiting"] is None
    assert "status      pending, blocked (0 attempts)" in ok(
        "show", ids["blocked"], "--store", store_url
    )


def test_a_retry_waiting_jobs_ran_is_its_last_attempts(store_url: str) -> None:
    """Issue 38: RAN of a job waiting to retry no longer grows with the clock:
    it is the last attempt's duration, in the list, `show` and JSON alike."""
    ids = _waiting_jobs(store_url)
    job_id = ids["retry_wait"]
    data = as_json("show", job_id, "--store", store_url)
    (attempt,) = data["history"]
    assert attempt["status"] == "retry_wait" and attempt["duration"] is not None
    assert data["duration"] == attempt["duration"] < 5
    (row,) = [r for r in as_json("jobs", "--store", store_url) if r["job_id"] == job_id]
    assert row["duration"] == attempt["duration"]
    stored = fetch(store_url, job_id)
    from jobsched._cli import _format as fmt
    from jobsched.store import Attempt

    history = [
        Attempt(stored.id, 1, "retries", "thread", None, 10.0, 10.25, js.JobStatus.RETRY_WAIT)
    ]
    # Without its history (past HISTORY_READS in a listing): unknown, not the clock.
    assert fmt.last_ran(stored, [], now=100.0) is None
    # The same an hour later: the clock does not run on.
    assert fmt.last_ran(stored, history, now=100.0) == fmt.last_ran(stored, history, 3700.0)
    assert fmt.last_ran(stored, history, now=100.0) == pytest.approx(0.25)


def test_jobs_filters_by_name_tenant_and_since(store_url: str) -> None:
    """`--name`, `--tenant` and `--since` (a time ago or a UTC time), alone
    or together with the others; a bad --since is refused with what it takes."""
    ids = _waiting_jobs(store_url)
    named = as_json("jobs", "--store", store_url, "--name", "blocked one")
    assert [r["job_id"] for r in named] == [ids["blocked"]]
    tenant = as_json("jobs", "--store", store_url, "--tenant", "acme")
    assert [r["job_id"] for r in tenant] == [ids["ready"]]
    assert len(as_json("jobs", "--store", store_url, "--since", "1h")) == 4
    past = time.strftime("%Y-%m-%d %H:%M", time.gmtime(time.time() - 7200))
    assert len(as_json("jobs", "--store", store_url, "--since", past)) == 4
    assert as_json("jobs", "--store", store_url, "--since", "2099-01-01T00:00:00+00:00") == []
    both = as_json("jobs", "--store", store_url, "--since", "1d", "--name", "ready one")
    assert [r["job_id"] for r in both] == [ids["ready"]]
    assert ok("jobs", "--store", store_url, "--name", "nope") == "no jobs named 'nope'\n"
    bad = jobsched("jobs", "--store", store_url, "--since", "yesterday")
    assert bad.returncode != 0
    assert "'yesterday' is neither a time ago (30s, 15m, 2h, 3d) nor a time" in bad.stderr


def test_since_reads_a_utc_z_on_every_python() -> None:
    """ISO 8601's "Z" (Python 3.10's fromisoformat refuses it) is UTC."""
    from datetime import datetime, timezone

    from jobsched._cli._jobargs import SinceType

    since = SinceType()
    utc = datetime(2026, 12, 1, 14, 0, tzinfo=timezone.utc).timestamp()
    assert since.convert("2026-12-01T14:00:00Z", None, None) == utc
    assert since.convert("2026-12-01 14:00z", None, None) == utc
    assert since.convert("2026-12-01T15:00:00+01:00", None, None) == utc
    with pytest.raises(click.BadParameter, match="'Z' is neither a time ago"):
        since.convert("Z", None, None)


def test_a_store_that_keeps_no_attempts_still_lists_its_jobs() -> None:
    """`jobs` reads a retry-waiting job's attempts for its RAN; a store
    without attempts() (a third party's) lists the job with RAN unknown."""
    from jobsched._cli._read import _histories

    class NoAttempts:
        async def attempts(self, **_: object) -> list[object]:
            raise NotImplementedError

    job = type("Stored", (), {"id": 7})()
    assert anyio.run(_histories, NoAttempts(), [job]) == {}


def test_store_from_the_environment(store_url: str, populated: dict[str, str]) -> None:
    """JOBSCHED_STORE stands in for --store."""
    rows = json.loads(ok("jobs", "--json", env=env_for(JOBSCHED_STORE=store_url)))
    assert len(rows) == len(populated)


def test_show_with_attempts(store_url: str, populated: dict[str, str]) -> None:
    """`show` prints the job, each attempt and the last traceback."""
    job_id = populated["failed"]
    text = ok("show", job_id, "--store", store_url)
    assert text.startswith(f"{job_id}  breaks\n")
    assert "status      failed (2 attempts)" in text
    assert "last error  ValueError: bad input" in text
    lines = text.splitlines()
    header = next(i for i, line in enumerate(lines) if line.lstrip().startswith("ATTEMPT"))
    attempt_rows = [line.split() for line in lines[header + 1 : header + 3]]
    assert [row[:2] for row in attempt_rows] == [["1", "retried"], ["2", "failed"]]
    assert "last traceback:" in text and "in boom" in text
    data = as_json("show", job_id, "--store", store_url)
    assert data["job_id"] == job_id and data["attempts"] == 2
    assert [a["status"] for a in data["history"]] == ["retry_wait", "failed"]
    assert all(a["error"] == "ValueError: bad input" for a in data["history"])
    assert "ValueError: bad input" in data["last_traceback"]
    # A bare number names the same job.
    assert as_json("show", job_id.removeprefix("job-"), "--store", store_url) == data


def test_show_names_priority_timeout_and_retry(store_url: str, populated: dict[str, str]) -> None:
    """Issue 38: `show` has the job's tenant, priority, timeout and retry
    policy, read from the stored pickle without unpickling it."""
    text = ok("show", populated["timed_out"], "--store", store_url)
    assert "\n  tenant      -\n  priority    MEDIUM (1)\n  timeout     0.2 s\n" in text
    assert "\n  retry       RetryPolicy(max_retries=0, base_delay=1.0," in text
    data = as_json("show", populated["failed"], "--store", store_url)
    assert data["options"] == {
        "priority": "MEDIUM (1)",
        "timeout": "30 s",
        "retry": "RetryPolicy(max_retries=1, base_delay=0.01, max_delay=60.0, jitter=True)",
    }
    defaults = as_json("show", populated["completed"], "--store", store_url)["options"]
    assert defaults["retry"].endswith("(the default)")


def test_jobs_says_when_a_waiting_job_is_due(store_url: str, populated: dict[str, str]) -> None:
    """DUE: when a pending (or retry-waiting) job runs, in UTC; ``-`` for any other."""
    lines = ok("jobs", "--store", store_url).splitlines()
    column = lines[0].index("DUE")
    due = {line.split()[0]: line[column:].split("  ")[0].strip() for line in lines[1:]}
    pending = fetch(store_url, populated["pending"])
    assert due[populated["pending"]] == time.strftime(
        "%Y-%m-%d %H:%M:%S UTC", time.gmtime(pending.run_at)
    )
    assert pending.run_at > time.time() + 3000  # submitted with delay=3600
    for status in ("completed", "failed", "cancelled", "timed_out"):
        assert due[populated[status]] == "-"


def test_show_prints_a_completed_jobs_result(store_url: str, populated: dict[str, str]) -> None:
    """`show` prints a completed job's result as its repr (--json too); other jobs have none."""
    text = ok("show", populated["completed"], "--store", store_url)
    assert "\n  result      42\n" in text
    data = as_json("show", populated["completed"], "--store", store_url)
    assert data["result"] == "42" and data["result_error"] is None
    failed = as_json("show", populated["failed"], "--store", store_url)
    assert failed["result"] is None and failed["result_error"] is None
    assert "result" not in ok("show", populated["failed"], "--store", store_url).split("ATTEMPT")[0]


def _completed(url: str, value: Any, **submit: Any) -> str:
    async def main() -> str:
        async with js.JobScheduler(store=url) as s:
            job_id = s.submit(Waits(0.0, value=value, name="returns"), **submit)
            with anyio.fail_after(30):
                await s.wait(job_id)
        return job_id

    return anyio.run(main)


def test_a_long_hostile_result_is_cut_and_escaped(store_url: str) -> None:
    """A result's repr is cut at 1,000 characters and its control characters
    escaped, even where its own __repr__ writes them raw."""
    job_id = _completed(store_url, Shouts())
    text = ok("show", job_id, "--store", store_url)
    assert not any(c in text for c in "\x1b\u202e"), repr(text[:200])
    line = next(line for line in text.splitlines() if line.startswith("  result "))
    assert line == "  result      \\x1b[2J\\u202e" + "x" * 992 + "..."
    shown = as_json("show", job_id, "--store", store_url)["result"]
    assert shown == "\x1b[2J\u202e" + "x" * 992 + "..."
    # A str's repr escapes its own: still one line, quoted.
    plain = as_json("show", _completed(store_url, "a\nb"), "--store", store_url)["result"]
    assert plain == "'a\\nb'"


def test_a_result_that_cannot_load_says_why(store_url: str) -> None:
    """A result signed with a key the command does not hold is never unpickled,
    nor one whose class does not import here: `show` says why instead."""
    job_id = _completed(store_url, Waits(0.0, name="a job as the result"))
    # Without the tests' folder on the path, cli_jobs (the result's module) is not there.
    elsewhere = {k: v for k, v in env_for().items() if k != "PYTHONPATH"}
    text = ok("show", job_id, "--store", store_url, env=elsewhere)
    assert "result      not shown: the stored result cannot be loaded: " in text
    assert "'cli_jobs' cannot be imported here" in text
    data = json.loads(ok("show", job_id, "--store", store_url, "--json", env=elsewhere))
    assert data["result"] is None and "cli_jobs" in data["result_error"]
    # Signed with another key (or unsigned where the command holds one): not loaded.
    other_key = env_for(JOBSCHED_SECRET="another-key-not-the-one-that-signed")
    text = ok("show", job_id, "--store", store_url, env=other_key)
    assert "result      not shown: the stored result cannot be loaded: the payload is" in text


def test_an_own_id_shows_as_given(store_url: str) -> None:
    """A job submitted with job_id= is listed and shown by that id (read from
    its payload, not unpickled), and a missing one is named as typed."""
    job_id = _completed(store_url, 1, job_id="receipt-42")
    assert job_id == "receipt-42"
    lines = ok("jobs", "--store", store_url).splitlines()
    assert lines[1].split()[0] == "receipt-42"
    assert as_json("jobs", "--store", store_url)[0]["job_id"] == "receipt-42"
    text = ok("show", "receipt-42", "--store", store_url)
    assert text.startswith("receipt-42  returns\n")
    assert as_json("show", "receipt-42", "--store", store_url)["job_id"] == "receipt-42"
    missing = jobsched("show", "receipt-43", "--store", store_url)
    assert missing.returncode == 1
    assert "no job 'receipt-43' in " in missing.stderr
    cancel = jobsched("cancel", "receipt-43", "--store", store_url)
    assert "no job 'receipt-43' in " in cancel.stderr


def test_a_lost_attempt_ran_until_its_last_renewal(tmp_path: Path) -> None:
    """`show`'s RAN for an attempt whose member died is its start to the
    member's last lease renewal, not to when another member took it over."""
    url = f"sqlite:///{tmp_path / 'jobs.db'}"

    async def main() -> str:
        async with js.JobScheduler(store=url, num_workers=0) as s:  # stores, runs nothing
            job_id = s.submit(Waits(0.0, value=1, name="outlives its member"))
        store = js.open_store(url)
        await store.open()
        try:
            # A member claimed it 100 s ago, renewed its lease 80 s ago, then died.
            then = time.time() - 100
            (claim,) = await store.claim("gone:1:abc", 1, {"async": 9}, then, lease=30)
            await store.extend("gone:1:abc", [claim.id], then + 20 + store.lease)
        finally:
            await store.close()
        async with js.JobScheduler(store=url) as s:
            with anyio.fail_after(30):
                await s.wait(job_id)
        return job_id

    job_id = anyio.run(main)
    history = as_json("show", job_id, "--store", url)["history"]
    lost = history[0]
    assert (lost["status"], lost["owner"], lost["error"]) == (
        "retry_wait",
        "gone:1:abc",
        "worker lost",
    )
    assert history[0]["duration"] == 20.0
    text = ok("show", job_id, "--store", url)
    row = next(line.split() for line in text.splitlines() if line.split()[:2] == ["1", "retried"])
    assert row[5] == "20.0s"


def test_stats(store_url: str, populated: dict[str, str]) -> None:
    """`stats` counts jobs by status and executor."""
    data = as_json("stats", "--store", store_url)
    assert data["total"] == 5
    assert data["by_status"] == {
        "pending": 1,
        "running": 0,
        "retry_wait": 0,
        "completed": 1,
        "failed": 1,
        "timed_out": 1,
        "cancelled": 1,
    }
    assert data["by_executor"] == {
        "async": {"completed": 1, "timed_out": 1, "cancelled": 1, "pending": 1},
        "thread": {"failed": 1},
    }
    assert data["schedules"] == []
    lines = ok("stats", "--store", store_url).splitlines()
    assert lines[0].split()[:3] == ["EXECUTOR", "PENDING", "RUNNING"]
    assert lines[1].split() == ["async", "1", "0", "0", "1", "0", "1", "1", "4"]
    assert lines[2].split() == ["thread", "0", "0", "0", "0", "1", "0", "0", "1"]
    assert lines[3].split() == ["all", "1", "0", "0", "1", "1", "1", "1", "5"]


# ── acting ────────────────────────────────────────────────────────────────


def test_cancel_a_waiting_job(store_url: str, populated: dict[str, str]) -> None:
    """`cancel` ends a waiting job CANCELLED in the store."""
    job_id = populated["pending"]
    assert ok("cancel", job_id, "--store", store_url) == f"{job_id} cancelled\n"
    assert fetch(store_url, job_id).status is js.JobStatus.CANCELLED


def test_cancel_a_finished_job_is_an_error(store_url: str, populated: dict[str, str]) -> None:
    """Cancelling a job that already ended says so and exits 1, changing nothing."""
    job_id = populated["completed"]
    done = jobsched("cancel", job_id, "--store", store_url)
    assert done.returncode == 1
    assert done.stderr == f"jobsched: error: {job_id} already ended completed: nothing to cancel\n"
    assert fetch(store_url, job_id).status is js.JobStatus.COMPLETED


@pytest.mark.parametrize("status", ["failed", "timed_out", "cancelled"])
def test_retry_requeues(store_url: str, populated: dict[str, str], status: str) -> None:
    """`retry` puts a failed, timed-out or cancelled job back in the queue."""
    job_id = populated[status]
    before = fetch(store_url, job_id).attempts
    assert ok("retry", job_id, "--store", store_url).startswith(f"{job_id} queued again")
    after = fetch(store_url, job_id)
    assert after.status in (js.JobStatus.PENDING, js.JobStatus.RETRY_WAIT)
    assert after.attempts == before
    assert after.run_at <= time.time()


@pytest.mark.parametrize("status", ["completed", "pending"])
def test_retry_refuses_other_statuses(
    store_url: str, populated: dict[str, str], status: str
) -> None:
    """Only failed, timed-out and cancelled jobs can be retried."""
    done = jobsched("retry", populated[status], "--store", store_url)
    assert done.returncode == 1
    assert done.stderr == (
        f"jobsched: error: {populated[status]} is {status}: only failed, timed_out or "
        "cancelled jobs can be retried\n"
    )
    assert fetch(store_url, populated[status]).status.value == status


def test_retry_all_requeues_every_match_in_one_process(
    store_url: str, populated: dict[str, str]
) -> None:
    """`retry --all --status failed` requeues every failed job (and no other); `--name`
    narrows it, and a second run finds nothing left."""
    assert ok("retry", "--all", "--status", "failed", "--name", "nobody", "--store", store_url) == (
        "no job to retry matches\n"
    )
    assert ok("retry", "--all", "--status", "failed", "--store", store_url) == (
        "1 job(s) queued again\n"
    )
    assert fetch(store_url, populated["failed"]).status is js.JobStatus.PENDING
    assert fetch(store_url, populated["timed_out"]).status is js.JobStatus.TIMED_OUT
    assert fetch(store_url, populated["cancelled"]).status is js.JobStatus.CANCELLED
    # Without --status: every retryable one that matches the name.
    assert ok("retry", "--all", "--name", "too slow", "--store", store_url) == (
        "1 job(s) queued again\n"
    )
    assert fetch(store_url, populated["timed_out"]).status is js.JobStatus.PENDING
    assert fetch(store_url, populated["cancelled"]).status is js.JobStatus.CANCELLED
    assert ok("retry", "--all", "--store", store_url) == "1 job(s) queued again\n"
    assert ok("retry", "--all", "--store", store_url) == "no job to retry matches\n"
    assert fetch(store_url, populated["completed"]).status is js.JobStatus.COMPLETED


# ── user errors: one line, exit 1 ─────────────────────────────────────────


@pytest.fixture(scope="module", params=["sqlite"])
def shared_store(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, str]:
    """A store with a few jobs, and files beside it, shared by the error cases."""
    tmp = tmp_path_factory.mktemp("errors")
    url = f"sqlite:///{tmp / 'jobs.db'}"
    populate(url)
    (tmp / "not-a-store.db").write_bytes(b"this is not a SQLite database" * 100)
    return {
        "url": url,
        "garbage": f"sqlite:///{tmp / 'not-a-store.db'}",
        "missing_dir": f"sqlite:///{tmp / 'no-such-folder' / 'jobs.db'}",
    }


_WORKER = ["worker", "--store", "{url}", "--import", "cli_jobs"]

#: (arguments, what the one line must say); {url} etc. come from shared_store.
USER_ERRORS = {
    "show-unknown": (["show", "job-999999", "--store", "{url}"], "no job job-999999 in "),
    "cancel-unknown": (["cancel", "job-999999", "--store", "{url}"], "no job job-999999 in "),
    "retry-unknown": (["retry", "job-999999", "--store", "{url}"], "no job job-999999 in "),
    "retry-nothing": (["retry", "--store", "{url}"], "give a JOB_ID to retry one job, or --all"),
    "retry-both": (["retry", "job-1", "--all", "--store", "{url}"], "a JOB_ID or --all, not both"),
    "retry-filter-alone": (
        ["retry", "--name", "x", "--store", "{url}"],
        "select jobs for --all; add --all",
    ),
    "retry-all-pending": (
        ["retry", "--all", "--status", "pending", "--store", "{url}"],
        "--status pending: only failed, timed_out or cancelled jobs can be retried",
    ),
    "bad-job-id": (["show", "job-3x", "--store", "{url}"], "'job-3x' is not a job id"),
    "not-a-database": (["jobs", "--store", "{garbage}"], "cannot open the SQLite store"),
    "no-such-folder": (["jobs", "--store", "{missing_dir}"], "does not exist"),
    "worker-no-such-folder": (
        ["worker", "--import", "cli_jobs", "--store", "{missing_dir}"],
        "does not exist",
    ),
    "malformed-url": (["jobs", "--store", "jobs.db"], "malformed store URL 'jobs.db'"),
    "unknown-scheme": (["jobs", "--store", "mysql://db/jobs"], "no store serves mysql:// URLs"),
    "no-secret": (
        ["stats", "--store", "postgresql://u:hunter2@h/db"],
        "the PostgreSQL store 'postgresql://u:***@h/db' needs a secret",
    ),
    "memory": (["jobs", "--store", "memory"], "the 'memory' store lives inside one process"),
    "no-store": (["jobs"], "no store given: pass --store URL or set JOBSCHED_STORE"),
    "limit-zero": (["jobs", "--store", "{url}", "--limit", "0"], "'--limit': 0 is not in"),
    "limit-word": (["jobs", "--store", "{url}", "--limit", "many"], "'many' is not a valid"),
    "bad-status": (["jobs", "--store", "{url}", "--status", "done"], "'done' is not a status"),
    "workers-zero": ([*_WORKER, "--workers", "0"], "'--workers'"),
    "grace-negative": ([*_WORKER, "--grace", "-1"], "'--grace'"),
    "limit-no-count": ([*_WORKER, "--executor-limit", "thread"], "NAME=N"),
    "limit-zero-count": ([*_WORKER, "--executor-limit", "a=0"], "NAME=N"),
    "no-import": (["worker", "--store", "{url}"], "Missing option '--import'"),
    "import-missing": ([*_WORKER[:-1], "no_such_module"], "cannot import 'no_such_module'"),
    "limit-huge": (
        ["jobs", "--store", "{url}", "--limit", "99999999999999999999999"],
        "'--limit': 99999999999999999999999 is not in the range 1<=x<=9223372036854775807",
    ),
    "job-id-huge": (["show", "job-9999999999999999999", "--store", "{url}"], "is not a job id"),
    "grace-nan": ([*_WORKER, "--grace", "nan"], "'nan' is not a finite number of seconds"),
    "grace-inf": ([*_WORKER, "--grace", "inf"], "'inf' is not a finite number of seconds"),
    "pg-no-host": (["jobs", "--store", "postgresql://"], "'postgresql://' names no host"),
    "pg-no-database": (
        ["stats", "--store", "postgresql://u:hunter2@127.0.0.1"],
        "'postgresql://u:***@127.0.0.1' names no database",
    ),
    "keyword-dsn": (
        ["jobs", "--store", "host=db password=hunter2"],
        "malformed store URL 'host=db password=***'",
    ),
    "query-password": (
        ["stats", "--store", "postgresql://u@h/db?password=hunter2"],
        "the PostgreSQL store 'postgresql://u@h/db?password=***' needs a secret",
    ),
    "unknown-option": (["jobs", "--store", "{url}", "--colour"], "No such option"),
    "unknown-command": (["frobnicate"], "No such command 'frobnicate'"),
}


@pytest.mark.parametrize("case", list(USER_ERRORS))
def test_user_error_is_one_line(shared_store: dict[str, str], case: str) -> None:
    """A user error: exit status 1, one line on stderr naming the problem, no traceback."""
    template, expected = USER_ERRORS[case]
    done = jobsched(*(arg.format(**shared_store) for arg in template))
    assert done.returncode == 1, done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("jobsched: error: ")
    assert expected in lines[0], lines[0]
    assert "hunter2" not in done.stderr  # a password in a URL is never printed


@pytest.mark.parametrize("command", [["jobs"], ["dashboard", "--port", "0"]], ids=lambda c: c[0])
def test_reading_a_missing_file_does_not_create_it(tmp_path: Path, command: list[str]) -> None:
    """A mistyped SQLite path is an error, not a new empty store."""
    path = tmp_path / "typo.db"
    done = jobsched(*command, "--store", f"sqlite:///{path}")
    assert done.returncode == 1 and "does not exist" in done.stderr
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert not path.exists()


def _corrupt_store(path: Path, keep_pages: int) -> str:
    """A real store file with a few hundred jobs, its pages after the first
    ``keep_pages`` overwritten (as a failing disk or a half-copied file leaves it)."""
    import sqlite3

    from durable_jobs import Note

    url = f"sqlite:///{path}"

    async def main() -> None:
        async with js.JobScheduler(store=url, num_workers=0) as s:
            for i in range(300):
                s.submit(Note(str(path.parent / "log"), "x" * 200, name=f"job {i}"))
            await s.flush()

    anyio.run(main)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # every page in the main file
    page: int = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    size = path.stat().st_size
    assert size > 8 * page
    with path.open("r+b") as f:
        f.seek(keep_pages * page)
        f.write(b"\xff" * (size - (keep_pages + 1) * page))
    return url


_CORRUPT = (
    "is corrupt (database disk image is malformed): "
    "check it with `sqlite3 {path} 'PRAGMA integrity_check'`"
)


@pytest.mark.parametrize("keep_pages", [1, 3], ids=["schema-only", "tables-damaged"])
@pytest.mark.parametrize(
    "command", [["jobs"], ["stats"], ["worker", "--import", "durable_jobs"]], ids=lambda c: c[0]
)
def test_a_corrupt_sqlite_file_is_one_line(
    tmp_path: Path, keep_pages: int, command: list[str]
) -> None:
    """A SQLite file with damaged pages: exit status 1 and one line naming the
    file, saying it is corrupt, and how to check and recover it; no traceback
    (from the read commands and from a worker alike)."""
    path = tmp_path / "jobs.db"
    url = _corrupt_store(path, keep_pages)
    done = jobsched(*command, "--store", url)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("jobsched: error:")]
    assert len(errors) == 1, done.stderr
    assert errors[0] == done.stderr.splitlines()[-1]
    assert f"the SQLite store {str(path)!r} " + _CORRUPT.format(path=path) in errors[0]
    assert ".recover" in errors[0] and "backup" in errors[0]
    if command[0] != "worker":  # a worker also logs that it started and stopped
        assert len(done.stderr.splitlines()) == 1, done.stderr


def test_scheduler_errors_raised_together_are_one_line_each(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A scheduler's tasks that fail on one cause at once raise a group: each
    distinct message is one line, exit status 1; a group holding anything but
    SchedulerErrors (a bug) keeps its traceback."""
    from jobsched._cli import _main

    raised: list[BaseException] = []

    def fails(**kwargs: Any) -> None:
        raise raised[0]

    monkeypatch.setattr(_main.cli, "main", fails)
    raised.append(
        ExceptionGroup(
            "tasks",
            [
                js.SchedulerError("the store is corrupt"),
                ExceptionGroup("inner", [js.StoreUnavailableError("the store is corrupt")]),
                js.SchedulerError("and another thing"),
            ],
        )
    )
    assert _main.main([]) == 1
    assert capsys.readouterr().err == (
        "jobsched: error: the store is corrupt\njobsched: error: and another thing\n"
    )
    bug = ExceptionGroup("tasks", [js.SchedulerError("x"), KeyError("a bug")])
    raised[0] = bug
    with pytest.raises(ExceptionGroup) as kept:
        _main.main([])
    assert kept.value is bug


@pytest.mark.parametrize(
    "command",
    [
        ["jobs"],
        ["jobs", "--json"],
        ["stats"],
        ["show", "job-1"],
        ["cancel", "job-1"],
        ["retry", "1"],
        # Nor does the dashboard (it created the schema, then served it empty).
        ["dashboard", "--port", "0"],
    ],
    ids=lambda c: "-".join(c),
)
def test_reading_a_database_without_the_schema_does_not_create_it(
    store_url: str, command: list[str]
) -> None:
    """A database without jobsched's tables (a wrong URL, an empty file) is an
    error: a read command never creates a store, nor shows "no jobs" for one."""
    if store_url.startswith("sqlite:"):
        path = Path(store_url.removeprefix("sqlite:///"))
        path.touch()
    done = jobsched(*command, "--store", store_url)
    assert done.returncode == 1 and done.stdout == "", done.stdout
    assert done.stderr.startswith("jobsched: error: no jobsched store at "), done.stderr
    assert "has no jobsched tables" in done.stderr and len(done.stderr.splitlines()) == 1
    if store_url.startswith("sqlite:"):
        assert path.stat().st_size == 0
    else:
        import psycopg

        with psycopg.connect(store_url) as conn:
            tables = conn.execute(
                "SELECT count(*) FROM pg_tables WHERE tablename LIKE 'jobsched%' "
                "AND schemaname = current_schema()"
            ).fetchone()
        assert tables == (0,)


HOSTILE_NAME = "\x1b]0;pwned\x07\x1b[2J evil\u202eman"
HOSTILE_ERROR = "\x1b[31mred\x1b[0m\x9b and\ttabs"


def test_control_characters_never_reach_the_terminal(store_url: str) -> None:
    """A job's name and error (anyone's text) are printed with their control
    characters escaped (ESC as \\x1b), in tables and in `show`; --json keeps
    them exact, as valid JSON."""

    async def main() -> str:
        async with js.JobScheduler(store=store_url) as s:
            job_id = s.submit(
                js.FunctionJob(
                    boom, (HOSTILE_ERROR,), name=HOSTILE_NAME, retry=js.RetryPolicy(max_retries=0)
                )
            )
            with anyio.fail_after(30):
                await s.join()
        return job_id

    job_id = anyio.run(main)
    outputs = [
        ok("jobs", "--store", store_url),
        ok("show", job_id, "--store", store_url),
        ok("stats", "--store", store_url),
    ]
    for text in outputs:
        assert not any(c in text for c in "\x1b\x07\x9b\u202e"), repr(text)
    table, shown, _ = outputs
    assert "\\x1b]0;pwned\\x07" in table and "\\x1b[31mred" in table
    assert f"{job_id}  \\x1b]0;pwned\\x07\\x1b[2J evil\\u202eman\n" in shown
    assert "last error  ValueError: \\x1b[31mred\\x1b[0m\\x9b and\\ttabs" in shown
    assert "\n  File " in shown  # the traceback keeps its lines
    raw = ok("jobs", "--store", store_url, "--json")
    assert not any(c in raw for c in "\x1b\x07\x9b\u202e"), repr(raw)
    assert "\\u001b]0;pwned\\u0007" in raw and "\\u009b" in raw and "\\u202e" in raw
    (row,) = as_json("jobs", "--store", store_url)
    assert row["name"] == HOSTILE_NAME and row["last_error"] == f"ValueError: {HOSTILE_ERROR}"
    assert as_json("show", job_id, "--store", store_url)["name"] == HOSTILE_NAME


@pytest.mark.timeout(120)
def test_the_worker_log_escapes_control_characters(store_url: str, workers: list[Worker]) -> None:
    """The worker's log line for a failed job (name, error, traceback) is escaped too."""
    (job_id,) = submit(
        store_url,
        js.FunctionJob(
            boom, (HOSTILE_ERROR,), name=HOSTILE_NAME, retry=js.RetryPolicy(max_retries=0)
        ),
    )
    worker = Worker(store_url, "--workers", "1")
    workers.append(worker)
    failed = worker.expect("it ends FAILED")
    worker.signal(signal.SIGTERM)
    assert worker.wait() == 0, worker.lines
    assert job_id in failed and "ValueError: \\x1b[31mred\\x1b[0m\\x9b and\\ttabs" in failed
    text = "\n".join(worker.lines)
    assert not any(c in text for c in "\x1b\x07\x9b\u202e"), repr(text)


@pytest.mark.postgres
@pytest.mark.timeout(120)
def test_a_password_given_as_an_option_reaches_no_output(
    pg_session_database: str, monkeypatch: pytest.MonkeyPatch, workers: list[Worker]
) -> None:
    """`?password=` in the URL: no command prints it, in its output, its errors
    or the worker's log (the test server trusts 127.0.0.1, so it connects)."""
    from pg import SECRET, schema_url

    monkeypatch.setenv("JOBSCHED_SECRET", SECRET)
    empty = schema_url(pg_session_database) + "&password=hunter2"
    url = schema_url(pg_session_database) + "&password=hunter2"
    ids = populate(url)
    unreachable = "postgresql://postgres@127.0.0.1:1/jobs?password=hunter2"
    runs = [
        jobsched("jobs", "--store", url),
        jobsched("jobs", "--store", url, "--json"),
        jobsched("show", ids["failed"], "--store", url),
        jobsched("show", "job-999999", "--store", url),
        jobsched("cancel", ids["pending"], "--store", url),
        jobsched("cancel", "job-999999", "--store", url),
        jobsched("retry", ids["failed"], "--store", url),
        jobsched("retry", "job-999999", "--store", url),
        jobsched("stats", "--store", url),
        jobsched("stats", "--store", empty),
        jobsched("jobs", "--store", unreachable),
    ]
    outputs = [run.stdout + run.stderr for run in runs]
    assert "no job job-999999 in postgresql://" in outputs[3]
    assert "password=***" in outputs[3] and "password=***" in outputs[9]
    assert "cannot connect to the PostgreSQL store" in outputs[10]
    worker = Worker(url, "--workers", "1")
    workers.append(worker)
    started = worker.expect("started on ")
    worker.signal(signal.SIGTERM)
    assert worker.wait() == 0, worker.lines
    assert "password=***" in started
    outputs += worker.lines
    leaks = [text for text in outputs if "hunter2" in text]
    assert not leaks, leaks


def test_an_error_in_an_imported_module_names_its_line(store_url: str, tmp_path: Path) -> None:
    """A module that raises on import: one line with the error and where it was raised."""
    (tmp_path / "broken_jobs.py").write_text("x = 1\nraise RuntimeError('half written')\n")
    done = jobsched("worker", "--store", store_url, "--import", "broken_jobs", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr == (
        "jobsched: error: cannot import 'broken_jobs': RuntimeError: half written "
        f"(at {tmp_path / 'broken_jobs.py'}:2)\n"
    )


# ── the dashboard subcommand ──────────────────────────────────────────────

_WITH_DASHBOARD = """
import sys, types
{setup}
from jobsched._cli import main
sys.exit(main())
"""


def _dashboard(setup: str, *args: str) -> subprocess.CompletedProcess[str]:
    code = _WITH_DASHBOARD.format(setup=setup)
    return subprocess.run(
        [sys.executable, "-c", code, "dashboard", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env_for(),
    )


#: As if jobsched-dashboard were not installed: neither its module nor its entry point.
_UNINSTALLED = """
sys.modules['jobsched_dashboard'] = None
from jobsched._jobs import _plugins
installed = _plugins.entry_points
_plugins.entry_points = lambda group: [e for e in installed(group) if e.name != 'dashboard']
"""


@pytest.mark.parametrize("args", [[], ["--port", "8123"], ["--help"]])
def test_dashboard_not_installed(store_url: str, args: list[str]) -> None:
    """Without jobsched-dashboard, `dashboard` says what to install, in one line,
    whatever its arguments (the core no longer knows the dashboard's options)."""
    done = _dashboard(_UNINSTALLED, "--store", store_url, *args)
    assert done.returncode == 1
    assert done.stderr == (
        "jobsched: error: the dashboard is not installed; to fix: "
        'pip install "jobsched-core[dashboard]"\n'
    )


_PRINTS = "types.SimpleNamespace(serve=lambda *a, **k: print(*a, k))"


def test_dashboard_calls_serve(store_url: str) -> None:
    """`dashboard` hands the store, address, token and allowed hosts to
    jobsched_dashboard.serve."""
    fake = f"sys.modules['jobsched_dashboard._serve'] = {_PRINTS}"
    done = _dashboard(fake, "--store", store_url, "--port", "8123", "--token", "s3cret")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{store_url} 127.0.0.1 8123 s3cret {{'allowed_hosts': ()}}\n"
    done = _dashboard(
        fake, "--store", store_url, "--host", "0.0.0.0", "--allowed-host", "jobs.example.org"
    )
    assert done.stdout == (
        f"{store_url} 0.0.0.0 8000 None {{'allowed_hosts': ('jobs.example.org',)}}\n"
    )


@pytest.mark.parametrize(
    ("setup", "args", "expected"),
    [
        (_PRINTS, ["--store", "jobs.db"], "malformed store URL"),
        (_PRINTS, ["--token", ""], "--token is empty"),
        (_PRINTS, ["--allowed-host", " "], "--allowed-host is empty"),
        (
            "types.SimpleNamespace(serve=lambda *a, **k: int('port?'))",
            [],
            "invalid literal for int()",
        ),
    ],
    ids=["bad-url", "empty-token", "empty-allowed-host", "serve-refuses"],
)
def test_dashboard_user_errors(store_url: str, setup: str, args: list[str], expected: str) -> None:
    """A bad URL, an empty token, or input serve() refuses (ValueError): one line, exit 1."""
    if "--store" not in args:
        args = ["--store", store_url, *args]
    done = _dashboard(f"sys.modules['jobsched_dashboard._serve'] = {setup}", *args)
    assert done.returncode == 1
    assert len(done.stderr.splitlines()) == 1 and expected in done.stderr, done.stderr


# ── the worker ────────────────────────────────────────────────────────────


class Worker:
    """`jobsched worker` in a subprocess; its stderr read line by line."""

    def __init__(self, url: str, *args: str, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            [SCRIPT, "worker", "--store", url, "--import", "cli_jobs", *args],
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
            cwd=TESTS,
            env=env if env is not None else env_for(),
        )
        self.lines: list[str] = []
        self._eof = False
        self._queue: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        with self.process.stderr:
            for line in self.process.stderr:
                self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def expect(self, text: str, timeout: float = 30) -> str:
        """The next stderr line containing ``text`` (fails at EOF or after ``timeout``)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no line with {text!r} in {timeout}s: {self.lines}")
            if line is None:
                self._eof = True
                raise AssertionError(f"the worker ended without {text!r}: {self.lines}")
            self.lines.append(line)
            if text in line:
                return line

    def signal(self, signum: int) -> None:
        self.process.send_signal(signum)

    def wait(self, timeout: float = 60) -> int:
        """The exit status, after reading the rest of stderr."""
        code = self.process.wait(timeout=timeout)
        while not self._eof:
            line = self._queue.get(timeout=timeout)
            if line is None:
                self._eof = True
            else:
                self.lines.append(line)
        return code

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.wait()  # to EOF: the reader closes the pipe


@pytest.fixture
def workers() -> Iterator[list[Worker]]:
    """Started workers, killed at the end if a test left one running."""
    started: list[Worker] = []
    yield started
    for worker in started:
        worker.kill()


def submit(url: str, *jobs: js.Job, delay: float = 0.0) -> list[str]:
    """Commit ``jobs`` to the store without running them (a scheduler never started)."""

    async def main() -> list[str]:
        s = js.JobScheduler(store=url)
        ids = [s.submit(job, delay=delay) for job in jobs]
        await s.stop()
        return ids

    return anyio.run(main)


def _no_traceback(lines: Sequence[str]) -> None:
    assert not any("Traceback" in line for line in lines), lines


@pytest.mark.timeout(120)
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_worker_drains_on_a_signal(
    store_url: str, workers: list[Worker], signum: signal.Signals
) -> None:
    """On SIGTERM or SIGINT the worker lets the running job finish, leaves the
    unstarted one in the store, logs one line at start and stop, and exits 0."""
    running, queued = submit(store_url, Waits(1.0, value="done"), Waits(0.0, name="queued"))
    worker = Worker(store_url, "--workers", "1")
    workers.append(worker)
    started = worker.expect("started on ")
    assert f"on {store_url}: 1 workers" in started and "jobs from cli_jobs" in started
    # Stamped in UTC, said so, as the other commands and the dashboard show times.
    assert re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} UTC INFO ", started), started
    worker.expect(f"cli-test: start {running}")
    worker.signal(signum)
    assert worker.wait() == 0, worker.lines
    stopped = [line for line in worker.lines if "jobsched.worker" in line]
    assert len(stopped) == 2 and f"stopped ({signum.name})" in stopped[1], worker.lines
    assert "jobs ended here: 1 completed; none cut short" in stopped[1]
    _no_traceback(worker.lines)
    done = fetch(store_url, running)
    assert done.status is js.JobStatus.COMPLETED and done.owner is None
    waiting = fetch(store_url, queued)
    assert (waiting.status, waiting.attempts, waiting.owner) == (js.JobStatus.PENDING, 0, None)


@pytest.mark.timeout(120)
def test_worker_hands_back_what_outlives_the_grace(store_url: str, workers: list[Worker]) -> None:
    """A job still running when the grace ends is cut short and released: back
    in the store, its attempt uncounted, owned by no one; a new worker runs it."""
    (job,) = submit(store_url, Waits(3600.0, name="endless"))
    worker = Worker(store_url, "--grace", "0.5")
    workers.append(worker)
    worker.expect(f"cli-test: start {job}")
    worker.signal(signal.SIGTERM)
    assert worker.wait() == 0, worker.lines
    assert "1 cut short and handed back to the store" in worker.lines[-1], worker.lines
    _no_traceback(worker.lines)
    back = fetch(store_url, job)
    assert (back.status, back.attempts, back.owner) == (js.JobStatus.PENDING, 0, None)
    # Nothing waits out a lease: the next worker starts it at once.
    again = Worker(store_url, "--grace", "0")
    workers.append(again)
    again.expect(f"cli-test: start {job}")
    again.signal(signal.SIGTERM)
    assert again.wait() == 0, again.lines


@pytest.mark.timeout(120)
def test_worker_executor_limit_holds(store_url: str, workers: list[Worker]) -> None:
    """--executor-limit async=1 with 4 workers: one async job at a time, the
    second starts only once the first has ended."""
    first, second = submit(store_url, Waits(2.0, value=1), Waits(0.0, value=2))
    worker = Worker(store_url, "--workers", "4", "--executor-limit", "async=1")
    workers.append(worker)
    one = worker.expect("cli-test: start ")
    two = worker.expect("cli-test: start ")
    assert {one.split()[-1], two.split()[-1]} == {first, second}
    worker.signal(signal.SIGTERM)
    assert worker.wait() == 0, worker.lines
    # Read once the worker has stopped: the first's completion may still be
    # in the group commit when the second starts.
    ran_first, ran_second = fetch(store_url, one.split()[-1]), fetch(store_url, two.split()[-1])
    assert ran_first.status is ran_second.status is js.JobStatus.COMPLETED
    assert ran_first.finished_at <= ran_second.started_at  # one at a time


@pytest.mark.timeout(120)
def test_a_second_signal_ends_the_grace(store_url: str, workers: list[Worker]) -> None:
    """A second signal cuts the grace short: the job goes back to the store at once."""
    (job,) = submit(store_url, Waits(3600.0, name="endless"))
    worker = Worker(store_url, "--grace", "3600")
    workers.append(worker)
    worker.expect(f"cli-test: start {job}")
    worker.signal(signal.SIGTERM)
    worker.signal(signal.SIGINT)
    assert worker.wait() == 0, worker.lines
    assert "1 cut short" in worker.lines[-1]
    assert fetch(store_url, job).status is js.JobStatus.PENDING


@pytest.mark.timeout(120)
def test_retried_job_runs_again(store_url: str, workers: list[Worker]) -> None:
    """`retry` on a cancelled job: a worker then runs it to completion."""
    (job,) = submit(store_url, Waits(0.0, value=7, name="second chance"), delay=3600)
    assert ok("cancel", job, "--store", store_url) == f"{job} cancelled\n"
    ok("retry", job, "--store", store_url)
    worker = Worker(store_url)
    workers.append(worker)
    worker.expect(f"cli-test: start {job}")
    worker.signal(signal.SIGTERM)
    assert worker.wait() == 0, worker.lines
    assert "1 completed" in worker.lines[-1]
    assert fetch(store_url, job).status is js.JobStatus.COMPLETED


@pytest.mark.timeout(120)
def test_setup_hook_registers_a_schedule(store_url: str, workers: list[Worker]) -> None:
    """A module's jobsched_setup(scheduler) runs in the worker: its stored schedule fires."""
    worker = Worker(store_url, env=env_for(CLI_TEST_SCHEDULE="1"))
    workers.append(worker)
    worker.expect("cli-test: tick")
    worker.expect("cli-test: tick")
    data = as_json("stats", "--store", store_url)
    assert [s["id"] for s in data["schedules"]] == ["ticker"]
    worker.signal(signal.SIGTERM)
    assert worker.wait() == 0, worker.lines


@pytest.mark.timeout(120)
def test_setup_hook_failure_is_one_line(store_url: str, workers: list[Worker]) -> None:
    """A hook that raises stops the worker: exit 1, its error in one line, no traceback."""
    worker = Worker(store_url, env=env_for(CLI_TEST_SETUP_FAILS="1"))
    workers.append(worker)
    assert worker.wait() == 1
    _no_traceback(worker.lines)
    assert worker.lines[-1].startswith(
        "jobsched: error: cli_jobs.jobsched_setup failed: RuntimeError: setup went wrong (at "
    ), worker.lines


# ── the drain's hand-back, in process ─────────────────────────────────────


def test_hand_back_releases_running_jobs(store_url: str) -> None:
    """The worker's drain: a running job cut short goes back to the store,
    its attempt uncounted and unowned, with no outcome recorded."""

    async def main() -> tuple[str, js.JobStatus]:
        s = js.JobScheduler(store=store_url)
        seen: list[tuple[js.JobStatus, js.JobStatus]] = []
        s.add_listener(lambda job, old, new: seen.append((old, new)))
        async with s:
            started = anyio.Event()
            s.add_listener(lambda job, old, new: new is js.JobStatus.RUNNING and started.set())
            job_id = await s.enqueue(Waits(3600.0, name="endless"))
            with anyio.fail_after(30):
                await started.wait()
            assert s._hand_back_running() == 1
            await s.stop()
            assert seen == [(js.JobStatus.PENDING, js.JobStatus.RUNNING)]  # it never ended
            local = s.get(job_id).status
        return job_id, local

    job_id, local = anyio.run(main)
    stored = fetch(store_url, job_id)
    assert (stored.status, stored.attempts, stored.owner) == (js.JobStatus.PENDING, 0, None)
    assert local is js.JobStatus.PENDING


def test_hand_back_on_the_memory_store_cancels() -> None:
    """Without a store to hand a job back to, the cut-short attempt ends CANCELLED."""

    async def main() -> js.Job:
        async with js.JobScheduler() as s:
            started = anyio.Event()
            s.add_listener(lambda job, old, new: new is js.JobStatus.RUNNING and started.set())
            job_id = s.submit(Waits(3600.0))
            with anyio.fail_after(30):
                await started.wait()
            assert s._hand_back_running() == 1
            await s.stop()
            return s.get(job_id)

    job = anyio.run(main)
    assert (job.status, job.last_error) == (js.JobStatus.CANCELLED, "scheduler shut down")


# ── formatting, as pure functions ─────────────────────────────────────────


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (None, "-"),
        (-0.5, "0ms"),  # clocks of two machines may disagree a little
        (0.0004, "0ms"),
        (0.85, "850ms"),
        (1.0, "1.0s"),
        (12.34, "12.3s"),
        (59.96, "1m00s"),
        (245, "4m05s"),
        (3599.4, "59m59s"),
        (7380, "2h03m"),
        (273600, "3d04h"),
    ],
)
def test_durations_are_human_sized(seconds: float | None, shown: str) -> None:
    """Durations read at a glance: the unit changes with the size."""
    from jobsched._cli._format import duration

    assert duration(seconds) == shown


def test_times_are_utc_whatever_the_machines_zone() -> None:
    """Store times (wall-clock seconds) show in UTC with the zone said, in a
    table and in JSON, in any TZ: one zone across the CLI and the dashboard."""
    when = 1_764_547_200.25  # 2025-12-01 00:00:00.25 UTC
    script = (
        "import time; from jobsched._cli._format import iso_time, utc_time; "
        f"print(utc_time({when})); print(iso_time({when})); print(utc_time(None))"
    )
    for zone in ("UTC", "America/New_York", "Asia/Kolkata"):
        done = subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "TZ": zone},
        )
        assert done.stdout.splitlines() == [
            "2025-12-01 00:00:00 UTC",
            "2025-12-01T00:00:00.250+00:00",
            "-",
        ], zone


def test_tables_align_and_lines_are_cut() -> None:
    """Columns pad to their widest cell (numbers to the right); long text is cut on one line."""
    from jobsched._cli._format import one_line, table

    text = table(["NAME", "N"], [["a", "1"], ["longer", "100"]], right=[1])
    assert text.splitlines() == ["NAME      N", "a         1", "longer  100"]
    assert one_line("two\nlines  here") == "two lines here"
    assert one_line("x" * 100, 10) == "xxxxxxx..."
    assert one_line(None) == "-"


# ── named queues ──────────────────────────────────────────────────────────


@pytest.mark.timeout(120)
def test_worker_serves_only_its_queues(store_url: str, workers: list[Worker]) -> None:
    """--queue video runs the video job and leaves the emails one in the store;
    `jobs --queue` and `stats` show each queue's jobs."""
    video, mail = submit(
        store_url,
        Waits(0.0, value="v", name="render", queue="video"),
        Waits(0.0, value="m", name="send", queue="emails"),
    )
    worker = Worker(store_url, "--queue", "video", "--queue-limit", "video=1")
    workers.append(worker)
    assert worker.expect("cli-test: start ").split()[-1] == video
    deadline = time.monotonic() + 30
    while fetch(store_url, video).status is not js.JobStatus.COMPLETED:
        assert time.monotonic() < deadline, "the video job did not complete"
        time.sleep(0.05)
    listed = as_json("jobs", "--store", store_url, "--queue", "emails")
    assert [(row["job_id"], row["queue"], row["status"]) for row in listed] == [
        (mail, "emails", "pending")
    ]
    table = ok("jobs", "--store", store_url, "--queue", "video").splitlines()
    assert len(table) == 2 and " video " in table[1] and " completed " in table[1]
    assert ok("jobs", "--store", store_url, "--queue", "reports").strip() == (
        "no jobs on queue 'reports'"
    )
    stats = as_json("stats", "--store", store_url)
    assert stats["by_queue"] == {"emails": {"pending": 1}}
    assert "unfinished jobs by queue:" in ok("stats", "--store", store_url)
    worker.signal(signal.SIGTERM)
    assert worker.wait() == 0, worker.lines
    assert not any(f"start {mail}" in line for line in worker.lines)
    assert fetch(store_url, mail).status is js.JobStatus.PENDING


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--queue", "two words"], "queue must be a name of 1-64 characters"),
        (["--queue-limit", "video=0"], "is not NAME=N with N a whole number >= 1"),
        (["--queue", "emails", "--queue-limit", "video=2"], "queues= leaves out"),
    ],
)
def test_worker_refuses_bad_queue_options(store_url: str, args: list[str], expected: str) -> None:
    done = jobsched("worker", "--store", store_url, "--import", "cli_jobs", *args)
    assert done.returncode != 0
    assert expected in done.stderr and "Traceback" not in done.stderr, done.stderr
