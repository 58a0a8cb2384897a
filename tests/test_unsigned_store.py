"""A store without a secret says so: its payloads are unsigned pickles (issue 22).

SQLite may be opened without a secret; a scheduler on such a store then
unpickles whatever the file holds. That is a choice worth one WARNING at
start, naming the fix, and no more.
"""

from __future__ import annotations

import logging
from pathlib import Path

import anyio
import pytest

import jobsched as js
from jobsched_sqlite import SQLiteStore

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def unsigned_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING and "no secret" in r.getMessage()
    ]


async def _run_one(store: object) -> None:
    async with js.JobScheduler(store=store) as s:  # type: ignore[arg-type]
        job_id = s.submit(js.FunctionJob(len, args=("abc",)))
        with anyio.fail_after(30):
            assert await s.result(job_id) == 3


async def test_a_store_without_a_secret_warns_once_at_start(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One WARNING per start, naming the store, saying what it means and how
    to set the secret."""
    monkeypatch.delenv("JOBSCHED_SECRET", raising=False)
    caplog.set_level(logging.WARNING, logger="jobsched")
    await _run_one(SQLiteStore(f"sqlite:///{tmp_path / 'jobs.db'}"))
    [message] = unsigned_warnings(caplog)
    assert "unsigned pickles" in message
    assert "JOBSCHED_SECRET" in message and "secret=" in message
    assert "jobs.db" in message


@pytest.mark.parametrize("how", ["argument", "environment"])
async def test_a_store_with_a_secret_does_not_warn(
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    how: str,
) -> None:
    caplog.set_level(logging.WARNING, logger="jobsched")
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    if how == "environment":
        monkeypatch.setenv("JOBSCHED_SECRET", "s3cret")
        store = SQLiteStore(url)
    else:
        monkeypatch.delenv("JOBSCHED_SECRET", raising=False)
        store = SQLiteStore(url, secret="s3cret")
    await _run_one(store)
    assert unsigned_warnings(caplog) == []


async def test_the_in_memory_store_does_not_warn(caplog: pytest.LogCaptureFixture) -> None:
    """Nothing is pickled there: nothing to warn about."""
    caplog.set_level(logging.WARNING, logger="jobsched")
    await _run_one("memory")
    assert unsigned_warnings(caplog) == []
