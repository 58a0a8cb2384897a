"""When a member's kept claim bounds and look snapshots are not trusted
(``jobsched_postgres._frontier``): a claim in a transaction keeps none (the
transaction may roll back), and a new connection of the store's pool
forgets them all.

A crash of a backend under ``restart_after_crash`` (the default) runs crash
recovery under the same ``pg_postmaster_start_time()``, and hands out again
the transaction ids whose WAL was never flushed: a kept snapshot would
treat such an id, below its xmax, as seen, and a row it made ready in
front of the bound would be read by no claim. Every such event ends every
connection; here the member's kept snapshot is one "ahead" of the server's
ids (as one from before such a crash is), and its connections are ended.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import anyio.from_thread
import psycopg
import pytest
from pg import SECRET, schema_url

from jobsched.store import NewJob
from jobsched_postgres import PostgresStore, _claim
from jobsched_postgres._frontier import START, Frontier
from jobsched_postgres._gate import Gate
from jobsched_postgres._running import Running

pytestmark = pytest.mark.postgres

LEASE = 60.0


class _Rollback(Exception):
    """Ends a claim's transaction without a trace."""


@pytest.fixture
def store(pg_session_database: str) -> Iterator[tuple[PostgresStore, Any, str]]:
    url = schema_url(pg_session_database)
    store = PostgresStore(url, secret=SECRET)
    with anyio.from_thread.start_blocking_portal() as portal:
        portal.call(store.open)
        _fill(store)
        try:
            yield store, portal, url
        finally:
            portal.call(store.close)


def _fill(store: PostgresStore) -> None:
    """Open every connection the pool may hold, now: a connection the pool
    adds later (it grows when two calls want one at once) forgets the kept
    bounds, and one arriving during a claim would leave no bound to test."""
    pool = store._pool
    assert pool is not None
    with ExitStack() as held:
        for _ in range(pool.max_size):
            held.enter_context(pool.connection())
    assert pool.get_stats()["pool_size"] == pool.max_size


def _wait_until(what: str, check: Any) -> None:
    deadline = time.monotonic() + 60
    while not check():
        assert time.monotonic() < deadline, f"waited a minute for {what}"
        time.sleep(0.05)


def test_a_new_pool_connection_forgets_the_kept_snapshots(
    store: tuple[PostgresStore, Any, str],
) -> None:
    """With the same connections (the control) the kept snapshot hides the
    row made ready in front of the bound and the row another member made
    running; once the server ended the store's connections, the claim reads
    from the front and takes it, and the look reads every running row."""
    st, portal, url = store
    gate = Gate(st.key_ids, [])
    first = st.reserve_ids(13)
    jobs = [
        NewJob(first + i, f"j{i}", "thread" if i == 12 else "async", (0.0, float(i), 0.0),
               run_at=0.0, submitted_at=0.0, payload=b"P")
        for i in range(13)
    ]  # fmt: skip
    portal.call(st.add, jobs[1:12], 0.0)

    def claim_three(c: Any) -> tuple[list[Any], bool]:
        return _claim.claim_by_key(c, "m", 3, {"async": 3}, 0.0, LEASE, gate, frontier=st._frontier)

    got, _ = st._tx(claim_three, transaction=False)
    mine = [c.id for c in got]
    assert mine == [j.id for j in jobs[1:4]]
    assert [r.id for r in st._tx(st._running.look)] == mine
    bound = st._frontier.bound(gate, "async")
    assert bound[3] == jobs[4].id
    portal.call(st.add, [jobs[0], jobs[12]], 0.0)
    with psycopg.connect(url, autocommit=True) as conn:
        other, _ = _claim.claim_by_key(conn, "other", 1, {"thread": 1}, 0.0, LEASE, gate)
        assert [c.id for c in other] == [jobs[12].id]
        row = conn.execute(
            "SELECT pg_current_xact_id()::text::bigint, "
            "extract(epoch FROM pg_postmaster_start_time())::text"
        ).fetchone()
        assert row is not None
        xid, start = row
        ahead = f"{start}/{xid + 1000}:{xid + 1000}:"

        def keep_ahead() -> None:
            st._frontier._marks[(*st._frontier._gate(gate), "async")] = (bound, ahead, 0)
            st._running._state = (mine, ahead)

        def claim_one() -> list[int]:
            taken: list[int] = []

            def fn(c: Any) -> None:
                got, _ = _claim.claim_by_key(c, "m", 1, {"async": 1}, 0.0, LEASE, gate,
                                             frontier=st._frontier)  # fmt: skip
                taken.extend(g.id for g in got)
                raise _Rollback

            with pytest.raises(_Rollback):
                st._tx(fn)
            return taken

        def look() -> list[int]:
            return sorted(r.id for r in st._tx(st._running.look))

        # The control: the same connections keep the snapshot, which hides both.
        keep_ahead()
        assert claim_one() == [jobs[4].id]
        keep_ahead()
        assert look() == mine
        # The server ends every connection of the store (as a crash restart does).
        keep_ahead()
        ended = "SELECT pid FROM pg_stat_activity WHERE datname = current_database() " \
            "AND backend_type = 'client backend' AND pid <> pg_backend_pid()"  # fmt: skip
        pids = [p for (p,) in conn.execute(ended).fetchall()]
        assert pids
        conn.execute("SELECT pg_terminate_backend(p) FROM unnest(%s::int[]) AS p", (pids,))
        _wait_until(
            "the store's connections to end",
            lambda: (
                not conn.execute(
                    "SELECT 1 FROM pg_stat_activity WHERE pid = ANY(%s)", (pids,)
                ).fetchall()
            ),
        )
        assert claim_one() == [jobs[0].id]
        assert look() == sorted([*mine, jobs[12].id])


