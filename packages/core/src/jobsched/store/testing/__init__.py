"""The store conformance suite, as a pytest plugin.

Every built-in store passes these tests; a third-party store runs them the
same way (docs/stores.md, "Writing a store")::

    pytest -p jobsched.store.testing --store-url 'dict://{token}'

``--store-url`` names the store under test. The plugin needs a fresh, empty
store for each test, so the URL may hold two placeholders, replaced per
test: ``{tmp_path}`` (the test's own temporary folder, for a store in a
file: ``sqlite:///{tmp_path}/jobs.db``) and ``{token}`` (a new random hex
string, for a store named in the URL). A store that needs more (a new
schema on a database server) implements the hook
:func:`~jobsched.store.testing._hooks.pytest_jobsched_store_url` in a plugin
or ``conftest.py`` of its own; a store whose leases do not expire on the
``now`` the claims pass (a server's clock) implements
:func:`~jobsched.store.testing._hooks.pytest_jobsched_store_lapse`.

Given ``--store-url`` and no paths, pytest collects the suite's modules
(``test_*.py`` in this package); with paths, those (``--pyargs
jobsched.store.testing.test_limits`` picks one module).

The plugin imports pytest, so it is importable only where pytest is
installed: jobsched does not depend on pytest, and ``import jobsched.store``
never loads this module. Its tests run on asyncio through anyio's pytest
plugin (anyio, a dependency of jobsched, registers it).
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from .. import JobStore

#: The secret the suite's stores sign with.
SECRET = "conformance-secret"

#: Opens one more member of the test's store (the ``member`` fixture).
Opener = Callable[[], Awaitable[JobStore]]
#: ``lapse(store, seconds)``: lets time pass for a store's leases (the ``lapse`` fixture).
Lapse = Callable[[JobStore, float], None]

_HERE = Path(__file__).parent


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("jobsched-store", "jobsched store conformance")
    group.addoption(
        "--store-url",
        metavar="URL",
        default=None,
        help=(
            "the store to test, opened with jobsched.open_store; {tmp_path} and {token} "
            "are replaced per test so that each test gets an empty store"
        ),
    )


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from . import _hooks

    pluginmanager.add_hookspecs(_hooks)


def pytest_configure(config: pytest.Config) -> None:
    # With a store and no paths of the user's, the suite is what runs.
    if config.getoption("store_url") and config.args_source is not pytest.Config.ArgsSource.ARGS:
        config.args = [str(_HERE)]


@pytest.hookimpl(trylast=True)
def pytest_jobsched_store_url(url: str, tmp_path: Path) -> str:
    """The default: the placeholders replaced."""
    return url.replace("{tmp_path}", str(tmp_path)).replace("{token}", secrets.token_hex(8))


@pytest.hookimpl(trylast=True)
def pytest_jobsched_store_lapse(store: JobStore, seconds: float) -> bool:
    """The default: nothing to do, the store compares leases with the claim's ``now``."""
    del store, seconds
    return True


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
    from .. import _registry

    opened: list[JobStore] = []

    async def open_member() -> JobStore:
        store = _registry.open_store(store_url, secret=SECRET)
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
