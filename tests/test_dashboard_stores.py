"""The dashboard on the real stores, SQLite and PostgreSQL, without a browser:
a scheduler runs jobs that complete, fail and wait, then every page renders
what the store holds, and a cancel with the token reaches the store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from dashboard_jobs import Work
from starlette.testclient import TestClient

import jobsched as js
from jobsched_dashboard import create_app

TOKEN = "t0ken"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def url(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'jobs.db'}"
        return
    from pg import SECRET, schema_url

    monkeypatch.setenv("JOBSCHED_SECRET", SECRET)
    yield schema_url(request.getfixturevalue("pg_session_database"))


def _run(url: str) -> dict[str, str]:
    async def main() -> dict[str, str]:
        never = js.RetryPolicy(max_retries=0)
        async with js.JobScheduler(store=url) as s:
            ids = {
                "done": s.submit(Work("tidy-up")),
                "failed": s.submit(Work("flaky <b>call</b>", failures=-1, retry=never)),
                "waiting": s.submit(Work("later"), delay=3600),
            }
            await s.flush()
            with anyio.fail_after(60):
                while (await s.fetch(ids["failed"])).status is not js.JobStatus.FAILED:  # noqa: ASYNC110
                    await anyio.sleep(0.05)
                while (await s.fetch(ids["done"])).status is not js.JobStatus.COMPLETED:  # noqa: ASYNC110
                    await anyio.sleep(0.05)
        return ids

    return anyio.run(main)


def _status(url: str, job_id: str) -> js.JobStatus:
    async def main() -> js.JobStatus:
        store = js.open_store(url)
        await store.open()
        try:
            row = await store.fetch(int(job_id.split("-")[1]))
        finally:
            await store.close()
        assert row is not None
        return row.status

    return anyio.run(main)


def test_pages_and_a_cancel_on_a_real_store(url: str) -> None:
    ids = _run(url)
    with TestClient(create_app(url, token=TOKEN)) as client:
        page = client.get("/")
        assert page.status_code == 200
        text = page.text
        assert "tidy-up" in text and "later" in text
        # The failure is listed with its error, escaped.
        assert "flaky &lt;b&gt;call&lt;/b&gt;" in text and "<b>call</b>" not in text
        assert "boom (attempt 1)" in text
        number = ids["waiting"].split("-")[1]
        job = client.get(f"/jobs/{number}")
        assert job.status_code == 200 and "later" in job.text
        refused = client.post(f"/jobs/{number}/cancel", data={"token": "wrong"})
        assert refused.status_code == 403
        assert _status(url, ids["waiting"]) is js.JobStatus.PENDING
        done = client.post(f"/jobs/{number}/cancel", data={"token": TOKEN}, follow_redirects=False)
        assert done.status_code == 303
    assert _status(url, ids["waiting"]) is js.JobStatus.CANCELLED


def _exists(url: str) -> bool | None:
    return anyio.run(js.open_store(url).exists)


def test_the_dashboard_never_creates_a_store(url: str) -> None:
    """On a URL with no jobsched store (no file, an empty file, a PostgreSQL
    schema without the tables) every page is a 503 naming the fix, and the
    store is left uncreated; once a scheduler makes it, the pages show it."""
    path = Path(url.removeprefix("sqlite:///")) if url.startswith("sqlite:") else None
    with TestClient(create_app(url, token=TOKEN)) as client:
        for empty_file in (False, True) if path is not None else (False,):
            if empty_file:
                assert path is not None
                path.touch()
            for page in ("/", "/live", "/jobs", "/jobs/1", "/members", "/schedules"):
                answer = client.get(page)
                assert answer.status_code == 503, (page, answer.text)
                assert "No jobsched store" in answer.text
                assert "a worker or a scheduler creates" in answer.text
            assert client.post("/jobs/1/cancel", data={"token": TOKEN}).status_code == 503
            assert _exists(url) is False
            if path is not None:
                assert path.exists() is empty_file
        ids = _run(url)  # a scheduler creates the store: the same app now shows it
        page = client.get("/")
        assert page.status_code == 200 and "tidy-up" in page.text
        assert client.get(f"/jobs/{ids['done'].split('-')[1]}").status_code == 200


def test_job_list_filters_pages_and_bulk_retry_on_a_real_store(url: str) -> None:
    """The job list filters by status and name on the store, a job's page shows
    its fields and result read from the pickles, and a bulk retry requeues the
    failed job of the filter and no other."""
    ids = _run(url)
    failed = ids["failed"].split("-")[1]
    done = ids["done"].split("-")[1]
    with TestClient(create_app(url, token=TOKEN)) as client:
        listed = client.get("/jobs?status=failed")
        assert listed.status_code == 200
        assert f'<tr data-job="{failed}">' in listed.text
        assert f'<tr data-job="{done}">' not in listed.text
        by_name = client.get("/jobs", params={"name": "tidy-up"}).text
        assert f'<tr data-job="{done}">' in by_name and f'data-job="{failed}"' not in by_name
        job = client.get(f"/jobs/{done}").text
        assert "dashboard_jobs.Work" in job and "<th>seconds</th>" in job
        assert '<pre id="result">&#39;ok&#39;</pre>' in job
        assert client.get(f"/jobs?id=job-{done}", follow_redirects=False).headers["location"] == (
            f"/jobs/{done}"
        )
        bulk = client.post(
            "/jobs/retry?status=failed&name=tidy-up", data={"token": TOKEN}, follow_redirects=False
        )
        assert bulk.headers["location"].endswith("n=0&more=0")
        bulk = client.post(
            "/jobs/retry?status=failed", data={"token": TOKEN}, follow_redirects=False
        )
        assert bulk.headers["location"].endswith("n=1&more=0")
    assert _status(url, ids["failed"]) is js.JobStatus.PENDING
    assert _status(url, ids["done"]) is js.JobStatus.COMPLETED


def test_members_report_themselves_and_leave_when_they_stop(url: str) -> None:
    """A running scheduler appears in the members list (host, pid, workers) and
    the members page; it leaves the list when it stops; reports forget members
    silent for MEMBERS_KEEP."""
    import os
    import socket

    from jobsched.store import MEMBERS_KEEP, Member

    async def members() -> list[Member]:
        store = js.open_store(url)
        await store.open()
        try:
            return await store.members()
        finally:
            await store.close()

    async def main() -> list[Member]:
        async with js.JobScheduler(store=url, num_workers=3):
            with anyio.fail_after(60):
                while not (seen := await members()):  # noqa: ASYNC110
                    await anyio.sleep(0.1)
            with TestClient(create_app(url)) as client:
                page = client.get("/members").text
            assert f"{socket.gethostname()}:{os.getpid()}" in page and ">live<" in page
        return seen

    (member,) = anyio.run(main)
    assert member.host == socket.gethostname() and member.pid == os.getpid()
    assert member.workers == 3 and 0 <= member.busy <= 3
    assert member.started_at <= member.seen_at
    assert anyio.run(members) == []

    async def prune() -> list[Member]:
        store = js.open_store(url)
        await store.open()
        try:
            await store.report_member(Member("old:1:00000000", 2, 0, 0.0, 10.0))
            await store.report_member(Member("new:2:00000000", 2, 1, 0.0, 10.0 + MEMBERS_KEEP + 1))
            return await store.members()
        finally:
            await store.close()

    assert [m.owner for m in anyio.run(prune)] == ["new:2:00000000"]


def test_a_failing_member_report_never_stops_the_heartbeat(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A store that fails the members report in a way of its own costs one
    WARNING; the scheduler goes on running jobs."""
    store = js.open_store(f"sqlite:///{tmp_path / 'jobs.db'}")
    tried = anyio.Event()
    calls = []

    async def broken(member: object) -> None:
        calls.append(member)
        tried.set()
        raise RuntimeError("no members here")

    store.report_member = broken  # type: ignore[method-assign]

    async def main() -> js.JobStatus:
        async with js.JobScheduler(store=store) as s:
            with anyio.fail_after(60):
                await tried.wait()
            job_id = s.submit(Work("after the report"))
            with anyio.fail_after(60):
                while (await s.fetch(job_id)).status is not js.JobStatus.COMPLETED:  # noqa: ASYNC110
                    await anyio.sleep(0.05)
            return (await s.fetch(job_id)).status

    assert anyio.run(main) is js.JobStatus.COMPLETED
    warnings = [r for r in caplog.records if "members list" in r.getMessage()]
    assert len(warnings) == 1 and warnings[0].levelname == "WARNING"
    assert len(calls) >= 1


