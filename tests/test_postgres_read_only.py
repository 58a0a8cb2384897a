"""PostgreSQL that refuses writes (a hot standby, a failover that left the URL
on a replica, ``default_transaction_read_only``) is an outage like any other,
and a connection the server ends and the pool replaces at once is none.

Each test has a database of its own (tests/pg.py), flipped read-only with
``ALTER DATABASE ... SET default_transaction_read_only`` and its sessions
ended, as an operator's maintenance freeze does. The outage is logged once
(one WARNING, one INFO) on every logger, psycopg's pool's included.
"""

from __future__ import annotations

import logging
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import anyio
import pg
import psycopg
import pytest
from poison_jobs import Quick

import jobsched as js
from jobsched._engine._link import _timing
from jobsched_postgres import PostgresStore

pytestmark = [pytest.mark.anyio, pytest.mark.postgres, pytest.mark.timeout(120)]

TESTS = Path(__file__).resolve().parent
SCRIPT = str(Path(os.environ.get("VIRTUAL_ENV", TESTS.parent / ".venv")) / "bin" / "jobsched")
WARNED = "is unavailable"
BACK = "is back after"


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(autouse=True)
def quick_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        _timing, "STORE_BACKOFF", js.RetryPolicy(max_retries=0, base_delay=0.02, max_delay=0.2)
    )


@pytest.fixture
def url() -> Iterator[str]:
    with pg.database() as made:
        yield made


def read_only(url: str, on: bool, *, end: bool = True) -> None:
    """The database's default for new sessions, and (``end``) every session of it ended."""
    name = url.rpartition("/")[2]
    with psycopg.connect(pg.ADMIN_URL, autocommit=True) as conn:
        conn.execute(
            f'ALTER DATABASE "{name}" SET default_transaction_read_only = {"on" if on else "off"}'
        )
        if end:
            end_sessions(conn, name)


def end_sessions(conn: psycopg.Connection[object], name: str, where: str = "true") -> int:
    return len(
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            f"WHERE datname = %s AND pid <> pg_backend_pid() AND {where}",
            (name,),
        ).fetchall()
    )


def store_of(url: str) -> PostgresStore:
    return PostgresStore(url, secret=pg.SECRET)


def said(caplog: pytest.LogCaptureFixture, level: int) -> list[str]:
    return [f"{r.name}: {r.getMessage()}" for r in caplog.records if r.levelno == level]


@pytest.fixture
async def created(url: str) -> str:
    """The database with the store's schema made (then flipped by the test)."""
    store = store_of(url)
    await store.open()
    await store.close()
    return url


@pytest.mark.parametrize("schema", [False, True])
async def test_a_scheduler_started_on_a_read_only_database_says_so(url: str, schema: bool) -> None:
    if schema:
        store = store_of(url)
        await store.open()
        await store.close()
    read_only(url, True)
    with pytest.raises(js.StoreUnavailableError) as info:
        async with js.JobScheduler(store=store_of(url)):
            pass
    message = str(info.value)
    assert "is read-only (transaction_read_only is on)" in message
    assert "hot standby or replica" in message and "default_transaction_read_only" in message
    assert "\n" not in message


def test_a_worker_started_on_a_read_only_database_exits_with_one_line(url: str) -> None:
    read_only(url, True)
    done = subprocess.run(
        [SCRIPT, "worker", "--store", url, "--import", "cli_jobs"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "PYTHONPATH": str(TESTS), "JOBSCHED_SECRET": pg.SECRET},
        cwd=TESTS,
    )
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if "read-only" in line]
    assert len(errors) == 1, done.stderr
    assert "default_transaction_read_only" in errors[0]


