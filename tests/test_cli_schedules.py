"""`jobsched schedules` and `jobsched schedule pause|resume|trigger|remove`,
run as the installed script against SQLite and PostgreSQL stores."""

from __future__ import annotations

import functools
import json
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from durable_jobs import make_note
from test_cli import jobsched

import jobsched as js
from jobsched._cli._format import iso_time


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def url(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A durable store (as test_cli's ``url``): the script inherits the secret."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'jobs.db'}"
    from pg import SECRET, schema_url

    monkeypatch.setenv("JOBSCHED_SECRET", SECRET)
    return schema_url(request.getfixturevalue("pg_session_database"))


def _create(url: str) -> None:
    async def main() -> None:
        async with js.JobScheduler(num_workers=0, store=url):
            pass

    anyio.run(main)


def _register(url: str, log: str) -> None:
    async def main() -> None:
        async with js.JobScheduler(num_workers=0, store=url) as s:
            factory = functools.partial(make_note, log)
            s.schedule_recurring(factory, 3600, start_in=3600, id="hourly")
            s.schedule_cron(
                factory, "0 3 * * *", timezone="Europe/Berlin", id="nightly", misfire="skip"
            )

    anyio.run(main)


def _stored(url: str) -> dict[str, Any]:
    async def main() -> dict[str, Any]:
        store = js.open_store(url)
        await store.open()
        try:
            return {s.id: s for s in await store.schedules()}
        finally:
            await store.close()

    return anyio.run(main)


def _done(*args: str) -> str:
    """Run the script; expect exit 0; its stdout (stderr may hold the no-secret warning)."""
    done = jobsched(*args)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return done.stdout


def _fails(*args: str) -> str:
    done = jobsched(*args)
    assert done.returncode == 1, done.stdout
    assert done.stderr.count("jobsched: error:") == 1 and "Traceback" not in done.stderr
    return done.stderr


def test_schedules_lists_them_as_a_table_and_as_json(url: str, tmp_path: Any) -> None:
    _create(url)
    assert _done("schedules", "--store", url).strip() == "no stored schedules"
    assert json.loads(_done("schedules", "--json", "--store", url)) == []
    _register(url, str(tmp_path / "log"))
    table = _done("schedules", "--store", url).splitlines()
    assert table[0].split() == [
        "SCHEDULE", "KIND", "SPEC", "TIMEZONE", "MISFIRE", "NEXT", "FIRE", "LAST", "JOB",
        "FIRING", "ON",
    ]  # fmt: skip
    assert table[1].split()[:6] == ["hourly", "interval", "every", "3600s", "-", "coalesce"]
    assert table[2].split()[:9] == [
        "nightly", "cron", "0", "3", "*", "*", "*", "Europe/Berlin", "skip",
    ]  # fmt: skip
    listed = json.loads(_done("schedules", "--json", "--store", url))
    by_id = {entry["id"]: entry for entry in listed}
    hourly, nightly = by_id["hourly"], by_id["nightly"]
    assert (hourly["kind"], hourly["spec"], hourly["timezone"]) == ("interval", 3600, None)
    assert (nightly["kind"], nightly["spec"], nightly["timezone"]) == (
        "cron",
        "0 3 * * *",
        "Europe/Berlin",
    )
    assert (hourly["misfire"], nightly["misfire"]) == ("coalesce", "skip")
    assert hourly["paused"] is False and hourly["last_job_id"] is None
    fire = _stored(url)["hourly"].next_fire
    assert hourly["next_fire"] == iso_time(fire)


def test_pause_resume_trigger_and_remove(url: str, tmp_path: Any) -> None:
    _register(url, str(tmp_path / "log"))
    assert _done("schedule", "pause", "hourly", "--store", url).strip() == "hourly paused"
    assert "paused already" in _done("schedule", "pause", "hourly", "--store", url)
    (hourly,) = [e for e in json.loads(_done("schedules", "--json", "--store", url))
                 if e["id"] == "hourly"]  # fmt: skip
    assert (hourly["paused"], hourly["next_fire"]) == (True, None)
    table = _done("schedules", "--store", url)
    assert "paused" in next(line for line in table.splitlines() if line.startswith("hourly"))
    # `stats` agrees (issue 38: it showed `-` for a paused schedule's next fire).
    stats = _done("stats", "--store", url)
    assert next(line for line in stats.splitlines() if line.startswith("hourly")).split()[1] == (
        "paused"
    )
    (listed,) = [e for e in json.loads(_done("stats", "--json", "--store", url))["schedules"]
                 if e["id"] == "hourly"]  # fmt: skip
    assert (listed["paused"], listed["next_fire"]) == (True, None)
    resumed = time.time()
    out = _done("schedule", "resume", "hourly", "--store", url)
    assert out.startswith("hourly resumed; next fire ")
    fire = _stored(url)["hourly"].next_fire
    assert resumed + 3600 <= fire <= time.time() + 3600  # from now: no missed fire
    assert "is not paused" in _done("schedule", "resume", "hourly", "--store", url)
    out = _done("schedule", "trigger", "nightly", "--store", url)
    assert out.startswith("nightly triggered: job-")
    job_id = out.split()[2]
    row = _stored(url)["nightly"]
    assert f"job-{row.last_job}" == job_id
    assert _done("schedule", "remove", "nightly", "--store", url).strip() == "nightly removed"
    assert set(_stored(url)) == {"hourly"}


@pytest.mark.parametrize("action", ["pause", "resume", "trigger", "remove"])
def test_an_unknown_schedule_is_a_one_line_error(url: str, action: str) -> None:
    _register(url, "unused")
    err = _fails("schedule", action, "nope", "--store", url)
    assert "no schedule 'nope'" in err and "'jobsched schedules' lists them" in err
    assert "no schedule ''" not in _fails("schedule", action, "", "--store", url)


def test_schedule_commands_need_a_store_that_exists(tmp_path: Any) -> None:
    missing = f"sqlite:///{tmp_path / 'none.db'}"
    assert "does not exist" in _fails("schedules", "--store", missing)
    assert "does not exist" in _fails("schedule", "trigger", "x", "--store", missing)
    assert not (tmp_path / "none.db").exists()
    assert "Usage" in jobsched("schedule", "--help").stdout
