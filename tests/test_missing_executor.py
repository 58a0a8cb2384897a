"""A worker that lacks an executor plugin never claims that executor's jobs,
and tells its operator: one WARNING per executor name (not per job, not per
look) naming the executor, how many jobs wait and what to install; told
again once it was resolved and comes back, or after EXECUTORS_REPEAT.

On SQLite and PostgreSQL, under both anyio backends (on the real clock: the
stores work in threads). The missing plugin is faked by the registry of
entry points (``fake_entry_points``), as a worker installed without the
``[thread]`` extra would see it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import anyio
import pytest
from durable_jobs import Note, Sleeper, runs
from pg import SECRET

import jobsched as js
from jobsched._engine._link import _timing

pytestmark = pytest.mark.anyio

S = js.JobStatus


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)  # trio on the real clock: the stores work in threads


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def new_store(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], js.JobStore]:
    """Opens another member's store object on one store (a file, or a fresh schema).

    Built from the classes, not a URL: a test that fakes the entry points
    leaves the stores' out of the registry."""
    if request.param == "sqlite":
        from jobsched_sqlite import SQLiteStore

        path = tmp_path / "jobs.db"
        return lambda: SQLiteStore(f"sqlite:///{path}", secret=SECRET)
    from pg import schema_url

    from jobsched_postgres import PostgresStore

    url = schema_url(request.getfixturevalue("pg_session_database"))
    return lambda: PostgresStore(url, secret=SECRET)


@pytest.fixture
def only_async(fake_entry_points: list[Any]) -> None:
    """This process has the async executor installed, and no other."""
    fake_entry_points.extend(
        e for e in entry_points(group="jobsched.executors") if e.name == "async"
    )


def boom() -> None:
    raise ConnectionError("down")


class Looks:
    """Counts a member's looks for jobs on executors it lacks, and what each found."""

    def __init__(self, store: js.JobStore) -> None:
        self.found: list[dict[str, int]] = []
        self._waiters: list[tuple[int, anyio.Event]] = []
        real = store.waiting_for_executors

        async def counted(installed: Any) -> dict[str, int]:
            found = await real(installed)
            self.found.append(found)
            for target, event in self._waiters:
                if len(self.found) >= target:
                    event.set()
            return found

        store.waiting_for_executors = counted  # type: ignore[method-assign]

    async def more(self, n: int) -> None:
        event = anyio.Event()
        self._waiters.append((len(self.found) + n, event))
        with anyio.fail_after(60):
            await event.wait()


def warnings_about(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING and "wait for the executor" in r.getMessage()
    ]


async def submit(store: js.JobStore, *jobs: js.Job) -> list[str]:
    """Queue ``jobs`` from a producer, which needs none of their executors."""
    async with js.JobScheduler(store=store, num_workers=0) as p:
        ids = [p.submit(job) for job in jobs]
        await p.flush()
    return ids


async def test_the_store_counts_waiting_jobs_by_missing_executor(
    new_store: Callable[[], js.JobStore], tmp_path: Path
) -> None:
    """Ready, delayed, blocked and retry-waiting jobs count; finished ones do not."""
    log = str(tmp_path / "log")
    backing_off = anyio.Event()
    async with js.JobScheduler(store=new_store(), num_workers=2) as w:

        def listen(job: js.Job, old: js.JobStatus, new: js.JobStatus) -> None:
            if new is S.RETRY_WAIT:
                backing_off.set()

        w.add_listener(listen)
        w.submit(Sleeper(log, 0))
        w.submit(Note(log, "done"))
        retrying = w.submit(
            js.FunctionJob(
                boom, executor="thread", retry=js.RetryPolicy(max_retries=1, base_delay=600)
            )
        )
        with anyio.fail_after(60):
            await backing_off.wait()
            await w.flush()
        assert (await w.fetch(retrying)).status is S.RETRY_WAIT
    assert len(runs(log)) == 2
    await submit(
        new_store(),
        Sleeper(log, 0),
        js.FunctionJob(boom, executor="thread"),
        js.FunctionJob(boom, executor="gpu"),
        Note(log, "queued"),
    )
    store = new_store()
    await store.open()
    try:
        assert await store.waiting_for_executors(["async", "thread", "gpu"]) == {}
        assert await store.waiting_for_executors({"async"}) == {"thread": 3, "gpu": 1}
        assert await store.waiting_for_executors({"thread"}) == {"gpu": 1, "async": 1}
        assert await store.waiting_for_executors(()) == {"thread": 3, "gpu": 1, "async": 1}
    finally:
        await store.close()


