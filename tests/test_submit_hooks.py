"""Submit hooks and ``Job.headers``: what integrations (jobsched-otel) attach to a job at
submit travels with it, through a durable store's row too."""

from __future__ import annotations

import contextvars
import copy
import pickle
import threading
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from sample_jobs import Ok

import jobsched as js

S = js.JobStatus
Make = Callable[..., js.JobScheduler]

request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="none")


def tag_request(job: js.Job) -> None:
    """A submit hook: the submitting context's request id, into the job's headers."""
    job.headers = {**(job.headers or {}), "request": request_id.get()}


def test_headers_read_back_beside_the_other_options() -> None:
    """headers start None, read back as set, and don't disturb deadline, tenant or rate_key."""
    job = Ok(deadline=5.0, tenant="a", rate_key="k")
    assert job.headers is None
    job.headers = {"traceparent": "00-ab-cd-01"}
    assert job.headers == {"traceparent": "00-ab-cd-01"}
    assert (job.deadline, job.tenant, job.rate_key) == (5.0, "a", "k")
    job.tenant = None
    job.deadline = None
    assert job.headers == {"traceparent": "00-ab-cd-01"}
    job.headers = None
    assert (job.deadline, job.tenant, job.rate_key, job.headers) == (None, None, "k", None)
    plain = Ok()
    plain.headers = {"a": "b"}
    assert (plain.deadline, plain.tenant, plain.rate_key) == (None, None, None)


def test_headers_are_a_jobs_own() -> None:
    """Two jobs with the same labels share label storage, never headers."""
    a, b = Ok(tenant="t"), Ok(tenant="t")
    a.headers = {"x": "1"}
    assert b.headers is None and b.tenant == "t"


@pytest.mark.parametrize("bad", [{"a": 1}, {1: "a"}, [("a", "b")], "a=b"])
def test_headers_must_be_str_pairs(bad: object) -> None:
    """Anything but a dict of str to str (or None) is refused, naming the value."""
    with pytest.raises(TypeError, match=r"headers must be a dict of str to str or None, got"):
        Ok().headers = bad  # type: ignore[assignment]


def test_headers_survive_a_pickle_and_a_copy() -> None:
    """Pickled (a durable store, the process executor) or copied, the headers come along."""
    job = Ok(7, tenant="t")
    job.headers = {"traceparent": "00-ab-cd-01"}
    for clone in (pickle.loads(pickle.dumps(job)), copy.copy(job)):
        assert clone.headers == {"traceparent": "00-ab-cd-01"} and clone.tenant == "t"


@pytest.mark.anyio
async def test_a_submit_hook_sees_the_job_before_it_runs(make_scheduler: Make) -> None:
    """The hook runs in submit, in the submitter's context; what it sets is there at run."""
    seen: dict[str, dict[str, str] | None] = {}

    def listener(job: js.Job, old: S, new: S) -> None:
        if new is S.RUNNING:
            seen[job.job_id] = job.headers

    async with make_scheduler() as s:
        s.add_submit_hook(tag_request)
        s.add_listener(listener)
        token = request_id.set("req-1")
        try:
            first = s.submit(Ok(1))
        finally:
            request_id.reset(token)
        s.remove_submit_hook(tag_request)
        second = s.submit(Ok(2))
        with anyio.fail_after(10):
            await s.join()
    assert seen == {first: {"request": "req-1"}, second: None}
    assert s.get(first).headers == {"request": "req-1"}


@pytest.mark.anyio
async def test_a_hook_that_raises_is_logged_and_the_job_runs(make_scheduler: Make, caplog) -> None:  # type: ignore[no-untyped-def]
    """A broken hook never refuses a job; the next hook still runs."""

    def broken(job: js.Job) -> None:
        raise RuntimeError("hook bug")

    async with make_scheduler() as s:
        s.add_submit_hook(broken)
        s.add_submit_hook(tag_request)
        job_id = s.submit(Ok(1))
        with anyio.fail_after(10):
            await s.join()
    assert s.get(job_id).status is S.COMPLETED
    assert s.get(job_id).headers == {"request": "none"}
    assert "submit hook" in caplog.text and "hook bug" in caplog.text


@pytest.mark.anyio
async def test_refused_jobs_are_not_shown_to_hooks(make_scheduler: Make) -> None:
    """A submit that fails its checks calls no hook."""
    calls: list[js.Job] = []
    s = make_scheduler()
    s.add_submit_hook(calls.append)
    with pytest.raises(js.UnknownJobError):
        s.submit(Ok(), depends_on=["job-nope"])  # no job can have this id
    assert calls == []


def test_hooks_and_listeners_can_be_removed_and_must_be_callable() -> None:
    """remove_* forgets a hook or listener (an unknown one is fine); a non-callable is refused."""
    s = js.JobScheduler()
    calls: list[js.Job] = []
    s.add_submit_hook(calls.append)
    s.remove_submit_hook(calls.append)
    s.remove_submit_hook(calls.append)
    s.submit(Ok())
    assert calls == []

    def listener(job: js.Job, old: S, new: S) -> None: ...

    s.add_listener(listener)
    s.remove_listener(listener)
    s.remove_listener(listener)
    assert not s._listeners
    with pytest.raises(TypeError, match="submit hook must be callable"):
        s.add_submit_hook("nope")  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_submit_threadsafe_runs_hooks_in_the_callers_context(make_scheduler: Make) -> None:
    """From another thread the hook sees that thread's context (a web request's, say)."""

    def submit_from_a_request() -> str:
        request_id.set("req-thread")
        return s.submit_threadsafe(Ok())

    async with make_scheduler() as s:
        s.add_submit_hook(tag_request)
        done: list[str] = []
        thread = threading.Thread(target=lambda: done.append(submit_from_a_request()))
        thread.start()
        await anyio.to_thread.run_sync(thread.join)
        with anyio.fail_after(10):
            await s.join()
    assert s.get(done[0]).headers == {"request": "req-thread"}


def test_headers_travel_through_a_durable_store(tmp_path: Path) -> None:
    """Submitted into a SQLite file by one scheduler, run by another: the headers are in the row."""
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    seen: list[tuple[str, dict[str, str] | None]] = []

    async def submit() -> str:
        s = js.JobScheduler(store=url)  # never started: stop() writes, then closes
        s.add_submit_hook(tag_request)
        request_id.set("req-stored")
        job_id = s.submit(Ok("stored"))
        await s.stop()
        return job_id

    async def run() -> None:
        async with js.JobScheduler(store=url) as s:
            s.add_listener(lambda job, old, new: seen.append((job.job_id, job.headers)))
            with anyio.fail_after(20):
                await s.join()

    job_id = anyio.run(submit)
    anyio.run(run)
    assert seen and all(entry == (job_id, {"request": "req-stored"}) for entry in seen)
