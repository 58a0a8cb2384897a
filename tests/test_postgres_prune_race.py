"""The PostgreSQL store's retention guard against an add racing it
(workflows-plan section 8): an add reads its upstreams FOR SHARE and writes
edges from them while a prune picks finished jobs with no edge to an
unfinished one. Each test holds the add's transaction open (a session of its
own, by ``_sql.add``) while the prune runs, so the prune reads the store
before the add's edges are there, and commits the add only once the prune
has finished or waits for the add's lock: whatever the server does, the
upstream is never deleted under its new dependent.
"""

from __future__ import annotations

import anyio
import pg_store
import psycopg
import pytest

import jobsched as js
from jobsched.store import NewJob, NewWorkflow, Outcome
from jobsched_postgres import PostgresStore
from jobsched_postgres import _sql as pg_sql
from jobsched_postgres import _workflows as pg_workflows

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]

NOW = 1_700_000_000.0
ALL = {"async": 99}
#: How long the test waits for the prune to finish or block (a loaded machine).
WAIT = 60


# The schema and the open store every test here uses (tests/pg_store.py).
anyio_backend, url, store = pg_store.anyio_backend, pg_store.url, pg_store.store


def new(job_id: int, *, after: tuple[int, ...] = (), run: tuple[int, ...] = ()) -> NewJob:
    return NewJob(job_id, f"j{job_id}", "async", (0.0,), NOW, NOW, b"P" + bytes([job_id % 256]),
                  depends_on=after, run_on_failure=run)  # fmt: skip


async def finished(store: PostgresStore, job_id: int, status: js.JobStatus) -> None:
    """``job_id`` added, claimed and ended ``status`` long ago."""
    await store.add([new(job_id)], NOW)
    (claim,) = await store.claim("m", 1, ALL, NOW, 30)
    error = None if status is js.JobStatus.COMPLETED else "E: x"
    await store.record("m", [Outcome(job_id, claim.attempt, status, NOW + 1, error=error)])


async def prune_during(store: PostgresStore, url: str, adding: psycopg.Connection) -> int:
    """A prune of every finished job, run while ``adding``'s transaction is
    open; the add committed once the prune returned or waits for a lock."""
    pruned: list[int] = []
    done = anyio.Event()

    async def prune() -> None:
        pruned.append(await store.prune(keep=0))
        done.set()

    with psycopg.connect(url, autocommit=True) as watch:
        async with anyio.create_task_group() as tg:
            tg.start_soon(prune)
            with anyio.fail_after(WAIT):
                while not done.is_set():
                    (waiting,) = watch.execute(
                        "SELECT count(*) FROM pg_stat_activity "
                        "WHERE datname = current_database() AND wait_event_type = 'Lock'"
                    ).fetchone()  # type: ignore[misc]
                    if waiting:
                        break
                    await anyio.sleep(0.01)
            await anyio.to_thread.run_sync(adding.commit)
    return pruned[0]


def rows(url: str, statement: str) -> list[tuple[object, ...]]:
    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute(statement).fetchall()


@pytest.mark.parametrize(
    ("status", "policy"),
    [(js.JobStatus.COMPLETED, "cancel"), (js.JobStatus.FAILED, "run")],
)
async def test_an_add_racing_a_prune_keeps_its_finished_upstream(
    store: PostgresStore, url: str, status: js.JobStatus, policy: str
) -> None:
    """Job 1 ended long ago; job 2, added after it, waits for nothing but
    reads its end when claimed: job 1 must stay, and job 3 (no dependent)
    goes."""
    await finished(store, 1, status)
    await finished(store, 3, js.JobStatus.COMPLETED)
    with psycopg.connect(url) as adding:
        dependent = new(2, after=(1,), run=(1,) if policy == "run" else ())
        assert pg_sql.add(adding, [dependent], NOW) == []  # uncommitted: job 1 held FOR SHARE
        pruned = await prune_during(store, url, adding)
    assert await store.fetch(1) is not None, "the prune deleted the upstream of a waiting job"
    assert pruned == 1 and await store.fetch(3) is None
    job = await store.fetch(2)
    assert job is not None and job.status is js.JobStatus.PENDING
    assert rows(url, "SELECT upstream, downstream FROM jobsched_deps") == [(1, 2)]
    # Once job 2 has ended, job 1 is free to go.
    (claim,) = await store.claim("m", 1, ALL, NOW + 5, 30)
    await store.record("m", [Outcome(2, claim.attempt, js.JobStatus.COMPLETED, NOW + 6)])
    assert await store.prune(keep=0) == 2
    assert rows(url, "SELECT id FROM jobsched_jobs") == []


async def test_a_workflow_added_racing_a_prune_keeps_its_outside_upstream(
    store: PostgresStore, url: str
) -> None:
    """add_workflow reads its upstreams outside the workflow as add does."""
    await finished(store, 1, js.JobStatus.COMPLETED)
    jobs = [new(2, after=(1,)), new(3, after=(2,))]
    for job in jobs:
        job.workflow = 7
    with psycopg.connect(url) as adding:
        pg_workflows.add_workflow(adding, NewWorkflow(7, "wf", NOW, jobs), NOW)
        await prune_during(store, url, adding)
    assert await store.fetch(1) is not None, "the prune deleted the upstream of a waiting job"
    assert sorted(rows(url, "SELECT upstream, downstream FROM jobsched_deps")) == [(1, 2), (2, 3)]
