"""Named queues on the dashboard, on a real SQLite store filled by a real
scheduler: the job list's ``?queue=`` filter (kept by its pages and its bulk
actions) and Queue column, the overview's table of unfinished jobs per queue,
and the queue on a job's page.

SQLite only: the PostgreSQL store's queue reads land on another branch.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import anyio
import pytest
from dashboard_jobs import Work
from starlette.testclient import TestClient

import jobsched as js
from jobsched.store import JobStore
from jobsched_dashboard import _queues, create_app

TOKEN = "t0ken"
EVIL = "<script>alert(1)</script>"
NEVER = js.RetryPolicy(max_retries=0)
#: What the 400 says a queue's name may be (the check of FunctionJob(queue=)).
RULE = "queue must be a name of 1-64 characters from A-Z a-z 0-9 _ . -"


def _fill(url: str, jobs: dict[str, tuple[str, str]]) -> dict[str, int]:
    """Each job by key: (queue, what it does: ``done``, ``failed`` or ``waits``
    an hour); runs the scheduler until the done and failed ones ended, and
    returns each key's job number."""

    async def main() -> dict[str, int]:
        ids: dict[str, str] = {}
        async with js.JobScheduler(store=url) as s:
            for key, (queue, does) in jobs.items():
                if does == "waits":
                    ids[key] = s.submit(Work(key, queue=queue), delay=3600)
                elif does == "failed":
                    ids[key] = s.submit(Work(key, queue=queue, failures=-1, retry=NEVER))
                else:
                    ids[key] = s.submit(Work(key, queue=queue))
            await s.flush()
            ends = {"done": js.JobStatus.COMPLETED, "failed": js.JobStatus.FAILED}
            with anyio.fail_after(60):
                for key, (_, does) in jobs.items():
                    while does in ends and (await s.fetch(ids[key])).status is not ends[does]:  # noqa: ASYNC110
                        await anyio.sleep(0.05)
        return {key: int(job_id.removeprefix("job-")) for key, job_id in ids.items()}

    return anyio.run(main)


def _statuses(url: str, numbers: dict[str, int]) -> dict[str, js.JobStatus]:
    async def main() -> dict[str, js.JobStatus]:
        store = js.open_store(url)
        await store.open()
        try:
            rows = {key: await store.fetch(n) for key, n in numbers.items()}
        finally:
            await store.close()
        return {key: row.status for key, row in rows.items() if row is not None}

    return anyio.run(main)


def _listed(html: str) -> list[int]:
    return [int(n) for n in re.findall(r'<tr data-job="(-?\d+)">', html)]


JOBS = {
    "tidy": ("default", "done"),
    "charge": ("default", "failed"),
    "later": ("default", "waits"),
    "welcome": ("emails", "done"),
    "transcode": ("video", "failed"),
    "encode-1": ("video", "waits"),
    "encode-2": ("video", "waits"),
    "encode-3": ("video", "waits"),
}


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, int]]:
    """A store read by the tests that change nothing: jobs of three queues."""
    url = f"sqlite:///{tmp_path_factory.mktemp('queues') / 'jobs.db'}"
    return url, _fill(url, JOBS)


@pytest.fixture
def client(filled: tuple[str, dict[str, int]]) -> Any:
    with TestClient(create_app(filled[0], token=TOKEN)) as c:
        yield c


def _of(numbers: dict[str, int], queue: str) -> list[int]:
    """The queue's job numbers, newest first (as the list shows them)."""
    return sorted((numbers[k] for k, (q, _) in JOBS.items() if q == queue), reverse=True)


# ── the job list ────────────────────────────────────────────────────────────


def test_job_list_filters_by_queue(client: TestClient, filled: Any) -> None:
    """``?queue=`` lists that queue's jobs only, combines with the other
    filters, and is echoed in its box; a blank one is no filter."""
    _, numbers = filled
    video = client.get("/jobs?queue=video")
    assert video.status_code == 200
    assert _listed(video.text) == _of(numbers, "video")
    assert '<input name="queue" value="video"' in video.text
    assert _listed(client.get("/jobs?queue=video&status=failed").text) == [numbers["transcode"]]
    assert _listed(client.get("/jobs?queue=emails&name=welcome").text) == [numbers["welcome"]]
    assert _listed(client.get("/jobs?queue=emails&name=tidy").text) == []
    assert _listed(client.get("/jobs?queue=nobody").text) == []
    assert len(_listed(client.get("/jobs?queue=").text)) == len(JOBS)


