"""The PostgreSQL store with a queue that is behind (issue 34): the claim's
plan at 100,000 ready rows after churn and with an xid held, and the schema
it relies on.

A claim takes the best ready rows from the front of ``jobsched_jobs_ready``;
with a backlog, the front is where every claimed row left an index entry
that points at a dead row version. The plan must read the rows it takes
and a small multiple more, not the backlog and not every dead entry: it
starts where the member's last claim left off (``_frontier``), and reads
the rows made ready since through ``jobsched_jobs_entered``. The counts
are deterministic (index entries read, buffers), not timings.
"""

from __future__ import annotations

from typing import Any

import pg_store
import psycopg
import pytest
from pg import SECRET

import jobsched as js
from jobsched.store import NewJob, Outcome
from jobsched_postgres import PostgresStore
from jobsched_postgres._claim import CLAIM, claim_by_key
from jobsched_postgres._frontier import KEEP_EMPTY, SINCE_MAX, Frontier
from jobsched_postgres._gate import Gate
from jobsched_postgres._leases import EXTEND, START

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]

NOW = 1_700_000_000.0
BATCH = 64


# The schema and the open store every test here uses (tests/pg_store.py).
anyio_backend, url, store = pg_store.anyio_backend, pg_store.url, pg_store.store
held = pg_store.held


def _new(job_id: int, key: float | None = None) -> NewJob:
    k = float(job_id) if key is None else key
    return NewJob(job_id, f"j{job_id}", "async", (0.0, k, 0.0), run_at=NOW,
                  submitted_at=NOW, payload=b"P")  # fmt: skip


async def _fill(store: PostgresStore, first: int, count: int) -> None:
    for start in range(first, first + count, 10_000):
        await store.add([_new(i) for i in range(start, min(start + 10_000, first + count))], NOW)


async def _churn(store: PostgresStore, jobs: int, add_from: int = 0) -> None:
    """The member claims and completes ``jobs`` jobs, BATCH a round (adding
    as many behind the backlog first when ``add_from``), as a member does."""
    while jobs > 0:
        if add_from:
            await store.add([_new(i) for i in range(add_from, add_from + BATCH)], NOW)
            add_from += BATCH
        claims = await store.claim("m", BATCH, {"async": BATCH}, NOW, 30)
        assert claims
        await store.record(
            "m", [Outcome(c.id, c.attempt, js.JobStatus.COMPLETED, NOW + 1) for c in claims]
        )
        jobs -= len(claims)


#: Index entries each index of the jobs table gave this session (dead ones
#: too: a plan counts only the rows that come out of a scan), not yet sent
#: to the statistics.
_ENTRIES = (
    "SELECT c.relname, pg_stat_get_xact_tuples_returned(c.oid) FROM pg_index i "
    "JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = 'jobsched_jobs'::regclass"
)


def _params(store: PostgresStore, bounded: bool = True) -> dict[str, Any]:
    """The member's next claim of BATCH: from its bounds, or from the front."""
    gate = Gate(store.key_ids, [])
    frontier = store._frontier if bounded else Frontier()
    return {
        "names": ["async"], "rooms": [BATCH], "limit": BATCH, "owner": "m2", "lease": 30.0,
        "now": NOW, "starting": BATCH, **gate.params(), **frontier.params(gate, ["async"]),
    }  # fmt: skip