def test_a_member_that_stops_during_a_lease_renewal_still_leaves_the_list(
    tmp_path: Path,
) -> None:
    """The heartbeat forgets its member at stop also when the stop comes
    while a renewal is on its way (it left its loop without a word: the
    member stayed listed, stale, until MEMBERS_KEEP)."""
    from jobsched._engine._link import StoreLink

    store = js.open_store(f"sqlite:///{tmp_path / 'jobs.db'}")
    in_renewal, renewal_may_end = anyio.Event(), anyio.Event()
    forgotten: list[str] = []
    extend, forget = store.extend, store.forget_member

    async def slow_extend(owner: str, ids: object, until: float) -> list[int]:
        in_renewal.set()
        await renewal_may_end.wait()
        return await extend(owner, ids, until)  # type: ignore[arg-type]

    async def forget_member(owner: str) -> None:
        forgotten.append(owner)
        await forget(owner)

    store.extend = slow_extend  # type: ignore[method-assign]
    store.forget_member = forget_member  # type: ignore[method-assign]

    class Host:
        num_workers = 1

        def held(self) -> list[int]:
            return [1]  # a job the renewal is for

        def cancel_held(self, ids: object) -> None:
            pass

        def stale_claims(self) -> list[int]:
            return []  # nothing claimed ahead of the workers

        def deferred(self) -> list[tuple[int, float, str]]:
            return []  # no job it could not load

        def executor_names(self) -> tuple[str, ...]:
            return ("async",)  # what its report names

    async def main() -> None:
        await store.open()
        try:
            host: Any = Host()  # the link's Host protocol, in part
            link = StoreLink(store, host, 0)
            async with anyio.create_task_group() as tg:
                tg.start_soon(link.heartbeat)
                with anyio.fail_after(60):
                    await in_renewal.wait()
                link.close()  # the stop, while the renewal is on its way
                renewal_may_end.set()
            assert forgotten == [link.owner]
        finally:
            await store.close()

    anyio.run(main)
