"""Takes docs/dashboard.png: the dashboard of a realistic run, in Debian's chromium.

Run it from the repository root: ``uv run python tests/dashboard_screenshot.py``.
Two members (schedulers) share one SQLite store and work through a few dozen
jobs of varying length for about forty seconds: most complete, some fail
and are retried, a few fail for good, one times out, and some wait (queued,
delayed, blocked); two stored schedules fire. Then the page is captured.
"""

from __future__ import annotations

import functools
import os
import random
import socket
import sys
import tempfile
import time
from pathlib import Path

import anyio
import uvicorn
from anyio.from_thread import start_blocking_portal
from dashboard_jobs import BlockingWork, Work
from playwright.sync_api import sync_playwright

import jobsched as js
from jobsched_dashboard import create_app

OUT = Path(__file__).resolve().parent.parent / "docs" / "dashboard.png"
RUN_SECONDS = 45.0


def main() -> None:
    rng = random.Random(7)
    os.chdir(tempfile.mkdtemp())
    url = "sqlite:///jobs.db"
    names = [
        "resize image",
        "send invoice",
        "sync crm",
        "charge card",
        "render pdf",
        "fetch feed",
        "index document",
        "transcode video",
    ]
    tenants = ["acme", "globex", "initech"]
    with start_blocking_portal() as portal:
        members = [js.JobScheduler(num_workers=n, store=url) for n in (4, 3)]
        for member in members:
            portal.call(member.start)
        first = members[0]
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        server = uvicorn.Server(uvicorn.Config(create_app(url, token="t"), log_level="warning"))
        serving = portal.start_task_soon(server.serve, [sock])
        # The browser is up and the page warm before the run, so the picture
        # is taken the moment the run is where we want it.
        playwright = sync_playwright().start()
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium")
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        address = f"http://127.0.0.1:{sock.getsockname()[1]}/?minutes=1"
        page.goto(address)
        retry = js.RetryPolicy(max_retries=2, base_delay=1.5, jitter=False)
        ids = []
        start = time.monotonic()

        def job(i: int, seconds: float) -> js.Job:
            name = rng.choice(names)
            failures = rng.choices([0, 1, 2, -1], weights=[70, 15, 8, 7])[0]
            kind = BlockingWork if name in ("render pdf", "transcode video") else Work
            return kind(
                name,
                seconds=6.0 if i == 17 else seconds,
                failures=failures,
                error=f"{name}: upstream returned 503",
                retry=retry,
                tenant=rng.choice(tenants),
                timeout=3.0 if i == 17 else 30.0,
            )

        # Arrivals for most of the minute the page shows, then a burst that
        # is still queued when the picture is taken.
        i = 0
        while time.monotonic() - start < RUN_SECONDS:
            member = rng.choice(members)
            job_id = portal.call(member.submit, job(i, rng.uniform(0.3, 4.0)))
            if member is first:
                ids.append(job_id)
            i += 1
            portal.call(anyio.sleep, rng.uniform(0.2, 0.8))
        for _ in range(40):
            portal.call(rng.choice(members).submit, job(i, rng.uniform(2.0, 4.0)))
            i += 1
        long = portal.call(first.submit, Work("transcode video", seconds=30))
        portal.call(functools.partial(first.submit, Work("weekly digest", seconds=2), delay=900))
        portal.call(
            functools.partial(first.submit, Work("month-end report", seconds=2), delay=3600)
        )
        portal.call(
            functools.partial(first.submit, Work("publish", seconds=1), depends_on=[long, ids[-1]])
        )
        portal.call(
            functools.partial(
                first.schedule_recurring,
                functools.partial(Work, "heartbeat", seconds=0.2),
                15.0,
                id="heartbeat",
            )
        )
        portal.call(
            functools.partial(
                first.schedule_cron,
                functools.partial(Work, "nightly cleanup"),
                "0 3 * * *",
                id="nightly-cleanup",
            )
        )
        for member in members:
            portal.call(member.flush)
        portal.call(anyio.sleep, 2.0)  # the burst under way, not drained

        try:
            page.goto(address)
            page.screenshot(path=str(OUT), full_page=True)
        finally:
            browser.close()
            playwright.stop()
            server.should_exit = True
            serving.result(timeout=30)
            for member in members:
                portal.call(functools.partial(member.stop, cancel_running=True))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    sys.exit(main())
