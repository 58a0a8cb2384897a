"""Where a backlog's time goes on PostgreSQL (issue 34): the claim's reads and
writes, counted.

``python -m benchmarks._claim_plans READY [CHURN] [held] [--plan] [--json]``
makes a fresh database (:func:`benchmarks._postgres.database`), puts READY
ready jobs in it through the store's own ``add``, then runs CHURN jobs
through the store as a member whose queue is READY behind (default 50,000):
each round adds :data:`BATCH` jobs at the back, claims the :data:`BATCH` best
(the front), writes their completions, and prunes every ~1,000 outcomes as
a member does (keeping 10,000 finished). With ``held``, a session holds an
xid from before the churn to the end (an idle-in-transaction session: no
dead index entry can be marked, no dead row removed). The server's
autovacuum is whatever it is (off on this project's test server: the state
between two autovacuum naps).

What it prints is deterministic, not timed (the machine is shared): for the
claim of :data:`BATCH` the member would run next, ``EXPLAIN (ANALYZE,
BUFFERS, WAL)`` of the store's own statement (rolled back), as the member
runs it (from its bounds, see ``jobsched_postgres._frontier``) and from
the front (the claim of a member with no bound, which every claim was
before issue 34): the index entries the pick read, its buffers, the whole
statement's buffers and WAL records per claimed row; and the row versions
made dead per churned job. The mean milliseconds of each store call over
the churn's last half are printed too, as a rough guide.
``JOBSCHED_BENCH_SETUP`` (statements separated by ``;``) runs after the
store made its schema: the A/B of a schema change.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

import anyio

from benchmarks._postgres import database

BATCH = 64
_SECRET = "benchmark-secret"


def _new(job_id: int, key: float) -> Any:
    from jobsched.store import NewJob

    return NewJob(job_id, f"j{job_id}", "async", (0.0, key, 0.0), run_at=0.0,
                  submitted_at=0.0, payload=b"P")  # fmt: skip


async def churn(store: Any, ready: int, jobs: int) -> dict[str, float]:
    """The store's calls, mean ms each over the churn's last half."""
    import jobsched as js
    from jobsched.store import Outcome

    times: dict[str, list[float]] = {"add": [], "claim": [], "record": [], "prune": []}
    next_id = store.reserve_ids(ready + jobs + BATCH)
    key = 0.0
    for start in range(0, ready, 10_000):
        rows = [_new(next_id + i, key + i) for i in range(min(10_000, ready - start))]
        next_id, key = next_id + len(rows), key + len(rows)
        await store.add(rows, time.time())
    outcomes = 0
    half = jobs // BATCH // 2

    async def call(name: str, coro: Any) -> Any:
        t0 = time.perf_counter()
        out = await coro
        if n >= half:
            times[name].append(time.perf_counter() - t0)
        return out

    for n in range(jobs // BATCH):  # noqa: B007 (call reads it)
        rows = [_new(next_id + i, key + i) for i in range(BATCH)]
        next_id, key = next_id + BATCH, key + BATCH
        await call("add", store.add(rows, time.time()))
        claims = await call("claim", store.claim("m", BATCH, {"async": BATCH},
                                                 time.time(), 60.0))  # fmt: skip
        done = [Outcome(c.id, c.attempt, js.JobStatus.COMPLETED, time.time())
                for c in claims]  # fmt: skip
        await call("record", store.record("m", done))
        outcomes += len(done)
        if outcomes >= 1_000:
            outcomes = 0
            await call("prune", store.prune(10_000))
    return {k: 1e3 * sum(v) / len(v) for k, v in times.items() if v}


def nodes(plan: dict[str, Any]) -> list[dict[str, Any]]:
    """A JSON plan's node and every node under it."""
    out = [plan]
    for child in plan.get("Plans", ()):
        out += nodes(child)
    return out


def _buffers(node: dict[str, Any]) -> int:
    return int(node.get("Shared Hit Blocks", 0) + node.get("Shared Read Blocks", 0))


_ENTRIES = (
    "SELECT c.relname, pg_stat_get_xact_tuples_returned(c.oid) FROM pg_index i "
    "JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = 'jobsched_jobs'::regclass"
)


def explain(url: str, statement: str, params: dict[str, Any]) -> dict[str, Any]:
    """The statement's JSON plan as it ran (ANALYZE, BUFFERS, WAL), rolled back."""
    import psycopg

    with psycopg.connect(url) as conn:
        if os.environ.get("JOBSCHED_BENCH_GENERIC"):  # the plan a prepared statement settles on
            conn.execute("SET plan_cache_mode = force_generic_plan")
        # Once unexplained first: a session's first run compiles the counts'
        # trigger function, which a member's pooled connection did long ago.
        conn.execute(statement, params)
        conn.rollback()
        # The index entries each index gave the statement, dead ones too (a
        # plan counts only the rows that came out of a scan): the session's
        # counts not yet sent to the statistics, before and after.
        before = dict(conn.execute(_ENTRIES).fetchall())
        ((plan,),) = conn.execute(
            "EXPLAIN (ANALYZE, BUFFERS, WAL, FORMAT JSON) " + statement, params
        ).fetchall()
        after = conn.execute(_ENTRIES).fetchall()
        conn.rollback()
    plan[0]["Entries Read"] = {k: n - before.get(k, 0) for k, n in after if n > before.get(k, 0)}
    return plan[0]  # type: ignore[no-any-return]


