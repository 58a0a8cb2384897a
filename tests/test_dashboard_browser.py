"""The dashboard in a real browser: Debian's chromium driven by Playwright, against a
SQLite store that a real scheduler is working on (running, failed and queued jobs).

Deselect with ``-m "not browser"``. Without /usr/bin/chromium the tests skip,
except under CI (``CI`` set), where a missing browser is a failure: .ci/run
installs it.
"""

from __future__ import annotations

import contextlib
import functools
import os
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from anyio.from_thread import BlockingPortal, start_blocking_portal
from dashboard_jobs import Hold, Work

import jobsched as js
from jobsched._engine._link import _timing
from jobsched_dashboard import create_app

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
TOKEN = "browser-test-token"
EVIL = "<script>alert(1)</script>"
#: Watchdog for every wait on the scheduler (generous: 2 shared cores).
WAIT = 30.0


class Statuses:
    """The latest status of each job, as the scheduler's listener sees it."""

    def __init__(self) -> None:
        self.now: dict[str, js.JobStatus] = {}
        self.changed = threading.Condition()

    def __call__(self, job: js.Job, old: js.JobStatus, new: js.JobStatus) -> None:
        with self.changed:
            self.now[job.job_id] = new
            self.changed.notify_all()

    def wait_for(self, wanted: dict[str, js.JobStatus]) -> None:
        with self.changed:
            ok = self.changed.wait_for(
                lambda: all(self.now.get(i) is s for i, s in wanted.items()), timeout=WAIT
            )
        assert ok, f"jobs did not reach {wanted}: {self.now}"


@dataclass
class Run:
    """A scheduler at work on a SQLite store and the dashboard serving it."""

    url: str
    base: str
    ids: dict[str, str]
    portal: BlockingPortal
    scheduler: js.JobScheduler

    def number(self, name: str) -> int:
        return int(self.ids[name].removeprefix("job-"))

    def status(self, name: str) -> js.JobStatus:
        job = self.portal.call(self.scheduler.fetch, self.ids[name])
        return job.status


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    """Two workers held by long jobs; a completed, two failed (one named like a
    script), a retried, three queued, a delayed and a blocked job."""
    # The queued jobs stay queued in the store: not claimed ahead of the two
    # held workers (for up to PREFETCH_STALE), which would count them running.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_timing, "PREFETCH_MAX", 0)
        yield from _run(tmp_path_factory)


def _run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    url = f"sqlite:///{tmp_path_factory.mktemp('dash')}/jobs.db"
    with start_blocking_portal() as portal:
        scheduler = js.JobScheduler(num_workers=2, store=url)
        statuses = Statuses()
        scheduler.add_listener(statuses)
        portal.call(scheduler.start)
        no_retry = js.RetryPolicy(max_retries=0)
        once = js.RetryPolicy(max_retries=1, base_delay=0)
        ids: dict[str, str] = {}
        for name, job in [
            ("ok", Work("resize image")),
            ("failed", Work("charge card", failures=-1, error="card declined", retry=no_retry)),
            ("evil", Work(EVIL, failures=-1, error=EVIL, retry=no_retry)),
            ("flaky", Work("fetch feed", failures=1, retry=once)),
        ]:
            ids[name] = portal.call(scheduler.submit, job)
        statuses.wait_for(
            {
                ids["ok"]: js.JobStatus.COMPLETED,
                ids["failed"]: js.JobStatus.FAILED,
                ids["evil"]: js.JobStatus.FAILED,
                ids["flaky"]: js.JobStatus.COMPLETED,
            }
        )
        for name in ("hold-1", "hold-2"):
            ids[name] = portal.call(scheduler.submit, Hold(name, timeout=None))
        statuses.wait_for(
            {ids["hold-1"]: js.JobStatus.RUNNING, ids["hold-2"]: js.JobStatus.RUNNING}
        )
        for name in ("queued-1", "queued-2", "queued-3"):
            ids[name] = portal.call(scheduler.submit, Work(name))
        ids["delayed"] = portal.call(functools.partial(scheduler.submit, Work("report"), delay=600))
        ids["blocked"] = portal.call(
            functools.partial(scheduler.submit, Work("publish"), depends_on=[ids["hold-1"]])
        )
        portal.call(scheduler.flush)
        try:
            with serving(portal, url) as base:
                yield Run(url, base, ids, portal, scheduler)
        finally:
            portal.call(functools.partial(scheduler.stop, cancel_running=True))


