"""A PostgreSQL database of its own for a test: created on the local server, dropped after.

The server is the one every machine of this project runs (127.0.0.1:5432,
trust auth, user postgres); ``JOBSCHED_TEST_PG`` points elsewhere. Without a
server the tests that need one are skipped with the reason, except in CI
(``CI`` set), where a missing server is a failure: CI starts it.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

#: The maintenance database tests connect to, to create and drop their own.
ADMIN_URL = os.environ.get("JOBSCHED_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")
#: The secret test stores sign with.
SECRET = "test-secret"


def _admin():  # type: ignore[no-untyped-def]
    import psycopg

    return psycopg.connect(ADMIN_URL, autocommit=True, connect_timeout=5)


def reachable() -> str | None:
    """None if the server answers, else why not."""
    try:
        import psycopg
    except ImportError:
        return "psycopg is not installed (uv sync installs jobsched-store-postgres)"
    try:
        _admin().close()
    except psycopg.Error as exc:
        return f"no PostgreSQL server at {ADMIN_URL}: {' '.join(str(exc).split())}"
    return None


def require_server() -> None:
    """Skip the test without a server (fail in CI, which must have one)."""
    reason = reachable()
    if reason is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI must start the server (.ci/run does)", pytrace=False)
    pytest.skip(reason)


def url_of(database: str) -> str:
    base, _, _ = ADMIN_URL.rpartition("/")
    return f"{base}/{database}"


def schema_url(database_url: str) -> str:
    """A URL whose connections work in a new, empty schema of ``database_url``.

    Cheaper than a database per store (milliseconds, not a second), and as
    separate: the store's tables are found through ``search_path``.
    """
    import psycopg

    name = f"s_{secrets.token_hex(6)}"
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {name}")
    return f"{database_url}?options=-csearch_path%3D{name}"


#: What every test database's name starts with; the creating process's id follows.
PREFIX = "jobsched_test_"


def drop_stale_databases() -> list[str]:
    """Drop the test databases whose creating process no longer exists; their names.

    A run killed before its teardown (a timeout, ^C twice, a crashed
    interpreter) leaves its database behind, and the next runs on the
    machine would pile them up. Only on a server on this machine, where a
    name's process id means a process here.
    """
    from urllib.parse import urlparse

    # The check a store uses for its members' owner ids.
    from jobsched.store._members import _alive

    if urlparse(ADMIN_URL).hostname not in ("127.0.0.1", "localhost", "::1", None):
        return []
    dropped = []
    with _admin() as conn:
        names = [
            name
            for (name,) in conn.execute(
                "SELECT datname FROM pg_database WHERE starts_with(datname, %s)", (PREFIX,)
            )
        ]
        for name in names:
            pid = name.removeprefix(PREFIX).partition("_")[0]
            if pid.isdigit() and not _alive(int(pid)):
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
                dropped.append(name)
    return dropped


@contextmanager
def database() -> Iterator[str]:
    """The URL of a new, empty database, dropped on exit (with its connections)."""
    require_server()
    drop_stale_databases()
    name = f"{PREFIX}{os.getpid()}_{secrets.token_hex(4)}"
    with _admin() as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield url_of(name)
    finally:
        with _admin() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _execute(url: str, statement: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(statement)


def age(url: str, seconds: float) -> None:
    """Let ``seconds`` pass on the server's clock, for every stored lease:
    leases are the server's (the members' ``now`` is never compared with them)."""
    for table in ("jobsched_jobs", "jobsched_schedules"):
        _execute(
            url,
            f"UPDATE {table} SET lease_until = lease_until - {seconds} "
            "WHERE lease_until IS NOT NULL",
        )
