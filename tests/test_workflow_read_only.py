"""Workflows on a PostgreSQL database that refuses writes for a while
(``default_transaction_read_only``, sessions ended: tests/test_postgres_read_only.py
says how): ``enqueue_workflow`` waits and succeeds once the database takes
writes again, or raises ``StoreUnavailableError`` after the link's patience;
either way the store holds all of the workflow or none of it, and the
scheduler goes on. Progress writes ride the outage without ending the member.
"""

from __future__ import annotations

import logging

import anyio
import flow_jobs as fj
import psycopg
import pytest
import test_postgres_read_only as ro

import jobsched as js
from jobsched._engine._link import _progress, _timing

pytestmark = [pytest.mark.anyio, pytest.mark.postgres, pytest.mark.timeout(120)]

NO_RETRY = js.RetryPolicy(max_retries=0)

# A database of the test's own, made with the store's schema; backoffs kept
# short (tests/test_postgres_read_only.py).
anyio_backend, url, created, quick_backoff = ro.anyio_backend, ro.url, ro.created, ro.quick_backoff


def call(func: object, *args: object) -> js.FunctionJob[object]:
    return js.FunctionJob(func, args=args, retry=NO_RETRY)  # type: ignore[arg-type]


def pair() -> tuple[js.Workflow, js.Job]:
    wf = js.Workflow("frozen")
    a = wf.add(call(fj.add, 1, 2))
    b = wf.add(call(fj.same, js.result_of(a)), depends_on=[js.After(a, on_failure="run")])
    return wf, b


def rows(url: str) -> tuple[int, int, int]:
    """The store's jobs, edges and workflows, read on a connection of the test's own."""
    with psycopg.connect(url, autocommit=True) as conn:
        got = conn.execute(
            "SELECT (SELECT count(*) FROM jobsched_jobs), (SELECT count(*) FROM jobsched_deps), "
            "(SELECT count(*) FROM jobsched_workflows)"
        ).fetchone()
    assert got is not None
    return got[0], got[1], got[2]


def progress_in(url: str, job_id: str) -> tuple[float | None, str | None]:
    """A job's progress as the store holds it (this process's job has its own at once)."""
    with psycopg.connect(url, autocommit=True) as conn:
        got = conn.execute(
            "SELECT progress, progress_message FROM jobsched_jobs WHERE id = %s",
            (int(job_id.removeprefix("job-")),),
        ).fetchone()
    assert got is not None
    return got[0], got[1]


async def warned(caplog: pytest.LogCaptureFixture) -> None:
    """Until the outage's one WARNING is logged."""
    with anyio.fail_after(60):
        while not any(ro.WARNED in line for line in ro.said(caplog, logging.WARNING)):  # noqa: ASYNC110
            await anyio.sleep(0.05)


async def test_a_workflow_refused_by_a_read_only_database_is_written_whole_later(
    created: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With its ids in hand (a block reserved by an earlier submit), given up
    after the patience: nothing of it is in the store; it stays queued, and
    once the database takes writes it is written whole and runs."""
    monkeypatch.setattr(_timing, "UNAVAILABLE_WAIT", 1.0)
    async with js.JobScheduler(store=ro.store_of(created)) as s:
        first = await s.enqueue(call(fj.add, 1))
        ro.read_only(created, True)
        wf, b = pair()
        with anyio.fail_after(60), pytest.raises(js.StoreUnavailableError, match="read-only"):
            await s.enqueue_workflow(wf)
        assert rows(created) == (1, 0, 0)
        ro.read_only(created, False)
        with anyio.fail_after(60):
            await s.flush()
        assert rows(created) == (3, 1, 1)
        assert await s.result(b.job_id, timeout=60) == 3
        assert (await s.workflow(b.workflow_id)).finished  # type: ignore[arg-type]
        assert await s.result(first, timeout=60) == 1


async def test_a_workflow_that_needs_new_ids_on_a_read_only_database_fails_at_once(
    created: str,
) -> None:
    """No ids in hand: the store's reservation is refused, the enqueue raises
    the store's read-only error, nothing is queued or written, and the same
    workflow is enqueued once the database takes writes."""
    async with js.JobScheduler(store=ro.store_of(created)) as s:
        await s.flush()
        ro.read_only(created, True)
        wf, b = pair()
        with anyio.fail_after(60), pytest.raises(js.StoreUnavailableError, match="read-only"):
            await s.enqueue_workflow(wf)
        assert rows(created) == (0, 0, 0)
        assert s.jobs() == []
        ro.read_only(created, False)
        with anyio.fail_after(60):
            while True:  # the first call may meet a session the flip just ended
                try:
                    workflow_id = await s.enqueue_workflow(wf)
                    break
                except js.StoreUnavailableError:
                    await anyio.sleep(0.05)
        assert rows(created) == (2, 1, 1)
        assert await s.result(b.job_id, timeout=60) == 3
        assert (await s.workflow(workflow_id)).finished


async def test_a_workflow_waits_out_a_short_read_only_period(
    created: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    async with js.JobScheduler(store=ro.store_of(created)) as s:
        await s.enqueue(call(fj.add, 1))  # its ids in hand: the enqueue waits on the write
        ro.read_only(created, True)
        wf, b = pair()
        done: list[str] = []

        async def enqueue() -> None:
            done.append(await s.enqueue_workflow(wf))

        async with anyio.create_task_group() as tg:
            tg.start_soon(enqueue)
            await warned(caplog)
            assert done == [] and rows(created) == (1, 0, 0)
            ro.read_only(created, False)
        assert rows(created)[1:] == (1, 1)
        assert await s.result(b.job_id, timeout=60) == 3
        info = await s.workflow(done[0])
        assert info.finished and info.size == 2
    assert ro.said(caplog, logging.ERROR) == []


#: Set by the test (in its loop): the job below reports progress until GO.
GO: anyio.Event | None = None
REPORTING: anyio.Event | None = None


async def report_until_go() -> str:
    assert GO is not None and REPORTING is not None
    step = 0
    while not GO.is_set():
        step += 1
        js.current_job().progress(min(step / 1000, 0.9), f"step {step}")
        REPORTING.set()
        await anyio.sleep(0.05)
    js.current_job().progress(1.0, "done")
    return "done"


async def test_progress_writes_ride_a_read_only_period(
    created: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writes refused while the database is read-only are retried with the
    newest values; the member and its job go on, and nothing logs an error."""
    global GO, REPORTING
    GO, REPORTING = anyio.Event(), anyio.Event()
    monkeypatch.setattr(_progress, "EVERY", 0.2)
    caplog.set_level(logging.INFO)
    async with js.JobScheduler(store=ro.store_of(created)) as s:
        job_id = s.submit(call(report_until_go))
        with anyio.fail_after(60):
            await REPORTING.wait()
            while progress_in(created, job_id) == (None, None):  # noqa: ASYNC110
                await anyio.sleep(0.05)
        ro.read_only(created, True)
        await warned(caplog)
        with anyio.fail_after(60):
            before = progress_in(created, job_id)
            await anyio.sleep(1.0)  # progress writes meet the read-only database
            assert progress_in(created, job_id) == before  # none got in
        ro.read_only(created, False)
        with anyio.fail_after(60):
            while progress_in(created, job_id) == before:  # noqa: ASYNC110
                await anyio.sleep(0.05)
        GO.set()
        assert await s.result(job_id, timeout=60) == "done"
        assert progress_in(created, job_id) == (1.0, "done")
        assert await s.result(s.submit(call(fj.add, 4)), timeout=60) == 4
    assert ro.said(caplog, logging.ERROR) == []
