"""The plan a member's prepared claim settles on (issue 34): the server's
generic plan, which knows no parameter's value, reads the ready index and
probes the primary key at any backlog, and the server keeps it.

The store prepares the claim at its first run on a connection
(``_claim.PREPARE_CLAIM``); after five custom plans the server runs the
generic plan when its estimated cost is below theirs. At 100,000 ready the
generic plan joined the update to the picked rows by a hash of every ready
row (a seq scan of the table, 31 ms of CPU a claim of 256 against 7), and it
was costed at four times the custom plans, so 80% of the claims were
planned anew (2.2 ms each). Plans and counts, not timings.
"""

from __future__ import annotations

import re
from typing import Any

import pg_store
import psycopg
import pytest

import jobsched_postgres._claim as claims
from jobsched_postgres import PostgresStore
from jobsched_postgres._claim import CLAIM, claim_by_key
from jobsched_postgres._frontier import Frontier
from jobsched_postgres._gate import Gate

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]

NOW = 1_700_000_000.0
BATCH = 64
ROWS = 100_000

# The schema and the open store every test here uses (tests/pg_store.py).
anyio_backend, url, store = pg_store.anyio_backend, pg_store.url, pg_store.store

#: The claim statement as prepared on a connection, and how often the
#: server planned it anew (custom) or ran its generic plan.
_PREPARED = (
    "SELECT name, custom_plans, generic_plans, parameter_types::text FROM pg_prepared_statements "
    "WHERE statement LIKE '%%raw_bounds%%' ORDER BY prepare_time DESC"
)


def _table(url: str, ready: int) -> None:
    """ROWS jobs in one statement: the first ``ready`` ready, the rest
    finished (the table a queue that churned leaves); then ANALYZE."""
    with psycopg.connect(url, autocommit=True) as conn:
        # A benchmark may switch the server's autovacuum on: its ANALYZE
        # would plan the claim anew (see test_the_server_keeps_the_generic_plan).
        conn.execute("ALTER TABLE jobsched_jobs SET (autovacuum_enabled = false)")
        conn.execute(
            "INSERT INTO jobsched_jobs (id, name, executor, status, queue, k0, k1, k2, run_at, "
            "submitted_at, finished_at, payload) SELECT i, 'j', 'async', "
            "CASE WHEN i <= %(ready)s THEN 'pending' ELSE 'completed' END, "
            "CASE WHEN i <= %(ready)s THEN 0 END, 0, i, 0, %(now)s, %(now)s, "
            "CASE WHEN i > %(ready)s THEN %(now)s END, '\\x50'::bytea "
            "FROM generate_series(1, %(rows)s) AS i",
            {"ready": ready, "now": NOW, "rows": ROWS},
        )
        conn.execute("ANALYZE jobsched_jobs")


def _prepared(conn: psycopg.Connection[Any]) -> list[tuple[Any, ...]]:
    # Unprepared: psycopg would prepare it at its fifth run, and it matches itself.
    return conn.execute(_PREPARED, prepare=False).fetchall()


def _claim(conn: psycopg.Connection[Any], gate: Gate, frontier: Frontier) -> int:
    got, _ = claim_by_key(conn, "m", BATCH, {"async": BATCH}, NOW, 30.0, gate, frontier=frontier)
    return len(got)


