"""The members level check of a rolling upgrade (plan section 4.4, Q5): while
a live worker of code older than workflows (its ``level`` NULL, or below the
store's ``workflow_level``) runs on the store, a producer refuses workflow
features (``enqueue_workflow``, a result marker, an ``After(on_failure="run")``
edge) with a ``SchedulerError`` naming it, and writes nothing; plain jobs
are never refused. The answer is cached per scheduler for ``LEVELS_EVERY``.

The old member is a row of the members list as such code leaves it.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import durable_store
import flow_jobs as fj
import pytest

import jobsched as js
from jobsched._engine._link import _levels
from jobsched.store import JobStore, Member

pytestmark = pytest.mark.anyio

OLD = "old-host:4242:cafe"
NO_RETRY = js.RetryPolicy(max_retries=0)


@pytest.fixture
def anyio_backend() -> str:
    # The check reads through the store, which works in threads (test_durable.py).
    return "asyncio"


#: A new store, one URL for the test's schedulers (tests/durable_store.py).
store_url = durable_store.store_url


def store_of(url: str) -> JobStore:
    from pg import SECRET

    return js.open_store(url, secret=SECRET)


def execute(url: str, sql: str, params: tuple[Any, ...] = ()) -> None:
    """A statement on a connection of the test's own (an old member's SQL)."""
    if url.startswith("sqlite"):
        conn = sqlite3.connect(url.removeprefix("sqlite:///"))
        try:
            conn.execute(sql.replace("%s", "?"), params)
            conn.commit()
        finally:
            conn.close()
        return
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.replace("members", "jobsched_members"), params)


async def old_member(
    url: str, *, workers: int = 4, level: int | None = None, ahead: float = 600.0
) -> None:
    """A member row as code before workflows writes it: live, level ``level``
    (seen ``ahead`` seconds ahead of the clock: live however long a loaded
    machine takes to read it)."""
    store = store_of(url)
    await store.open()
    try:
        now = time.time()
        await store.report_member(Member(OLD, workers, 0, now - 60, now + ahead))
    finally:
        await store.close()
    execute(url, "UPDATE members SET level = %s WHERE owner = %s", (level, OLD))


def call(func: Any, *args: Any, **options: Any) -> js.FunctionJob[Any]:
    return js.FunctionJob(func, args=args, retry=NO_RETRY, **options)


@asynccontextmanager
async def scheduler(url: str) -> AsyncIterator[js.JobScheduler]:
    async with js.JobScheduler(store=store_of(url)) as s:
        yield s


stored = durable_store.stored


def count_reads(store: JobStore, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times the store's members list is read: ``[n]``, counted on."""
    reads = [0]
    members = type(store).members

    async def counted(self: JobStore, **kw: Any) -> list[Member]:
        reads[0] += 1
        return await members(self, **kw)

    monkeypatch.setattr(type(store), "members", counted)
    return reads


def refused(info: pytest.ExceptionInfo[js.SchedulerError], level: str = "none") -> None:
    message = str(info.value)
    assert OLD in message and f"reports level {level}" in message, message
    assert "Upgrade every worker first" in message and "`jobsched members`" in message
    assert "Nothing was submitted" in message


def pair() -> js.Workflow:
    wf = js.Workflow("pair")
    a = wf.add(call(fj.add, 1, 2))
    wf.add(call(fj.add, 0), depends_on=[js.After(a, on_failure="run")])
    return wf


async def test_members_read_back_their_level(store_url: str) -> None:
    """A new member's row says the level its code writes; an old one's None."""
    await old_member(store_url)
    store = store_of(store_url)
    await store.open()
    try:
        now = time.time()
        await store.report_member(Member("new-host:1:beef", 4, 0, now, now))
        got = {m.owner: m.level for m in await store.members()}
    finally:
        await store.close()
    assert got == {OLD: None, "new-host:1:beef": store.workflow_level}


async def test_an_old_worker_refuses_a_workflow_and_nothing_is_written(store_url: str) -> None:
    await old_member(store_url)
    async with scheduler(store_url) as s:
        wf = pair()
        with pytest.raises(js.SchedulerError) as info:
            await s.enqueue_workflow(wf)
        refused(info)
        assert await stored(s) == (0, 0)
        assert s.jobs() == []


async def test_an_old_worker_refuses_markers_and_run_edges_but_not_plain_jobs(
    store_url: str,
) -> None:
    await old_member(store_url)
    async with scheduler(store_url) as s:
        up = await s.enqueue(call(fj.add, 1))
        down = await s.enqueue(call(fj.add, 2), depends_on=[up])
        assert await s.result(down, timeout=60) == 2
        with pytest.raises(js.SchedulerError) as info:
            s.submit(call(fj.same, js.result_of(up)))
        refused(info)
        with pytest.raises(js.SchedulerError) as info:
            await s.enqueue(call(fj.collect, js.results_of([up, down])))
        refused(info)
        with pytest.raises(js.SchedulerError) as info:
            s.submit(call(fj.add, 3), depends_on=[js.After(up, on_failure="run")])
        refused(info)
        # A plain After edge is no workflow feature.
        plain = s.submit(call(fj.add, 4), depends_on=[js.After(up)])
        assert await s.result(plain, timeout=60) == 4
        assert await stored(s) == (3, 0)


