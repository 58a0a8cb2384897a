"""W21 and W7c8/W10c8 with registered jobs: ``@app.job`` against ``FunctionJob`` (issue 33).

Run as ``python -m benchmarks._registered SYSTEM WORKLOAD SIZE`` (the
suite's child protocol, see :mod:`benchmarks._child`); W7c8 and W10c8 reach
:func:`c8` through :mod:`benchmarks._c8`. PostgreSQL runs get databases of
their own (:func:`benchmarks._postgres.database`).

Both sides run the same function, :func:`send_email`, a no-op coroutine
with realistic arguments (:data:`ARGS`: a str, an int, an aware datetime and
a small dict): as a ``js.FunctionJob`` today (a signed pickle of the
function and its arguments) and as a registered job (``app.job(send_email)``:
its name and tagged-JSON arguments, run by name from the app's registry).

- W21: a registered job's enqueue cost over the same ``FunctionJob``'s, per
  job, on SQLite and PostgreSQL, in one process, each side on a fresh store
  after a warm-up, ABBA as W17 (:func:`benchmarks._producers._compare`,
  with :data:`_BULK_ROUNDS` rounds of bulk batches):
  ``await f.enqueue(*ARGS)`` against ``await s.enqueue(FunctionJob(...))``
  (``size // 10`` of them, each waiting for its commit), and batches of
  ``size`` ``s.submit(f.job(*ARGS))`` against ``s.submit(FunctionJob(...))``
  then one ``flush``. ``raw``: the same ratios for hand-written SQL, a row
  with a signed pickle of the function and arguments against one with
  their JSON text: what the encoding costs at its floor.
- ``jobsched-app`` and ``jobsched-fn`` (W7c8, W10c8): the rows' run with 8
  workers, every job a registered :func:`send_email` call (a scheduler
  built by ``app.scheduler()``: claims filter on the app's names, runs
  decode the JSON) or the same call as a ``FunctionJob`` (a plain
  ``JobScheduler``). A run that does not complete every job is an error.
  ``python -m benchmarks._registered alternate W7c8 SIZE ROUNDS`` (or
  W10c8) runs both in one process instead, ABBA, each on a fresh store, and
  also reports the process's CPU per job (:func:`alternate`): the ratio a
  loaded machine disturbs least.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import os
import pickle
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import jobsched as js
from benchmarks._producers import _compare, _Side
from benchmarks._workloads import Metric, Workload

W21 = Workload(
    "W21",
    "a registered job's enqueue (@app.job, JSON arguments) over the same FunctionJob's "
    "(a signed pickle), time per job, SQLite and PostgreSQL: n/10 enqueues one per "
    "request, and n submits then one flush; raw: the same ratios for hand-written "
    "inserts of a signed pickle against JSON text",
    (3_000,),
    (1_000,),
    tuple(
        Metric(f"{store}_{mode}_x", f"{store} {label}, registered / FunctionJob", "x", False)
        for store in ("sqlite", "pg")
        for mode, label in (("one", "one enqueue per request"), ("bulk", "submits then one flush"))
    ),
)
#: The W7c8/W10c8 systems of this module: registered jobs, and the same
#: calls as FunctionJobs, each against raw like jobsched.
SYSTEMS = ("jobsched-app", "jobsched-fn")
#: ABBA rounds of W21's bulk batches (W17 runs one): the two sides differ by
#: a few µs a job, less than a loaded machine's drift over one round.
_BULK_ROUNDS = 3
CONCURRENCY = 8

app = js.App()


async def send_email(to: str, order: int, at: dt.datetime, meta: dict[str, Any]) -> None:
    """The job's work: none (every row times the scheduler, not the job)."""
    return None


#: The same function registered: ``benchmarks._registered.send_email``. The
#: module attribute stays the plain function, which FunctionJob pickles by
#: reference.
send_email_job = app.job(send_email)

ARGS = (
    "ann@example.com",
    12345,
    dt.datetime(2026, 1, 2, 9, 30, tzinfo=dt.timezone.utc),
    {"plan": "pro", "items": 3, "coupon": None},
)


def _secret() -> None:
    # As benchmarks._postgres: the store refuses to start without one.
    os.environ.setdefault("JOBSCHED_SECRET", "benchmark-secret")


# ── W21 ──────────────────────────────────────────────────────────────────


class _Function(_Side):
    """Today's call: a FunctionJob of the function, its arguments pickled."""

    def __init__(self, scheduler: js.JobScheduler) -> None:
        super().__init__(own=False)
        self.s = scheduler

    async def one(self) -> None:
        await self.s.enqueue(js.FunctionJob(send_email, ARGS))

    async def bulk(self, n: int) -> None:
        for _ in range(n):
            self.s.submit(js.FunctionJob(send_email, ARGS))
        await self.s.flush()