@contextlib.contextmanager
def serving(portal: BlockingPortal, url: str) -> Iterator[str]:
    """The dashboard on ``url``, served by uvicorn on the portal's loop: its base URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    # The socket listens before uvicorn starts: the browser's first
    # connection waits in the backlog, so nothing polls for readiness.
    server = uvicorn.Server(
        uvicorn.Config(create_app(url, token=TOKEN), log_level="warning", lifespan="on")
    )
    served = portal.start_task_soon(server.serve, [sock])
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        served.result(timeout=WAIT)
        sock.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        reason = f"no Chromium at {CHROMIUM}: apt-get install -y chromium"
        if os.environ.get("CI"):
            pytest.fail(f"{reason} (CI must run the browser tests)")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM))
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh page that records any dialog (an injected alert would open one)."""
    context = browser.new_context()
    page = context.new_page()
    page.dialogs = []  # type: ignore[attr-defined]

    def on_dialog(dialog: Any) -> None:
        page.dialogs.append(dialog.message)  # type: ignore[attr-defined]
        dialog.dismiss()

    page.on("dialog", on_dialog)
    try:
        yield page
    finally:
        context.close()


def count_cell(page: Any, status: str) -> int:
    text = page.locator(f'#counts tr[data-status="{status}"] td.total').inner_text()
    return int(text.replace(",", ""))


def test_page_shows_counts_timeline_and_failures(run: Run, page: Any) -> None:
    """The counts match the store, every attempt is a bar, and failures name their error."""
    page.goto(run.base + "/")
    assert count_cell(page, "running") == 2
    assert count_cell(page, "failed") == 2
    assert count_cell(page, "completed") == 2
    assert count_cell(page, "pending") == 5  # three queued, the delayed one, the blocked one
    # ok, failed, evil, flaky twice, two holds; the wait before flaky's retry.
    assert page.locator("#timeline rect.bar").count() == 7
    assert page.locator("#timeline rect.bar.o-retried").count() == 1
    assert page.locator("#timeline line.wait").count() == 1
    failures = page.locator("#failures").inner_text()
    assert "charge card" in failures and "card declined (attempt 1)" in failures
    queue = page.locator("#queue").inner_text()
    assert "Delayed: 1" in queue and "Blocked: 1" in queue and "hold-1" in queue


def test_page_refreshes_itself(run: Run, page: Any) -> None:
    """The live part is fetched again without a reload: its timestamp changes."""
    page.goto(run.base + "/")
    stamp = page.locator("#live .stamp").inner_text()
    page.wait_for_function(
        "s => document.querySelector('#live .stamp').innerText !== s", arg=stamp, timeout=15_000
    )


def test_script_in_a_job_name_renders_as_text(run: Run, page: Any) -> None:
    """A job named <script>alert(1)</script> shows as that text, and no alert fires."""
    page.goto(run.base + "/")
    assert page.locator("#failures").get_by_text(EVIL).count() >= 1
    page.goto(f"{run.base}/jobs/{run.number('evil')}")
    assert EVIL in page.locator("#job h1").inner_text()
    assert EVIL in page.locator("#job").inner_text()  # the error too
    # The refresh swaps the same markup in again: still text after it.
    page.goto(run.base + "/")
    page.wait_for_function(
        "s => document.querySelector('#live .stamp').innerText !== s",
        arg=page.locator("#live .stamp").inner_text(),
        timeout=15_000,
    )
    assert page.dialogs == []  # type: ignore[attr-defined]


def test_cancel_without_the_token_is_refused(run: Run, page: Any) -> None:
    page.goto(f"{run.base}/jobs/{run.number('queued-2')}")
    page.click("#cancel")
    assert "Token required" in page.locator("h1").inner_text()
    page.goto(f"{run.base}/jobs/{run.number('queued-2')}")
    page.fill("input[name=token]", "not-the-token")
    page.click("#cancel")
    assert "Wrong token" in page.locator("h1").inner_text()
    assert run.status("queued-2") is js.JobStatus.PENDING


def test_cancel_with_the_token(run: Run, page: Any) -> None:
    page.goto(f"{run.base}/jobs/{run.number('queued-1')}")
    page.fill("input[name=token]", TOKEN)
    page.click("#cancel")
    assert "Cancel requested" in page.locator(".notice").inner_text()
    assert "cancelled" in page.locator("#job h1").inner_text()
    assert run.status("queued-1") is js.JobStatus.CANCELLED


def test_retry_with_the_token(run: Run, page: Any) -> None:
    """A failed job is requeued (it waits: both workers are held)."""
    page.goto(f"{run.base}/jobs/{run.number('failed')}")
    page.fill("input[name=token]", TOKEN)
    page.click("#retry")
    assert "Requeued" in page.locator(".notice").inner_text()
    assert run.status("failed") is js.JobStatus.PENDING


def test_job_list_filters_by_status_and_looks_up_an_id(run: Run, page: Any) -> None:
    """Ticking a status and filtering lists only those jobs; the lookup box opens a job."""
    page.goto(run.base + "/jobs")
    page.check("form.filters input[value=running]")
    page.click("form.filters button[type=submit]")
    assert "status=running" in page.url
    listed = page.locator("#job-list tr[data-job]")
    assert sorted(int(r.get_attribute("data-job")) for r in listed.all()) == sorted(
        [run.number("hold-1"), run.number("hold-2")]
    )
    page.fill("form.lookup input[name=id]", run.ids["ok"])
    page.click("form.lookup button[type=submit]")
    assert page.url.endswith(f"/jobs/{run.number('ok')}")
    assert "resize image" in page.locator("#job h1").inner_text()


