"""Issue 38's dashboard, in a real browser (Debian's chromium through
Playwright, as tests/test_dashboard_browser.py): pending jobs shown as
ready, delayed or blocked; a job's tenant, priority, timeout and retry
policy; "Cancel all that match" with no filter asking first; the action
token remembered for the browser's session after one action. Each test
has its own SQLite store, filled by a producer that runs nothing, so its
jobs stay where the test put them."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import start_blocking_portal
from dashboard_jobs import Work
from test_dashboard_browser import TOKEN, browser, page, serving

import jobsched as js

pytestmark = pytest.mark.browser
__all__ = ["browser", "page"]  # fixtures, used by name


def _fill(url: str) -> Any:
    async def fill() -> dict[str, str]:
        async with js.JobScheduler(store=url, num_workers=0) as s:
            ids = {
                "ready": s.submit(
                    Work("ready one", tenant="acme", priority=js.JobPriority.HIGH, timeout=5)
                ),
                "delayed": s.submit(
                    Work("later one", retry=js.RetryPolicy(max_retries=0)), delay=3600
                ),
            }
            ids["blocked"] = s.submit(Work("after it"), depends_on=[ids["delayed"]])
            await s.flush()
        return ids

    return fill


def number(job_id: str) -> int:
    return int(job_id.removeprefix("job-"))


def test_pending_jobs_say_why_they_wait_and_a_job_its_options(tmp_path: Path, page: Any) -> None:
    """The list marks each pending job ready, delayed or blocked; a job's page
    has its tenant, priority, timeout and retry policy (read from the stored
    pickle, nothing run)."""
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    with start_blocking_portal() as portal:
        ids = portal.call(_fill(url))
        with serving(portal, url) as base:
            page.goto(base + "/jobs?status=pending")
            for kind in ("ready", "delayed", "blocked"):
                row = page.locator(f'#job-list tr[data-job="{number(ids[kind])}"]')
                assert row.locator(".waiting").inner_text() == kind
            page.goto(f"{base}/jobs/{number(ids['ready'])}")
            assert page.locator("#waiting").inner_text() == "ready"
            assert page.locator("#tenant").inner_text() == "acme"
            assert page.locator("#opt-priority").inner_text() == "HIGH (2)"
            assert page.locator("#opt-timeout").inner_text() == "5 s"
            assert "(the default)" in page.locator("#opt-retry").inner_text()
            page.goto(f"{base}/jobs/{number(ids['delayed'])}")
            assert page.locator("#waiting").inner_text() == "delayed"
            assert page.locator("#tenant").inner_text() == "none"
            assert page.locator("#opt-retry").inner_text().startswith("RetryPolicy(max_retries=0,")


def test_cancel_all_asks_first_and_the_token_is_remembered(tmp_path: Path, page: Any) -> None:
    """After one action with the token, the next needs none (the field is
    gone); "Cancel all that match" with no filter shows a confirmation
    first: Back cancels nothing, confirming cancels every unfinished job."""
    url = f"sqlite:///{tmp_path / 'jobs.db'}"

    async def statuses() -> dict[str, js.JobStatus]:
        store = js.open_store(url)
        await store.open()
        try:
            return {k: (await store.fetch(number(v))).status for k, v in ids.items()}  # type: ignore[union-attr]
        finally:
            await store.close()

    with start_blocking_portal() as portal:
        ids = portal.call(_fill(url))
        with serving(portal, url) as base:
            page.goto(f"{base}/jobs/{number(ids['ready'])}")
            page.fill("input[name=token]", TOKEN)
            page.click("#cancel")
            assert "Cancel requested" in page.locator(".notice").inner_text()
            # Remembered: the next page asks for no token, and its action works.
            page.goto(f"{base}/jobs/{number(ids['blocked'])}")
            assert page.locator("input[name=token]").count() == 0
            assert "token remembered" in page.locator("#actions").inner_text()
            page.click("#cancel")
            assert "Cancel requested" in page.locator(".notice").inner_text()
            cookies = page.context.cookies()
            (session,) = [c for c in cookies if c["name"] == "jobsched_session"]
            assert session["httpOnly"] and session["sameSite"] == "Strict"
            assert session["value"] != TOKEN and session["expires"] == -1
            # No filter: asked first; Back leaves every job as it was.
            page.goto(base + "/jobs")
            page.click("#cancel-all")
            assert "Cancel every unfinished job?" in page.locator("#confirm h2").inner_text()
            page.click("#back")
            assert portal.call(statuses)["delayed"] is js.JobStatus.PENDING
            page.click("#cancel-all")
            page.click("#confirm-cancel-all")
            assert "Asked to cancel 1 job(s)" in page.locator("#done").inner_text()
            assert set(portal.call(statuses).values()) == {js.JobStatus.CANCELLED}


def test_a_schedules_fires_and_a_fire_naming_its_schedule(tmp_path: Path, page: Any) -> None:
    """The schedules page links each schedule to its fires; a fire's page
    says which schedule made it, and links back there."""
    from test_schedule_fires import _fire_three

    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    # On a thread of its own: Playwright's sync API keeps a loop in this one.
    with ThreadPoolExecutor(1) as pool:
        fired, triggered, _ = pool.submit(_fire_three, url).result()
    with start_blocking_portal() as portal, serving(portal, url) as base:
        page.goto(base + "/schedules")
        page.locator('tr[data-schedule="beat"] a.fires').click()
        page.wait_for_url("**/schedules/beat/fires")
        listed = {
            int(r.get_attribute("data-job")) for r in page.locator("#fires tr[data-job]").all()
        }
        assert {number(j) for j in fired} <= listed and number(triggered) not in listed
        page.locator(f'#fires tr[data-job="{number(fired[0])}"] a').first.click()
        assert page.locator("#made-by").inner_text() == "a fire of the schedule beat"
        page.locator("#made-by a").click()
        page.wait_for_url("**/schedules/beat/fires")
