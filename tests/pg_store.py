"""Fixtures of the PostgreSQL store's own tests: a schema and a store open on it.

A test module takes them by name (``url = pg_store.url``; pytest finds a
fixture by the name it was defined with), so each module keeps its own
constants and helpers and shares only these.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import psycopg
import pytest
from pg import SECRET, schema_url

from jobsched_postgres import PostgresStore


@pytest.fixture
def anyio_backend() -> str:
    # The store's logic does not depend on the backend (test_store_postgres says why).
    return "asyncio"


@pytest.fixture
def url(pg_session_database: str) -> str:
    return schema_url(pg_session_database)


@pytest.fixture
async def store(url: str) -> AsyncIterator[PostgresStore]:
    s = PostgresStore(url, secret=SECRET)
    await s.open()
    yield s
    await s.close()


@pytest.fixture
def held(url: str) -> Iterator[None]:
    """An idle-in-transaction session that took an xid: no index entry dead
    since can be marked dead, no row version removed."""
    conn = psycopg.connect(url)
    conn.execute("SELECT txid_current()")
    yield
    conn.rollback()
    conn.close()


def plan_nodes(plan: dict[str, Any]) -> list[dict[str, Any]]:
    """Every node of an EXPLAIN (FORMAT JSON) plan, the CTEs' included."""
    nodes = [plan]
    for child in plan.get("Plans", ()):
        nodes += plan_nodes(child)
    return nodes
