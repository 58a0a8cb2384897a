"""The unserved-queue mark in a real browser (Chromium via Playwright): a
queue whose jobs no live member serves is marked on the overview, with the
hint of how to serve it; a served queue is not, and a paused one says so."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn
from anyio.from_thread import start_blocking_portal
from test_dashboard_browser import browser, page  # noqa: F401  (fixtures)
from test_dashboard_queue_pauses import fill

from jobsched_dashboard import create_app

pytestmark = pytest.mark.browser

WAIT = 30.0


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The dashboard's address, on a SQLite store filled as the server-side
    tests fill it (module scope: made before Playwright's loop holds the thread)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('queues') / 'jobs.db'}"
    fill(url)
    with start_blocking_portal() as portal:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        server = uvicorn.Server(uvicorn.Config(create_app(url), log_level="warning", lifespan="on"))
        serving = portal.start_task_soon(server.serve, [sock])
        try:
            yield f"http://127.0.0.1:{sock.getsockname()[1]}"
        finally:
            server.should_exit = True
            serving.result(timeout=WAIT)
            sock.close()


def test_a_queue_no_live_member_serves_is_marked(base: str, page: Any) -> None:  # noqa: F811
    page.goto(base + "/")
    video = page.locator('#queues tr[data-queue="video"]')
    mark = video.locator(".unserved-queue .unserved")
    assert mark.is_visible()
    assert mark.inner_text() == "no live member"
    assert "--queue video" in (mark.get_attribute("title") or "")
    emails = page.locator('#queues tr[data-queue="emails"]')
    assert emails.locator(".unserved").count() == 0
    assert emails.locator("td.served").inner_text() == "1 member"
    assert page.locator('#queues tr[data-queue="reports"] td.paused').inner_text() == "paused"
    assert page.dialogs == []  # type: ignore[attr-defined]