async def test_a_database_read_only_for_a_while_is_one_outage(
    created: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    url = created
    async with js.JobScheduler(store=store_of(url)) as s:
        first = [s.submit(Quick(i)) for i in range(20)]
        with anyio.fail_after(60):
            await s.join()
        read_only(url, True)
        await anyio.sleep(0.5)  # the sessions' ends reach the pool
        later = [s.submit(Quick(i)) for i in range(20, 40)]
        with anyio.fail_after(60):
            while not any(WARNED in line for line in said(caplog, logging.WARNING)):  # noqa: ASYNC110
                await anyio.sleep(0.05)
        await anyio.sleep(1.0)  # retries meet the read-only database a while
        read_only(url, False)
        with anyio.fail_after(60):
            await s.join()
        for i, job_id in enumerate(first + later):
            assert await s.result(job_id) == i
    warned = said(caplog, logging.WARNING)
    assert len(warned) == 1, warned
    assert warned[0].startswith("jobsched: the store")
    back = [line for line in said(caplog, logging.INFO) if BACK in line]
    assert len(back) == 1, back
    assert said(caplog, logging.ERROR) == []


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_write_on_a_read_only_database_is_unavailable_until_it_takes_writes(
    created: str,
) -> None:
    """Each session that met the read-only database is closed and the call
    tried on the next: once the default is off again, the first call writes
    (no session needs ending)."""
    url = created
    store = store_of(url)
    await store.open()
    try:
        read_only(url, True)
        for _ in range(2):  # the first may meet a session just ended
            with pytest.raises(js.StoreUnavailableError) as info:
                await anyio.to_thread.run_sync(store.reserve_ids, 1)
        assert "is read-only (cannot execute UPDATE in a read-only transaction)" in str(info.value)
        read_only(url, False, end=False)
        # The sessions that met it closed, the next made now: the first
        # call after writes again finds one that takes them.
        await anyio.to_thread.run_sync(store.reserve_ids, 1)
    finally:
        await store.close()


async def test_enqueue_on_a_read_only_database_raises_unavailable_after_its_wait(
    created: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_timing, "UNAVAILABLE_WAIT", 1.0)
    url = created
    async with js.JobScheduler(store=store_of(url)) as s:
        await s.flush()
        read_only(url, True)
        with anyio.fail_after(60), pytest.raises(js.StoreUnavailableError, match="read-only"):
            await s.enqueue(Quick(1))
        read_only(url, False)
        with anyio.fail_after(60):
            await s.flush()
            await s.join()


async def test_connections_ended_while_idle_are_replaced_without_an_outage(
    created: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The server ends every idle session of the store (its pool's and its
    LISTEN connection) three times: no outage is logged, by jobsched or by
    psycopg's pool, and the jobs after each complete."""
    caplog.set_level(logging.INFO)
    url = created
    name = url.rpartition("/")[2]
    async with js.JobScheduler(store=store_of(url)) as s:
        for round_ in range(3):
            ids = [s.submit(Quick(i)) for i in range(10)]
            with anyio.fail_after(60):
                await s.join()
            assert [await s.result(job_id) for job_id in ids] == list(range(10))
            await anyio.sleep(0.2)  # the claimer and heartbeat idle again
            with psycopg.connect(pg.ADMIN_URL, autocommit=True) as conn:
                assert end_sessions(conn, name, "state = 'idle'") > 0, round_
        ids = [s.submit(Quick(i)) for i in range(10)]
        with anyio.fail_after(60):
            await s.join()
    assert said(caplog, logging.WARNING) == []
    assert [line for line in said(caplog, logging.INFO) if BACK in line] == []


def test_the_drivers_records_are_folded_for_this_store_alone(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Below ERROR, psycopg's records made in a store call or in the store's
    pool threads are dropped; another pool's, and any ERROR, are kept."""
    import threading

    from jobsched_postgres import _poollog

    _poollog.install()
    pool_log, driver_log = logging.getLogger("psycopg.pool"), logging.getLogger("psycopg")
    transaction_log = logging.getLogger("psycopg.transaction")
    caplog.set_level(logging.INFO)

    def in_thread(name: str) -> None:
        worker = threading.Thread(
            target=lambda: pool_log.warning("error connecting in %r: refused", "x"), name=name
        )
        worker.start()
        worker.join()

    in_thread(f"{_poollog.POOL_NAME}-worker-0")
    in_thread("theirs-worker-0")
    with _poollog.store_call():
        pool_log.warning("discarding closed connection: ours")
        driver_log.warning("error ignored terminating a pipeline: ours")
        transaction_log.warning("error ignored in rollback: ours")
        pool_log.error("an error of ours")
    driver_log.warning("a record of another connection")
    kept = [(r.name, r.getMessage()) for r in caplog.records]
    assert kept == [
        ("psycopg.pool", "error connecting in 'x': refused"),
        ("psycopg.pool", "an error of ours"),
        ("psycopg", "a record of another connection"),
    ]
