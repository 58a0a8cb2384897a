"""The suite's fixtures: a new store per test and members of it, on asyncio.

Here, not in the plugin, so that they apply to the suite's modules only (a
store package's own tests keep their fixture names) and win over anyio's
default ``anyio_backend``, which would also run every test on trio.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

import jobsched
from jobsched.store import JobStore

from . import SECRET, Lapse, Opener


@pytest.fixture
def anyio_backend() -> str:
    # A store's logic does not depend on the backend, and stores that work in
    # threads would not run on trio's mock clock.
    return "asyncio"


@pytest.fixture
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of a new, empty store for this test (``--store-url``, made fresh)."""
    url = request.config.getoption("store_url")
    if not url:
        raise pytest.UsageError(
            "the jobsched store conformance suite needs --store-url URL "
            "(e.g. --store-url 'sqlite:///{tmp_path}/jobs.db')"
        )
    fresh: str = request.config.hook.pytest_jobsched_store_url(url=url, tmp_path=tmp_path)
    return fresh


@pytest.fixture
async def member(store_url: str) -> AsyncIterator[Opener]:
    """Opens another member of the test's store (each call, one more), with
    :data:`SECRET`; every one is closed after the test."""
    opened: list[JobStore] = []

    async def open_member() -> JobStore:
        store = jobsched.open_store(store_url, secret=SECRET)
        await store.open()
        opened.append(store)
        return store

    yield open_member
    for store in opened:
        await store.close()


@pytest.fixture
async def store(member: Opener) -> JobStore:
    """One open member of the test's store."""
    return await member()


@pytest.fixture
def lapse(request: pytest.FixtureRequest) -> Lapse:
    """``lapse(store, seconds)``: let ``seconds`` pass for the store's leases,
    before a claim whose ``now`` is that much later (see the hook)."""

    def lapse(store: JobStore, seconds: float) -> None:
        request.config.hook.pytest_jobsched_store_lapse(store=store, seconds=seconds)

    return lapse
