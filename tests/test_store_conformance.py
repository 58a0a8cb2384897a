"""The store conformance suite (``jobsched.store.testing``) run as a store
author runs it, ``pytest -p jobsched.store.testing --store-url URL``, against
each store in this repository: the SQLite store, the PostgreSQL store (a
database of its own for the run) and the guide's example, examples/store-dict.

The suite's modules live in the core's package and nowhere else, so every
store passes the same tests. The memory store is not a ``JobStore`` that
holds jobs (the scheduler does): the scheduler tests cover it (conftest.py
runs them on every store), and the plugin refuses ``--store-url memory``.

Each run is a pytest of its own in a subprocess: the suite's 67 tests take
what they took in tests/ before they moved (SQLite about 6 s, PostgreSQL
about 10 s, the dict store 1.5 s), plus about 1.5 s to start each pytest.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

#: Each test is a pytest run of its own; a loaded machine takes its time.
pytestmark = pytest.mark.timeout(600)

ROOT = Path(__file__).resolve().parent.parent
TESTS = Path(__file__).resolve().parent
#: The suite has 163 tests: a run of fewer collected only part of it.
SUITE_AT_LEAST = 163


def run_suite(url: str, *args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """The suite against ``url``; run from the checkout (its pytest settings:
    warnings are errors, a timeout per test) unless ``cwd`` says otherwise."""
    env = {**os.environ, "PYTHONPATH": str(TESTS)}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "jobsched.store.testing", "--store-url", url,
         "-q", "-W", "error", "-p", "no:cacheprovider", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


def passed(run: subprocess.CompletedProcess[str]) -> int:
    """How many tests passed, asserting that nothing else happened: every
    test of the suite collected and passed (a skip proves nothing)."""
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
    summary = run.stdout.strip().splitlines()[-1]
    match = re.fullmatch(r"(\d+) passed in [\d.]+s( \([\d:]+\))?", summary)
    assert match, f"not only passes: {summary!r}"
    return int(match.group(1))


def test_the_sqlite_store_passes() -> None:
    assert passed(run_suite("sqlite:///{tmp_path}/jobs.db")) >= SUITE_AT_LEAST


@pytest.mark.postgres
def test_the_postgres_store_passes() -> None:
    """On a new database, a schema per test (tests/pg_conformance.py's hooks,
    which also age leases on the server's clock)."""
    from pg import database

    with database() as url:
        assert passed(run_suite(url, "-p", "pg_conformance")) >= SUITE_AT_LEAST


def test_the_example_dict_store_passes_outside_the_checkout(tmp_path: Path) -> None:
    """examples/store-dict, installed as a third party's package, run from a
    folder of its own (no settings of this repository). Without pytest-asyncio,
    which this environment has for other tests and a store's need not: anyio's
    plugin runs the suite."""
    run = run_suite("dict://{token}", "-p", "no:asyncio", cwd=tmp_path)
    assert passed(run) >= SUITE_AT_LEAST


def test_the_memory_store_is_refused_with_the_reason() -> None:
    run = run_suite("memory")
    assert run.returncode != 0
    assert "the memory store" in run.stderr, run.stderr


def test_a_url_without_a_placeholder_is_a_usage_error(tmp_path: Path) -> None:
    """A fixed URL would give every test one store (49 failures on duplicate
    ids): refused before any test runs, saying how to write it, the password masked."""
    # Outside the checkout, as the store's author runs it (no pytest-asyncio: see below).
    run = run_suite("postgresql://me:hunter2@localhost/jobs", "-p", "no:asyncio", cwd=tmp_path)
    assert run.returncode == pytest.ExitCode.USAGE_ERROR, run.stdout + run.stderr
    assert "holds no placeholder" in run.stderr and "fresh, empty store" in run.stderr
    assert (
        "'sqlite:///{tmp_path}/jobs.db'" in run.stderr and "pytest_jobsched_store_url" in run.stderr
    )
    assert "hunter2" not in run.stderr and "me:***@" in run.stderr
    fixed = run_suite("sqlite:///x.db", "-p", "no:asyncio", cwd=tmp_path)
    assert fixed.returncode == pytest.ExitCode.USAGE_ERROR, fixed.stdout + fixed.stderr
    assert not (tmp_path / "x.db").exists()


def test_a_hook_that_makes_the_urls_lets_a_fixed_url_through(tmp_path: Path) -> None:
    """A conftest.py implementing pytest_jobsched_store_url makes each test's
    store itself, so the URL it is given need hold no placeholder."""
    (tmp_path / "conftest.py").write_text(
        "def pytest_jobsched_store_url(url, tmp_path):\n"
        "    return f'sqlite:///{tmp_path}/jobs.db'\n"
    )
    module = "jobsched.store.testing.test_limits"
    run = run_suite("sqlite:///shared.db", "--pyargs", module, "-p", "no:asyncio", cwd=tmp_path)
    assert passed(run) > 0
    assert not (tmp_path / "shared.db").exists()


def test_importing_the_store_seam_loads_no_pytest() -> None:
    """The plugin imports pytest, a dependency of the tests only: ``import
    jobsched.store`` (what a store package does) must not load it."""
    code = (
        "import sys, jobsched, jobsched.store\n"
        "from jobsched.store import JobStore, check_limit, take_turns, dead_local\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('pytest', '_pytest')\n"
        "                or m.startswith('jobsched.store.testing'))\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
