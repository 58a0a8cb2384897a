"""Jobs that complete in their own transaction (``js.current_job().complete_in``),
for tests/test_complete_in.py and the member processes of
tests/test_complete_in_fleet.py: importable by reference anywhere.

Each inserts a row ``(tag, job_id, attempt, pid)`` into an app table of the
store's database and records its completion in the same transaction, with
``{"tag", "attempt", "pid"}`` as the result: the row and the stored result
name the attempt that committed. What a job does after (return, raise, hold
past its timeout, roll back) is an argument. A job in the test's own process
can wait on a gate (``GATES``, a ``threading.Event`` by name) between its
insert and its commit.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import psycopg

import jobsched as js

#: Gates a job in this process waits on, by name (set by the test).
GATES: dict[str, threading.Event] = {}
#: What the jobs of this process saw, by tag: the exceptions complete_in raised.
SEEN: dict[str, list[BaseException]] = {}
#: Set when a job of this process notes what it saw (SEEN), by tag, if the test made one.
NOTED: dict[str, threading.Event] = {}

#: Retries for a lost or failed attempt come quickly in these tests.
QUICK_RETRY = js.RetryPolicy(max_retries=8, base_delay=0.05, max_delay=0.2, jitter=False)


def create_table(url: str, table: str) -> None:
    """The app's table: no unique key, so a job that committed twice shows twice."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            f"CREATE TABLE {table} (tag text NOT NULL, job_id text NOT NULL, "
            "attempt int NOT NULL, pid int NOT NULL)"
        )


def rows(url: str, table: str) -> list[tuple[Any, ...]]:
    """The app table's rows: (tag, job_id, attempt, pid), by tag."""
    with psycopg.connect(url, autocommit=True) as conn:
        query = f"SELECT tag, job_id, attempt, pid FROM {table} ORDER BY tag"
        return conn.execute(query).fetchall()


def _row(table: str, tag: str) -> tuple[str, tuple[Any, ...], dict[str, Any]]:
    current = js.current_job()
    pid = os.getpid()
    insert = f"INSERT INTO {table} (tag, job_id, attempt, pid) VALUES (%s, %s, %s, %s)"
    return (
        insert,
        (tag, current.job_id, current.attempt, pid),
        {
            "tag": tag,
            "attempt": current.attempt,
            "pid": pid,
        },
    )


def _note(tag: str, exc: BaseException) -> None:
    SEEN.setdefault(tag, []).append(exc)
    noted = NOTED.get(tag)
    if noted is not None:
        noted.set()


async def complete(url: str, table: str, tag: str, then: str = "return", gate: str = "") -> str:
    """Insert and complete_in through an async psycopg connection, then ``then``:
    ``return`` (the function's own result, "returned"), ``raise``, ``sleep``
    (past any timeout), or ``rollback`` (the caller rolls its transaction back
    after complete_in, and returns)."""
    insert, values, result = _row(table, tag)
    async with await psycopg.AsyncConnection.connect(url) as conn:
        if then == "rollback":
            await conn.execute(insert, values)
            await js.current_job().complete_in(conn, result)
            await conn.rollback()
            return "returned"
        try:
            async with conn.transaction():
                await conn.execute(insert, values)
                if gate:
                    await anyio.to_thread.run_sync(GATES[gate].wait)
                await js.current_job().complete_in(conn, result)
                if then == "raise inside":
                    raise RuntimeError("after complete_in, inside the transaction")
        except js.LeaseLostError as exc:
            _note(tag, exc)
            raise
    if then == "raise":
        raise RuntimeError("after the commit")
    if then == "sleep":
        await anyio.sleep(3600)
    return "returned"


def complete_sync(url: str, table: str, tag: str, then: str = "return", gate: str = "") -> str:
    """As :func:`complete`, through a synchronous connection (a thread or process job)."""
    insert, values, result = _row(table, tag)
    if gate:
        GATES[gate].wait()
    with psycopg.connect(url) as conn:
        try:
            with conn.transaction():
                conn.execute(insert, values)
                js.current_job().complete_in(conn, result)  # writes before it returns
        except js.LeaseLostError as exc:
            _note(tag, exc)
            raise
    if then == "raise":
        raise RuntimeError("after the commit")
    return "returned"


async def complete_blocking(url: str, table: str, tag: str) -> str:
    """An async job on a synchronous connection: it never suspends (the
    scheduler's path for a job that completes without an await)."""
    insert, values, result = _row(table, tag)
    with psycopg.connect(url) as conn, conn.transaction():
        conn.execute(insert, values)
        await js.current_job().complete_in(conn, result)
    return "returned"


def late_sync(url: str, table: str, tag: str, gate: str) -> str:
    """Waits on ``gate`` (the test opens it once the attempt timed out), then
    tries to complete: the attempt is over here, so complete_in refuses."""
    GATES[gate].wait()
    insert, values, result = _row(table, tag)
    with psycopg.connect(url) as conn:
        try:
            with conn.transaction():
                conn.execute(insert, values)
                js.current_job().complete_in(conn, result)
        except BaseException as exc:
            _note(tag, exc)
            raise
    return "returned"


