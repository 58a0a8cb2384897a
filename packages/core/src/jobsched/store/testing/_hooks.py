"""The hooks a store package may implement for the conformance suite (in a
plugin of its own, ``-p``, or a ``conftest.py``); the first result wins."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobsched.store import JobStore


@pytest.hookspec(firstresult=True)
def pytest_jobsched_store_url(url: str, tmp_path: Path) -> str | None:
    """The URL of a new, empty store for one test, from ``--store-url``'s
    ``url``; None to leave it to the next implementation. The default
    replaces ``{tmp_path}`` with the test's temporary folder and ``{token}``
    with a new random hex string."""


@pytest.hookspec(firstresult=True)
def pytest_jobsched_store_lapse(store: JobStore, seconds: float) -> bool | None:
    """Let ``seconds`` pass for ``store``'s leases, for a store that does not
    compare them with the ``now`` its claims get (a database server's clock);
    True when done, None to leave it to the next implementation. The default
    does nothing."""
