"""A scheduler's link claims registered jobs only of the names it knows
(``StoreLink.names``, which an app sets) and reports those names in the
members list, on SQLite and PostgreSQL.

The registered row is written through the store seam (name, ``b"J"``,
JSON ``args``); what a member does with a job it claims is the app's side
and is tested there: here, only whether the claim takes it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from durable_jobs import Noop

import jobsched as js
from jobsched.store import NewJob

pytestmark = pytest.mark.anyio

SEND = "shop.jobs.send_email"
S = js.JobStatus


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the stores work in threads (see test_durable.py)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'jobs.db'}"
        return
    from pg import schema_url

    yield schema_url(request.getfixturevalue("pg_session_database"))


def store_of(url: str) -> js.JobStore:
    from pg import SECRET

    return js.open_store(url, secret=SECRET)


async def add_registered(url: str) -> int:
    """A registered job, first in key order (-1: before any submitted job)."""
    store = store_of(url)
    await store.open()
    try:
        number = store.reserve_ids(1)
        now = time.time()
        job = NewJob(
            number, name=SEND, executor="async", key=(-1.0,), run_at=now, submitted_at=now,
            payload=b"J", args=json.dumps({"to": "a@b"}),
        )  # fmt: skip
        await store.add([job], now)
        return number
    finally:
        await store.close()


async def test_a_member_without_the_name_leaves_the_job_waiting(url: str) -> None:
    """It runs the pickled job queued behind the registered one, never claims
    the registered one (first in key order), and it waits, counted."""
    number = await add_registered(url)
    async with js.JobScheduler(store=store_of(url), num_workers=1) as s:
        assert await s.result(await s.enqueue(Noop("pickled")), timeout=60) is None
        row = await s._link.store.fetch(number)  # type: ignore[union-attr]
        assert row is not None
        assert (row.status, row.attempts, row.owner) == (S.PENDING, 0, None)
        assert await s._link.store.waiting_for_names(()) == {SEND: 1}  # type: ignore[union-attr]


async def test_a_member_that_knows_the_name_claims_it_and_says_so(url: str) -> None:
    number = await add_registered(url)
    s = js.JobScheduler(store=store_of(url), num_workers=1)
    assert s._link is not None
    s._link.names = frozenset({SEND})
    async with s:
        store = s._link.store
        with anyio.fail_after(60):
            while (row := await store.fetch(number)) is None or row.attempts == 0:  # noqa: ASYNC110
                await anyio.sleep(0.02)
            while not [m for m in await store.members() if m.names == (SEND,)]:  # noqa: ASYNC110
                await anyio.sleep(0.02)
        assert await store.waiting_for_names({SEND}) == {}
