"""Fixtures of tests that run one store-level test on SQLite and on
PostgreSQL: a store open on a fresh file or schema.

A test module takes them by name (``store = both_stores.store``), as
tests/pg_store.py's are taken, and keeps its own constants and helpers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pg import SECRET, schema_url

import jobsched as js
from jobsched.store import JobStore


@pytest.fixture
def anyio_backend() -> str:
    # A store's logic does not depend on the backend (test_store_postgres says why).
    return "asyncio"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[JobStore]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'jobs.db'}"
    else:
        url = schema_url(request.getfixturevalue("pg_session_database"))
    s = js.open_store(url, secret=SECRET)
    await s.open()
    yield s
    await s.close()
