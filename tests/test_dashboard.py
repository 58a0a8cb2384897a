"""The dashboard without a browser: every route through Starlette's TestClient on a
fake store, the token rules, escaping, and the pure view functions."""

from __future__ import annotations

import re
import time
from collections.abc import Collection, Sequence
from typing import Any

import pytest
from starlette.testclient import TestClient

from jobsched import JobStatus, JobStore, StoreNotFoundError, StoreUnavailableError
from jobsched.store import (
    Attempt,
    Change,
    Claimed,
    DueSchedule,
    Member,
    NewJob,
    Outcome,
    Recorded,
    StoredJob,
    StoredSchedule,
)
from jobsched_dashboard import _timeline as timelines
from jobsched_dashboard import _views as views
from jobsched_dashboard import create_app

TOKEN = "s3cret-token"
EVIL = "<script>alert(1)</script>"


def stored(job_id: int, status: JobStatus, **fields: Any) -> StoredJob:
    now = time.time()
    values: dict[str, Any] = {
        "id": job_id,
        "name": f"job-{job_id}",
        "executor": "async",
        "status": status,
        "attempts": 1,
        "run_at": now - 10,
        "submitted_at": now - 10,
        "started_at": None,
        "finished_at": None,
        "result": None,
        "last_error": None,
        "last_traceback": None,
        "owner": None,
        "payload": b"",
    }
    values.update(fields)
    return StoredJob(**values)


class FakeStore(JobStore):
    """The operator reads over a dict of jobs and a list of attempts; the rest unused."""

    def __init__(self, url: str = "fake://store") -> None:
        super().__init__(url)
        self.rows: dict[int, StoredJob] = {}
        self.history: list[Attempt] = []
        self.stored_schedules: list[StoredSchedule] = []
        self.cancelled: list[int] = []
        self.opened = self.closed = False
        self.fail_with: Exception | None = None
        self.fleet: list[Member] | None = []

    def add_job(self, job: StoredJob) -> StoredJob:
        self.rows[job.id] = job
        return job

    def _check(self) -> None:
        if self.fail_with is not None:
            raise self.fail_with

    async def open(self) -> None:
        self.opened = True

    async def close(self) -> None:
        self.closed = True

    async def jobs(
        self, *, statuses: Collection[JobStatus] = (), limit: int = 50, before: int | None = None
    ) -> list[StoredJob]:
        self._check()
        rows = sorted(self.rows.values(), key=lambda j: -j.id)
        return [
            j
            for j in rows
            if (not statuses or j.status in statuses) and (before is None or j.id < before)
        ][:limit]

    async def counts(self) -> dict[tuple[JobStatus, str], int]:
        self._check()
        out: dict[tuple[JobStatus, str], int] = {}
        for j in self.rows.values():
            out[j.status, j.executor] = out.get((j.status, j.executor), 0) + 1
        return out

    async def attempts(
        self, *, since: float | None = None, job_id: int | None = None, limit: int = 1000
    ) -> list[Attempt]:
        self._check()
        if job_id is not None:
            return [a for a in self.history if a.job_id == job_id][-limit:]
        return [
            a
            for a in self.history
            if a.finished_at is None or since is None or a.finished_at >= since
        ][-limit:]

    async def members(self, *, limit: int = 200) -> list[Member]:
        self._check()
        if self.fleet is None:
            return await super().members(limit=limit)
        return sorted(self.fleet, key=lambda m: -m.seen_at)[:limit]

    async def schedules(self) -> list[StoredSchedule]:
        self._check()
        return list(self.stored_schedules)

    async def fetch(self, job_id: int) -> StoredJob | None:
        self._check()
        return self.rows.get(job_id)

    async def cancel(self, ids: Collection[int], now: float) -> list[Change]:
        self.cancelled.extend(ids)
        for i in ids:
            if self.rows[i].status is JobStatus.PENDING:
                self.rows[i].status = JobStatus.CANCELLED
        return []

    async def retry(self, ids: Collection[int], now: float) -> list[int]:
        done = []
        for i in ids:
            if self.rows[i].status in views.RETRYABLE:
                self.rows[i].status = JobStatus.PENDING
                done.append(i)
        return done

    # Not used by the dashboard.
    def reserve_ids(self, count: int) -> int:
        raise AssertionError("unused")

    async def add(self, jobs: Sequence[NewJob], now: float) -> list[Change]:
        raise AssertionError("unused")

    async def claim(self, *args: Any, **kwargs: Any) -> list[Claimed]:
        raise AssertionError("unused")

    async def record(self, owner: str, outcomes: Sequence[Outcome]) -> Recorded:
        raise AssertionError("unused")

    async def extend(self, owner: str, ids: Collection[int], until: float) -> list[int]:
        raise AssertionError("unused")

    async def release(self, owner: str, ids: Collection[int]) -> None:
        raise AssertionError("unused")

    async def next_due(self) -> float | None:
        raise AssertionError("unused")

    async def put_schedules(self, schedules: Sequence[tuple[str, bytes, float]]) -> None:
        raise AssertionError("unused")

    async def remove_schedules(self, ids: Collection[str]) -> None:
        raise AssertionError("unused")

    async def claim_schedules(self, owner: str, now: float, lease: float) -> list[DueSchedule]:
        raise AssertionError("unused")

    async def fire(self, *args: Any) -> bool:
        raise AssertionError("unused")

    async def unfinished(self) -> int:
        raise AssertionError("unused")

    async def prune(self, keep: int) -> int:
        raise AssertionError("unused")


@pytest.fixture
def store() -> FakeStore:
    """A store with a running, a retrying, a failed, a queued, a delayed and a blocked job."""
    s = FakeStore()
    now = time.time()
    s.add_job(stored(1, JobStatus.COMPLETED, finished_at=now - 5, owner="m1"))
    s.add_job(stored(2, JobStatus.RUNNING, owner="m1", started_at=now - 3, attempts=2))
    s.add_job(
        stored(
            3,
            JobStatus.FAILED,
            name=EVIL,
            last_error=f"ValueError: {EVIL}",
            last_traceback=f"Traceback: {EVIL}",
            finished_at=now - 1,
            owner="m2",
        )
    )
    s.add_job(stored(4, JobStatus.PENDING, tenant="acme"))
    s.add_job(stored(5, JobStatus.PENDING, run_at=now + 60, name="later"))
    s.add_job(stored(6, JobStatus.PENDING, depends_on=(2,), name="after-2"))
    s.add_job(stored(7, JobStatus.RETRY_WAIT, run_at=now + 4, last_error="boom", name="flaky"))
    s.history = [
        Attempt(1, 1, "job-1", "async", "m1", now - 8, now - 5, JobStatus.COMPLETED),
        Attempt(2, 1, "job-2", "async", "m1", now - 7, now - 6, JobStatus.RETRY_WAIT, "boom"),
        Attempt(2, 2, "job-2", "async", "m1", now - 3, None, JobStatus.RUNNING),
        Attempt(3, 1, EVIL, "async", "m2", now - 2, now - 1, JobStatus.FAILED, EVIL),
    ]
    s.stored_schedules = [StoredSchedule("nightly", now + 3600)]
    return s