def _explain_prepared(
    conn: psycopg.Connection[Any], name: str, params: dict[str, Any]
) -> dict[str, Any]:
    """The prepared claim's plan as it runs (ANALYZE, BUFFERS), rolled back
    (psycopg then forgets its prepared statements)."""
    # The statement's parameters in the order psycopg numbered them.
    order = list(dict.fromkeys(re.findall(r"%\((\w+)\)s", CLAIM)))
    cur = psycopg.ClientCursor(conn)  # EXECUTE's arguments as literals
    with conn.transaction(force_rollback=True):
        cur.execute(
            f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE {name}("
            + ", ".join(["%s"] * len(order)) + ")",
            [params[k] for k in order],
        )  # fmt: skip
        ((plan,),) = cur.fetchall()
    return plan[0]["Plan"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("ready", [0, 4_000, ROWS])
async def test_the_generic_plan_reads_the_ready_index_and_probes_the_primary_key(
    store: PostgresStore, url: str, ready: int
) -> None:
    """Under ``force_generic_plan``, the claim the store prepared (a member's
    second claim, from its bound) reads the jobs table through its indexes
    alone: the ready rows from the ready index, the rows made ready since
    by theirs, each row taken by its primary key; no table scan, no hash of
    rows, at 0, 4,000 and 100,000 ready of 100,000 rows."""
    _table(url, ready)
    gate, frontier = Gate(store.key_ids, []), Frontier()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET plan_cache_mode = force_generic_plan")
        assert _claim(conn, gate, frontier) == min(ready, BATCH)  # from the front
        params = {
            "names": ["async"], "rooms": [BATCH], "limit": BATCH, "owner": "m", "lease": 30.0,
            "now": NOW, "starting": BATCH, **gate.params(), **frontier.params(gate, ["async"]),
        }  # fmt: skip
        assert _claim(conn, gate, frontier) == min(max(ready - BATCH, 0), BATCH)
        ((name, custom, generic, _),) = _prepared(conn)
        assert (custom, generic) == (0, 2)  # a generic plan ran, not a custom one
        plan = _explain_prepared(conn, name, params)
    nodes = pg_store.plan_nodes(plan)
    jobs = [n for n in nodes if n.get("Relation Name") == "jobsched_jobs"]
    assert {n["Node Type"] for n in jobs} <= {"ModifyTable", "Index Scan", "Bitmap Heap Scan"}, plan
    indexes = {n["Index Name"] for n in nodes if "Index Name" in n}
    assert "jobsched_jobs_ready" in indexes, plan
    assert indexes <= {
        "jobsched_jobs_ready", "jobsched_jobs_entered", "jobsched_jobs_pkey",
        "jobsched_jobs_waiting",
    }, plan  # fmt: skip
    assert not [n for n in nodes if n["Node Type"] in ("Hash Join", "Hash", "Merge Join")], plan
    # The update: each picked row by its primary key.
    claimed = next(n for n in nodes if n.get("Subplan Name") == "CTE claimed")
    taken = [n for n in pg_store.plan_nodes(claimed) if n.get("Relation Name") == "jobsched_jobs"]
    assert [(n["Node Type"], n.get("Index Name")) for n in taken] == [
        ("ModifyTable", None),
        ("Index Scan", "jobsched_jobs_pkey"),
    ], claimed
    assert claimed["Actual Rows"] == min(max(ready - 2 * BATCH, 0), BATCH), claimed


@pytest.mark.parametrize("ready", [0, ROWS])
async def test_the_server_keeps_the_generic_plan(
    store: PostgresStore, url: str, ready: int
) -> None:
    """A connection's claims at 0 and 100,000 ready (the plan cache's
    default mode): the server plans the claim five times, then runs its
    generic plan; the custom plans it makes know nothing the generic plan
    does not, so they cost the same and it does not plan anew (after an
    ANALYZE, see the next test)."""
    _table(url, ready)
    gate, frontier = Gate(store.key_ids, []), Frontier()
    runs = 12
    with psycopg.connect(url, autocommit=True) as conn:
        assert _claim(conn, gate, frontier) == min(ready, BATCH)  # from the front
        for _ in range(runs - 1):
            _claim(conn, gate, frontier)
        prepared = _prepared(conn)
    # One statement: its parameters typed alike on every run (a claim from
    # the front and one from a bound, an id below 32,768 or not).
    ((_, custom, generic, _),) = prepared
    assert (custom, generic) == (5, runs - 5), prepared


@pytest.mark.parametrize("deallocates", [True, False])
async def test_the_generic_plan_comes_back_after_an_analyze(
    store: PostgresStore, url: str, monkeypatch: pytest.MonkeyPatch, deallocates: bool
) -> None:
    """A connection prepares the claim at 0 ready and settles on the generic
    plan; then 100,000 ready and an ANALYZE (autovacuum's) raise the plan's
    estimate, and the server plans every claim anew (it compares the new
    generic plan with the average of the custom plans since the statement
    was prepared, the cheap ones at 0 included). Each REPREPARE_EVERY claims
    the connection deallocates its statements (not with a psycopg that
    would not notice: ``deallocates`` False), and five claims after that it
    runs the generic plan again."""
    every = 20  # the store's is 2,500: the same cycle, shorter
    monkeypatch.setattr(claims, "REPREPARE_EVERY", every)
    monkeypatch.setattr(claims, "_FORGETS", deallocates)
    gate, frontier = Gate(store.key_ids, []), Frontier()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ALTER TABLE jobsched_jobs SET (autovacuum_enabled = false)")
        conn.execute("ANALYZE jobsched_jobs")  # empty
        for _ in range(10):
            assert _claim(conn, gate, frontier) == 0
        assert [row[1:3] for row in _prepared(conn)] == [(5, 5)]
        # Another statement prepared on the connection (the store has several).
        other = "SELECT count(*) FROM jobsched_jobs WHERE id <= %s"
        assert conn.execute(other, (0,), prepare=True).fetchone() == (0,)
        _table(url, ROWS)
        for _ in range(every - 11):
            assert _claim(conn, gate, frontier) == BATCH
        # Planned anew on each claim since the ANALYZE.
        assert [row[1:3] for row in _prepared(conn)] == [(5 + every - 11, 5)]
        for _ in range(every):
            assert _claim(conn, gate, frontier) == BATCH
        prepared = [row[1:3] for row in _prepared(conn)]
        # psycopg forgot it too, and prepares it again (not run by a name
        # the server no longer has).
        assert conn.execute(other, (BATCH,), prepare=True).fetchone() == (BATCH,)
    # The 20th claim was the last of the statement: the next 19 ran as one
    # prepared anew, five custom plans and the generic one since.
    if deallocates:
        assert prepared == [(5, every - 6)]
    else:
        assert prepared == [(5 + 2 * every - 11, 5)]


def test_the_store_deallocates_only_with_a_psycopg_that_forgets(url: str) -> None:
    """``_claim._FORGETS`` (read from psycopg's version) says what psycopg
    does: after DEALLOCATE ALL, with a statement prepared, the statement
    runs again (psycopg forgot its name and prepares it anew) or fails (it
    ran it by the name the server no longer has)."""
    with psycopg.connect(url, autocommit=True) as conn:
        query = "SELECT %s::int + 1"
        assert conn.execute(query, (1,), prepare=True).fetchone() == (2,)
        conn.execute("DEALLOCATE ALL", prepare=False)
        try:
            runs = conn.execute(query, (2,), prepare=True).fetchone() == (3,)
        except psycopg.errors.InvalidSqlStatementName:
            runs = False
    assert runs is claims._FORGETS


class _Dropping:
    """A connection whose DEALLOCATE fails as a connection lost then would."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn
        self.info = conn.info
        self.tried = 0

    def execute(self, query: Any, *args: Any, **kwargs: Any) -> Any:
        if query == "DEALLOCATE ALL":
            self.tried += 1
            raise psycopg.OperationalError("server closed the connection unexpectedly")
        return self._conn.execute(query, *args, **kwargs)


async def test_a_deallocation_that_fails_loses_no_claim(
    store: PostgresStore, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The deallocation runs after the claim committed: if the connection
    drops then, the claim still answers its rows (they are the member's),
    not the error (the rows would stay leased, unworked, until the lease
    ends). Inside a transaction no deallocation is tried."""
    monkeypatch.setattr(claims, "REPREPARE_EVERY", 1)
    monkeypatch.setattr(claims, "_FORGETS", True)
    _table(url, 2 * BATCH)
    gate, frontier = Gate(store.key_ids, []), Frontier()
    with psycopg.connect(url, autocommit=True) as conn:
        dropping: Any = _Dropping(conn)
        assert _claim(dropping, gate, frontier) == BATCH
        assert dropping.tried == 1
        with conn.transaction():
            conn.execute("SELECT 1")
            assert _claim(dropping, gate, frontier) == BATCH
        assert dropping.tried == 1
        ids = conn.execute("SELECT count(*) FROM jobsched_jobs WHERE owner = 'm'").fetchone()
    assert ids == (2 * BATCH,)
