"""A workflow's page in a real browser (Chromium via Playwright): the graph
draws every job, a node leads to its job's page, the progress a running job
writes shows and updates with the page's live refresh, and a workflow named
like a script runs none."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import uvicorn
from anyio.from_thread import BlockingPortal, start_blocking_portal
from test_dashboard_browser import browser, page  # noqa: F401  (fixtures)
from workflow_rows import EVIL, Filled, fill, progress

from jobsched_dashboard import create_app

pytestmark = pytest.mark.browser

#: Watchdog for each wait on the page (the live part refreshes every 2 s).
WAIT_MS = 30_000


@dataclass
class Served:
    base: str
    filled: Filled
    portal: BlockingPortal


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The dashboard's address on a SQLite store holding workflow_rows' workflows
    (module scope: made before Playwright's loop holds the thread)."""
    filled = fill(f"sqlite:///{tmp_path_factory.mktemp('workflows') / 'jobs.db'}")
    with start_blocking_portal() as portal:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        app = create_app(filled.url)
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
        serving = portal.start_task_soon(server.serve, [sock])
        try:
            yield Served(f"http://127.0.0.1:{sock.getsockname()[1]}", filled, portal)
        finally:
            server.should_exit = True
            serving.result(timeout=WAIT_MS / 1000)
            sock.close()


def test_the_graph_draws_every_job_and_leads_to_their_pages(
    served: Served,
    page: Any,  # noqa: F811
) -> None:
    base, filled = served.base, served.filled
    page.goto(f"{base}/workflows")
    page.click(f'tr[data-workflow="{filled.etl}"] a')
    assert page.url.endswith(f"/workflows/{filled.etl}")
    nodes = page.locator("svg.graph a.node")
    assert sorted(int(n.get_attribute("data-job")) for n in nodes.all()) == sorted(
        filled.etl_jobs.values()
    )
    assert page.locator("svg.graph path.edge").count() == 4
    assert page.locator("svg.graph path.edge.run").count() == 2
    # A box is drawn where it can be clicked, not only present in the markup.
    load = page.locator(f'svg.graph a[data-job="{filled.etl_jobs["load"]}"]')
    box = load.bounding_box()
    assert box is not None and box["width"] > 100 and box["height"] > 20
    load.click()
    page.wait_for_url(f"**/jobs/{filled.etl_jobs['load']}")
    assert page.locator("#workflow a").inner_text() == f"wf-{filled.etl}"


def test_progress_shows_and_updates_live(served: Served, page: Any) -> None:  # noqa: F811
    from playwright.sync_api import expect

    base, filled = served.base, served.filled
    transform = filled.etl_jobs["transform"]
    page.goto(f"{base}/workflows/{filled.etl}")
    node = page.locator(f'svg.graph a[data-job="{transform}"]')
    expect(node.locator("text.sub")).to_contain_text("40%")
    # On the portal's loop: Playwright's sync API holds this thread's.
    served.portal.call(progress, filled.url, transform, filled.attempt, 0.8, "page 8 of 10")
    # The live part is fetched again every few seconds: wait for it, no sleep.
    expect(node.locator("text.sub")).to_contain_text("80%", timeout=WAIT_MS)
    assert "page 8 of 10" in node.locator("title").first.inner_html()
    page.goto(f"{base}/jobs/{transform}")
    expect(page.locator("#progress")).to_contain_text("80% page 8 of 10")


def test_a_workflow_named_like_a_script_runs_none(served: Served, page: Any) -> None:  # noqa: F811
    base, filled = served.base, served.filled
    page.goto(f"{base}/workflows/{filled.evil}")
    assert page.locator("#workflow h1").inner_text().startswith(EVIL)
    node = page.locator(f'svg.graph a[data-job="{filled.evil_job}"]')
    # Cut to the node's width, as text; whole in its title.
    assert node.locator("text.name").text_content() == EVIL[:23] + "…"
    assert (node.locator("title").text_content() or "").startswith(f"{EVIL} job-")
    page.goto(f"{base}/workflows")
    assert page.dialogs == []  # type: ignore[attr-defined]
