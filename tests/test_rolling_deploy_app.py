"""A rolling deploy of an app that adds a job: nothing fails, every job runs once.

Issue 33: a new producer enqueued a job whose function the old workers did
not have, and the old workers failed it at once ("cannot load the job").
Here the deploy happens for real, with `jobsched worker --app shop:app`
processes: two old workers run the old code (module ``shop`` without
``new_job``); a producer on the new code enqueues old and new registered
jobs and a pickled ``FunctionJob`` of a new function; new workers start,
then the old ones get SIGTERM. The old workers never claim ``new_job``
(their app does not register the name) and hand the pickled job back
(``load_grace``); the new ones run them. Every job ends COMPLETED, and
each ran exactly once (the jobs log their runs in a file).

On a SQLite file and on PostgreSQL. Needs ``js.App`` (the app of issue 33).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import pytest
from durable_store import store_url  # noqa: F401 - the fixture
from test_cli_worker import Worker, workers  # noqa: F401  (fixtures)
from worker_jobs import starts

import jobsched as js

pytestmark = pytest.mark.timeout(240)

S = js.JobStatus
TESTS = Path(__file__).parent

#: The app's module, old and new: the same registered name for old_job in
#: both, new_job and new_plain only in the new one.
SHOP = """
import os

import jobsched as js
from worker_jobs import record

app = js.App(store=os.environ["ROLLING_STORE"])


@app.job(name="shop.old_job")
def old_job(label: str) -> str:
    return record(os.environ["ROLLING_LOG"], label)
{new}
"""

NEW = '''

@app.job(name="shop.new_job")
def new_job(label: str) -> str:
    return record(os.environ["ROLLING_LOG"], label)


def new_plain(label: str) -> str:
    """Not registered: a pickled FunctionJob's function, new in this release."""
    return record(os.environ["ROLLING_LOG"], label)
'''

PRODUCER = """
import json, sys
import jobsched as js
import shop

ids = [shop.old_job.enqueue_sync(f"old{i}") for i in range(10)]
ids += [shop.new_job.enqueue_sync(f"new{i}") for i in range(10)]
with shop.app.background(num_workers=0) as producer:
    ids.append(producer.submit(js.FunctionJob(shop.new_plain, ("plain0",))))
print(json.dumps(ids))
"""


def code(tmp_path: Path, release: str, new: str) -> Path:
    folder = tmp_path / release
    folder.mkdir()
    (folder / "shop.py").write_text(textwrap.dedent(SHOP.format(new=new)))
    return folder


def env_with(folder: Path, url: str, log: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "JOBSCHED_STORE"}
    env.update(PYTHONPATH=f"{folder}{os.pathsep}{TESTS}", ROLLING_STORE=url, ROLLING_LOG=str(log))
    return env


def fetch_all(url: str, ids: list[str]) -> list[Any]:
    async def main() -> list[Any]:
        async with js.JobScheduler(store=url, num_workers=0) as s:
            return [await s.fetch(i) for i in ids]

    return anyio.run(main)


def test_old_workers_new_producer_then_new_workers_nothing_fails(
    store_url: str,  # noqa: F811
    tmp_path: Path,
    workers: list[Worker],  # noqa: F811
) -> None:
    log = tmp_path / "runs"
    old_code, new_code = code(tmp_path, "old", ""), code(tmp_path, "new", NEW)
    old_env, new_env = env_with(old_code, store_url, log), env_with(new_code, store_url, log)
    for _ in range(2):
        old = Worker("--app", "shop:app", "--workers", "2", env=old_env, cwd=tmp_path)
        workers.append(old)
        old.expect("started on ")
    done = subprocess.run(
        [sys.executable, "-c", PRODUCER],
        env=new_env, cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    ids = json.loads(done.stdout)
    # The old workers run the old jobs; the new ones wait, unclaimed or handed back.
    deadline = time.monotonic() + 60
    while sum(label.startswith("old") for _, label, _ in starts(str(log))) < 10:
        assert time.monotonic() < deadline, starts(str(log))
        time.sleep(0.1)
    waiting = fetch_all(store_url, ids[10:])
    assert all(not job.status.is_terminal for job in waiting), [j.status for j in waiting]
    # The new registered jobs were never claimed; the pickled one is claimed
    # and handed back again every 5 s, so it may be RUNNING for a moment.
    assert all(job.attempts == 0 for job in waiting[:10]), [j.attempts for j in waiting]
    assert not any(label[:3] != "old" for _, label, _ in starts(str(log)))
    # Deploy: new workers first, then the old ones stop.
    for _ in range(2):
        new = Worker("--app", "shop:app", "--workers", "2", env=new_env, cwd=tmp_path)
        workers.append(new)
        new.expect("started on ")
    for old in workers[:2]:
        old.stop()
    deadline = time.monotonic() + 120
    while True:
        jobs = fetch_all(store_url, ids)
        if all(job.status.is_terminal for job in jobs):
            break
        assert time.monotonic() < deadline, [(j.job_id, j.status) for j in jobs]
        time.sleep(0.2)
    assert [job.status for job in jobs] == [S.COMPLETED] * len(ids), [
        (j.job_id, j.status, j.last_error) for j in jobs
    ]
    runs = Counter(label for _, label, _ in starts(str(log)))
    expected = {f"old{i}" for i in range(10)} | {f"new{i}" for i in range(10)} | {"plain0"}
    assert set(runs) == expected and set(runs.values()) == {1}, runs
    new_pids = {w.process.pid for w in workers[2:]}
    assert {pid for _, label, pid in starts(str(log)) if label[:3] != "old"} <= new_pids
    for new in workers[2:]:
        new.stop()