def test_job_list_shows_each_jobs_queue(client: TestClient, filled: Any) -> None:
    _, numbers = filled
    page = client.get("/jobs").text
    assert "<th>queue</th>" in page
    shown = dict(re.findall(r'<tr data-job="(-?\d+)">.*?<td class="queue">([^<]*)</td>', page))
    assert shown == {str(numbers[k]): q for k, (q, _) in JOBS.items()}


@pytest.mark.parametrize(
    "value", ["two words", "vidéo", "a" * 65, " video", "video/../x", EVIL, "a&b=c", "\x00"]
)
def test_a_bad_queue_name_is_400_saying_what_a_name_may_be(client: TestClient, value: str) -> None:
    """The job list and both bulk actions refuse it, as ``jobs --queue`` does;
    a hostile value is shown escaped, and nothing is acted on."""
    for answer in (
        client.get("/jobs", params={"queue": value}),
        client.post("/jobs/retry", params={"queue": value}, data={"token": TOKEN}),
        client.post("/jobs/cancel", params={"queue": value}, data={"token": TOKEN}),
    ):
        assert answer.status_code == 400, value
        assert RULE in answer.text and "e.g. /jobs?queue=emails" in answer.text
        assert EVIL not in answer.text
    assert "&lt;script&gt;" in client.get("/jobs", params={"queue": EVIL}).text


@pytest.mark.parametrize("key", ["name", "executor", "tenant"])
def test_a_filter_no_store_can_hold_is_400_not_a_server_error(client: TestClient, key: str) -> None:
    """NUL in a text filter: no job holds it (submit refuses it), and the
    database would fail on it; a 400 naming the filter, shown escaped."""
    answer = client.get("/jobs", params={key: f"{EVIL}\x00"})
    assert answer.status_code == 400
    assert f"{key} must not hold NUL" in answer.text and EVIL not in answer.text