def _explain(
    url: str, params: dict[str, Any], generic: bool = False
) -> tuple[dict[str, Any], dict[str, int]]:
    """The claim's plan as it ran (ANALYZE, BUFFERS), rolled back; and the
    index entries it read, by index. ``generic``: the plan a prepared
    statement may settle on, which knows no parameter's value."""
    with psycopg.connect(url) as conn:
        if generic:
            conn.execute("SET plan_cache_mode = force_generic_plan")
        before = dict(conn.execute(_ENTRIES).fetchall())
        ((plan,),) = conn.execute("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + CLAIM, params)
        after = conn.execute(_ENTRIES).fetchall()
        conn.rollback()
    return plan[0]["Plan"], {k: n - before.get(k, 0) for k, n in after if n > before.get(k, 0)}


def _picked(plan: dict[str, Any]) -> dict[str, Any]:
    return next(n for n in pg_store.plan_nodes(plan) if n.get("Subplan Name") == "CTE picked")


def _buffers(node: dict[str, Any]) -> int:
    return int(node["Shared Hit Blocks"] + node["Shared Read Blocks"])


async def test_the_claim_reads_a_small_multiple_of_what_it_takes_at_100k_ready(
    store: PostgresStore, url: str
) -> None:
    """100,000 ready rows, the first 5,000 of them claimed and completed by
    the store (their dead entries at the front of the ready index, not
    vacuumed): a claim of 64 reads the ready index in key order from where
    the last one stopped, keeps every row it reads, and touches a small
    multiple of 64 pages, not the backlog."""
    await _fill(store, 1, 100_000)
    await _churn(store, 5_000)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ANALYZE jobsched_jobs")
    plan, _ = _explain(url, _params(store))
    picked = _picked(plan)
    scans = [n for n in pg_store.plan_nodes(picked) if n.get("Relation Name") == "jobsched_jobs"]
    (ready,) = [n for n in scans if n.get("Index Name") == "jobsched_jobs_ready"]
    assert ready["Node Type"] == "Index Scan", ready
    # The rows it took, no more: every row read passes the claim's filter.
    assert ready["Actual Rows"] == BATCH, ready
    assert ready.get("Rows Removed by Filter", 0) == 0, ready
    # The rows made ready since the last claim (none) read by their own
    # index, once for every executor (and taken by their primary key).
    fresh = next(n for n in pg_store.plan_nodes(plan) if n.get("Subplan Name") == "CTE fresh")
    assert {n.get("Index Name") for n in pg_store.plan_nodes(fresh) if "Index Name" in n} == {
        "jobsched_jobs_entered"
    }, fresh
    others = {
        n["Index Name"] for n in pg_store.plan_nodes(picked) if "Index Name" in n and n is not ready
    }
    assert others <= {"jobsched_jobs_pkey"}, others
    # Index entries: the 64 taken, then from the same place the first one
    # left (the next bound), and 64 primary keys for the update; of the
    # rows made ready since the last claim, none. So in the plan a prepared
    # statement may settle on too (an index of fewer columns, sorted after,
    # was the planner's choice once, and read all 100,000).
    for generic in (False, True):
        _, entries = _explain(url, _params(store), generic)
        assert entries["jobsched_jobs_ready"] <= 2 * BATCH + 1, (generic, entries)
        assert entries.get("jobsched_jobs_entered", 0) <= BATCH, (generic, entries)
    # Pages: the index's front and the 64 rows' heap pages, each row's page
    # counted once per visit; the backlog's 1,700 heap pages stay unread.
    assert _buffers(picked) <= 4 * BATCH, picked
    # The paused queues' table is read whole (an InitPlan that is empty unless
    # an operator paused a queue: a row per paused queue); the jobs never.
    scanned = {
        n.get("Relation Name") for n in pg_store.plan_nodes(plan) if n["Node Type"] == "Seq Scan"
    }
    assert scanned <= {"jobsched_queue_pauses"}, plan


async def test_with_an_xid_held_a_claim_reads_no_entry_claimed_before_its_last(
    store: PostgresStore, url: str, held: None
) -> None:
    """An xid held since before 5,000 jobs were claimed and completed: no
    entry they left can be marked dead. A claim from the front walks all of
    them (the control: what every claim did before issue 34); the member's
    claim reads the 64 it takes and the next one, whatever the churn."""
    await _fill(store, 1, 4_000)
    await _churn(store, 5_000, add_from=1_000_000)
    _, from_front = _explain(url, _params(store, bounded=False))
    assert from_front["jobsched_jobs_ready"] >= 2 * 5_000, from_front
    plan, entries = _explain(url, _params(store))
    assert entries["jobsched_jobs_ready"] <= 2 * BATCH + 1, entries
    assert entries.get("jobsched_jobs_entered", 0) <= BATCH, entries
    picked = _picked(plan)
    assert _buffers(picked) <= 4 * BATCH, picked
    claimed = next(n for n in pg_store.plan_nodes(plan) if n.get("Subplan Name") == "CTE claimed")
    assert claimed["Actual Rows"] == BATCH


async def test_a_member_that_keeps_up_reads_a_burst_behind_from_its_bound(
    store: PostgresStore, url: str, held: None
) -> None:
    """A member whose claims each took every ready row (it keeps up with its
    queue), under a held xid; then more than ``_frontier.SINCE_MAX`` jobs
    are added behind in one go (a pause of a second at 3,000 jobs/s). The
    next claim seeks to them from the greatest key it took, not the front:
    from the end of the keys as its bound, each was a row made ready since,
    and with more than SINCE_MAX of those it read the ready index from the
    front, every entry claimed since the hold began (W20: 0.3-1.1 s a
    claim, growing with the hold)."""
    await _fill(store, 1, 2_000)
    await _churn(store, 2_000)
    behind = [_new(i) for i in range(10_000, 10_000 + SINCE_MAX + 200)]
    await store.add(behind, NOW)
    _, entries = _explain(url, _params(store))
    # The pick's 64 and the bound's read past them, each passing the entry
    # of the row taken last (4,129 from the front).
    assert entries["jobsched_jobs_ready"] <= 2 * (BATCH + 2), entries
    assert entries["jobsched_jobs_entered"] <= len(behind) + BATCH, entries
    claims = await store.claim("m", BATCH, {"async": BATCH}, NOW, 30)
    assert [c.id for c in claims] == [job.id for job in behind[:BATCH]]


async def test_a_claim_that_takes_only_an_earlier_key_keeps_the_bound_it_had(
    store: PostgresStore, url: str, held: None
) -> None:
    """A member that keeps up, under a held xid; a job whose key is earlier
    than every one it took (a key is set when a job is added: a delayed
    job's or a retry's, a higher priority, an earlier deadline) is made due.
    The claim promotes it and takes it alone in its next statement (every
    other ready row was taken). Nothing is left ready, so any key is a
    bound: the greatest key it took moves the bound back to that early
    key, and the next claim reads every entry claimed since, up to the
    rows added behind (the W20 walk this bound avoids)."""
    await _fill(store, 1, 2_000)
    await _churn(store, 2_000)
    late = NewJob(50_000, "late", "async", (0.0, 5.0, 0.0), run_at=NOW + 5,
                  submitted_at=NOW, payload=b"P")  # fmt: skip
    await store.add([late], NOW)
    claims = await store.claim("m", BATCH, {"async": BATCH}, NOW + 10, 30)
    assert [c.id for c in claims] == [late.id]
    behind = [_new(i) for i in range(10_000, 10_000 + BATCH)]
    await store.add(behind, NOW)
    _, entries = _explain(url, _params(store))
    assert entries.get("jobsched_jobs_ready", 0) <= 2 * (BATCH + 2), entries
    claims = await store.claim("m", BATCH, {"async": BATCH}, NOW, 30)
    assert [c.id for c in claims] == [job.id for job in behind]


async def test_a_member_whose_claims_find_nothing_reads_only_what_was_claimed_since(
    store: PostgresStore, url: str, held: None
) -> None:
    """Under a held xid, a member took every ready row, then its claims find
    nothing while a peer keeps up with 5,000 jobs (its claims come first).
    A claim that sees nothing ready and takes nothing keeps the bound it
    had, and each such claim walks from there every entry the peer claimed
    since (pick and bound: twice, 10,114 entries); so it keeps it for
    ``_frontier.KEEP_EMPTY`` claims in a row at most, then takes the end of
    the keys, from which an empty claim reads only the rows made ready
    since the last one."""
    await _fill(store, 1, BATCH)
    assert len(await store.claim("m", BATCH, {"async": BATCH}, NOW, 30)) == BATCH
    assert await store.claim("m", BATCH, {"async": BATCH}, NOW, 30) == []
    peer = PostgresStore(url, secret=SECRET)
    await peer.open()
    try:
        for start in range(1_000, 6_000, BATCH):
            await peer.add([_new(i) for i in range(start, start + BATCH)], NOW)
            taken = await peer.claim("p", BATCH, {"async": BATCH}, NOW, 30)
            await peer.record(
                "p", [Outcome(c.id, c.attempt, js.JobStatus.COMPLETED, NOW + 1) for c in taken]
            )
    finally:
        await peer.close()
    # Its claims after keep the bound it had, KEEP_EMPTY in a row at most
    # (each walks what the peer claimed since); then the end of the keys.
    for _ in range(KEEP_EMPTY):
        assert await store.claim("m", BATCH, {"async": BATCH}, NOW, 30) == []
    # The next, nothing made ready since: it reads next to nothing.
    _, entries = _explain(url, _params(store))
    assert entries.get("jobsched_jobs_ready", 0) <= 2 * BATCH, entries


async def test_rows_made_ready_in_front_of_the_bound_are_read_by_their_own_index(
    store: PostgresStore, url: str, held: None
) -> None:
    """Jobs added in front of a backlog after 3,000 were claimed under a held
    xid (higher priority, an earlier submit): the next claim takes them
    first, reading them through ``jobsched_jobs_entered`` (the entries of
    the rows made ready since the last claim), not the ready index from its
    front."""
    await _fill(store, 1, 4_000)
    await _churn(store, 3_000)
    front = [_new(i, key=-float(i)) for i in range(2_000_000, 2_000_010)]
    await store.add(front, NOW)
    _, entries = _explain(url, _params(store))
    assert entries["jobsched_jobs_ready"] <= 2 * BATCH + 1, entries
    # The 64 added behind since the last claim and the 10 in front.
    assert entries["jobsched_jobs_entered"] <= 2 * (BATCH + 10), entries
    claims = await store.claim("m", BATCH, {"async": BATCH}, NOW, 30)
    assert {c.id for c in claims[:10]} == {job.id for job in front}


async def test_more_rows_made_ready_in_front_than_a_read_of_them_takes_are_read_from_the_front(
    store: PostgresStore, url: str
) -> None:
    """1,200 jobs added in front of a claimed backlog, more than
    ``_frontier.SINCE_MAX``: the claim reads that executor from the front,
    as a first claim does (here the new rows are the front), and takes the
    64 best of them in key order (a read of the new rows in the order they
    were made ready would not see the best); the next claim reads from its
    bound again."""
    await _fill(store, 1, 2_000)
    await _churn(store, 640)
    front = [_new(i, key=-float(i)) for i in range(3_000_000, 3_001_200)]
    await store.add(front, NOW)
    _, entries = _explain(url, _params(store))
    # It read more than SINCE_MAX new rows, then the front of the ready index.
    assert SINCE_MAX < entries["jobsched_jobs_entered"] <= 1_200 + BATCH, entries
    assert entries["jobsched_jobs_ready"] <= 2 * BATCH + 1, entries
    claims = await store.claim("m", BATCH, {"async": BATCH}, NOW, 30)
    best = sorted(front, key=lambda job: job.key)[:BATCH]
    assert [c.id for c in claims] == [job.id for job in best]
    _, entries = _explain(url, _params(store))
    assert entries["jobsched_jobs_ready"] <= 2 * BATCH + 1, entries


def _one(url: str, sql: str, *params: Any) -> Any:
    with psycopg.connect(url) as conn:
        row = conn.execute(sql, params).fetchone()  # type: ignore[arg-type]
    assert row is not None, sql
    return row[0]


_INDEX_DEF = (
    "SELECT indexdef FROM pg_indexes WHERE indexname = %s AND schemaname = current_schema()"
)


async def test_the_ready_indexes_the_claim_reads_are_pinned(store: PostgresStore, url: str) -> None:
    """The claim's order is the ready index's: executor, then the key, then
    id, over the ready rows alone (a partial index, so a backlog of waiting
    or finished rows is never in it); the rows made ready since a snapshot
    are found by executor and the transaction that made them ready."""
    ready = _one(url, _INDEX_DEF, "jobsched_jobs_ready")
    assert ready.endswith("USING btree (executor, k0, k1, k2, id) WHERE (queue = 0)"), ready
    since = _one(url, _INDEX_DEF, "jobsched_jobs_entered")
    assert since.endswith(
        "USING btree (entered_xid, executor) WHERE (NOT (queue IS DISTINCT FROM 0))"
    ), since


async def test_every_path_that_makes_a_row_ready_stamps_its_transaction(
    store: PostgresStore, url: str
) -> None:
    """``entered_xid`` is the transaction that made the row ready: an insert's
    (the column's default), and a promotion's, a release's or any other
    update that puts a row in the ready queue or changes its key (the
    trigger, which fires on nothing else: a heartbeat or a claim leaves it).
    A running row's is the transaction that made it running: a claim sets
    it, and the trigger for an update that made a row running without
    setting it (a member still on schema 4's code, in a rolling upgrade)."""
    default = _one(
        url,
        "SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d JOIN pg_attribute a "
        "ON a.attrelid = d.adrelid AND a.attnum = d.adnum "
        "WHERE d.adrelid = 'jobsched_jobs'::regclass AND a.attname = 'entered_xid'",
    )
    assert default == "pg_current_xact_id()", default
    trigger = _one(
        url,
        "SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE tgname = 'jobsched_entered_xid' "
        "AND tgrelid = 'jobsched_jobs'::regclass",
    )
    assert "BEFORE UPDATE OF queue, status, executor, k0, k1, k2, name, args, payload" in trigger
    assert "WHEN ((((new.queue = 0) AND ((old.queue IS DISTINCT FROM 0)" in trigger, trigger
    assert "OR ((new.status = 'running'::text) AND (old.status <> 'running'::text)" in trigger

    def entered_xid(job_id: int) -> int:
        return int(_one(url, "SELECT entered_xid::text::bigint FROM jobsched_jobs WHERE id = %s",
                        job_id))  # fmt: skip

    await store.add([_new(1), _new(2)], NOW)
    inserted = entered_xid(1)
    (claimed, _) = await store.claim("m", 2, {"async": 2}, NOW, 30)
    await store.extend("m", [claimed.id], NOW)
    await store.release("m", [claimed.id])
    assert entered_xid(claimed.id) > inserted  # the release's
    released = entered_xid(claimed.id)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE jobsched_jobs SET k1 = -1 WHERE id = %s", (claimed.id,))
        assert entered_xid(claimed.id) > released  # a new key: ready anew
        keyed = entered_xid(claimed.id)
        conn.execute("UPDATE jobsched_jobs SET last_error = 'x' WHERE id = %s", (claimed.id,))
        assert entered_xid(claimed.id) == keyed  # nothing a claim reads changed
        # Schema 4's claim (its _TAKE, which knows no entered_xid).
        conn.execute(
            "UPDATE jobsched_jobs AS t SET status = 'running', queue = NULL, owner = 'old', "
            "ran_by = 'old', lease_until = 0, attempts = t.attempts + 1, "
            "cancel_requested = false WHERE t.id = %s AND t.queue = 0",
            (claimed.id,),
        )
        assert entered_xid(claimed.id) > keyed


async def test_a_claim_calls_no_trigger_function(store: PostgresStore, url: str) -> None:
    """The trigger's condition is evaluated without calling its function,
    which a claim (it sets ``entered_xid`` itself) never meets: of 8 rows
    claimed, no call; their release, which makes them ready, one call each."""
    await store.add([_new(i) for i in range(1, 9)], NOW)
    calls = "SELECT coalesce(pg_stat_get_xact_function_calls('jobsched_entered_xid'::regproc), 0)"
    with psycopg.connect(url) as conn:
        conn.execute("SET track_functions = 'pl'")
        got, _ = claim_by_key(conn, "m", 8, {"async": 8}, NOW, 30.0, Gate(store.key_ids, []))
        assert len(got) == 8
        assert conn.execute(calls).fetchone() == (0,)
        conn.execute(
            "UPDATE jobsched_jobs SET status = 'pending', queue = 0, owner = NULL "
            "WHERE id = ANY(%s)",
            ([c.id for c in got],),
        )
        assert conn.execute(calls).fetchone() == (8,)
        conn.rollback()


def _indexes(url: str) -> set[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'jobsched_jobs' "
            "AND schemaname = current_schema()"
        ).fetchall()
    return {name for (name,) in rows}


#: Every index of the jobs table: each one is written at every change of a
#: row it covers, so one added is a cost on the claim (W19) to measure first.
JOBS_INDEXES = {
    "jobsched_jobs_pkey",
    "jobsched_jobs_ready",
    "jobsched_jobs_entered",
    "jobsched_jobs_tenant_ready",
    "jobsched_jobs_waiting",
    "jobsched_jobs_blocked",
    "jobsched_jobs_finished",
    "jobsched_jobs_status",
    "jobsched_jobs_fires",
    "jobsched_jobs_running",
    # Schema 6 (issue 37): a workflow's jobs, partial on a column only a
    # workflow's jobs set, so no other row has an entry (pinned below); a
    # claim's non-HOT update only tests its predicate. W19 to be measured
    # with it by the lead (with W7c8 and W10c8).
    "jobsched_jobs_workflow",
    # Retention by age (issue 38): a status's oldest finished rows, for the
    # age rule per outcome (made on open, no schema bump). One more entry per
    # finished job: measured with W7c8 and W10c8 against the code before it.
    "jobsched_jobs_ended",
}


async def test_the_jobs_tables_indexes_are_pinned(store: PostgresStore, url: str) -> None:
    """An index added to the jobs table is a cost on every claim: measure it (W19) first."""
    assert _indexes(url) == JOBS_INDEXES


async def test_jobs_outside_a_workflow_write_no_entry_in_its_index(
    store: PostgresStore, url: str
) -> None:
    """Added, claimed, completed (an update that changes indexed columns):
    the workflow index stays without a tuple."""
    await store.add([_new(i) for i in range(1, 65)], NOW)
    claims = await store.claim("m", 64, {"async": 64}, NOW, 30)
    await store.record(
        "m", [Outcome(c.id, c.attempt, js.JobStatus.COMPLETED, NOW + 1) for c in claims]
    )
    with psycopg.connect(url) as conn:
        # An index no tuple ever went into is its metapage alone.
        ((size,),) = conn.execute("SELECT pg_relation_size('jobsched_jobs_workflow')").fetchall()
    assert len(claims) == 64 and size == 8192, size


#: The heartbeat as it was, a join to its locking read (see _leases.EXTEND).
_JOINED_EXTEND = (
    "UPDATE jobsched_jobs AS j SET lease_until = extract(epoch from now())::float8 + %s "
    "FROM (SELECT id FROM jobsched_jobs WHERE id = ANY(%s) AND owner = %s "
    "FOR UPDATE SKIP LOCKED) AS held WHERE j.id = held.id RETURNING j.id, j.cancel_requested"
)


async def test_a_heartbeat_reads_its_rows_once_whatever_the_plan(
    store: PostgresStore, url: str
) -> None:
    """The heartbeat and the starts of jobs claimed ahead update the rows an
    InitPlan's array names, not a join to their locking read. Joined, the
    planner may scan the whole table for the rows to update, with the read
    inside a Nested Loop (chosen in W19 when statistics said the table was
    small: 41 s on a table of 900,000 versions); here the catalogue says
    the table has one row and the other joins are off, which makes it
    choose that. The control, the joined text, reads every entry of the
    primary key; the store's statements read the rows they name."""
    await _fill(store, 1, 2_000)
    claims = await store.claim("m", 300, {"async": 300}, NOW, 30, starting=0)
    ids = sorted(c.id for c in claims)
    assert len(ids) == 300

    def entries(sql: str, params: Any) -> int:
        with psycopg.connect(url) as conn:
            conn.execute("SET enable_hashjoin = off")
            conn.execute("SET enable_mergejoin = off")
            conn.execute("SET enable_material = off")
            # Statistics a queue outran: a table of one row (rolled back).
            conn.execute(
                "UPDATE pg_class SET reltuples = 1, relpages = "
                "pg_relation_size(oid) / current_setting('block_size')::int "
                "WHERE oid = 'jobsched_jobs'::regclass"
            )
            before = dict(conn.execute(_ENTRIES).fetchall())
            cursor = conn.execute(sql, params)
            rows = cursor.fetchall() if cursor.description else []
            after = dict(conn.execute(_ENTRIES).fetchall())
            conn.rollback()
        assert len(rows) == 300 or sql is START
        return after["jobsched_jobs_pkey"] - before.get("jobsched_jobs_pkey", 0)

    # The joined text scans the whole primary key for j (2,300 entries).
    assert entries(_JOINED_EXTEND, (30.0, ids, "m")) >= 2_000
    assert entries(EXTEND, (30.0, ids, "m")) <= 3 * len(ids)
    attempts = [c.attempt for c in claims]
    starts = {"ids": ids, "attempts": attempts, "at": [NOW] * 300, "owner": "m"}
    assert entries(START, starts) <= 3 * len(ids)


async def test_a_heartbeat_is_a_hot_update(store: PostgresStore, url: str) -> None:
    """No index of the jobs table covers a column a heartbeat writes (the
    lease: the leases' index went in schema 5), so a heartbeat writes no
    index entry: it is a HOT update where the row's page has room. (Each
    entry a heartbeat wrote was one more that every look for lost
    attempts walked under a held xmin.)"""
    await store.add([_new(i) for i in range(1, 9)], NOW)
    claims = await store.claim("m", 8, {"async": 8}, NOW, 30)
    assert len(claims) == 8
    with psycopg.connect(url) as conn:
        conn.execute(EXTEND, (30.0, [c.id for c in claims], "m"))
        row = conn.execute(
            "SELECT pg_stat_get_xact_tuples_updated('jobsched_jobs'::regclass), "
            "pg_stat_get_xact_tuples_hot_updated('jobsched_jobs'::regclass)"
        ).fetchone()
        conn.rollback()
    assert row == (8, 8), row


async def test_the_jobs_table_keeps_the_servers_storage_settings(
    store: PostgresStore, url: str
) -> None:
    """The schema sets no storage parameter on the jobs table: fillfactor
    stays 100 and autovacuum runs at the server's settings. The claim's
    reads rely on neither (they seek past dead entries, _frontier), so an
    operator tunes them for the table's churn (docs/fleet.md "A queue that
    is behind"); one set by the schema is a measured choice (W19, W20)
    that this test is changed with."""
    options = _one(url, "SELECT reloptions FROM pg_class WHERE oid = 'jobsched_jobs'::regclass")
    assert options is None, options