def client(store: JobStore, token: str | None = TOKEN) -> TestClient:
    return TestClient(create_app(store, token=token))


# ── pages ───────────────────────────────────────────────────────────────────


def test_overview_shows_counts_timeline_queue_failures_and_schedules(store: FakeStore) -> None:
    """The page has every section, filled from the store's reads."""
    with client(store) as c:
        page = c.get("/")
    assert page.status_code == 200
    html = page.text
    for section in ("counts", "throughput", "timeline", "queue", "failures", "schedules"):
        assert f'id="{section}"' in html
    assert re.search(r'data-status="running">.*?<td class="num total">1</td>', html)
    assert html.count('class="bar ') == 4
    assert 'class="wait"' in html  # job 2's second attempt after its first
    assert "Delayed: 1" in html and "Waiting to retry: 1" in html and "Blocked: 1" in html
    assert "nightly" in html
    assert 'data-refresh="/live?minutes=5"' in html
    assert "Content-Security-Policy" in page.headers


def test_live_fragment_is_the_changing_part_only(store: FakeStore) -> None:
    """/live renders the sections without the page around them."""
    with client(store) as c:
        html = c.get("/live").text
    assert 'id="timeline"' in html and "<html" not in html


def test_job_page_lists_attempts_and_dependencies(store: FakeStore) -> None:
    """A job's page shows its attempts (a retried one too) and what it depends on."""
    with client(store) as c:
        html = c.get("/jobs/2").text
        dependent = c.get("/jobs/6").text
        live = c.get("/jobs/2/live").text
    assert "failed, retried" in html and "running" in html
    assert 'href="/jobs/2"' in dependent and "job-2" in dependent
    assert 'id="attempts"' in live and "<html" not in live


def test_job_page_offers_only_the_actions_that_apply(store: FakeStore) -> None:
    """Cancel for a job that has not ended, retry for a failed one, none for a completed one."""
    with client(store) as c:
        queued, failed, done = (c.get(f"/jobs/{n}").text for n in (4, 3, 1))
    assert 'id="cancel"' in queued and 'id="retry"' not in queued
    assert 'id="retry"' in failed and 'id="cancel"' not in failed
    assert 'id="retry"' not in done and 'id="cancel"' not in done and "nothing to cancel" in done


def test_unknown_job_is_404(store: FakeStore) -> None:
    with client(store) as c:
        page = c.get("/jobs/999")
        live = c.get("/jobs/999/live")
    assert page.status_code == live.status_code == 404
    assert "no job-999" in page.text


def test_history_window_from_minutes(store: FakeStore) -> None:
    """?minutes=N sets the chart's and timeline's window; the refresh keeps it."""
    with client(store) as c:
        page = c.get("/?minutes=1").text
        bad = [c.get(f"/live?minutes={m}") for m in ("0", "61", "x", "-1")]
    assert "last 1 min" in page and 'data-refresh="/live?minutes=1"' in page
    assert all(r.status_code == 400 and "from 1 to 60" in r.text for r in bad)


def test_static_files_are_served(store: FakeStore) -> None:
    with client(store) as c:
        assert "data-refresh" in c.get("/static/dashboard.js").text
        assert c.get("/static/dashboard.css").status_code == 200


def test_store_opened_and_closed_with_the_app(store: FakeStore) -> None:
    with client(store):
        assert store.opened and not store.closed
    assert store.closed


def test_a_store_that_does_not_exist_is_never_opened(store: FakeStore) -> None:
    """Opening creates a store: while exists() says no, pages are 503 naming
    the fix and open() is never called; the first page after it exists opens it."""
    there = False

    async def exists() -> bool:
        return there

    store.exists = exists  # type: ignore[method-assign]
    with client(store) as c:
        page = c.get("/")
        assert page.status_code == 503 and "No jobsched store" in page.text
        assert "has no jobsched tables" in page.text and "a worker or a scheduler" in page.text
        assert c.get("/jobs/1").status_code == 503 and not store.opened
        there = True
        assert c.get("/").status_code == 200 and store.opened
    assert store.closed


def test_unavailable_store_is_503_with_the_reason(store: FakeStore) -> None:
    store.fail_with = StoreUnavailableError("database is locked; try later")
    with client(store) as c:
        page = c.get("/")
    assert page.status_code == 503 and "database is locked" in page.text


def test_store_without_operator_reads_is_501(store: FakeStore) -> None:
    store.fail_with = NotImplementedError("FakeStore cannot count jobs")
    with client(store) as c:
        page = c.get("/")
    assert page.status_code == 501 and "cannot count jobs" in page.text


def test_store_url_is_opened_through_the_registry(tmp_path: Any) -> None:
    """A URL works as well as a store object (the SQLite store, installed in dev)."""
    app = create_app(f"sqlite:///{tmp_path}/jobs.db", token=None)
    assert type(app.state.store).__name__ == "SQLiteStore"


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(StoreNotFoundError, match="nosuch"):
        create_app("nosuch://x", token=None)
    with pytest.raises(ValueError, match="malformed store URL"):
        create_app("jobs.db", token=None)
    with pytest.raises(ValueError, match="token is empty"):
        create_app(FakeStore(), token=" ")
    with pytest.raises(TypeError, match="store URL or a jobsched.JobStore"):
        create_app(42, token=None)  # type: ignore[arg-type]


# ── escaping ────────────────────────────────────────────────────────────────