def test_the_next_page_keeps_the_queue(
    client: TestClient, filled: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jobsched_dashboard import _limits

    _, numbers = filled
    monkeypatch.setattr(_limits, "PAGE_LIMIT", 2)
    first = client.get("/jobs?queue=video")
    video = _of(numbers, "video")
    assert _listed(first.text) == video[:2]
    older = re.search(r'href="([^"]+)" id="older"', first.text)
    assert older is not None and "queue=video&amp;before=" in older.group(1)
    second = client.get(older.group(1).replace("&amp;", "&"))
    assert _listed(second.text) == video[2:]
    assert 'href="/jobs?queue=video" id="newest"' in second.text


def test_bulk_actions_keep_to_the_queue(tmp_path: Path) -> None:
    """Retry and cancel all that match act on the filtered queue's jobs only,
    and land back on the list filtered by it."""
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    numbers = _fill(
        url,
        {
            "v-failed": ("video", "failed"),
            "v-waits": ("video", "waits"),
            "d-failed": ("default", "failed"),
            "d-waits": ("default", "waits"),
        },
    )
    with TestClient(create_app(url, token=TOKEN)) as c:
        page = c.get("/jobs?queue=video").text
        assert 'formaction="/jobs/retry?queue=video"' in page
        assert 'formaction="/jobs/cancel?queue=video"' in page
        r = c.post("/jobs/retry?queue=video", data={"token": TOKEN}, follow_redirects=False)
        assert r.status_code == 303
        assert r.headers["location"] == "/jobs?queue=video&done=retry&n=1&more=0"
        r = c.post(
            "/jobs/cancel?queue=video&status=pending",
            headers={"Authorization": f"Bearer {TOKEN}"},
            follow_redirects=False,
        )
        # Both video jobs are pending now: the retried one is requeued.
        assert r.headers["location"] == "/jobs?status=pending&queue=video&done=cancel&n=2&more=0"
    assert _statuses(url, numbers) == {
        "v-failed": js.JobStatus.CANCELLED,
        "v-waits": js.JobStatus.CANCELLED,
        "d-failed": js.JobStatus.FAILED,
        "d-waits": js.JobStatus.PENDING,
    }


# ── the overview ────────────────────────────────────────────────────────────


def _queue_rows(html: str) -> dict[str, list[str]]:
    section = re.search(r'<section id="queues">.*?</section>', html, re.S)
    assert section is not None
    rows = re.findall(r'<tr data-queue="([^"]+)">(.*?)</tr>', section.group(0), re.S)
    return {q: re.findall(r'<td class="num">(?:<a [^>]*>)?([^<]*)', cells) for q, cells in rows}


def test_overview_counts_unfinished_jobs_per_queue(client: TestClient) -> None:
    """One row per queue with unfinished jobs, by name: pending, running,
    retry_wait. A queue whose jobs all finished (emails) has no row."""
    for path in ("/", "/live"):
        page = client.get(path)
        assert page.status_code == 200
        assert _queue_rows(page.text) == {"default": ["1", "0", "0"], "video": ["3", "0", "0"]}
    html = client.get("/").text
    assert '<th class="num">pending</th><th class="num">running</th>' in html
    assert '<a href="/jobs?queue=video">video</a>' in html
    assert '<a href="/jobs?queue=video&amp;status=pending">3</a>' in html


def test_a_queue_link_opens_the_filtered_list(client: TestClient, filled: Any) -> None:
    _, numbers = filled
    html = client.get("/").text
    link = re.search(r'<a href="([^"]+)">default</a>', html)
    assert link is not None
    assert _listed(client.get(link.group(1)).text) == _of(numbers, "default")


def test_overview_hides_the_table_when_only_default_has_unfinished_jobs(tmp_path: Path) -> None:
    """Only ``default`` unfinished (another queue's jobs all finished): no table."""
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    _fill(url, {"later": ("default", "waits"), "welcome": ("emails", "done")})
    with TestClient(create_app(url)) as c:
        assert 'id="queues"' not in c.get("/").text
        assert 'id="queues"' not in c.get("/live").text


def test_overview_shows_one_queue_that_is_not_default(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    _fill(url, {"encode": ("video", "waits"), "tidy": ("default", "done")})
    with TestClient(create_app(url)) as c:
        assert _queue_rows(c.get("/").text) == {"video": ["1", "0", "0"]}


def test_overview_hides_the_table_on_a_store_that_cannot_count_per_queue(
    filled: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``queue_counts`` raising NotImplementedError (a store written before
    queues): the rest of the overview renders, without the table."""
    url, _ = filled
    store = js.open_store(url)

    async def cannot(self: JobStore) -> dict[tuple[str, js.JobStatus], int]:
        raise NotImplementedError(f"{type(self).__name__} cannot count jobs per queue")

    monkeypatch.setattr(type(store), "queue_counts", cannot)
    with TestClient(create_app(store)) as c:
        page = c.get("/")
        assert page.status_code == 200 and 'id="counts"' in page.text
        assert 'id="queues"' not in page.text


def test_queue_table_rules() -> None:
    """The pure table: queues by name, zero counts ignored, hidden for
    ``default`` alone or nothing."""
    pending, running, wait = js.JobStatus.PENDING, js.JobStatus.RUNNING, js.JobStatus.RETRY_WAIT
    assert _queues.table({}) is None
    assert _queues.table({("default", pending): 4, ("default", running): 1}) is None
    assert _queues.table({("default", pending): 4, ("video", running): 0}) is None
    t = _queues.table({("z", wait): 2, ("default", pending): 4, ("a.b-c_1", running): 1})
    assert t is not None
    assert [(r.queue, [n for n, _ in r.cells]) for r in t.rows] == [
        ("a.b-c_1", [0, 1, 0]),
        ("default", [4, 0, 0]),
        ("z", [0, 0, 2]),
    ]
    assert t.rows[2].cells[2][1] == "/jobs?queue=z&status=retry_wait"


# ── a job's page ────────────────────────────────────────────────────────────


def test_job_page_shows_its_queue(client: TestClient, filled: Any) -> None:
    _, numbers = filled
    for path in (f"/jobs/{numbers['encode-1']}", f"/jobs/{numbers['encode-1']}/live"):
        page = client.get(path).text
        assert (
            '<tr><th>queue</th><td class="queue"><a href="/jobs?queue=video">video</a></td></tr>'
            in page
        )
    assert (
        '<a href="/jobs?queue=default">default</a>' in client.get(f"/jobs/{numbers['tidy']}").text
    )
