"""The ``store_url`` fixture of the tests that run the ``jobsched`` script
and its workers as processes: one durable store they share, a SQLite file
or (marked ``postgres``) a schema of the session's PostgreSQL database.

A test module takes it as a module attribute (``store_url =
durable_store.store_url``; an import would read to linters as one its test
parameters shadow), so it replaces conftest's memory-or-SQLite one there.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import jobsched as js


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_url(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> str:
    """A durable store for the test's processes (one kind per param)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'jobs.db'}"
    from pg import SECRET, schema_url

    # The test's schedulers and the processes it starts (which inherit the
    # environment) sign with it: the PostgreSQL store requires a secret.
    monkeypatch.setenv("JOBSCHED_SECRET", SECRET)
    return schema_url(request.getfixturevalue("pg_session_database"))


async def stored(s: js.JobScheduler) -> tuple[int, int]:
    """How many jobs and workflows the scheduler's store holds."""
    link = s._backing.link
    assert link is not None
    await link.flush()
    jobs = await link.store.job_page(limit=1000)
    return len(jobs.jobs), len(await link.store.workflows())