def entries_read(url: str, statements: list[tuple[str, Any]]) -> dict[str, int]:
    """The index entries of the jobs table each index gave ``statements``
    (run in one transaction, rolled back), dead ones too."""
    import psycopg

    with psycopg.connect(url) as conn:
        before = dict(conn.execute(_ENTRIES).fetchall())
        for statement, params in statements:
            conn.execute(statement, params)
        after = conn.execute(_ENTRIES).fetchall()
        conn.rollback()
    return {k: n - before.get(k, 0) for k, n in after if n > before.get(k, 0)}


def look_statements(store: Any) -> dict[str, list[tuple[str, Any]]]:
    """A member's look for lost attempts, as its claim makes it every second
    (the read of the running rows, see ``jobsched_postgres._running``): the
    member's next one, from what its last look saw, and a new member's first."""
    from jobsched_postgres import _running

    state = store._running._state
    since = [(_running.SINCE, {"ids": state[0], "snapshot": state[1]})] if state else []
    return {"look": since, "first_look": [(_running.FIRST, None)]}


def heartbeat_figures(url: str, store: Any) -> dict[str, Any]:
    """A heartbeat of BATCH running jobs (the store's EXTEND): WAL records
    per row, and how many of its updates were HOT (no index entry written)."""
    import psycopg

    from jobsched_postgres._leases import EXTEND

    with psycopg.connect(url, autocommit=True) as conn:
        ids = [i for (i,) in conn.execute(
            "SELECT id FROM jobsched_jobs WHERE status = 'running' AND owner = 'hb'")]  # fmt: skip
        before = conn.execute(
            "SELECT pg_stat_get_xact_tuples_hot_updated('jobsched_jobs'::regclass)"
        ).fetchone()[0]  # type: ignore[index]
        conn.execute("BEGIN")
        ((plan,),) = conn.execute(
            "EXPLAIN (ANALYZE, WAL, FORMAT JSON) " + EXTEND, (60.0, ids, "hb")
        ).fetchall()
        hot = (
            conn.execute(
                "SELECT pg_stat_get_xact_tuples_hot_updated('jobsched_jobs'::regclass)"
            ).fetchone()[0]
            - before
        )  # type: ignore[index]
        conn.execute("ROLLBACK")
    top = plan[0]["Plan"]
    return {"rows": len(ids), "wal_per_row": top.get("WAL Records", 0) / max(1, len(ids)),
            "hot": hot}  # fmt: skip


def claim_figures(explained: dict[str, Any]) -> dict[str, Any]:
    """What a claim's plan read and wrote: the pick's index reads (per
    index: entries returned, loops), the pick's and the whole statement's
    buffers, rows claimed and WAL records per claimed row."""
    top = explained["Plan"]
    picked = next(n for n in nodes(top) if n.get("Subplan Name") == "CTE picked")
    claimed = next(n for n in nodes(top) if n.get("Subplan Name") == "CTE claimed")
    scans: dict[str, dict[str, int]] = {}
    for node in nodes(picked):
        if node.get("Relation Name") == "jobsched_jobs" or "Index Name" in node:
            name = node.get("Index Name", node["Node Type"])
            seen = scans.setdefault(name, {"rows": 0, "removed": 0, "buffers": 0})
            loops = node.get("Actual Loops", 1)
            seen["rows"] += node["Actual Rows"] * loops
            seen["removed"] += node.get("Rows Removed by Filter", 0) * loops
            seen["buffers"] += _buffers(node)
    rows = claimed["Actual Rows"]
    return {
        "entries_read": explained.get("Entries Read", {}),
        "scans": scans,
        "pick_buffers": _buffers(picked),
        "buffers": _buffers(top),
        "claimed": rows,
        "wal_records": top.get("WAL Records", 0),
        "wal_per_row": top.get("WAL Records", 0) / rows if rows else None,
        "ms": explained.get("Execution Time"),
    }


def claim_params(store: Any, bounded: bool) -> dict[str, Any]:
    """The parameters of the member's next claim of BATCH (``bounded``:
    from its bounds; else from the front)."""
    from jobsched_postgres._frontier import Frontier
    from jobsched_postgres._gate import Gate

    gate = Gate(store.key_ids, [])
    frontier = store._frontier if bounded else Frontier()
    return {
        "names": ["async"], "rooms": [BATCH], "limit": BATCH, "owner": "m2", "lease": 60.0,
        "now": time.time(), "starting": BATCH, **gate.params(),
        **frontier.params(gate, ["async"]),
    }  # fmt: skip