async def test_delayed_and_blocked_jobs_count(new_store: Callable[[], js.JobStore]) -> None:
    store = new_store()
    async with js.JobScheduler(store=store, num_workers=0) as p:
        first = p.submit(js.FunctionJob(boom, executor="thread"), delay=600)
        p.submit(js.FunctionJob(boom, executor="thread"), depends_on=[first])
        await p.flush()
        assert await store.waiting_for_executors({"async"}) == {"thread": 2}


async def test_a_worker_warns_once_about_an_executor_it_lacks(
    new_store: Callable[[], js.JobStore],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    only_async: None,
) -> None:
    """Two thread jobs wait: one WARNING naming 'thread', the count and the extra,
    however many looks; the member runs its async jobs meanwhile; the thread
    jobs stay PENDING. Once none waits and one comes back, it warns again."""
    monkeypatch.setattr(_timing, "EXECUTORS_EVERY", 0.0)  # look on every pass
    caplog.set_level(logging.WARNING, logger="jobsched")
    log = str(tmp_path / "log")
    waiting = await submit(new_store(), Sleeper(log, 0), Sleeper(log, 0))
    store = new_store()
    looks = Looks(store)
    async with js.JobScheduler(store=store, num_workers=2) as s:
        await looks.more(3)
        ran = s.submit(Note(log, "async runs"))
        with anyio.fail_after(60):
            assert await s.result(ran) == "async runs"
        await looks.more(2)
        for job_id in waiting:
            job = await s.fetch(job_id)
            assert (job.status, job.attempts) == (S.PENDING, 0)
        assert looks.found[-1] == {"thread": 2}
        told = warnings_about(caplog)
        assert len(told) == 1, told
        assert "2 job(s) in the store" in told[0]
        assert "wait for the executor 'thread', which this member has not installed" in told[0]
        assert "(its executors: async)" in told[0]
        assert 'pip install "jobsched-core[thread]"' in told[0]
        # Resolved (the jobs went), then back: told again.
        for job_id in waiting:
            s.cancel(job_id)
        await s.flush()
        await looks.more(2)
        assert looks.found[-1] == {}
        assert len(warnings_about(caplog)) == 1
        await submit(new_store(), Sleeper(log, 0), js.FunctionJob(boom, executor="gpu"))
        await looks.more(2)
    told = warnings_about(caplog)
    assert len(told) == 3, told
    assert "1 job(s)" in told[1] and "'gpu'" in told[1]
    # Not one of this project's executors: how to provide one.
    assert "in the 'jobsched.executors' entry-point group" in told[1]
    assert "1 job(s)" in told[2] and "'thread'" in told[2]
    assert runs(log).keys() == {ran}


async def test_a_worker_repeats_the_warning_after_executors_repeat(
    new_store: Callable[[], js.JobStore],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    only_async: None,
) -> None:
    monkeypatch.setattr(_timing, "EXECUTORS_EVERY", 0.0)
    monkeypatch.setattr(_timing, "EXECUTORS_REPEAT", 0.0)
    caplog.set_level(logging.WARNING, logger="jobsched")
    await submit(new_store(), Sleeper(str(tmp_path / "log"), 0))
    store = new_store()
    looks = Looks(store)
    async with js.JobScheduler(store=store, num_workers=1) as s:
        del s
        await looks.more(3)
    # Every look that found the job told about it.
    assert len(warnings_about(caplog)) == sum(1 for found in looks.found if found) >= 3


async def test_no_warning_when_every_executor_is_installed(
    new_store: Callable[[], js.JobStore],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_timing, "EXECUTORS_EVERY", 0.0)
    caplog.set_level(logging.WARNING, logger="jobsched")
    log = str(tmp_path / "log")
    queued = await submit(new_store(), Sleeper(log, 0), Note(log, "a"))
    store = new_store()
    looks = Looks(store)
    async with js.JobScheduler(store=store, num_workers=2) as s:
        with anyio.fail_after(60):
            await s.join()
        await looks.more(2)
    assert runs(log).keys() == set(queued)
    assert looks.found and not any(looks.found)
    assert warnings_about(caplog) == []


async def test_the_default_store_has_no_such_jobs() -> None:
    """A store that does not implement the read stays quiet."""
    assert await js.JobStore.waiting_for_executors(None, ["async"]) == {}  # type: ignore[arg-type]
