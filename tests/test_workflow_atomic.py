"""``JobStore.add_workflow`` on the SQLite and PostgreSQL stores (issue 37,
S5): all or nothing when the database fails part-way (a fault injected
after the jobs and edges are in, a value it cannot keep), one call and (on
SQLite) one group write for 10,000 jobs, and the workflow reads on the
jobs_workflow index. What every store shares is the conformance suite's
(jobsched.store.testing: test_workflow_store.py).

Runs on asyncio only: the stores work in threads (see test_durable.py).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import anyio
import both_stores
import pytest
from pg import SECRET, schema_url

import jobsched as js
from jobsched.store import OWN_ID_HEAD, JobDataError, JobStore, NewJob, NewWorkflow

pytestmark = pytest.mark.anyio

S = js.JobStatus
NOW = 1_700_000_000.0


# A store open on a fresh SQLite file or PostgreSQL schema (tests/both_stores.py).
anyio_backend, store = both_stores.anyio_backend, both_stores.store


def sqlite(store: JobStore) -> bool:
    return store.url.startswith("sqlite")


def execute(store: JobStore, sql: str) -> list[tuple[Any, ...]]:
    """A statement on a connection of the test's own to the store's database."""
    if sqlite(store):
        conn = sqlite3.connect(store.url.removeprefix("sqlite:///"))
        try:
            rows = conn.execute(sql).fetchall()
            conn.commit()
            return rows
        finally:
            conn.close()
    import psycopg

    with psycopg.connect(store.url, autocommit=True) as pg:
        cursor = pg.execute(sql)
        return cursor.fetchall() if cursor.description else []


def table(store: JobStore, name: str) -> str:
    return name if sqlite(store) else f"jobsched_{name}"


def rows_in(store: JobStore) -> tuple[int, int, int]:
    """(jobs, edges, workflows) the database holds."""
    return tuple(  # type: ignore[return-value]
        execute(store, f"SELECT count(*) FROM {table(store, t)}")[0][0]
        for t in ("jobs", "deps", "workflows")
    )


def new(job_id: int, after: tuple[int, ...] = (), name: str = "") -> NewJob:
    return NewJob(job_id, name or f"j{job_id}", "async", (0.0,), NOW, NOW, b"P",
                  depends_on=after)  # fmt: skip


def chain(workflow_id: int, first: int, n: int) -> NewWorkflow:
    jobs = [new(first)] + [new(i, after=(i - 1,)) for i in range(first + 1, first + n)]
    for job in jobs:
        job.workflow = workflow_id
    return NewWorkflow(workflow_id, f"w{workflow_id}", NOW, jobs)


FAULT = {
    # After the jobs and edges: the workflow's row is written last.
    "sqlite": [
        "CREATE TRIGGER wf_fault BEFORE INSERT ON workflows "
        "BEGIN SELECT RAISE(ABORT, 'injected fault'); END"
    ],
    "postgres": [
        "CREATE FUNCTION wf_fault() RETURNS trigger LANGUAGE plpgsql AS "
        "$$ BEGIN RAISE EXCEPTION 'injected fault'; END $$",
        "CREATE TRIGGER wf_fault BEFORE INSERT ON jobsched_workflows "
        "FOR EACH ROW EXECUTE FUNCTION wf_fault()",
    ],
}


async def test_a_fault_after_the_jobs_and_edges_leaves_nothing(store: JobStore) -> None:
    await store.add([new(1)], NOW)
    kind = "sqlite" if sqlite(store) else "postgres"
    for statement in FAULT[kind]:
        execute(store, statement)
    with pytest.raises(Exception, match="injected fault") as raised:
        await store.add_workflow(chain(100, 2, 500), NOW)
    assert not isinstance(raised.value, js.StoreUnavailableError)
    assert rows_in(store) == (1, 0, 0)
    assert await store.workflow(100) is None and await store.fetch(2) is None
    execute(store, f"DROP TRIGGER wf_fault{'' if sqlite(store) else ' ON jobsched_workflows'}")
    assert await store.add_workflow(chain(100, 2, 500), NOW) == []
    assert rows_in(store) == (501, 499, 1)


async def test_a_value_the_store_cannot_keep_mid_way_leaves_nothing(store: JobStore) -> None:
    flow = chain(100, 1, 300)
    flow.jobs[-1].name = "half \ud800 a pair"
    with pytest.raises(JobDataError):
        await store.add_workflow(flow, NOW)
    assert rows_in(store) == (0, 0, 0)


async def test_on_sqlite_a_failed_workflow_undoes_only_itself_in_its_group(
    tmp_path: Path,
) -> None:
    """The group commit's savepoint: an add that joins the workflow's group
    commits; the workflow (a held own id) is undone alone."""
    store = js.open_store(f"sqlite:///{tmp_path / 'jobs.db'}")
    await store.open()
    try:
        await store.add([NewJob(-7, "held", "async", (0.0,), NOW, NOW, b"P", own_id=True)], NOW)
        base = store.reserve_ids(10)
        flow = chain(100, base, 3)
        flow.jobs[1].id, flow.jobs[1].own_id = -7, True
        flow.jobs[2].depends_on = (-7,)
        group = store._group  # type: ignore[attr-defined]
        groups, writes = group.groups, group.writes
        results: dict[str, Any] = {}

        async def add_workflow() -> None:
            try:
                await store.add_workflow(flow, NOW)
            except ValueError as exc:
                results["workflow"] = exc

        async def add() -> None:
            results["add"] = await store.add([new(base + 5)], NOW)

        async with anyio.create_task_group() as tg:
            tg.start_soon(add_workflow)
            tg.start_soon(add)
        assert (group.groups, group.writes) == (groups + 1, writes + 2)
        assert "-7" in str(results["workflow"]) and results["add"] == []
        assert await store.fetch(base + 5) is not None
        assert await store.fetch(base) is None and await store.workflow(100) is None
    finally:
        await store.close()


async def test_ten_thousand_jobs_are_one_call_and_on_sqlite_one_group_write(
    store: JobStore,
) -> None:
    """A fan-out of 9,999 and a fan-in of all of them."""
    jobs = [new(i) for i in range(1, 10_000)]
    jobs.append(new(10_000, after=tuple(range(1, 10_000))))
    for job in jobs:
        job.workflow = 7
    group = getattr(store, "_group", None)
    before = (group.groups, group.writes) if group is not None else None
    assert await store.add_workflow(NewWorkflow(7, "fan", NOW, jobs), NOW) == []
    if group is not None:
        assert before is not None
        assert (group.groups, group.writes) == (before[0] + 1, before[1] + 1)
    assert rows_in(store) == (10_000, 9_999, 1)
    graph = await store.workflow_graph(7)
    assert graph is not None and graph.truncated and len(graph.jobs) == 2_000


async def test_the_workflow_reads_use_the_workflow_index(store: JobStore) -> None:
    """Among 40 workflows of 250 jobs: each read of one workflow's jobs
    (counts, graph, a cancel's) is an index read by jobs_workflow."""
    base = store.reserve_ids(10_000)
    for n in range(40):
        await store.add_workflow(chain(n + 1, base + 250 * n, 250), NOW)
    if sqlite(store):
        from jobsched_sqlite import _workflows as sql

        statements = [
            (sql.COUNTS.format("?, ?"), (3, 4)),
            (sql.GRAPH, (3, 2001)),
            (sql.OPEN, (3,)),
        ]
        conn = sqlite3.connect(store.url.removeprefix("sqlite:///"))
        try:
            for statement, params in statements:
                plan = str(conn.execute(f"EXPLAIN QUERY PLAN {statement}", params).fetchall())
                assert "jobs_workflow" in plan, (statement, plan)
            # The list's counts read the index alone (status is in it), no row.
            counts = str(conn.execute(f"EXPLAIN QUERY PLAN {statements[0][0]}", (3, 4)).fetchall())
            assert "COVERING INDEX jobs_workflow" in counts, counts
        finally:
            conn.close()
        return
    import psycopg

    from jobsched_postgres import _workflows as pg

    with psycopg.connect(store.url, autocommit=True) as conn:
        # VACUUM as autovacuum would (off on the test server): the pages all
        # visible, which an index-only read needs to skip the heap.
        conn.execute("VACUUM (ANALYZE) jobsched_jobs")
        for statement, params in [
            (pg.COUNTS, ([3, 4],)),
            (pg.GRAPH, (OWN_ID_HEAD, 3, 2001)),
            (pg.OPEN, (3,)),
        ]:
            plan = "\n".join(r[0] for r in conn.execute(f"EXPLAIN {statement}", params).fetchall())
            assert "jobsched_jobs_workflow" in plan, (statement, plan)
        # The list's counts read the index alone (status is INCLUDEd), no heap.
        rows = conn.execute(f"EXPLAIN (ANALYZE, COSTS OFF) {pg.COUNTS}", ([3, 4],)).fetchall()
        plan = "\n".join(r[0] for r in rows)
        assert "Index Only Scan using jobsched_jobs_workflow" in plan, plan
        assert "Heap Fetches: 0" in plan, plan


@pytest.mark.postgres
async def test_on_postgres_an_own_id_another_member_adds_meanwhile_fails_it(
    pg_session_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another member commits a job of the same own id after the workflow's
    look for held ids, before its COPY: the COPY's conflict is the same
    ValueError, and nothing of the workflow stays."""
    from jobsched_postgres import _sql

    store = js.open_store(schema_url(pg_session_database), secret=SECRET)
    await store.open()
    try:
        plan = _sql.plan

        def meanwhile(*args: Any) -> Any:
            execute(
                store,
                "INSERT INTO jobsched_jobs (id, name, executor, status, k0, k1, k2, run_at, "
                "submitted_at, payload) VALUES (-7, 'theirs', 'async', 'pending', 0, 0, 0, 0, "
                "0, 'P')",
            )
            return plan(*args)

        monkeypatch.setattr(_sql, "plan", meanwhile)
        flow = chain(100, 1, 3)
        flow.jobs[1].id, flow.jobs[1].own_id = -7, True
        flow.jobs[2].depends_on = (-7,)
        with pytest.raises(ValueError, match="-7"):
            await store.add_workflow(flow, NOW)
        monkeypatch.undo()
        theirs = await store.fetch(-7)
        assert theirs is not None and theirs.name == "theirs"
        assert rows_in(store) == (1, 0, 0)
    finally:
        await store.close()
