"""Runs every ``@pytest.mark.anyio`` test on asyncio and on trio, and every
scheduler test on the memory store, on a SQLite file and on PostgreSQL.

Trio runs on a ``MockClock`` that jumps ahead whenever every task is blocked,
so timeouts, delays and backoffs are exact and cost no real time; schedulers
in those tests read the loop's clock (the ``clock`` fixture). Asyncio runs on
the real clock, with generous bounds.

A test that makes its schedulers with ``make_scheduler`` runs six times:
``asyncio`` and ``trio`` on the memory store, ``asyncio-sqlite`` and
``trio-sqlite`` on a SQLite file in its ``tmp_path``, ``asyncio-postgres``
and ``trio-postgres`` on the local PostgreSQL server (a database for the
session, a schema per scheduler; marked ``postgres``, see tests/pg.py). The SQLite store works
in worker threads, which the mock clock would jump over (a thread's commit
would look like an hour to the test's timeouts), so trio runs on the real
clock there. A test whose behaviour legitimately differs on a durable store
says why with ``@pytest.mark.memory_only("reason")`` and gets no durable runs.
A module that overrides ``anyio_backend`` must not use ``make_scheduler``.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import anyio
import pytest
from trio.testing import MockClock

import jobsched as js

#: (backend, store) runs of a scheduler test, by id.
_RUNS = {"asyncio": ("asyncio", "memory"), "trio": ("trio", "memory")}
_DURABLE_RUNS = {
    "asyncio-sqlite": ("asyncio", "sqlite"),
    "trio-sqlite": ("trio", "sqlite"),
    "asyncio-postgres": ("asyncio", "postgres"),
    "trio-postgres": ("trio", "postgres"),
}


@pytest.hookimpl(tryfirst=True)
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    # A parametrize mark (not a direct call), so that the fixture's own params
    # for anyio_backend give way to these runs. "real_clock" tells the fixture
    # to leave trio's mock clock out.
    if "store_kind" not in metafunc.fixturenames:
        return
    runs = dict(_RUNS)
    marker = metafunc.definition.get_closest_marker("memory_only")
    if marker is None:
        runs.update(_DURABLE_RUNS)
    elif not (marker.args and isinstance(marker.args[0], str) and marker.args[0]):
        raise pytest.UsageError(
            f"{metafunc.definition.nodeid}: memory_only needs its reason, "
            'e.g. @pytest.mark.memory_only("jobs hold an anyio.Event")'
        )
    metafunc.definition.add_marker(
        pytest.mark.parametrize(
            ("anyio_backend", "store_kind"),
            [
                pytest.param(
                    (backend, {"real_clock": True} if store != "memory" else {}),
                    store,
                    marks=[pytest.mark.postgres] if store == "postgres" else [],
                )
                for backend, store in runs.values()
            ],
            ids=list(runs),
            indirect=True,
        )
    )


@pytest.fixture(
    params=[
        pytest.param(("asyncio", {}), id="asyncio"),
        pytest.param(("trio", {"clock": MockClock(autojump_threshold=0)}), id="trio"),
    ]
)
def anyio_backend(request: pytest.FixtureRequest) -> tuple[str, dict[str, Any]]:
    name, options = request.param
    if name == "trio" and "real_clock" not in options:
        # A fresh clock per test: a shared one would carry time over.
        options = {"clock": MockClock(autojump_threshold=0)}
    return name, {k: v for k, v in options.items() if k != "real_clock"}


@pytest.fixture
def store_kind(request: pytest.FixtureRequest) -> str:
    """The store a scheduler test runs on: "memory", "sqlite" or "postgres" (see the module)."""
    return getattr(request, "param", "memory")


@pytest.fixture(scope="session")
def pg_session_database() -> Iterator[str]:
    """One PostgreSQL database for the session's scheduler tests (dropped at the end)."""
    from pg import database

    with database() as url:
        yield url


@pytest.fixture(params=["memory", "sqlite"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A store for a test that runs its own event loop (on the real clock):
    the memory store, then a SQLite file."""
    return "memory" if request.param == "memory" else f"sqlite:///{tmp_path / 'jobs.db'}"


@pytest.fixture
def durable(store_kind: str) -> bool:
    """True when the test's schedulers keep their jobs in a durable store."""
    return store_kind != "memory"


@pytest.fixture
def virtual_time(anyio_backend: tuple[str, dict[str, Any]]) -> bool:
    """True when the test runs on the mock clock."""
    return "clock" in anyio_backend[1]


@pytest.fixture
def clock(virtual_time: bool) -> Callable[[], float]:
    """The clock a scheduler should read in this test."""
    return anyio.current_time if virtual_time else time.monotonic


@pytest.fixture
def make_scheduler(
    clock: Callable[[], float], store_kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[Callable[..., js.JobScheduler]]:
    """A JobScheduler factory that reads the test's clock, on the test's store.

    Each scheduler gets a store of its own (a new file on SQLite, a new
    schema on PostgreSQL), as each gets its own heaps on the memory store.
    """
    files = itertools.count()
    make_store: Callable[[], Any] | None = None
    if store_kind == "sqlite":

        def make_store() -> str:
            return f"sqlite:///{tmp_path / f'jobs-{next(files)}.db'}"

    elif store_kind == "postgres":
        from pg import SECRET, schema_url

        database = request.getfixturevalue("pg_session_database")

        def make_store() -> Any:
            from jobsched_postgres import PostgresStore

            return PostgresStore(schema_url(database), secret=SECRET)

    unstarted: list[js.JobScheduler] = []

    def make(*args: Any, **kwargs: Any) -> js.JobScheduler:
        kwargs.setdefault("clock", clock)
        if make_store is not None and "store" not in kwargs:
            kwargs["store"] = make_store()
        s = js.JobScheduler(*args, **kwargs)
        if make_store is not None:
            unstarted.append(s)
        return s

    yield make
    # A submit on a durable store opens it; a scheduler the test never
    # started or stopped would leave the connection to the garbage collector
    # (a ResourceWarning on Python 3.13, in whichever test runs then).
    # stop() on a new scheduler writes and closes.
    from jobsched._engine._state import NEW

    for s in unstarted:
        if s._state == NEW:
            anyio.run(s.stop)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def member(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[Callable[[], Awaitable[js.JobStore]]]:
    """Opens another member of one store (a file, or a schema of the session's database),
    for store-level tests on SQLite and PostgreSQL alike; closed after the test."""
    from pg import SECRET, schema_url

    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'jobs.db'}"
    else:
        url = schema_url(request.getfixturevalue("pg_session_database"))
    opened: list[js.JobStore] = []

    async def open_member() -> js.JobStore:
        store = js.open_store(url, secret=SECRET)
        await store.open()
        opened.append(store)
        return store

    yield open_member
    for store in opened:
        await store.close()


@pytest.fixture
def fake_entry_points(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[EntryPoint]]:
    """Replace the installed entry points (executors and stores) with a list the test fills."""
    from jobsched._jobs import _plugins

    eps: list[EntryPoint] = []
    monkeypatch.setattr(
        _plugins, "entry_points", lambda group: [e for e in eps if e.group == group]
    )
    _plugins.registered_in.cache_clear()
    yield eps
    _plugins.registered_in.cache_clear()
