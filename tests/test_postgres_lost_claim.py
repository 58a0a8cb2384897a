"""A claim whose commit landed but whose reply was lost (the connection
broke under it) is run again on the next connection; the first run's rows
stay running under this live member, which never got them, and takeovers
skip a member's own rows. Its look hands them back once their leases ran
out (``jobsched_postgres._orphans``), and never the rows its heartbeat names.
"""

from __future__ import annotations

from typing import Any

import pg_store
import psycopg
import pytest
from pg import age

from jobsched.store import NewJob
from jobsched_postgres import PostgresStore, _claim, _takeover

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]

NOW = 1_700_000_000.0
ALL = {"async": 99}


# The schema and the open store every test here uses (tests/pg_store.py).
anyio_backend, url, store = pg_store.anyio_backend, pg_store.url, pg_store.store


def _new(job_id: int) -> NewJob:
    return NewJob(job_id, f"j{job_id}", "async", (float(job_id),), run_at=NOW,
                  submitted_at=NOW, payload=b"P")  # fmt: skip


async def test_the_rows_of_a_claim_whose_reply_was_lost_are_handed_back(
    store: PostgresStore, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    await store.add([_new(i) for i in range(1, 7)], NOW)
    assert [c.id for c in await store.claim("m", 1, ALL, NOW, lease=10)] == [1]
    real, lost = _claim.claim_by_key, []

    def reply_lost(conn: psycopg.Connection[Any], *args: Any, **kw: Any) -> Any:
        got = real(conn, *args, **kw)  # committed on its own
        if not lost:
            lost.extend(c.id for c in got[0])
            # The server ends the connection before the rows reach the member.
            conn.execute("SELECT pg_terminate_backend(pg_backend_pid())")
        return got

    monkeypatch.setattr(_claim, "claim_by_key", reply_lost)
    got = await store.claim("m", 2, ALL, NOW + 1, lease=10)
    monkeypatch.undo()
    assert lost == [2, 3]
    assert [c.id for c in got] == [4, 5]  # run again on a new connection
    # The member's heartbeat names what it holds; then every lease runs out
    # (a heartbeat held off: the rows it names are still its own).
    assert await store.extend("m", [1, 4, 5], NOW + 2) == []
    age(url, 60)
    taken = await store.claim("m", 5, ALL, NOW + 70, lease=10)
    assert sorted((c.id, c.lost) for c in taken) == [(2, False), (3, False), (6, False)]
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT id, owner, attempts FROM jobsched_jobs WHERE status = 'running' ORDER BY id"
        ).fetchall()
    # Handed back uncounted: the first run's attempt never ran.
    assert rows == [(i, "m", 1) for i in range(1, 7)]


async def test_a_takeover_whose_reply_was_lost_is_taken_over_again_as_lost(
    store: PostgresStore, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The attempt a takeover took ran in a member that died: if the
    takeover's reply is lost, the row goes back to that member, not to the
    queue uncounted, and the next look takes it over as lost, so the attempt
    is on record as "worker lost" (the fleet test's kill and reset met this)."""
    await store.add([_new(1)], NOW)
    assert [c.id for c in await store.claim("dead", 1, ALL, NOW, lease=10)] == [1]
    await store.start("dead", [(1, 1, NOW)])
    age(url, 60)  # "dead" renews nothing: its lease runs out
    real, lost = _takeover.take_over, []

    def reply_lost(conn: psycopg.Connection[Any], *args: Any, **kw: Any) -> Any:
        got = real(conn, *args, **kw)
        if not lost:
            lost.extend(c.id for c in got)
            conn.execute("SELECT pg_terminate_backend(pg_backend_pid())")
        return got

    monkeypatch.setattr(_takeover, "take_over", reply_lost)
    assert await store.claim("m", 1, ALL, NOW + 61, lease=10) == []
    monkeypatch.undo()
    assert lost == [1]
    assert await store.extend("m", [], NOW + 62) == []
    age(url, 60)
    # The look hands the row back to the member that ran it ...
    assert await store.claim("m", 1, ALL, NOW + 130, lease=10) == []
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT status, owner, attempts FROM jobsched_jobs").fetchone()
    assert row == ("running", "dead", 1)
    # ... and the next one takes it over: the attempt that ran is lost, counted.
    taken = await store.claim("m", 1, ALL, NOW + 200, lease=10)
    assert [(c.id, c.attempt, c.lost) for c in taken] == [(1, 1, True)]