def test_job_page_shows_the_call_result_and_member(run: Run, page: Any) -> None:
    """A finished job's page shows its fields, its result and the member that ran it."""
    page.goto(f"{run.base}/jobs/{run.number('ok')}")
    call = page.locator("#call").inner_text()
    assert "dashboard_jobs.Work" in call and "seconds" in call
    assert page.locator("#result").inner_text() == "'ok'"
    member = page.locator("#job td.member").inner_text()
    assert f"{socket.gethostname()}:{os.getpid()}" in member and "(ran it)" in member


def test_bulk_cancel_of_a_filtered_set(run: Run, page: Any) -> None:
    """Cancel all that match, with the token, cancels the filter's jobs and no other."""
    page.goto(run.base + "/jobs?name=queued-3")
    page.click("#cancel-all")
    assert "Token required" in page.locator("h1").inner_text()
    assert run.status("queued-3") is js.JobStatus.PENDING
    page.goto(run.base + "/jobs?name=queued-3")
    page.fill("#bulk input[name=token]", TOKEN)
    page.click("#cancel-all")
    assert "Asked to cancel 1 job(s)" in page.locator("#done").inner_text()
    assert run.status("queued-3") is js.JobStatus.CANCELLED
    assert run.status("queued-2") is js.JobStatus.PENDING


def test_members_page_shows_the_running_scheduler(run: Run, page: Any) -> None:
    """The scheduler appears as host:pid, live, with its workers and busy ones."""
    import time

    name = f"{socket.gethostname()}:{os.getpid()}"
    deadline = time.monotonic() + WAIT
    while True:  # it reports itself every few seconds: the first report may be due
        page.goto(run.base + "/members")
        row = page.locator("#members tr[data-owner]")
        if row.count() or time.monotonic() > deadline:
            break
        page.wait_for_timeout(250)
    assert row.count() == 1
    cells = [c.inner_text() for c in row.locator("td").all()]
    assert cells[0] == name and cells[2] == str(os.getpid()) and cells[3] == "2"
    assert cells[-1] == "live"


def test_chart_has_axes_and_times_say_utc(run: Run, page: Any) -> None:
    """The throughput chart labels its y axis per second and its x axis up to now;
    the page's times are UTC and say so."""
    page.goto(run.base + "/")
    labels = [t.text_content() for t in page.locator("#throughput text.y-label").all()]
    assert labels[0] == "0/s" and all((label or "").endswith("/s") for label in labels)
    assert page.locator("#throughput text.x-label").last.text_content() == "now"
    assert page.locator("#live .stamp").inner_text().endswith(" UTC")


def test_a_queue_on_the_overview_opens_the_job_list_filtered_by_it(
    tmp_path: Path, page: Any
) -> None:
    """With jobs waiting on two queues the overview has a Queues table; the
    queue's link opens the job list showing that queue's jobs only."""
    url = f"sqlite:///{tmp_path / 'jobs.db'}"

    async def fill() -> dict[str, str]:
        async with js.JobScheduler(store=url) as s:
            ids = {
                name: s.submit(Work(name, queue=queue), delay=3600)
                for name, queue in [
                    ("encode-1", "video"),
                    ("tidy", "default"),
                    ("encode-2", "video"),
                ]
            }
            await s.flush()
        return ids

    # On the portal: Playwright's sync API keeps an event loop in this thread.
    with start_blocking_portal() as portal:
        ids = portal.call(fill)
        with serving(portal, url) as base:
            _follow_the_video_queue(page, base, ids)


def _follow_the_video_queue(page: Any, base: str, ids: dict[str, str]) -> None:
    page.goto(base + "/")
    rows = page.locator("#queues tr[data-queue]")
    assert [r.get_attribute("data-queue") for r in rows.all()] == ["default", "video"]
    # Its counts, not paused, and served by no live member (the scheduler
    # that submitted the jobs has stopped): issue 38's two columns.
    assert [c.inner_text() for c in rows.nth(1).locator("td").all()] == [
        "video", "2", "0", "0", "", "no live member"
    ]  # fmt: skip
    page.locator("#queues").get_by_role("link", name="video", exact=True).click()
    page.wait_for_url("**/jobs?queue=video")
    listed = page.locator("#job-list tr[data-job]")
    assert sorted(int(r.get_attribute("data-job")) for r in listed.all()) == sorted(
        int(ids[name].removeprefix("job-")) for name in ("encode-1", "encode-2")
    )
    assert {c.inner_text() for c in listed.locator("td.queue").all()} == {"video"}
    assert page.locator("form.filters input[name=queue]").input_value() == "video"
