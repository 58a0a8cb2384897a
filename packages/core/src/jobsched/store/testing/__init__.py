"""The store conformance suite, as a pytest plugin.

Every built-in store passes these tests; a third-party store runs them the
same way (docs/stores.md, "Writing a store")::

    pytest -p jobsched.store.testing --store-url 'dict://{token}'

``--store-url`` names the store under test. The plugin needs a fresh, empty
store for each test, so the URL may hold two placeholders, replaced per
test: ``{tmp_path}`` (the test's own temporary folder, for a store in a
file: ``sqlite:///{tmp_path}/jobs.db``) and ``{token}`` (a new random hex
string, for a store named in the URL); a URL with neither is a usage error,
unless a hook makes the URLs. A store that needs more (a new
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
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from jobsched.store import JobStore, mask_password

#: What ``--store-url`` may hold to name a new store per test.
PLACEHOLDERS = ("{tmp_path}", "{token}")

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
    url = config.getoption("store_url")
    if url == "memory":
        raise pytest.UsageError(
            "--store-url memory: the memory store keeps no jobs of its own (the scheduler "
            "holds them), so the store conformance suite does not apply; give a durable "
            "store's URL"
        )
    if url and not any(p in url for p in PLACEHOLDERS) and not _url_hooked(config):
        raise pytest.UsageError(_no_placeholder(url))
    # With a store and no paths of the user's, the suite is what runs.
    if url and config.args_source is not pytest.Config.ArgsSource.ARGS:
        config.args = [str(_HERE)]


def _url_hooked(config: pytest.Config) -> bool:
    """True when a plugin or conftest.py other than this one makes each test's URL."""
    this = sys.modules[__name__]
    hook = config.pluginmanager.hook.pytest_jobsched_store_url
    return any(impl.plugin is not this for impl in hook.get_hookimpls())


def _no_placeholder(url: str) -> str:
    # A fixed URL gave every test the same store: each found the jobs of the
    # tests before it, and the suite failed 49 times on duplicate ids.
    shown = mask_password(url)
    return (
        f"--store-url {shown!r} holds no placeholder, so every test would open the same "
        "store and find the jobs of the tests before it; each test needs a fresh, empty "
        "store. Write {tmp_path} where a file goes (the test's own folder: "
        "'sqlite:///{tmp_path}/jobs.db') or {token} where a name goes (a new random "
        "one per test: 'dict://{token}'), or implement the hook pytest_jobsched_store_url "
        "in a conftest.py or a plugin (-p) to make a new store per test (docs/stores.md, "
        '"Writing a store")'
    )


@pytest.hookimpl(trylast=True)
def pytest_jobsched_store_url(url: str, tmp_path: Path) -> str:
    """The default: the placeholders replaced."""
    return url.replace("{tmp_path}", str(tmp_path)).replace("{token}", secrets.token_hex(8))


@pytest.hookimpl(trylast=True)
def pytest_jobsched_store_lapse(store: JobStore, seconds: float) -> bool:
    """The default: nothing to do, the store compares leases with the claim's ``now``."""
    del store, seconds
    return True