def test_a_claim_whose_statement_ran_before_a_forget_keeps_nothing() -> None:
    """A claim's reply read before the crash, its bounds taken after the new
    connection's forget: its snapshot may be of the history before, and is
    not kept; nor a look's."""
    gate = Gate([], [])
    frontier = Frontier()
    before = frontier.generation()
    frontier.forget()
    frontier.update(
        gate, [(None, -2, None, 1.0, 2.0, 3.0, None, "1/5:5:", "async", 7, 0.0)], before
    )
    assert frontier.bound(gate, "async") == START
    frontier.update(
        gate,
        [(None, -2, None, 1.0, 2.0, 3.0, None, "1/5:5:", "async", 7, 0.0)],
        frontier.generation(),
    )
    assert frontier.bound(gate, "async") == (1.0, 2.0, 3.0, 7)

    looks = Running()

    class Forgets:
        """A connection whose statement's reply comes after a forget."""

        def execute(self, *_: Any) -> Any:
            looks.forget()
            return self

        def fetchall(self) -> list[tuple[Any, ...]]:
            return [(None, None, None, None, "1/5:5:")]

    looks.look(Forgets())  # type: ignore[arg-type]
    assert looks._state is None


def test_a_claim_in_a_transaction_rolled_back_keeps_no_bound(
    store: tuple[PostgresStore, Any, str],
) -> None:
    """Its rows are ready again, below the bound it would have kept and made
    ready (long ago) by a transaction its snapshot saw: the next claim
    takes them."""
    st, portal, url = store
    gate = Gate(st.key_ids, [])
    first = st.reserve_ids(6)
    jobs = [
        NewJob(first + i, f"j{i}", "async", (0.0, float(i), 0.0), run_at=0.0,
               submitted_at=0.0, payload=b"P")
        for i in range(6)
    ]  # fmt: skip
    portal.call(st.add, jobs, 0.0)
    frontier = Frontier()
    with psycopg.connect(url, autocommit=True) as conn:
        got, _ = _claim.claim_by_key(conn, "m", 1, {"async": 1}, 0.0, LEASE, gate,
                                     frontier=frontier)  # fmt: skip
        assert [c.id for c in got] == [first]
        taken: list[int] = []

        def rolled_back() -> None:
            with conn.transaction():
                got, _ = _claim.claim_by_key(conn, "m", 2, {"async": 2}, 0.0, LEASE, gate,
                                             frontier=frontier)  # fmt: skip
                taken.extend(c.id for c in got)
                raise _Rollback

        with pytest.raises(_Rollback):
            rolled_back()
        assert taken == [first + 1, first + 2]
        got, _ = _claim.claim_by_key(conn, "m", 2, {"async": 2}, 0.0, LEASE, gate,
                                     frontier=frontier)  # fmt: skip
        assert [c.id for c in got] == [first + 1, first + 2]
