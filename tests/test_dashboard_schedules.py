"""The dashboard's schedules page on real stores: the table, pause and resume
(token-guarded like cancel and retry), and escaping of what the ids hold."""

from __future__ import annotations

import functools
import re
import time
from html import unescape as html_unescape
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio
import pytest
from durable_jobs import make_note
from starlette.testclient import TestClient

import jobsched as js
from jobsched_dashboard import create_app

TOKEN = "s3cret-token"
EVIL = "<script>alert(1)</script>"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def url(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'jobs.db'}"
    from pg import SECRET, schema_url

    monkeypatch.setenv("JOBSCHED_SECRET", SECRET)  # the dashboard's store reads it too
    return schema_url(request.getfixturevalue("pg_session_database"))


def _register(url: str, *ids: str) -> None:
    async def main() -> None:
        async with js.JobScheduler(num_workers=0, store=url) as s:
            for sid in ids:
                s.schedule_recurring(
                    functools.partial(make_note, "unused"), 3600, start_in=3600, id=sid
                )
            s.schedule_cron(
                functools.partial(make_note, "unused"), "15 4 * * *", id="nightly", misfire="all"
            )

    anyio.run(main)


def _schedules(url: str) -> dict[str, Any]:
    async def main() -> dict[str, Any]:
        store = js.open_store(url)
        await store.open()
        try:
            return {s.id: s for s in await store.schedules()}
        finally:
            await store.close()

    return anyio.run(main)


def _path(schedule_id: str, action: str) -> str:
    return f"/schedules/{quote(schedule_id, safe='')}/{action}"


def test_the_page_lists_every_schedule_with_its_actions(url: str) -> None:
    _register(url, "hourly")
    with TestClient(create_app(url, token=TOKEN)) as client:
        page = client.get("/schedules")
        assert page.status_code == 200
        html = page.text
        assert 'data-schedule="hourly"' in html and 'data-schedule="nightly"' in html
        assert "every 3600 s" in html and "15 4 * * *" in html
        assert "<td>coalesce</td>" in html and "<td>all</td>" in html  # the misfire column
        assert html.count('class="pause"') == 2 and 'class="resume"' not in html
        assert 'name="token"' in html
        assert 'href="/schedules"' in client.get("/").text  # linked from every page
    with TestClient(create_app(url)) as client:  # no token: no buttons, and says why
        html = client.get("/schedules").text
        assert 'class="pause"' not in html and "Actions are disabled" in html


def test_pause_and_resume_with_the_token(url: str) -> None:
    _register(url, "hourly")
    with TestClient(create_app(url, token=TOKEN)) as client:
        done = client.post(_path("hourly", "pause"), data={"token": TOKEN}, follow_redirects=False)
        assert done.status_code == 303
        assert done.headers["location"] == "/schedules?done=pause&schedule=hourly"
        assert _schedules(url)["hourly"].next_fire == float("inf")
        html = client.get(done.headers["location"]).text
        assert "Paused hourly" in html and html.count('class="resume"') == 1
        assert "paused" in client.get("/live").text  # the overview says so too
        again = client.post(_path("hourly", "pause"), data={"token": TOKEN})
        assert again.status_code == 409 and "paused already" in again.text
        resumed = time.time()
        done = client.post(
            _path("hourly", "resume"),
            headers={"Authorization": f"Bearer {TOKEN}"},
            follow_redirects=False,
        )
        assert done.status_code == 303
        fire = _schedules(url)["hourly"].next_fire
        assert resumed + 3600 <= fire <= time.time() + 3600  # from now: none missed
        again = client.post(_path("hourly", "resume"), data={"token": TOKEN})
        assert again.status_code == 409 and "not paused" in again.text


@pytest.mark.parametrize("action", ["pause", "resume"])
def test_actions_need_the_right_token(url: str, action: str) -> None:
    _register(url, "hourly")
    with TestClient(create_app(url, token=TOKEN)) as client:
        missing = client.post(_path("hourly", action), data={})
        assert missing.status_code == 403 and f"to {action} a schedule" in missing.text
        wrong = client.post(_path("hourly", action), data={"token": "nope"})
        assert wrong.status_code == 403 and "Wrong token" in wrong.text
        assert client.get(_path("hourly", action)).status_code == 405
        unknown = client.post(_path("nope", action), data={"token": TOKEN})
        assert unknown.status_code == 404 and "no schedule &#39;nope&#39;" in unknown.text
    with TestClient(create_app(url)) as client:
        disabled = client.post(_path("hourly", action), data={"token": TOKEN})
        assert disabled.status_code == 403 and f"cannot {action} schedules" in disabled.text
    assert _schedules(url)["hourly"].next_fire != float("inf")  # nothing was paused


