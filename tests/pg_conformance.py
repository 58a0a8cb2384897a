"""The conformance suite's hooks for the PostgreSQL store (``-p pg_conformance``,
with tests/ on the path): a new schema of ``--store-url``'s database for each
test, and leases aged on the server's clock, which the store compares them with."""

from __future__ import annotations

from pathlib import Path

from pg import age, schema_url

from jobsched.store import JobStore


def pytest_jobsched_store_url(url: str, tmp_path: Path) -> str | None:
    del tmp_path
    return schema_url(url) if url.startswith("postgresql") else None


def pytest_jobsched_store_lapse(store: JobStore, seconds: float) -> bool | None:
    if not store.url.startswith("postgresql"):
        return None
    age(store.url, seconds)
    return True
