"""Members and registered jobs on a durable store: the names a member's app
registers, the ERROR for names it does not, a store that ignores names=,
and reading registered rows without the app."""

from __future__ import annotations

import json
import logging
from collections.abc import Collection
from pathlib import Path
from typing import Any

import anyio
import pytest
from app_jobs import add, app

import jobsched as js
from jobsched._engine._link import _timing

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # SQLite's threads live on the real clock


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, dict[str, Any]]:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'jobs.db'}", {}
    from pg import SECRET, schema_url

    return schema_url(request.getfixturevalue("pg_session_database")), {"secret": SECRET}


async def _enqueue_unknown(url: str, options: dict[str, Any]) -> str:
    """A job registered under a name `app` does not know, by another app's producer."""
    other = js.App(url, **options)
    fn = other.job(name="elsewhere.only")(_seven)
    async with other.scheduler(num_workers=0):
        return await fn.enqueue()


async def _seven() -> int:
    return 7


async def test_unknown_names_wait_and_are_logged_once(
    url: tuple[str, dict[str, Any]],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A member asks the store for waiting registered jobs its app does not
    register (with its names) and logs one ERROR per name, however often it looks."""
    store_url, options = url
    monkeypatch.setattr(_timing, "KEYS_EVERY", 0.0)  # look on every idle pass
    await _enqueue_unknown(store_url, options)
    store = js.open_store(store_url, **options)
    looked: list[Collection[str]] = []
    seen = anyio.Event()

    async def waiting_for_names(names: Collection[str]) -> dict[str, int]:
        looked.append(names)
        if len(looked) >= 3:
            seen.set()
        return {"elsewhere.only": 1}

    store.waiting_for_names = waiting_for_names  # type: ignore[attr-defined]
    caplog.set_level(logging.ERROR, logger="jobsched")
    async with app.scheduler(store=store):
        with anyio.fail_after(30):
            await seen.wait()
    assert "app_jobs.add" in looked[0]
    errors = [
        r.getMessage() for r in caplog.records if "registered under the name" in r.getMessage()
    ]
    assert len(errors) == 1, errors
    assert "1 job(s)" in errors[0] and "'elsewhere.only'" in errors[0]
    assert "which this member's app does not register" in errors[0]


async def test_a_store_that_ignores_names_fails_the_job_clearly(
    url: tuple[str, dict[str, Any]],
) -> None:
    """If a store hands over a registered job whose name the member does not
    register (it ignored claim(names=...)), the job ends FAILED naming the
    name and the fix, rather than running something else."""
    store_url, options = url
    job_id = await _enqueue_unknown(store_url, options)
    store = js.open_store(store_url, **options)
    real = store.claim

    async def claim(*args: Any, names: Collection[str] = (), **kwargs: Any) -> Any:
        return await real(*args, names=[*names, "elsewhere.only"], **kwargs)

    store.claim = claim  # type: ignore[method-assign]
    async with app.scheduler(store=store) as s:
        job = await s.wait(job_id, timeout=30)
    assert job.status is js.JobStatus.FAILED
    assert job.attempts <= 1
    assert "no function is registered under the name 'elsewhere.only'" in (job.last_error or "")


async def test_reading_registered_rows_without_the_app(url: tuple[str, dict[str, Any]]) -> None:
    """A scheduler without the app (a plain JobScheduler) reads a registered
    job's arguments and JSON result all the same: nothing to unpickle."""
    store_url, options = url
    async with app.scheduler(store=store_url, **options) as s:
        job_id = await add.enqueue(2, b=3)
        assert await s.result(job_id, timeout=30) == 5
    async with js.JobScheduler(store=js.open_store(store_url, **options), num_workers=0) as plain:
        job = await plain.fetch(job_id)
        assert job.name == "app_jobs.add"
        assert job.arguments == {"a": 2, "b": 3}  # type: ignore[attr-defined]
        assert await plain.result(job_id) == 5


async def test_registered_rows_carry_name_args_and_json_result(
    url: tuple[str, dict[str, Any]],
) -> None:
    """The row: the registered name, payload b"J", args JSON, result b"J" + JSON."""
    store_url, options = url
    async with app.scheduler(store=store_url, **options) as s:
        job_id = await add.options(job_id="row-1").enqueue(2)
        await s.wait(job_id, timeout=30)
    store = js.open_store(store_url, **options)
    await store.open()
    try:
        from jobsched._jobs._ids import id_number

        row = await store.fetch(id_number(job_id))
    finally:
        await store.close()
    assert row is not None
    assert (row.name, row.payload) == ("app_jobs.add", b"J")
    assert row.args is not None and json.loads(row.args) == {"a": 2}  # jsonb re-spaces it
    assert row.result == b"J4"