@pytest.mark.parametrize("path", ["/", "/live", "/jobs/3", "/jobs/3/live"])
def test_names_and_errors_are_escaped(store: FakeStore, path: str) -> None:
    """A job named like a script tag, and its error and traceback, render as text."""
    with client(store) as c:
        html = c.get(path).text
    assert "<script>alert" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://app@db/jobs?password=hunter2",
        "postgresql://app:hunter2@db/jobs?sslmode=require&sslpassword=hunter2",
    ],
)
def test_no_page_shows_the_store_password(url: str) -> None:
    """Every page names the store, its password masked in every form."""
    store = FakeStore(url)
    store.add_job(stored(1, JobStatus.FAILED, last_error="boom", finished_at=time.time()))
    with client(store) as c:
        pages = [c.get(path) for path in ("/", "/live", "/jobs/1", "/jobs/1/live", "/jobs/999")]
        pages += [
            c.get("/jobs/999/live"),
            c.post("/jobs/999/retry", headers={"Authorization": f"Bearer {TOKEN}"}),
        ]
    assert [p.status_code for p in pages] == [200, 200, 200, 200, 404, 404, 404]
    assert "password=***" in pages[0].text and "password=***" in pages[4].text
    leaks = [p.url for p in pages if "hunter2" in p.text]
    assert not leaks, leaks


# ── actions and the token ──────────────────────────────────────────────────