def test_ids_are_escaped_and_reach_their_schedule(url: str) -> None:
    odd = f"{EVIL}/a?b#c"
    _register(url, odd)
    with TestClient(create_app(url, token=TOKEN)) as client:
        html = client.get("/schedules").text
        assert EVIL not in html and "&lt;script&gt;" in html
        # The page's own button reaches that schedule.
        (action,) = [
            html_unescape(a)
            for a in re.findall(r'formaction="([^"]+)"', html)
            if a.endswith("/pause") and a != "/schedules/nightly/pause"
        ]
        assert html_unescape(action[: -len("pause")] + "trigger") in map(
            html_unescape, re.findall(r'formaction="([^"]+)"', html)
        )
        assert action.endswith("/pause") and "?" not in action and "#" not in action
        done = client.post(action, data={"token": TOKEN}, follow_redirects=False)
        assert done.status_code == 303
        assert EVIL not in client.get(done.headers["location"]).text
        assert EVIL not in client.get("/live").text
    assert _schedules(url)[odd].next_fire == float("inf")


def test_run_now_submits_one_job_and_keeps_the_fires(url: str) -> None:
    """Issue 38: "run now" makes one job from the schedule's factory, which a
    worker runs; the schedule's next fire is what it was."""
    _register(url, "hourly")
    before = _schedules(url)["hourly"].next_fire
    with TestClient(create_app(url, token=TOKEN)) as client:
        html = client.get("/schedules").text
        assert html.count('class="trigger"') == 2  # on paused ones too: a manual run
        done = client.post(
            _path("hourly", "trigger"), data={"token": TOKEN}, follow_redirects=False
        )
        assert done.status_code == 303
        location = done.headers["location"]
        assert location.startswith("/schedules?done=trigger&schedule=hourly&job=")
        job_id = location.rsplit("=", 1)[1]
        html = client.get(location).text
        number = job_id.removeprefix("job-")
        assert f'Ran hourly now: <a href="/jobs/{number}">{job_id}</a>' in html
        # The job page it links to, and the "last job" column's link to the same.
        assert client.get(f"/jobs/{number}").status_code == 200
        assert f'<a href="/jobs/{number}">{job_id}</a></td>' in html

    async def fetch() -> js.Job:
        async with js.JobScheduler(num_workers=0, store=url) as s:
            return await s.fetch(job_id)

    assert anyio.run(fetch).status is js.JobStatus.PENDING
    row = _schedules(url)["hourly"]
    assert row.next_fire == before and f"job-{row.last_job}" == job_id


def test_run_now_refusals(url: str) -> None:
    """The token as for every action; an unknown schedule is a 404; a factory
    that fails here is a 409 that says where it runs, and submits nothing."""

    async def register_failing() -> None:
        async with js.JobScheduler(num_workers=0, store=url) as s:
            s.schedule_recurring(functools.partial(int, "nope"), 3600, start_in=3600, id="broken")

    _register(url, "hourly")
    anyio.run(register_failing)
    with TestClient(create_app(url, token=TOKEN)) as client:
        missing = client.post(_path("hourly", "trigger"), data={})
        assert missing.status_code == 403 and "to run a schedule" in missing.text
        wrong = client.post(_path("hourly", "trigger"), data={"token": "nope"})
        assert wrong.status_code == 403 and "Wrong token" in wrong.text
        assert client.get(_path("hourly", "trigger")).status_code == 405
        unknown = client.post(_path("nope", "trigger"), data={"token": TOKEN})
        assert unknown.status_code == 404 and "no schedule &#39;nope&#39;" in unknown.text
        broken = client.post(_path("broken", "trigger"), data={"token": TOKEN})
        assert broken.status_code == 409
        assert "cannot be run from here" in broken.text and "PYTHONPATH" in broken.text
    with TestClient(create_app(url)) as client:
        disabled = client.post(_path("hourly", "trigger"), data={"token": TOKEN})
        assert disabled.status_code == 403 and "cannot run schedules" in disabled.text
    assert all(row.last_job is None for row in _schedules(url).values())  # nothing ran
