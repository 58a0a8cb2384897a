"""`jobsched queues` and `jobsched queue pause|resume NAME`, run as the
installed script against SQLite and PostgreSQL stores."""

from __future__ import annotations

import json
import time
from pathlib import Path

import anyio
import pytest
from durable_jobs import Noop
from test_cli import jobsched, ok

import jobsched as js
from jobsched.store import Member


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def url(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A durable store (as test_cli's ``url``): the script inherits the secret."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'jobs.db'}"
    from pg import SECRET, schema_url

    monkeypatch.setenv("JOBSCHED_SECRET", SECRET)
    return schema_url(request.getfixturevalue("pg_session_database"))


def _fill(url: str) -> None:
    """Two video jobs and one default job, none run; one live member serving emails."""

    async def main() -> None:
        async with js.JobScheduler(num_workers=0, store=url) as s:
            s.submit(Noop("v", queue="video"))
            s.submit(Noop("v", queue="video"))
            s.submit(Noop("d"))
        store = js.open_store(url)
        await store.open()
        try:
            now = time.time()
            # Seen ahead of the clock: live however long a loaded machine takes to read it.
            await store.report_member(
                Member("h:1:a", 2, 0, now, now + 600, queues=("default", "emails"),
                       executors=("async",))
            )  # fmt: skip
        finally:
            await store.close()

    anyio.run(main)


def test_queues_lists_counts_pauses_and_marks_an_unserved_queue(url: str) -> None:
    _fill(url)
    out = ok("queues", "--store", url)
    lines = {line.split()[0]: line for line in out.splitlines()[1:]}
    assert set(lines) == {"default", "emails", "video"}
    assert "h:1:a" in lines["default"] and "h:1:a" in lines["emails"]
    assert "none: no live member serves it" in lines["video"]
    assert lines["video"].split()[1:3] == ["-", "2"]
    data = {q["name"]: q for q in json.loads(ok("queues", "--store", url, "--json"))}
    assert data["video"] == {"name": "video", "paused": False, "counts": {"pending": 2},
                             "served_by": []}  # fmt: skip
    assert data["emails"]["counts"] == {} and data["emails"]["served_by"] == ["h:1:a"]


def test_pause_and_resume_say_what_they_did_and_twice_is_no_error(url: str) -> None:
    """Pausing a paused queue and resuming one not paused exit 0 and say so."""
    _fill(url)
    assert ok("queue", "pause", "video", "--store", url).startswith("video paused")
    assert ok("queue", "pause", "video", "--store", url) == "video is paused already\n"
    data = {q["name"]: q for q in json.loads(ok("queues", "--store", url, "--json"))}
    assert data["video"]["paused"] is True
    video = next(line for line in ok("queues", "--store", url).splitlines() if "video" in line)
    assert video.split()[1] == "paused"
    assert ok("queue", "resume", "video", "--store", url) == "video resumed\n"
    assert ok("queue", "resume", "video", "--store", url) == "video is not paused\n"
    # A queue no job used yet may be paused ahead of its jobs.
    assert ok("queue", "pause", "reports", "--store", url).startswith("reports paused")
    data = {q["name"]: q for q in json.loads(ok("queues", "--store", url, "--json"))}
    assert data["reports"] == {"name": "reports", "paused": True, "counts": {},
                               "served_by": []}  # fmt: skip


@pytest.mark.parametrize("name", ["has space", "x" * 65, "é"])
def test_a_name_that_is_no_queue_name_is_refused_with_the_rule(url: str, name: str) -> None:
    _fill(url)
    for action in ("pause", "resume"):
        done = jobsched("queue", action, name, "--store", url)
        assert done.returncode == 1, done.stdout
        assert "queue must be a name of 1-64 characters" in done.stderr
        assert "'jobsched queues' lists the queues" in done.stderr


def test_a_store_that_does_not_exist_is_not_created(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'none.db'}"
    done = jobsched("queue", "pause", "video", "--store", url)
    assert done.returncode == 1 and not (tmp_path / "none.db").exists()
