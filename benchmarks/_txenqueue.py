"""W22: a web request that inserts one app row and enqueues one job in one
transaction (``f.options(connection=conn).enqueue``, issue 35), over the same
request inserting the row, committing, then enqueueing through the
scheduler's pool (``await f.enqueue``: its group commit).

Run as ``python -m benchmarks._txenqueue SYSTEM W22 SIZE`` (the suite's
child protocol, see :mod:`benchmarks._child`). ``size`` requests a side, the
two sides alternating (ABBA) in one process so that a drift of the
machine's load counts against both; each store fresh (a database of its own
on PostgreSQL, a file on SQLite), the app's table beside jobsched's. The
figure is the time per request, in the transaction over after it (target
<= 1.0x: one commit instead of two, and on PostgreSQL one round trip
fewer).

``raw``: the same two requests in hand-written SQL, an app row and a job
row in one transaction against two transactions: the floor of the ratio.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import jobsched as js
from benchmarks._workloads import Metric, Workload

W22 = Workload(
    "W22",
    "a request inserting an app row and enqueueing a registered job in one transaction "
    "(connection=) over the row committed then the job enqueued through the pool, time per "
    "request, PostgreSQL and SQLite; raw: two inserts in one transaction over two",
    (2_000,),
    (200,),
    tuple(
        Metric(f"{store}_x", f"{label}, in the transaction / after it", "x", False)
        for store, label in (("pg", "PostgreSQL"), ("sqlite", "SQLite"))
    ),
)

app = js.App()


async def send_receipt(order: int) -> None:
    """The job: none of its work is measured (nothing runs it here)."""
    return None


#: Registered as ``benchmarks._txenqueue.send_receipt``.
send_receipt_job = app.job(send_receipt)

_APP_TABLE = "CREATE TABLE orders (id integer PRIMARY KEY, total integer NOT NULL)"


async def _alternate(
    inside: Callable[[int], Awaitable[None]], after: Callable[[int], Awaitable[None]], size: int
) -> float:
    """``inside``'s total time over ``after``'s, the requests alternating ABBA."""
    for n in range(2):  # warm-up: connections, prepared statements, the first block of ids
        await inside(-1 - n)
        await after(-10 - n)
    spent = {inside: 0.0, after: 0.0}
    for i in range(size):
        for side in (inside, after) if i % 2 == 0 else (after, inside):
            t0 = time.perf_counter()
            await side(2 * i + (side is after))
            spent[side] += time.perf_counter() - t0
    return spent[inside] / spent[after]


async def _pg_jobsched(url: str, size: int) -> float:
    import psycopg

    async with (
        app.scheduler(num_workers=0, store=url),
        await psycopg.AsyncConnection.connect(url) as conn,
    ):
        await conn.execute(_APP_TABLE)
        await conn.commit()

        async def inside(order: int) -> None:
            await conn.execute("INSERT INTO orders VALUES (%s, 1)", (order,))
            await send_receipt_job.options(connection=conn).enqueue(order)
            await conn.commit()

        async def after(order: int) -> None:
            await conn.execute("INSERT INTO orders VALUES (%s, 1)", (order,))
            await conn.commit()
            await send_receipt_job.enqueue(order)

        return await _alternate(inside, after, size)


async def _sqlite_jobsched(path: str, size: int) -> float:
    async with app.scheduler(num_workers=0, store=f"sqlite:///{path}"):
        conn = sqlite3.connect(path)  # the app's own, once the store made its schema
        try:
            conn.execute(_APP_TABLE)
            conn.commit()

            async def inside(order: int) -> None:
                conn.execute("INSERT INTO orders VALUES (?, 1)", (order,))
                await send_receipt_job.options(connection=conn).enqueue(order)
                conn.commit()

            async def after(order: int) -> None:
                conn.execute("INSERT INTO orders VALUES (?, 1)", (order,))
                conn.commit()
                await send_receipt_job.enqueue(order)

            return await _alternate(inside, after, size)
        finally:
            conn.close()


async def _pg_raw(url: str, size: int) -> float:
    import psycopg

    async with await psycopg.AsyncConnection.connect(url) as conn:
        await conn.execute(_APP_TABLE)
        await conn.execute(
            "CREATE TABLE jobs (id bigserial PRIMARY KEY, name text, payload bytea, args jsonb)"
        )
        await conn.commit()
        job = "INSERT INTO jobs (name, payload, args) VALUES ('send_receipt', 'J', %s)"

        async def inside(order: int) -> None:
            await conn.execute("INSERT INTO orders VALUES (%s, 1)", (order,))
            await conn.execute(job, (json.dumps({"order": order}),))
            await conn.commit()

        async def after(order: int) -> None:
            await conn.execute("INSERT INTO orders VALUES (%s, 1)", (order,))
            await conn.commit()
            await conn.execute(job, (json.dumps({"order": order}),))
            await conn.commit()

        return await _alternate(inside, after, size)


async def _sqlite_raw(path: str, size: int) -> float:
    # The store's durability: WAL, synchronous FULL (a commit is on disk).
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute(_APP_TABLE)
        conn.execute(
            "CREATE TABLE jobs (id INTEGER PRIMARY KEY, name TEXT, payload BLOB, args TEXT)"
        )
        conn.commit()
        job = "INSERT INTO jobs (name, payload, args) VALUES ('send_receipt', 'J', ?)"

        async def inside(order: int) -> None:
            conn.execute("INSERT INTO orders VALUES (?, 1)", (order,))
            conn.execute(job, (json.dumps({"order": order}),))
            conn.commit()

        async def after(order: int) -> None:
            conn.execute("INSERT INTO orders VALUES (?, 1)", (order,))
            conn.commit()
            conn.execute(job, (json.dumps({"order": order}),))
            conn.commit()

        return await _alternate(inside, after, size)
    finally:
        conn.close()


async def _measure(system: str, size: int) -> dict[str, float]:
    from benchmarks import _stores
    from benchmarks._postgres import database

    pg, lite = (_pg_raw, _sqlite_raw) if system == "raw" else (_pg_jobsched, _sqlite_jobsched)
    out: dict[str, float] = {}
    with database() as url:
        out["pg_x"] = await pg(url, size)
    with _stores._scratch() as path:
        out["sqlite_x"] = await lite(str(path), size)
    return out


def run(system: str, workload: str, size: int) -> dict[str, Any]:
    """One measurement of W22 on ``system`` (``raw`` or ``jobsched``)."""
    if workload != W22.wid or system not in ("raw", "jobsched"):
        raise ValueError(
            f"benchmarks._txenqueue runs W22 on raw and jobsched, not {system} {workload}"
        )
    # As benchmarks._postgres: the store refuses to start without a secret.
    os.environ.setdefault("JOBSCHED_SECRET", "benchmark-secret")
    import anyio

    return anyio.run(_measure, system, size)


if __name__ == "__main__":
    # Through the module's own name: the registered job is
    # ``benchmarks._txenqueue.send_receipt``, not ``__main__.send_receipt``.
    from benchmarks import _txenqueue

    system, workload, size = sys.argv[1:4]
    print(json.dumps(_txenqueue.run(system, workload, int(size))))
