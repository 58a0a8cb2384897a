"""The dashboard's queue table says which queues are paused and who serves
each, marking a queue no live member serves; the members page names each
member's queues and executors. On SQLite and PostgreSQL stores; the mark in
a real browser too (test_dashboard_queue_pauses_browser.py)."""

from __future__ import annotations

import re
import time
from pathlib import Path

import anyio
import pytest
from starlette.testclient import TestClient

import jobsched as js
from jobsched.store import Member, NewJob
from jobsched_dashboard import _queues, create_app

NOW = time.time()
S = js.JobStatus


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def url(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A store of the test's own; the dashboard reads it with the fleet's secret."""
    from pg import SECRET, schema_url

    monkeypatch.setenv("JOBSCHED_SECRET", SECRET)
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'jobs.db'}"

    return schema_url(request.getfixturevalue("pg_session_database"))


def fill(url: str) -> None:
    """Two video jobs no member serves, an email job, a paused 'reports'
    queue, and two live members: one of emails and default, one of every queue
    but stale (no report for a minute)."""

    async def main() -> None:
        store = js.open_store(url)
        await store.open()
        try:
            first = store.reserve_ids(3)
            await store.add(
                [NewJob(first + i, f"j{i}", "async", (float(i),), run_at=NOW, submitted_at=NOW,
                        payload=b"P", queue=q)
                 for i, q in enumerate(["video", "video", "emails"])],
                NOW,
            )  # fmt: skip
            await store.pause_queue("reports")
            now = time.time()
            # Seen ahead of the clock: live however long a loaded machine takes to read it.
            await store.report_member(
                Member("h:1:a", 2, 0, now, now + 600, queues=("default", "emails"),
                       executors=("async", "thread"))
            )  # fmt: skip
            await store.report_member(Member("h:2:b", 2, 0, now - 60, now - 60))
        finally:
            await store.close()

    anyio.run(main)


def _rows(html: str) -> dict[str, str]:
    section = re.search(r'<section id="queues">.*?</section>', html, re.S)
    assert section is not None
    return dict(re.findall(r'<tr data-queue="([^"]+)">(.*?)</tr>', section.group(0), re.S))


def test_the_queue_table_marks_paused_and_unserved_queues(url: str) -> None:
    fill(url)
    with TestClient(create_app(url)) as c:
        rows = _rows(c.get("/").text)
    assert set(rows) == {"emails", "reports", "video"}
    assert "unserved-queue" in rows["video"] and "no live member" in rows["video"]
    assert "--queue video" in rows["video"]  # the mark says how to serve it
    assert "unserved-queue" not in rows["emails"] and "1 member" in rows["emails"]
    assert ">paused<" in rows["reports"] and ">paused<" not in rows["video"]
    # The stale member of every queue serves nothing any more.
    assert "unserved-queue" in rows["reports"]


def test_the_members_page_names_each_members_queues_and_executors(url: str) -> None:
    fill(url)
    with TestClient(create_app(url)) as c:
        html = c.get("/members").text
    a = re.search(r'<tr data-owner="h:1:a".*?</tr>', html, re.S)
    b = re.search(r'<tr data-owner="h:2:b".*?</tr>', html, re.S)
    assert a is not None and b is not None
    assert '<td class="queues">default, emails</td>' in a.group(0)
    assert '<td class="executors">async, thread</td>' in a.group(0)
    assert '<td class="queues">every queue</td>' in b.group(0)
    assert '<td class="executors">-</td>' in b.group(0)


def test_queue_table_rules_with_pauses_and_members() -> None:
    """Pure: a paused default queue shows the table; no members list: unknown, never unserved."""
    now = 1000.0
    assert _queues.table({}, paused={"default"}) is not None
    t = _queues.table({("video", S.PENDING): 2})
    assert t is not None and t.rows[0].served_by is None and not t.rows[0].unserved
    live = [
        Member("h:1:a", 1, 0, now, now, queues=("video",)),
        Member("h:2:b", 0, 0, now, now),
    ]  # fmt: skip  (a producer serves nothing)
    t = _queues.table({("video", S.PENDING): 2, ("x", S.PENDING): 1}, (), live, now)
    assert t is not None
    assert [(r.queue, r.served_by) for r in t.rows] == [("video", ("h:1:a",)), ("x", ())]
    t = _queues.table({("video", S.PENDING): 2}, (), live, now + 16)  # three reports missed
    assert t is not None and t.rows[0].unserved