def table_figures(url: str, jobs: int) -> dict[str, Any]:
    """The jobs table's row versions made dead per churned job, dead tuples
    now, and the indexes' sizes in pages."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_force_next_flush()")
        upd, hot, dele, dead = conn.execute(
            "SELECT sum(n_tup_upd), sum(n_tup_hot_upd), sum(n_tup_del), sum(n_dead_tup) "
            "FROM pg_stat_user_tables"
        ).fetchone()  # type: ignore[misc]
        indexes = dict(
            conn.execute(
                "SELECT indexrelname, pg_relation_size(indexrelid) / 8192 "
                "FROM pg_stat_user_indexes WHERE relname = 'jobsched_jobs' ORDER BY 1"
            ).fetchall()
        )
    return {
        "dead_per_job": (upd + dele) / jobs, "hot_updates": hot, "dead_tuples": dead,
        "index_pages": indexes,
    }  # fmt: skip


def run(ready: int, jobs: int, held: bool = False) -> dict[str, Any]:
    """Every figure of one churn (see the module)."""
    os.environ.setdefault("JOBSCHED_SECRET", _SECRET)
    with database() as url:
        return anyio.run(_run, url, ready, jobs, held)


async def _run(url: str, ready: int, jobs: int, held: bool) -> dict[str, Any]:
    import contextlib

    import jobsched as js
    from benchmarks._pgserver import held_xid
    from jobsched_postgres._claim import CLAIM

    store = js.open_store(url, secret=_SECRET)
    await store.open()
    try:
        setup = os.environ.get("JOBSCHED_BENCH_SETUP")
        if setup:  # an experiment on the schema (an index dropped, a storage parameter)
            import psycopg

            with psycopg.connect(url, autocommit=True) as conn:
                for statement in filter(str.strip, setup.split(";")):
                    conn.execute(statement)
        with held_xid(url) if held else contextlib.nullcontext():
            means = await churn(store, ready, jobs)
            out: dict[str, Any] = {"ready": ready, "churned": jobs, "held": held}
            out["ms_per_call"] = means
            out["tables"] = table_figures(url, jobs)
            for name, statements in look_statements(store).items():
                out[name + "_entries"] = entries_read(url, statements)
            await store.claim("hb", BATCH, {"async": BATCH}, time.time(), 60.0)
            out["heartbeat"] = heartbeat_figures(url, store)
            for name, bounded in (("claim", True), ("claim_from_front", False)):
                plan = explain(url, CLAIM, claim_params(store, bounded))
                out[name] = claim_figures(plan)
                out[name + "_plan"] = plan
    finally:
        await store.close()
    return out


def _print(out: dict[str, Any], plans: bool) -> None:
    how = ", an xid held throughout" if out["held"] else ""
    print(f"ready {out['ready']:,}, churned {out['churned']:,}{how}")
    print("  mean ms per call, last half: " + ", ".join(
        f"{k} {v:.2f}" for k, v in out["ms_per_call"].items()))  # fmt: skip
    tables = out["tables"]
    print(f"  row versions made dead per job {tables['dead_per_job']:.2f}, dead tuples "
          f"{tables['dead_tuples']}, HOT updates {tables['hot_updates']}")  # fmt: skip
    print("  index pages: " + ", ".join(f"{k} {v}" for k, v in tables["index_pages"].items()))
    hb = out["heartbeat"]
    print(f"  a heartbeat of {hb['rows']} leases: {hb['wal_per_row']:.2f} WAL records a row, "
          f"{hb['hot']} HOT updates")  # fmt: skip
    for name in ("look", "first_look"):
        read = ", ".join(f"{k} {v}" for k, v in sorted(out[name + "_entries"].items()))
        print(f"  {name} for lost attempts, index entries read: {read}")
    for name in ("claim", "claim_from_front"):
        f = out[name]
        scans = "; ".join(
            f"{index}: {s['rows']} rows, {s['removed']} filtered, {s['buffers']} buffers"
            for index, s in f["scans"].items()
        )
        entries = ", ".join(f"{k} {v}" for k, v in sorted(f["entries_read"].items()))
        print(f"  {name}: claimed {f['claimed']}; index entries read: {entries}")
        print(f"    pick {f['pick_buffers']} buffers ({scans}); "
              f"statement {f['buffers']} buffers, {f['wal_records']} WAL records "
              f"({f['wal_per_row'] or 0:.2f} a row), {f['ms']:.1f} ms")  # fmt: skip
        if plans:
            print(json.dumps(out[name + "_plan"], indent=1))


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    result = run(int(args[0]), int(args[1]) if len(args) > 1 else 50_000, "held" in args[2:])
    if "--json" in sys.argv:
        figures = {k: v for k, v in result.items() if not k.endswith("_plan")}
        print(json.dumps(figures, default=float))  # sums come back as Decimal
    else:
        _print(result, "--plan" in sys.argv)