async def test_an_old_worker_refuses_features_in_the_callers_transaction(
    tmp_path: Path,
) -> None:
    """``connection=`` takes markers and "run" edges too: the same refusal,
    before the caller's transaction holds any row of the job (the check is
    the engine's, one for every store: SQLite shows it)."""
    store_url = f"sqlite:///{tmp_path / 'jobs.db'}"
    await old_member(store_url)
    conn = sqlite3.connect(tmp_path / "jobs.db")
    try:
        async with scheduler(store_url) as s:
            up = await s.enqueue(call(fj.add, 1))
            await s.result(up, timeout=60)
            with pytest.raises(js.SchedulerError) as info:
                await s.enqueue(call(fj.same, js.result_of(up)), connection=conn)
            refused(info)
            lenient = js.After(up, on_failure="run")
            with pytest.raises(js.SchedulerError) as info:
                s.submit(call(fj.add, 2), depends_on=[lenient], connection=conn)
            refused(info)
            plain = s.submit(call(fj.add, 3), depends_on=[up], connection=conn)
            conn.commit()
            assert await s.result(plain, timeout=60) == 3
            assert await stored(s) == (2, 0)
    finally:
        conn.close()


async def test_a_feature_works_once_the_old_worker_is_upgraded_or_gone(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The answer is kept for LEVELS_EVERY: refused until it is read again."""
    await old_member(store_url)
    async with scheduler(store_url) as s:
        store = s._backing.link.store  # type: ignore[union-attr]
        up = await s.enqueue(call(fj.add, 5))
        with pytest.raises(js.SchedulerError):
            await s.enqueue_workflow(pair())
        execute(store_url, "UPDATE members SET level = %s", (store.workflow_level,))
        with pytest.raises(js.SchedulerError):  # the cached answer
            await s.enqueue_workflow(pair())
        monkeypatch.setattr(_levels, "LEVELS_EVERY", 0.0)
        await s.enqueue_workflow(pair())
        assert await s.result(s.submit(call(fj.same, js.result_of(up))), timeout=60) == 5
        # Another old worker, then gone silent (dead): three missed reports.
        execute(store_url, "UPDATE members SET level = NULL WHERE owner = %s", (OLD,))
        with pytest.raises(js.SchedulerError):
            await s.enqueue_workflow(pair())
        execute(store_url, "UPDATE members SET seen_at = %s", (time.time() - 60,))
        await s.enqueue_workflow(pair())
        assert await stored(s) == (6, 2)


@pytest.mark.parametrize("how", ["producer", "older level", "newer level"])
async def test_which_members_count(store_url: str, how: str) -> None:
    """A producer runs nothing (0 workers); a level below the store's is old,
    one at or above it is not."""
    store = store_of(store_url)
    need = store.workflow_level
    assert need is not None
    if how == "producer":
        await old_member(store_url, workers=0)
    else:
        await old_member(store_url, level=need - 1 if how == "older level" else need + 1)
    async with scheduler(store_url) as s:
        if how == "older level":
            with pytest.raises(js.SchedulerError) as info:
                await s.enqueue_workflow(pair())
            refused(info, str(need - 1))
        else:
            await s.enqueue_workflow(pair())


async def test_a_store_without_levels_is_not_read(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``workflow_level`` None (a third party's store): no check, no read."""
    await old_member(store_url)
    store = store_of(store_url)
    monkeypatch.setattr(type(store), "workflow_level", None)
    reads = count_reads(store, monkeypatch)
    async with js.JobScheduler(store=store) as s:
        await s.enqueue_workflow(pair())
    assert reads == [0]


async def test_a_plain_submit_never_reads_the_members(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The answer is read once at start; a plain submit never reads it again
    (an ``enqueue`` with dependencies may: it reads when the answer is old)."""
    store = store_of(store_url)
    reads = count_reads(store, monkeypatch)
    monkeypatch.setattr(_levels, "LEVELS_EVERY", 0.0)
    async with js.JobScheduler(store=store) as s:
        at_start = reads[0]
        ids = [s.submit(call(fj.add, n)) for n in range(20)]
        ids.append(s.submit(call(fj.add, 20), depends_on=[ids[0]]))
        assert [await s.result(i, timeout=60) for i in ids] == list(range(21))
        assert reads[0] == at_start == 1


def test_jobsched_members_shows_levels_and_marks_an_old_worker(store_url: str) -> None:
    """The table names the old worker (level none) and says to upgrade it; a
    stale member is not marked; --json gives the level and state."""
    import anyio
    from test_cli import jobsched, ok

    async def fill() -> None:
        await old_member(store_url)
        store = store_of(store_url)
        await store.open()
        try:
            now = time.time()
            await store.report_member(Member("new-host:1:beef", 2, 1, now, now + 600))
            await store.report_member(Member("gone-host:1:dead", 2, 0, now - 600, now - 600))
        finally:
            await store.close()
        execute(
            store_url, "UPDATE members SET level = NULL WHERE owner = %s", ("gone-host:1:dead",)
        )

    anyio.run(fill)
    need = store_of(store_url).workflow_level
    out = ok("members", "--store", store_url)
    lines = {line.split()[0]: line for line in out.splitlines()[1:] if line.split()}
    assert " none " in lines[OLD] and lines[OLD].endswith("old: upgrade it"), out
    assert f" {need} " in lines["new-host:1:beef"] and lines["new-host:1:beef"].endswith("live")
    assert lines["gone-host:1:dead"].endswith("stale")
    assert f"need level {need} on every live worker" in out
    data = {m["owner"]: m for m in json.loads(ok("members", "--store", store_url, "--json"))}
    assert (data[OLD]["level"], data[OLD]["state"]) == (None, "old")
    assert (data["new-host:1:beef"]["level"], data["new-host:1:beef"]["state"]) == (need, "live")
    assert data["gone-host:1:dead"]["state"] == "stale"
    assert jobsched("members", "--store", "sqlite:////nonexistent/x.db").returncode == 1