def test_cancel_with_token_in_form(store: FakeStore) -> None:
    with client(store) as c:
        r = c.post("/jobs/4/cancel", data={"token": TOKEN}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/jobs/4?done=cancel"
    assert store.cancelled == [4]


def test_retry_with_token_in_header(store: FakeStore) -> None:
    with client(store) as c:
        r = c.post("/jobs/3/retry", headers={"Authorization": f"Bearer {TOKEN}"})
    assert r.status_code == 200 and "Requeued" in r.text
    assert store.rows[3].status is JobStatus.PENDING


@pytest.mark.parametrize(
    ("kwargs", "reason"),
    [
        ({}, "Token required"),
        ({"data": {"token": ""}}, "Token required"),
        ({"data": {"token": "wrong"}}, "Wrong token"),
        ({"headers": {"Authorization": "Bearer wrong"}}, "Wrong token"),
        ({"headers": {"Authorization": f"Basic {TOKEN}"}}, "Token required"),
    ],
)
@pytest.mark.parametrize("action", ["cancel", "retry"])
def test_actions_without_the_right_token_are_403(
    store: FakeStore, kwargs: dict[str, Any], reason: str, action: str
) -> None:
    with client(store) as c:
        r = c.post(f"/jobs/3/{action}", **kwargs)
    assert r.status_code == 403 and reason in r.text
    assert store.cancelled == [] and store.rows[3].status is JobStatus.FAILED


def test_actions_disabled_without_a_configured_token(store: FakeStore) -> None:
    """No token configured: the page says so, and every action is refused."""
    with client(store, token=None) as c:
        page = c.get("/jobs/4").text
        r = c.post("/jobs/4/cancel", data={"token": "anything"})
    assert "Actions are disabled" in page and 'id="cancel"' not in page
    assert r.status_code == 403 and "JOBSCHED_DASHBOARD_TOKEN" in r.text
    assert store.cancelled == []


def test_get_on_an_action_is_not_allowed(store: FakeStore) -> None:
    with client(store) as c:
        assert c.get("/jobs/4/cancel").status_code == 405


def test_cancel_a_finished_job_is_409(store: FakeStore) -> None:
    with client(store) as c:
        r = c.post("/jobs/1/cancel", data={"token": TOKEN})
    assert r.status_code == 409 and "already ended completed" in r.text
    assert store.cancelled == []


def test_retry_a_running_job_is_409(store: FakeStore) -> None:
    with client(store) as c:
        r = c.post("/jobs/2/retry", data={"token": TOKEN})
    assert r.status_code == 409 and "only a failed, timed-out or cancelled" in r.text


def test_actions_on_an_unknown_job_are_404(store: FakeStore) -> None:
    with client(store) as c:
        assert c.post("/jobs/999/cancel", data={"token": TOKEN}).status_code == 404
        assert c.post("/jobs/999/retry", data={"token": TOKEN}).status_code == 404


# ── the views, on plain numbers ─────────────────────────────────────────────


# ── the job page's call, result and member ─────────────────────────────────


def greet(who: str, *, loud: bool = False) -> str:
    return who.upper() if loud else who


class _RunsCode:
    """A pickle that would run ``print`` if it were loaded."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (_record_ran, ("the payload ran",))


RAN: list[str] = []


def _record_ran(text: str) -> None:
    RAN.append(text)


def test_job_page_shows_args_kwargs_and_result_without_running_the_pickle() -> None:
    """The call's function, args and kwargs and the result are read from the
    pickles (escaped), and nothing in them runs."""
    import pickle

    import jobsched as js

    s = FakeStore()
    job = js.FunctionJob(greet, (EVIL,), {"loud": True})
    s.add_job(
        stored(
            1,
            JobStatus.COMPLETED,
            payload=b"P" + pickle.dumps(job),
            result=b"P" + pickle.dumps({"greeting": EVIL, "n": [1, 2]}),
        )
    )
    s.add_job(stored(2, JobStatus.COMPLETED, payload=b"P" + pickle.dumps(_RunsCode())))
    s.add_job(stored(3, JobStatus.PENDING, payload=b"not a payload"))
    with client(s) as c:
        page = c.get("/jobs/1").text
        assert "test_dashboard.greet" in page and "jobsched._function_job.FunctionJob" in page
        assert "&#39;&lt;script&gt;alert(1)&lt;/script&gt;&#39;" in page and EVIL not in page
        assert "loud=True" in page
        assert "{&#39;greeting&#39;: &#39;&lt;script&gt;" in page and "&#39;n&#39;: [1, 2]" in page
        # A reduce to a function shows as its name, never called.
        assert "<code>test_dashboard._record_ran</code>" in c.get("/jobs/2").text
        assert "unknown format" in c.get("/jobs/3").text
    assert RAN == []


def test_job_page_names_the_member_that_ran_a_finished_job(store: FakeStore) -> None:
    """A finished job's row has no owner; its page names the member of its last attempt."""
    store.rows[1].owner = None
    store.history[0].owner = "web-1:4242:0a1b2c3d"
    with client(store) as c:
        page = c.get("/jobs/1").text
    assert '<span title="web-1:4242:0a1b2c3d">web-1:4242</span>' in page and "(ran it)" in page


def test_member_names_read_host_and_pid() -> None:
    """``host:pid:token`` reads as ``host:pid``; any other owner id is shown whole."""
    assert views.member_name("web-1:4242:0a1b2c3d") == "web-1:4242"
    assert views.member_name("m1") == "m1"
    assert views.member_name("a:b:c") == "a:b:c"
    assert views.member_name(None) == ""
    # Two schedulers in one process share host:pid: then each shows whole.
    assert views.member_names(["h:1:aaaaaaaa", "h:1:bbbbbbbb", "g:2:cccccccc", None]) == {
        "h:1:aaaaaaaa": "h:1:aaaaaaaa",
        "h:1:bbbbbbbb": "h:1:bbbbbbbb",
        "g:2:cccccccc": "g:2",
    }
    now = 100.0
    lanes = timelines.timeline(
        [
            Attempt(1, 1, "n", "async", "h:1:aaaaaaaa", 90.0, 95.0, JobStatus.COMPLETED),
            Attempt(2, 1, "n", "async", "g:2:cccccccc", 90.0, 95.0, JobStatus.COMPLETED),
        ],
        now,
        window=60,
    ).lanes
    assert [lane.label for lane in lanes] == ["g:2", "h:1"]


# ── members ─────────────────────────────────────────────────────────────────


def test_members_page_lists_members_and_marks_the_stale_ones(store: FakeStore) -> None:
    """Each member shows host, pid, workers, busy and last heartbeat; one silent
    for more than three reports is marked stale; owner ids are escaped."""
    now = time.time()
    store.fleet = [
        Member("web-1:4242:0a1b2c3d", workers=8, busy=3, started_at=now - 600, seen_at=now - 1),
        Member("web-2:77:ffffffff", workers=4, busy=1, started_at=now - 900, seen_at=now - 60),
        Member(EVIL, workers=1, busy=0, started_at=now - 5, seen_at=now - 2),
    ]
    with client(store) as c:
        page = c.get("/members").text
    live = re.search(r'<tr data-owner="web-1:4242:0a1b2c3d">(.*?)</tr>', page)
    assert live is not None
    cells = re.findall(r"<td[^>]*>(.*?)</td>", live.group(1))
    assert cells[:5] == ["web-1:4242", "web-1", "4242", "8", "3"]
    assert "live" in cells[-1] and "1 s ago" in cells[-2]
    stale = re.search(r'<tr data-owner="web-2:77:ffffffff" class="stale-member">(.*?)</tr>', page)
    assert stale is not None and ">stale<" in stale.group(1) and "60 s ago" in stale.group(1)
    assert EVIL not in page and "&lt;script&gt;" in page


def test_members_page_without_members(store: FakeStore) -> None:
    """No member reported, or a store that keeps no list: the page says which."""
    with client(store) as c:
        assert "No member has reported" in c.get("/members").text
    store.fleet = None
    with client(store) as c:
        page = c.get("/members")
    assert page.status_code == 200 and "keeps no members list" in page.text


def test_member_host_and_pid_come_from_the_owner_id() -> None:
    """``Member.host`` and ``pid`` read the ``host:pid:token`` id; another id has no pid."""
    m = Member("db-3.internal:99:abcd0123", 4, 0, 0.0, 0.0)
    assert (m.host, m.pid) == ("db-3.internal", 99)
    other = Member("custom", 4, 0, 0.0, 0.0)
    assert (other.host, other.pid) == ("custom", None)


# ── the job list, lookup and bulk actions ──────────────────────────────────


def _many(count: int) -> FakeStore:
    """A store of ``count`` jobs: odd ids failed, even completed; names a (ids not
    divisible by 3) and b; tenants t0 to t2."""
    s = FakeStore()
    for i in range(1, count + 1):
        s.add_job(
            stored(
                i,
                JobStatus.FAILED if i % 2 else JobStatus.COMPLETED,
                name="a" if i % 3 else "b",
                tenant=f"t{i % 3}",
                executor="thread" if i % 5 == 0 else "async",
            )
        )
    return s


def _listed(html: str) -> list[int]:
    return [int(n) for n in re.findall(r'<tr data-job="(-?\d+)">', html)]


def test_job_list_is_paged_newest_first_by_id() -> None:
    """The list shows 50 jobs, newest first, and links the next page by id (not offset)."""
    s = _many(120)
    with client(s) as c:
        first = c.get("/jobs")
        assert first.status_code == 200
        assert _listed(first.text) == list(range(120, 70, -1))
        older = re.search(r'href="([^"]+)" id="older"', first.text)
        assert older is not None and "before=71" in older.group(1)
        second = c.get(older.group(1).replace("&amp;", "&"))
        assert _listed(second.text) == list(range(70, 20, -1))
        third = c.get("/jobs?before=21")
        assert _listed(third.text) == list(range(20, 0, -1))
        assert 'id="older"' not in third.text and 'id="newest"' in third.text


def test_job_list_filters_by_status_name_executor_and_tenant() -> None:
    """Each filter narrows the list; they combine, and the next page keeps them."""
    s = _many(200)
    with client(s) as c:
        failed_a = _listed(c.get("/jobs?status=failed&name=a").text)
        assert failed_a == [i for i in range(200, 0, -1) if i % 2 and i % 3][:50]
        assert _listed(c.get("/jobs?executor=thread&tenant=t0").text) == [
            i for i in range(200, 0, -1) if i % 5 == 0 and i % 3 == 0
        ]
        both = c.get("/jobs?status=failed&status=completed&name=b")
        assert _listed(both.text) == [i for i in range(200, 0, -1) if i % 3 == 0][:50]
        older = re.search(r'href="([^"]+)" id="older"', both.text)
        assert older is not None
        assert "status=failed&amp;status=completed&amp;name=b&amp;before=" in older.group(1)
        assert c.get("/jobs?name=nobody").text.count("<tr data-job=") == 0


def test_a_filtered_page_looks_at_a_bounded_number_of_jobs(monkeypatch: Any) -> None:
    """A rare name does not make one page read the whole history: it looks at
    PAGE_SCAN jobs and links where to look on."""
    from jobsched_dashboard import _limits

    monkeypatch.setattr(_limits, "PAGE_SCAN", 20)
    s = _many(100)
    s.rows[3].name = "rare"
    seen: list[int] = []
    reads = s.jobs

    async def counted(**kwargs: Any) -> list[StoredJob]:
        rows = await reads(**kwargs)
        seen.append(len(rows))
        return rows

    monkeypatch.setattr(s, "jobs", counted)
    with client(s) as c:
        page = c.get("/jobs?name=rare")
        assert _listed(page.text) == [] and "among the 20 looked at" in page.text
        assert seen == [21]  # the window and one row to tell if more are left
        assert "before=81" in page.text
        last = c.get("/jobs?name=rare&before=21")
        assert _listed(last.text) == [3] and 'id="older"' not in last.text


def test_lookup_by_id_goes_to_the_job() -> None:
    """``?id=job-12`` (or 12) redirects to the job's page; an unknown id is 404, a bad one 400."""
    s = _many(20)
    with client(s) as c:
        for typed in ("job-12", "12", " JOB-12 "):
            r = c.get("/jobs", params={"id": typed}, follow_redirects=False)
            assert r.status_code == 303 and r.headers["location"] == "/jobs/12"
        assert c.get("/jobs?id=999").status_code == 404
        bad = c.get("/jobs", params={"id": "job-x" + EVIL})
        assert bad.status_code == 400 and "is not a job id" in bad.text
        assert EVIL not in bad.text
        # Any other text is an id given at submit: not in this store, 404, escaped.
        unknown = c.get("/jobs", params={"id": EVIL})
        assert unknown.status_code == 404 and EVIL not in unknown.text


def test_jobs_with_ids_given_at_submit_have_pages_and_are_looked_up() -> None:
    """A job submitted with an id of its own has a negative number: its page,
    its live part, its actions and the lookup by that id all reach it."""
    from jobsched._jobs._ids import own_number

    number = own_number("order-42")
    s = FakeStore()
    s.add_job(stored(number, JobStatus.FAILED, name="charge"))
    s.add_job(stored(3, JobStatus.COMPLETED))
    with client(s) as c:
        for typed in ("order-42", f"job-{number}", str(number)):
            r = c.get("/jobs", params={"id": typed}, follow_redirects=False)
            assert r.headers["location"] == f"/jobs/{number}", typed
        assert "charge" in c.get(f"/jobs/{number}").text
        assert c.get(f"/jobs/{number}/live").status_code == 200
        assert _listed(c.get("/jobs?before=3").text) == [number]
        r = c.post(f"/jobs/{number}/retry", data={"token": TOKEN}, follow_redirects=False)
        assert r.status_code == 303
    assert s.rows[number].status is JobStatus.PENDING


@pytest.mark.parametrize(
    ("query", "says"),
    [
        ("status=done", "status must be one of"),
        ("before=x1", "before must be a job&#39;s number"),
        ("before=99999999999999999999", "before must be a job&#39;s number"),
    ],
)
def test_job_list_refuses_bad_filters(query: str, says: str) -> None:
    """A bad filter is a 400 page naming it and the fix."""
    with client(_many(3)) as c:
        r = c.get(f"/jobs?{query}")
        assert r.status_code == 400 and says in r.text


def test_job_list_escapes_names_and_filters(store: FakeStore) -> None:
    """Names, errors and the filters echoed back are escaped."""
    with client(store) as c:
        r = c.get("/jobs", params={"name": EVIL, "tenant": EVIL})
        assert r.status_code == 200 and EVIL not in r.text
        assert "&lt;script&gt;" in r.text
        r = c.get("/jobs")
        assert EVIL not in r.text and "&lt;script&gt;alert(1)&lt;/script&gt;" in r.text
        assert r.headers["content-security-policy"].startswith("default-src 'self'")


def test_bulk_retry_requeues_the_filtered_set_only() -> None:
    """Retry all that match requeues the failed jobs of the filter and reports how many."""
    s = _many(60)
    with client(s) as c:
        r = c.post(
            "/jobs/retry?status=failed&name=b", data={"token": TOKEN}, follow_redirects=False
        )
        assert r.status_code == 303
        assert r.headers["location"] == "/jobs?status=failed&name=b&done=retry&n=10&more=0"
        page = c.get(r.headers["location"])
        assert "Requeued 10 job(s)." in page.text
    for job in s.rows.values():
        was_failed = job.id % 2 == 1
        if was_failed and job.id % 3 == 0:
            assert job.status is JobStatus.PENDING
        else:
            assert job.status is (JobStatus.FAILED if was_failed else JobStatus.COMPLETED)


def test_bulk_cancel_cancels_the_unfinished_ones_of_the_filter(store: FakeStore) -> None:
    """Cancel all that match asks to cancel only unfinished jobs (with the Bearer header)."""
    with client(store) as c:
        r = c.post(
            "/jobs/cancel?tenant=acme",
            headers={"Authorization": f"Bearer {TOKEN}"},
            follow_redirects=False,
        )
        assert r.status_code == 303 and "n=1" in r.headers["location"]
    assert store.cancelled == [4]
    with client(store) as c:
        # No filter (issue 38): the first press asks, and cancels nothing.
        asked = c.post("/jobs/cancel", data={"token": TOKEN}, follow_redirects=False)
        assert asked.status_code == 200 and "Cancel every unfinished job?" in asked.text
        assert 'name="confirm" value="all"' in asked.text
        assert store.cancelled == [4]
        c.post("/jobs/cancel", data={"token": TOKEN, "confirm": "all"})
    assert sorted(store.cancelled) == [2, 4, 5, 6, 7]


def test_bulk_cancel_asks_only_when_nothing_is_filtered(store: FakeStore) -> None:
    """A status that leaves some unfinished ones out, or any other filter, is
    a choice already made: no question; every unfinished status is none."""
    with client(store) as c:
        r = c.post("/jobs/cancel?status=pending", data={"token": TOKEN}, follow_redirects=False)
        assert r.status_code == 303
        every = "status=pending&status=running&status=retry_wait"
        asked = c.post(f"/jobs/cancel?{every}", data={"token": TOKEN}, follow_redirects=False)
        assert asked.status_code == 200 and "Cancel them all" in asked.text
        # The confirmation's form goes back to the same filter.
        assert f'action="/jobs/cancel?{every}"'.replace("&", "&amp;") in asked.text
        wrong = c.post("/jobs/cancel", data={"token": "nope"}, follow_redirects=False)
        assert wrong.status_code == 403  # the token is checked before anything is asked


def test_the_token_is_remembered_for_the_session_after_an_action(store: FakeStore) -> None:
    """After an action with the right token the browser gets an HttpOnly,
    SameSite=Strict cookie (not the token); with it the next action needs no
    token and the pages hide the field. A wrong token, a Bearer header or
    another dashboard process's cookie sets or proves nothing."""
    with client(store) as c:
        bad = c.post("/jobs/4/cancel", data={"token": "nope"}, follow_redirects=False)
        assert bad.status_code == 403 and "set-cookie" not in bad.headers
        bearer = c.post(
            "/jobs/cancel?tenant=acme",
            headers={"Authorization": f"Bearer {TOKEN}"},
            follow_redirects=False,
        )
        assert bearer.status_code == 303 and "set-cookie" not in bearer.headers
        assert 'name="token"' in c.get("/jobs/2").text
        r = c.post("/jobs/2/cancel", data={"token": TOKEN}, follow_redirects=False)
        assert r.status_code == 303
        cookie = r.headers["set-cookie"]
        assert cookie.startswith("jobsched_session=") and TOKEN not in cookie
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
        assert "expires" not in cookie.lower() and "max-age" not in cookie.lower()
        page = c.get("/jobs/5").text
        assert 'name="token"' not in page and "token remembered for this session" in page
        # From the dashboard's own page (a browser says so: see the next test).
        again = c.post("/jobs/5/cancel", headers=SAME_ORIGIN, follow_redirects=False)
        assert again.status_code == 303 and "set-cookie" not in again.headers
    assert 5 in store.cancelled
    with client(store) as other:  # another process: another key
        other.cookies.set("jobsched_session", cookie.split(";")[0].split("=", 1)[1])
        refused = other.post("/jobs/6/cancel", headers=SAME_ORIGIN, follow_redirects=False)
        assert refused.status_code == 403


#: What a browser sends with a form posted from the dashboard's own page.
SAME_ORIGIN = {"Sec-Fetch-Site": "same-origin", "Origin": "http://testserver"}


@pytest.mark.parametrize(
    "headers",
    [
        {"Sec-Fetch-Site": "same-site", "Origin": "http://testserver:3000"},
        {"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"},
        {"Origin": "http://testserver:3000"},  # a browser without Sec-Fetch-*
        {"Origin": "null"},  # a sandboxed frame, a data: URL
        {},  # neither: not proven to come from the dashboard's pages
    ],
)
def test_the_remembered_token_serves_only_the_dashboards_own_pages(
    store: FakeStore, headers: dict[str, str]
) -> None:
    """SameSite=Strict lets another port or subdomain of the same site send
    the cookie with a forged form: a cookie-only action from anywhere but
    the dashboard's own pages is refused and changes nothing; with the
    token in the form it is still served."""
    with client(store) as c:
        assert c.post("/jobs/2/cancel", data={"token": TOKEN}).status_code == 200
        forged = c.post("/jobs/cancel", headers=headers, follow_redirects=False)
        assert forged.status_code == 403 and "did not come from the dashboard" in forged.text
        assert c.post("/jobs/5/cancel", headers=headers, follow_redirects=False).status_code == 403
        assert store.cancelled == [2]
        with_token = c.post(
            "/jobs/5/cancel", data={"token": TOKEN}, headers=headers, follow_redirects=False
        )
        assert with_token.status_code == 303
        same = c.post("/jobs/6/cancel", headers={"Origin": "http://testserver"})
        assert same.status_code == 200  # Origin alone, naming this host, vouches
    assert store.cancelled == [2, 5, 6]


def test_bulk_actions_stop_at_the_limit_and_say_more_remain(monkeypatch: Any) -> None:
    """A press acts on BULK_LIMIT jobs at most; the notice says to press again."""
    from jobsched_dashboard import _limits

    monkeypatch.setattr(_limits, "BULK_LIMIT", 7)
    s = _many(40)
    with client(s) as c:
        r = c.post("/jobs/retry", data={"token": TOKEN}, follow_redirects=False)
        assert r.headers["location"] == "/jobs?done=retry&n=7&more=1"  # no stray "&"
        assert "press again" in c.get(r.headers["location"]).text
    assert sum(j.status is JobStatus.PENDING for j in s.rows.values()) == 7


@pytest.mark.parametrize("action", ["retry", "cancel"])
def test_bulk_actions_need_the_token(action: str) -> None:
    """Without the token, or with a wrong one, a bulk action is 403 and changes nothing."""
    s = _many(10)
    with client(s) as c:
        assert c.post(f"/jobs/{action}").status_code == 403
        assert c.post(f"/jobs/{action}", data={"token": "nope"}).status_code == 403
    with client(s, token=None) as c:
        assert c.post(f"/jobs/{action}", data={"token": TOKEN}).status_code == 403
    assert all(j.status is not JobStatus.PENDING for j in s.rows.values())
    assert s.cancelled == []


def test_bulk_action_on_statuses_it_cannot_touch_is_409() -> None:
    """Retrying only completed jobs, or cancelling only failed ones, says why not."""
    with client(_many(10)) as c:
        r = c.post("/jobs/retry?status=completed", data={"token": TOKEN})
        assert r.status_code == 409 and "retry applies to failed, timed_out, cancelled" in r.text
        r = c.post("/jobs/cancel?status=failed", data={"token": TOKEN})
        assert r.status_code == 409 and "cancel applies to running, pending, retry_wait" in r.text


def test_overview_links_every_failure_when_more_than_it_shows() -> None:
    """The overview's failures list links the paged list once it is full."""
    with client(_many(80)) as c:
        assert 'id="more-failures"' in c.get("/").text
    with client(_many(4)) as c:
        assert 'id="more-failures"' not in c.get("/").text


def test_pack_puts_overlapping_spans_in_separate_lanes() -> None:
    """Interval partitioning: as many lanes as spans overlap at once, reused when free."""
    assert timelines.pack([(0, 10), (5, 15), (10, 20), (12, 13)]) == [0, 1, 0, 2]
    assert timelines.pack([]) == []


def test_timeline_lanes_per_member_and_slot() -> None:
    now = 1000.0
    attempts = [
        Attempt(1, 1, "a", "async", "m1", 900, 950, JobStatus.COMPLETED),
        Attempt(2, 1, "b", "async", "m1", 920, None, JobStatus.RUNNING),
        Attempt(3, 1, "c", "async", "m2", 600, 650, JobStatus.FAILED),  # before the window
        Attempt(4, 1, "d", "async", None, 990, 991, JobStatus.CANCELLED),
    ]
    t = timelines.timeline(attempts, now, window=300)
    assert [(lane.owner, lane.slot) for lane in t.lanes] == [
        ("(no member)", 0),
        ("m1", 0),
        ("m1", 1),
    ]
    running = next(b for b in t.bars if b.job_id == 2)
    assert running.x + running.width == pytest.approx(timelines.TIMELINE_WIDTH)
    assert {b.job_id for b in t.bars} == {1, 2, 4}
    assert "running" in running.title


def test_timeline_wait_before_a_retry() -> None:
    attempts = [
        Attempt(1, 1, "x", "async", "m1", 900, 910, JobStatus.RETRY_WAIT, "boom"),
        Attempt(1, 2, "x", "async", "m1", 930, 940, JobStatus.COMPLETED),
    ]
    t = timelines.timeline(attempts, 1000.0, window=100)
    (wait,) = t.waits
    first, second = t.bars
    assert first.status == "retried" and "failed, retried" in first.title and "boom" in first.title
    assert wait.x1 == pytest.approx(first.x + first.width) and wait.x2 == pytest.approx(second.x)


def test_throughput_buckets() -> None:
    """Started and finished per second per bucket; the last whole bucket is reported."""
    now = 100.0
    attempts = [
        Attempt(i, 1, "n", "async", "m", 75.0 + i * 0.1, 85.0, JobStatus.COMPLETED)
        for i in range(20)
    ]
    chart = views.throughput(attempts, now, window=30, bucket=10)
    # Buckets [70,80), [80,90), [90,100): starts in the first, finishes in the second.
    assert chart.started_now == 0 and chart.finished_now == 2.0
    assert chart.peak == 2.0
    assert len(chart.started.split()) == 3


def test_throughput_chart_has_labelled_axes(store: FakeStore) -> None:
    """The y axis is labelled in jobs per second (0, half the peak, the peak) and
    the x axis in time back from now; the page draws both."""
    attempts = [
        Attempt(i, 1, "n", "async", "m", 75.0 + i * 0.1, 85.0, JobStatus.COMPLETED)
        for i in range(20)
    ]
    chart = views.throughput(attempts, 100.0, window=300, bucket=10)
    assert [label for _, label in chart.y_ticks] == ["0/s", "1/s", "2/s"]
    ys = [y for y, _ in chart.y_ticks]
    assert ys == sorted(ys, reverse=True) and ys[0] == views.CHART_HEIGHT - 2
    assert [label for _, label in chart.x_ticks] == [
        "-5 min", "-4 min", "-3 min", "-2 min", "-1 min", "now"
    ]  # fmt: skip
    assert chart.x_ticks[0][0] == 0 and chart.x_ticks[-1][0] == views.CHART_WIDTH
    small = views.throughput([], 100.0, window=60, bucket=2)
    assert [label for _, label in small.y_ticks] == ["0/s", "0.5/s", "1/s"]
    with client(store) as c:
        page = c.get("/").text
    assert '<text class="y-label"' in page and ">now</text>" in page


def test_times_are_utc_and_say_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every time the dashboard shows is UTC with the zone written, whatever TZ is."""
    from jobsched_dashboard import _render

    monkeypatch.setenv("TZ", "Asia/Kolkata")
    time.tzset()
    try:
        now = time.time()
        # (With the date too should the day turn between the two calls.)
        assert _render.clock(now).endswith(time.strftime("%H:%M:%S UTC", time.gmtime(now)))
        assert _render.clock(1_764_547_200.0) == "2025-12-01 00:00:00 UTC"
        assert _render.clock(None) == "—"
    finally:
        monkeypatch.undo()
        time.tzset()


def test_nice_ceiling() -> None:
    assert [views._nice_ceiling(x) for x in (0, 0.3, 1, 1.5, 7, 12, 450)] == [
        1,
        0.5,
        1,
        2,
        10,
        20,
        500,
    ]


def test_counts_table_has_every_status() -> None:
    table = views.counts_table({(JobStatus.FAILED, "thread"): 2, (JobStatus.COMPLETED, "async"): 5})
    assert table.executors == ["async", "thread"]
    assert [s for s, _, _ in table.rows] == list(views.STATUS_ORDER)
    assert table.by_executor == [5, 2] and table.total == 7


def test_queue_sorts_waiting_jobs() -> None:
    now = time.time()
    up_done = stored(1, JobStatus.COMPLETED)
    up_running = stored(2, JobStatus.RUNNING)
    waiting = [
        stored(10, JobStatus.PENDING, tenant="b"),
        stored(11, JobStatus.PENDING, tenant="a"),
        stored(12, JobStatus.PENDING, tenant="a"),
        stored(13, JobStatus.PENDING, run_at=now + 5),
        stored(14, JobStatus.RETRY_WAIT, run_at=now + 1),
        stored(15, JobStatus.PENDING, depends_on=(1, 2)),
        stored(16, JobStatus.PENDING, depends_on=(1, 99)),  # 99 pruned: it finished
    ]
    q = views.queue(waiting, {1: up_done, 2: up_running}, now)
    assert [j.id for j in q.ready] == [10, 11, 12, 16]
    assert q.tenants == [("a", 2), ("(no tenant)", 1), ("b", 1)]
    assert [j.id for j in q.delayed] == [13] and [j.id for j in q.retrying] == [14]
    ((job, ups),) = q.blocked
    assert job.id == 15 and [u.id for u in ups] == [2]


# ── the Host header and the body of an action ──────────────────────────────


@pytest.mark.parametrize(
    ("host", "served"),
    [
        ("127.0.0.1:8000", True),
        ("localhost:8000", True),
        ("LOCALHOST", True),
        ("[::1]:8000", True),
        ("jobs.example.org", True),
        ("attacker.example:8000", False),  # DNS rebinding: a name that now points here
        ("127.0.0.1.attacker.example", False),
        ("", False),
    ],
)
def test_only_the_hosts_it_serves_are_answered(store: FakeStore, host: str, served: bool) -> None:
    """Any other Host gets 400 (plain text naming the fix), on every route."""
    app = create_app(
        store, token=TOKEN, allowed_hosts=["127.0.0.1", "localhost", "::1", "jobs.example.org"]
    )
    with TestClient(app) as c:
        pages = [c.get(path, headers={"host": host}) for path in ("/", "/live", "/jobs/3")]
        pages.append(c.post("/jobs/4/cancel", headers={"host": host, **_BEARER}))
    if served:
        assert [p.status_code for p in pages] == [200, 200, 200, 200], pages
    else:
        assert [p.status_code for p in pages] == [400] * 4
        assert "--allowed-host NAME" in pages[0].text and "job-" not in pages[0].text
        assert store.cancelled == []


def test_without_allowed_hosts_every_host_is_answered(store: FakeStore) -> None:
    """create_app(allowed_hosts=None): for an app behind a proxy that checks."""
    with client(store) as c:
        assert c.get("/", headers={"host": "anything.example"}).status_code == 200
    with pytest.raises(ValueError, match="a collection of names"):
        create_app(store, allowed_hosts="localhost")
    with pytest.raises(ValueError, match="must hold host names"):
        create_app(store, allowed_hosts=["localhost", " "])


def test_the_hosts_served_follow_the_bind_address() -> None:
    import socket

    from jobsched_dashboard._hosts import ANY_IP
    from jobsched_dashboard._serve import served_hosts

    assert served_hosts("127.0.0.1") == {"127.0.0.1", "localhost", "::1"}
    assert served_hosts("192.168.1.4", ["Jobs.Example.org"]) == {"192.168.1.4", "jobs.example.org"}
    wild = served_hosts("0.0.0.0")
    assert {"localhost", socket.gethostname().lower(), ANY_IP} <= wild
    app = create_app(FakeStore(), allowed_hosts=wild)
    with TestClient(app) as c:
        assert c.get("/", headers={"host": "10.1.2.3:8000"}).status_code == 200
        assert c.get("/", headers={"host": "[fe80::1]"}).status_code == 200
        assert c.get("/", headers={"host": "attacker.example"}).status_code == 400


_BEARER = {"Authorization": f"Bearer {TOKEN}"}
_FORM = {"content-type": "application/x-www-form-urlencoded"}


async def _post(app: Any, headers: dict[str, str], chunks: list[bytes]) -> tuple[int, int]:
    """POST /jobs/4/cancel to the ASGI app with a body in ``chunks``; the
    status, and how many chunks the app read."""
    read = 0
    status = 0

    async def receive() -> dict[str, Any]:
        nonlocal read
        if read == len(chunks):
            return {"type": "http.disconnect"}
        read += 1
        return {"type": "http.request", "body": chunks[read - 1], "more_body": read < len(chunks)}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/jobs/4/cancel",
        "raw_path": b"/jobs/4/cancel",
        "query_string": b"",
        "root_path": "",
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
        "client": ("127.0.0.1", 1234),
        "server": ("127.0.0.1", 8000),
    }
    await app(scope, receive, send)
    return status, read


MIB = [b"x" * 65_536] * 16  # a 1 MiB body in 64 KiB chunks


@pytest.mark.parametrize(
    ("headers", "chunks", "expected", "most_read"),
    [
        # No token in a header: the form is read, but never past MAX_BODY.
        ({**_FORM, "content-length": str(2**20)}, MIB, 413, 0),
        (_FORM, MIB, 413, 1),  # no Content-Length (chunked): read to the cap only
        ({**_FORM, "content-length": "10"}, MIB, 413, 1),  # a Content-Length that lied
        ({"content-type": "application/json"}, MIB, 403, 0),  # not a form: not read
        # A wrong token in the header: refused without reading the body.
        ({**_FORM, "authorization": "Bearer wrong"}, MIB, 403, 0),
        # The right token in the header: the body is not read either.
        ({**_FORM, **{k.lower(): v for k, v in _BEARER.items()}}, MIB, 303, 0),
        ({**_FORM}, [f"token={TOKEN}".encode()], 303, 1),
    ],
    ids=[
        "declared-large",
        "chunked",
        "lying-length",
        "not-a-form",
        "wrong-bearer",
        "right-bearer",
        "small-form",
    ],
)
@pytest.mark.anyio
async def test_an_action_reads_no_body_past_the_cap_and_none_after_a_header_token(
    store: FakeStore,
    headers: dict[str, str],
    chunks: list[bytes],
    expected: int,
    most_read: int,
) -> None:
    """An unauthenticated 300 MiB POST was read whole before its 403."""
    from jobsched_dashboard._limits import MAX_BODY

    assert len(MIB[0]) > MAX_BODY
    app = create_app(store, token=TOKEN, allowed_hosts=None)
    status, read = await _post(app, headers, chunks)
    assert (status, read) == (expected, most_read)
    assert store.cancelled == ([4] if expected == 303 else [])


# ── serve ───────────────────────────────────────────────────────────────────


def test_serve_refuses_bad_input_before_serving(tmp_path: Any) -> None:
    """A bad port, an unknown scheme or a store that cannot open fail at once, in one line."""
    from jobsched_dashboard import serve

    with pytest.raises(ValueError, match="port must be an integer from 0 to 65535"):
        serve(f"sqlite:///{tmp_path}/jobs.db", port=70000)
    with pytest.raises(StoreNotFoundError):
        serve("nosuch://x")
    with pytest.raises(StoreUnavailableError, match="does not exist"):
        serve(f"sqlite:///{tmp_path}/missing/folder/jobs.db")


def test_is_loopback() -> None:
    from jobsched_dashboard._serve import is_loopback

    assert all(map(is_loopback, ["127.0.0.1", "::1", "localhost", "127.0.0.2"]))
    assert not any(map(is_loopback, ["0.0.0.0", "192.168.1.4", "example.org"]))


def test_an_own_id_shows_as_given_at_submit() -> None:
    """A job submitted with ``job_id=`` is listed and titled by that id, read
    from its payload without unpickling; a payload that does not carry a
    text hashing to the row's number shows the number."""
    import pickle

    import jobsched as js
    from jobsched._jobs._ids import own_number

    s = FakeStore()
    job = js.FunctionJob(greet, ("x",), name="receipt")
    job._set_own_id("receipt-<42>")
    number = own_number("receipt-<42>")
    s.add_job(stored(number, JobStatus.PENDING, name="receipt", payload=b"P" + pickle.dumps(job)))
    other = js.FunctionJob(greet, ("receipt-43",), name="forged")
    other._set_own_id("receipt-44")
    forged = own_number("receipt-45")  # a row whose payload names another id
    s.add_job(stored(forged, JobStatus.PENDING, name="forged", payload=b"P" + pickle.dumps(other)))
    with client(s) as c:
        listed = c.get("/jobs").text
        page = c.get(f"/jobs/{number}").text
    assert "receipt-&lt;42&gt;" in listed and "receipt-<42>" not in listed
    assert "<title>receipt receipt-&lt;42&gt;" in page
    # No text in its payload hashes to the forged row's number: the number shows.
    assert f"job-{forged}" in listed and "receipt-44" not in listed
