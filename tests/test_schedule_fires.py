"""A job made by a stored schedule says which, and a schedule's fire history
(issue 38): the stores keep the schedule's id on each fire's job (the unique
(schedule, fire_time) index that makes one job per fire), so `fetch`,
`jobsched show`, the job page and the schedule's page read it; on SQLite
and PostgreSQL."""

from __future__ import annotations

import functools
from pathlib import Path

import anyio
import pytest
from dashboard_jobs import Work
from starlette.testclient import TestClient
from test_cli import as_json, ok

import jobsched as js
from jobsched_dashboard import create_app

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def url(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'jobs.db'}"
    from pg import SECRET, schema_url

    monkeypatch.setenv("JOBSCHED_SECRET", SECRET)
    return schema_url(request.getfixturevalue("pg_session_database"))


def _fire_three(url: str) -> tuple[list[str], str, str]:
    """A schedule fired three times, a trigger of it, and a job of no schedule."""

    async def main() -> tuple[list[str], str, str]:
        fired: list[str] = []
        done = anyio.Event()

        def seen(job: js.Job, old: js.JobStatus, new: js.JobStatus) -> None:
            if job.name == "beat" and new is js.JobStatus.COMPLETED:
                fired.append(job.job_id)
                if len(fired) == 3:
                    done.set()

        async with js.JobScheduler(store=url) as s:
            s.add_listener(seen)
            beat = s.schedule_recurring(functools.partial(Work, "beat"), interval=0.2, id="beat")
            with anyio.fail_after(60):
                await done.wait()
            await s.pause_schedule(beat)
            triggered = await s.trigger_schedule(beat)
            plain = s.submit(Work("plain"))
            with anyio.fail_after(60):
                await s.join()
        return fired[:3], triggered, plain  # the trigger's job is a "beat" too

    return anyio.run(main)


async def _history(url: str, schedule_id: str, limit: int = 20) -> list[js.store.StoredJob]:
    store = js.open_store(url)
    await store.open()
    try:
        return await store.schedule_jobs(schedule_id, limit=limit)
    finally:
        await store.close()


def test_fires_say_their_schedule_and_make_its_history(url: str) -> None:
    """Each fire's job names the schedule; the history is its fires, latest
    first, bounded by limit; a trigger's job and another job are not in it."""
    fired, triggered, plain = _fire_three(url)
    history = anyio.run(_history, url, "beat")
    ids = [f"job-{job.id}" for job in history]
    assert set(fired) <= set(ids) and triggered not in ids and plain not in ids
    assert all(job.schedule == "beat" for job in history)
    assert [job.id for job in history] == sorted((job.id for job in history), reverse=True)
    assert len(anyio.run(functools.partial(_history, url, "beat", limit=2))) == 2
    assert anyio.run(_history, url, "no-such") == []
    with pytest.raises(ValueError, match="limit"):
        anyio.run(functools.partial(_history, url, "beat", limit=0))
    # The CLI: show names the schedule, JSON too; another job says none.
    assert "\n  schedule    beat\n" in ok("show", fired[0], "--store", url)
    assert as_json("show", fired[0], "--store", url)["schedule"] == "beat"
    assert as_json("show", plain, "--store", url)["schedule"] is None
    # The dashboard: the job page says which schedule made it, linked to the
    # schedule's page, which lists its fires.
    with TestClient(create_app(url)) as client:
        page = client.get(f"/jobs/{fired[0].removeprefix('job-')}").text
        assert 'a fire of the schedule <a href="/schedules/beat/fires">beat</a>' in page
        assert "made by" not in client.get(f"/jobs/{plain.removeprefix('job-')}").text
        fires = client.get("/schedules/beat/fires")
        assert fires.status_code == 200
        for job_id in fired:
            assert f'data-job="{job_id.removeprefix("job-")}"' in fires.text
        assert f'data-job="{triggered.removeprefix("job-")}"' not in fires.text
        unknown = client.get("/schedules/nope/fires").text
        assert "No fire of this schedule is in the store, and no schedule has this id" in unknown
        assert 'href="/schedules/beat/fires"' in client.get("/schedules").text


def test_a_store_without_fire_history_says_so() -> None:
    """The seam's default: NotImplementedError naming the store."""
    from jobsched.store._operator import OperatorSide

    with pytest.raises(NotImplementedError, match="keeps no fire history"):
        anyio.run(functools.partial(OperatorSide().schedule_jobs, "x"))