class _App(_Side):
    """The registered call: ``f.enqueue`` (the app finds its running
    scheduler), ``f.job`` for a batch."""

    def __init__(self, scheduler: js.JobScheduler) -> None:
        super().__init__(own=True)
        self.s = scheduler

    async def one(self) -> None:
        await send_email_job.enqueue(*ARGS)

    async def bulk(self, n: int) -> None:
        for _ in range(n):
            self.s.submit(send_email_job.job(*ARGS))
        await self.s.flush()


async def _w21_jobsched(size: int) -> dict[str, float]:
    from benchmarks._postgres import database

    out: dict[str, float] = {}
    folder = Path(tempfile.mkdtemp(prefix="jobsched-w21-"))
    try:
        with database() as fn_pg, database() as app_pg:
            urls = {
                "sqlite": (f"sqlite:///{folder / 'fn.db'}", f"sqlite:///{folder / 'app.db'}"),
                "pg": (fn_pg, app_pg),
            }
            for store, (fn_url, app_url) in urls.items():
                async with (
                    js.JobScheduler(num_workers=0, store=fn_url) as plain,
                    app.scheduler(num_workers=0, store=app_url) as registered,
                ):
                    ratios = await _compare(_Function(plain), _App(registered), size, _BULK_ROUNDS)
                out[f"{store}_one_x"], out[f"{store}_bulk_x"] = ratios
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return out


_KEY = b"benchmark-secret"


def _pickled() -> tuple[bytes, None]:
    """The FunctionJob side's row at its floor: a signed pickle, no JSON."""
    data = pickle.dumps((send_email, ARGS, {}), protocol=pickle.HIGHEST_PROTOCOL)
    return hmac.new(_KEY, data, hashlib.sha256).digest() + data, None


def _json_row() -> tuple[bytes, str]:
    """The registered side's row at its floor: its arguments' JSON, the datetime tagged."""
    to, order, at, meta = ARGS
    text = json.dumps(
        {"to": to, "order": order, "at": {"$dt": at.isoformat()}, "meta": meta},
        separators=(",", ":"),
    )
    return b"J", text


class _RawRows(_Side):
    """Hand-written inserts of rows (payload, args), one side's encoding each."""

    def __init__(self, registered: bool) -> None:
        super().__init__(own=registered)
        self.row = _json_row if registered else _pickled

    def _insert(self, rows: list[tuple[bytes, str | None]]) -> None:
        raise NotImplementedError

    async def one(self) -> None:
        self._insert([self.row()])

    async def bulk(self, n: int) -> None:
        self._insert([self.row() for _ in range(n)])


class _RawSQLite(_RawRows):
    """sqlite3 with the store's durability (WAL, synchronous NORMAL)."""

    def __init__(self, path: Path, registered: bool) -> None:
        super().__init__(registered)
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode = WAL")
        self.conn.execute("PRAGMA synchronous = NORMAL")
        self.conn.execute(
            "CREATE TABLE jobs (id INTEGER PRIMARY KEY, status TEXT, payload BLOB, args TEXT)"
        )

    def _insert(self, rows: list[tuple[bytes, str | None]]) -> None:
        self.conn.execute("BEGIN IMMEDIATE")
        self.conn.executemany(
            "INSERT INTO jobs (status, payload, args) VALUES ('pending', ?, ?)", rows
        )
        self.conn.execute("COMMIT")


class _RawPostgres(_RawRows):
    """psycopg: the store's way of inserting a batch, ``INSERT ... SELECT unnest(...)``."""

    def __init__(self, url: str, registered: bool) -> None:
        import psycopg

        super().__init__(registered)
        self.conn = psycopg.connect(url, autocommit=True)
        self.conn.execute(
            "CREATE TABLE jobs (id BIGSERIAL PRIMARY KEY, status TEXT NOT NULL, "
            "payload BYTEA NOT NULL, args JSONB)"
        )

    def _insert(self, rows: list[tuple[bytes, str | None]]) -> None:
        with self.conn.transaction():
            self.conn.execute(
                "INSERT INTO jobs (status, payload, args) SELECT 'pending', * FROM "
                "unnest(%s::bytea[], %s::jsonb[])",
                ([p for p, _ in rows], [a for _, a in rows]),
            )


async def _w21_raw(size: int) -> dict[str, float]:
    from benchmarks._postgres import database

    out: dict[str, float] = {}
    folder = Path(tempfile.mkdtemp(prefix="jobsched-w21-raw-"))
    try:
        fn, registered = _RawSQLite(folder / "fn.db", False), _RawSQLite(folder / "app.db", True)
        out["sqlite_one_x"], out["sqlite_bulk_x"] = await _compare(
            fn, registered, size, _BULK_ROUNDS
        )
        with database() as fn_url, database() as app_url:
            pg_fn, pg_app = _RawPostgres(fn_url, False), _RawPostgres(app_url, True)
            try:
                out["pg_one_x"], out["pg_bulk_x"] = await _compare(
                    pg_fn, pg_app, size, _BULK_ROUNDS
                )
            finally:
                pg_fn.conn.close()
                pg_app.conn.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return out