def misuse(url: str, kind: str) -> str:
    """complete_in with what it refuses; the error's type and text."""
    try:
        if kind == "not a connection":
            js.current_job().complete_in(object())
        elif kind == "autocommit":
            with psycopg.connect(url, autocommit=True) as conn:
                js.current_job().complete_in(conn)
        elif kind == "another database":
            with psycopg.connect(url) as conn, conn.transaction():
                js.current_job().complete_in(conn)
        elif kind == "repeatable read":
            with psycopg.connect(url) as conn:
                conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
                with conn.transaction():
                    js.current_job().complete_in(conn)
        elif kind == "unstorable result":
            with psycopg.connect(url) as conn, conn.transaction():
                js.current_job().complete_in(conn, threading.Lock())
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return "no error"


def handle() -> tuple[str, int]:
    """The job's own id and attempt, as js.current_job() says (a thread or process job)."""
    current = js.current_job()
    return current.job_id, current.attempt


async def handle_async() -> tuple[str, int]:
    """As :func:`handle`, in an async job, after an await and in a child task."""
    await anyio.lowlevel.checkpoint()
    found: list[tuple[str, int]] = []

    async def child() -> None:
        current = js.current_job()
        found.append((current.job_id, current.attempt))

    async with anyio.create_task_group() as group:
        group.start_soon(child)
    current = js.current_job()
    assert found == [(current.job_id, current.attempt)]
    return current.job_id, current.attempt


def fail_first(marker: str) -> tuple[str, int]:
    """Fails its first attempt, then returns its handle's id and attempt."""
    current = js.current_job()
    if current.attempt == 1:
        raise RuntimeError("first attempt")
    return current.job_id, current.attempt


def _log(path: Path, line: str) -> None:
    # One O_APPEND write per line: lines of several processes never interleave.
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, f"{line} {time.monotonic()}\n".encode())
    finally:
        os.close(fd)


#: Registered jobs (their results are stored as JSON).
app = js.App()


@app.job(name="txn.registered", retry=js.RetryPolicy(max_retries=0))
async def registered(url: str, table: str, tag: str) -> str:
    """:func:`complete` as a registered async job."""
    return await complete(url, table, tag)


@app.job(name="txn.registered_process", executor="process", retry=js.RetryPolicy(max_retries=0))
def registered_process(url: str, table: str, tag: str) -> str:
    """:func:`complete_sync` as a registered process job."""
    return complete_sync(url, table, tag)


@app.job(name="txn.held", retry=QUICK_RETRY, timeout=None)
async def held(url: str, table: str, tag: str, folder: str) -> str:
    """For a member that is paused past its lease: insert, log ``start``, wait
    (attempt 1 only) for the file ``go`` in ``folder``, then complete_in. A
    LeaseLostError is logged as ``lost`` and raised: the insert rolls back."""
    insert, values, result = _row(table, tag)
    current = js.current_job()
    log = Path(folder) / "log"
    async with await psycopg.AsyncConnection.connect(url) as conn:
        try:
            async with conn.transaction():
                await conn.execute(insert, values)
                _log(log, f"start {current.job_id} {current.attempt} {os.getpid()}")
                go = Path(folder) / "go"
                # Another process makes the file: no event reaches across processes.
                while current.attempt == 1 and not go.exists():  # noqa: ASYNC110
                    await anyio.sleep(0.01)
                await current.complete_in(conn, result)
        except js.LeaseLostError as exc:
            _log(log, f"lost {current.job_id} {current.attempt} {os.getpid()} {exc}")
            raise
    return "returned"


@app.job(name="txn.exactly_once", retry=QUICK_RETRY)
async def exactly_once(url: str, table: str, tag: str) -> str:
    """The fleet test's job: insert and complete_in in one transaction, with
    a pause inside it, so kills and resets land mid-transaction."""
    insert, values, result = _row(table, tag)
    async with await psycopg.AsyncConnection.connect(url) as conn, conn.transaction():
        await conn.execute(insert, values)
        await anyio.sleep(0.005)
        await js.current_job().complete_in(conn, result)
    return "returned"


#: Handles the jobs below found, by tag: (job_id, attempt), or the error's text.
FOUND: dict[str, list[Any]] = {}


def _found(tag: str) -> None:
    try:
        current = js.current_job()
        FOUND.setdefault(tag, []).append((current.job_id, current.attempt))
    except RuntimeError as exc:
        FOUND.setdefault(tag, []).append(str(exc))
    noted = NOTED.get(tag)
    if noted is not None:
        noted.set()


async def outlived(tag: str, gate: str) -> None:
    """Waits in a thread it abandons when cancelled (a timeout); the thread,
    once ``gate`` opens, notes the handle it finds."""

    def in_thread() -> None:
        GATES[gate].wait()
        _found(tag)

    await anyio.to_thread.run_sync(in_thread, abandon_on_cancel=True)


async def blocked(gate: str) -> None:
    """Runs until another job's thread has noted its handle: opens ``gate``
    for it, then waits for the note (the job being this worker's meanwhile)."""
    GATES[gate].set()
    await anyio.to_thread.run_sync(NOTED[gate].wait, 30)


async def stubborn(tag: str) -> str:
    """Attempt 1 ignores its cancellation past the scheduler's grace (it is
    abandoned, the job retried), then notes the handle it finds; later
    attempts return at once."""
    if js.current_job().attempt > 1:
        return "retried"
    try:
        await anyio.sleep(3600)
    except anyio.get_cancelled_exc_class():
        with anyio.CancelScope(shield=True):
            await anyio.sleep(1.5)  # past CANCEL_GRACE (1 s): abandoned meanwhile
        _found(tag)
        raise
    return "not reached"


@app.job(name="txn.after")
async def after() -> str:
    """A dependent that only says it ran."""
    return "after"