# ── W7c8 and W10c8 with registered jobs ───────────────────────────────────


async def _throughput(url: str, size: int, registered: bool) -> dict[str, float]:
    """``size`` calls submitted, run by 8 workers and committed: jobs per
    second, and this process's CPU µs per job (all its threads; not the
    server's), which another session's load disturbs less than the clock."""
    scheduler = (
        app.scheduler(num_workers=CONCURRENCY, store=url)
        if registered
        else js.JobScheduler(num_workers=CONCURRENCY, store=url)
    )
    failed: list[js.Job] = []

    def listener(job: js.Job, old: js.JobStatus, new: js.JobStatus) -> None:
        if new.is_terminal and new is not js.JobStatus.COMPLETED:
            failed.append(job)

    scheduler.add_listener(listener)
    async with scheduler:
        t0, cpu0 = time.perf_counter(), time.process_time()
        if registered:
            for _ in range(size):
                scheduler.submit(send_email_job.job(*ARGS))
        else:
            for _ in range(size):
                scheduler.submit(js.FunctionJob(send_email, ARGS))
        await scheduler.join()
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    if failed:
        raise RuntimeError(f"{len(failed)} jobs did not complete: {failed[0].last_error}")
    return {"jobs_per_s": size / elapsed, "cpu_us": cpu / size * 1e6}


async def _fresh(workload: str, size: int, registered: bool) -> dict[str, float]:
    """One :func:`_throughput` on a fresh SQLite file (W7c8) or database (W10c8)."""
    if workload == "W7c8":
        from benchmarks import _stores

        with _stores._scratch() as path:
            return await _throughput(f"sqlite:///{path}", size, registered)
    from benchmarks._postgres import database

    with database() as url:
        return await _throughput(url, size, registered)


async def alternate(workload: str, size: int, rounds: int) -> dict[str, Any]:
    """W7c8's or W10c8's registered run over its FunctionJob run in one
    process, ``rounds`` ABBA rounds, each run on a fresh store: a drift of
    the machine's load counts against both alike. Medians, and the ratios
    of the medians (app over fn; above 1 is faster for jobs_per_s, slower
    for cpu_us)."""
    import statistics

    from benchmarks import _stores

    await _stores._warm_up()
    runs: dict[bool, list[dict[str, float]]] = {False: [], True: []}
    for registered in (False, True, True, False) * rounds:
        runs[registered].append(await _fresh(workload, size, registered))
    out: dict[str, Any] = {}
    for key in ("jobs_per_s", "cpu_us"):
        fn, reg = (statistics.median(r[key] for r in runs[side]) for side in (False, True))
        out[f"fn_{key}"], out[f"app_{key}"], out[f"{key}_x"] = fn, reg, reg / fn
        out[f"{key}_x_each"] = [
            round(a[key] / b[key], 3) for a, b in zip(runs[True], runs[False], strict=True)
        ]
    return out


def c8(system: str, workload: str, size: int) -> dict[str, float]:
    """One W7c8 (a fresh SQLite file, after W7's warm-up) or W10c8 (a fresh
    database, one member) run of ``jobsched-app`` or ``jobsched-fn``."""
    if system not in SYSTEMS:
        raise ValueError(f"benchmarks._registered runs {', '.join(SYSTEMS)}, not {system!r}")
    registered = system == "jobsched-app"
    _secret()
    import anyio

    if workload == "W7c8":
        from benchmarks import _stores

        async def measure() -> dict[str, float]:
            await _stores._warm_up()
            return await _fresh(workload, size, registered)

        return anyio.run(measure)
    return anyio.run(_fresh, workload, size, registered)


def run(system: str, workload: str, size: int) -> dict[str, float]:
    """One measurement of W21 on ``system`` (``raw`` or ``jobsched``)."""
    _secret()
    import anyio

    measure = {"raw": _w21_raw, "jobsched": _w21_jobsched}[system]
    return anyio.run(measure, size)


if __name__ == "__main__":
    # Through the module's own name: the registered function must be
    # ``benchmarks._registered.send_email``, not ``__main__.send_email``.
    from benchmarks import _registered

    if sys.argv[1] == "alternate":
        # python -m benchmarks._registered alternate W7c8|W10c8 SIZE ROUNDS
        import anyio

        _secret()
        row, jobs, rounds = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
        print(json.dumps(anyio.run(_registered.alternate, row, jobs, rounds)))
    else:
        system, workload, size = sys.argv[1:4]
        print(json.dumps(_registered.run(system, workload, int(size))))
