"""W16-W17, the producer API (issue 21): ``wait()``'s latency and idempotent submit's cost.

Run as ``python -m benchmarks._producers SYSTEM WORKLOAD SIZE`` (the suite's
child protocol, see :mod:`benchmarks._child`); ``python -m
benchmarks._producers URL`` is raw's worker process of W16. PostgreSQL runs
get databases of their own (:func:`benchmarks._postgres.database`).

- W16: ``wait()`` latency on PostgreSQL, from the outcome's commit to the
  waiter's return: a producer (``num_workers=0``) enqueues ``size`` no-op
  jobs one at a time (each after a random 5-25 ms pause, as W11) and waits
  for each; a member in another process runs them. Each sample is the
  waiter's ``time.time()`` just after ``wait()`` returned, minus the job's
  ``finished_at`` read from the store afterwards. ``finished_at`` is the
  worker's ``time.time()`` as the job ended, stamped before the outcome's
  transaction: the clock is the machine's one wall clock, read by both
  processes, and the sample includes the worker's group commit and the
  commit itself, so it overstates the commit-to-return latency, never
  understates it. ``raw``: a hand-written psycopg worker that stamps
  ``time.time()`` at the job's end, then writes the outcome and a NOTIFY
  in one transaction; the waiter LISTENs and reads the row when notified.
- W17: idempotent submit's cost per job against a plain submit, on SQLite
  and PostgreSQL, each half on a fresh store after a warm-up: one
  ``enqueue`` per request (``size // 10`` of them, each waiting for its
  commit, as a web process does) and batches of ``size`` ``submit``s then
  one ``flush`` (2 per half, ABBA). The figures are own-id
  time over plain time, in one process.
  ``raw``: the same ratios for hand-written SQL (sqlite3: ``INSERT`` against
  ``INSERT OR IGNORE`` of a given id; psycopg: one ``INSERT`` or a binary
  ``COPY`` against ``INSERT ... SELECT unnest(...) ON CONFLICT (id) DO
  NOTHING RETURNING id``): what the unique key costs at its floor.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import random
import select
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from benchmarks._postgres import Member, _latencies, _pause, database
from benchmarks._workloads import Metric, Workload

_RATIOS = tuple(
    Metric(f"{store}_{mode}_x", f"{store} {label}, own id / plain", "x", False)
    for store in ("sqlite", "pg")
    for mode, label in (("one", "one enqueue per request"), ("bulk", "submits then one flush"))
)
WORKLOADS = {
    w.wid: w
    for w in (
        Workload(
            "W16",
            "wait() latency on PostgreSQL, the outcome's commit (the store's finished_at, "
            "stamped before it) to the waiter's return; a producer waits, a member process "
            "runs the jobs; raw: psycopg LISTEN and a NOTIFY in the outcome's transaction",
            (200,),
            (100,),
            (
                Metric("p50_ms", "commit to wait() return p50", "ms", False),
                Metric("p99_ms", "commit to wait() return p99", "ms", False),
            ),
        ),
        Workload(
            "W17",
            "idempotent submit (job_id=) over plain, time per job, SQLite and PostgreSQL: "
            "n/10 enqueues one per request, and n submits then one flush; raw: the same "
            "ratios for hand-written INSERT OR IGNORE / ON CONFLICT against plain inserts",
            (3_000,),
            (1_000,),
            _RATIOS,
        ),
    )
}
RAW_DONE = "raw_done"
_WARM_UP = 64
#: ABBA rounds of W17's bulk batches, each half 2 batches a round: more rounds
#: measure a bigger table, where hashed keys cost more (see docs/performance.md).
_BULK_ROUNDS = 1


def _secret() -> None:
    # As in benchmarks._postgres: the store refuses to start without one.
    os.environ.setdefault("JOBSCHED_SECRET", "benchmark-secret")


# ── W16 ──────────────────────────────────────────────────────────────────


async def _w16_jobsched(size: int) -> dict[str, float]:
    import anyio
    import anyio.to_thread
    import psycopg

    import jobsched as js
    from benchmarks._stores import Noop
    from jobsched._jobs._ids import id_number

    rng = random.Random(0)
    returned: list[tuple[str, float]] = []
    with database() as url:
        member = await anyio.to_thread.run_sync(
            lambda: Member("benchmarks._postgres_jobsched", url, report=False)
        )
        try:
            async with js.JobScheduler(num_workers=0, store=url) as web:
                # One job first, not counted: the member's first claim and
                # the producer's first read pay one-time costs.
                await web.wait(await web.enqueue(Noop("warm-up")), timeout=60)
                for _ in range(size):
                    await anyio.sleep(_pause(rng))
                    job_id = await web.enqueue(Noop("w15"))
                    job = await web.wait(job_id, timeout=60)
                    back = time.time()
                    if job.status is not js.JobStatus.COMPLETED:
                        raise RuntimeError(f"{job_id} ended {job.status.value}")
                    returned.append((job_id, back))
        finally:
            await anyio.to_thread.run_sync(member.close)
        with psycopg.connect(url) as conn:
            finished = dict(
                conn.execute(
                    "SELECT id, finished_at FROM jobsched_jobs WHERE id = ANY(%s)",
                    ([id_number(j) for j, _ in returned],),
                ).fetchall()
            )
    return _latencies([back - finished[id_number(j)] for j, back in returned])


def _w16_raw(size: int) -> dict[str, float]:
    from benchmarks import _postgres_raw as raw

    rng = random.Random(0)
    samples = []
    with database() as url:
        raw.create_schema(url)
        member = Member("benchmarks._producers", url, report=False)
        conn = raw.connect(url)
        listener = raw.connect(url)
        listener.execute(f"LISTEN {RAW_DONE}")
        try:
            for n in range(size + 1):
                time.sleep(_pause(rng))
                job_id = raw.insert_one(conn)
                for note in listener.notifies(timeout=60):
                    if note.payload == str(job_id):
                        break
                row = conn.execute(
                    "SELECT status, payload, extract(epoch from finished_at)::float8 "
                    "FROM jobs WHERE id = %s",
                    (job_id,),
                ).fetchone()
                back = time.time()
                if row is None or row[0] != "completed":
                    raise RuntimeError(f"raw job {job_id}: {row}")
                if n:  # the first is the warm-up
                    samples.append(back - row[2])
        finally:
            listener.close()
            conn.close()
            member.close()
    return _latencies(samples)


def raw_member(url: str) -> None:
    """W16's raw worker: claims when notified, stamps each job's end, then
    writes its outcome and a NOTIFY of its id in one transaction."""
    from benchmarks import _postgres_raw as raw

    owner = f"raw-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    conn = raw.connect(url)
    listener = raw.connect(url)
    listener.execute(f"LISTEN {raw.CHANNEL}")
    print("ready", flush=True)
    while True:
        while rows := raw.claim(conn, owner):
            for job_id, payload in rows:
                func, args = pickle.loads(payload)
                _run(func, args)
                ended = time.time()
                with conn.transaction():
                    conn.execute(
                        "UPDATE jobs SET status = 'completed', finished_at = to_timestamp(%s), "
                        "owner = NULL WHERE id = %s AND owner = %s",
                        (ended, job_id, owner),
                    )
                    conn.execute("SELECT pg_notify(%s, %s)", (RAW_DONE, str(job_id)))
        readable, _, _ = select.select([listener.fileno(), sys.stdin], [], [])
        if sys.stdin in readable and not sys.stdin.readline():
            return
        for _ in listener.notifies(timeout=0):
            pass


def _run(func: Any, args: tuple[Any, ...]) -> None:
    coro = func(*args)
    try:
        coro.send(None)  # the no-op coroutine ends at its first step
    except StopIteration:
        return
    raise RuntimeError(f"{func} did not finish at once")


# ── W17 ──────────────────────────────────────────────────────────────────


class _Side:
    """One half of a W17 comparison: a store taking plain or own-id jobs."""

    def __init__(self, own: bool) -> None:
        self.own = own
        self.tag = uuid.uuid4().hex[:6]
        self.count = 0

    def next_id(self) -> str | None:
        self.count += 1
        return f"order-{self.tag}-{self.count}" if self.own else None

    async def one(self) -> None:
        """One job, committed before it returns (a web request's enqueue)."""
        raise NotImplementedError

    async def bulk(self, n: int) -> None:
        """``n`` jobs, then one commit of them all."""
        raise NotImplementedError


async def _compare(
    plain: _Side, own: _Side, size: int, rounds: int = _BULK_ROUNDS
) -> tuple[float, float]:
    """Own-id time over plain time, per request and in bulk. The halves
    alternate (requests one by one, bulk batches in ABBA order, ``rounds``
    times) so a drift of the machine's load counts against both alike; a
    batch takes tens of ms, so bulk compares the median of each half's
    batches. (W21 compares other sides the same way: ``own`` is the
    numerator.)"""
    for side in (plain, own):
        await side.bulk(_WARM_UP)
        await side.one()
    spent = {False: [0.0, 0.0], True: [0.0, 0.0]}
    for i in range(max(1, size // 10)):
        for side in (plain, own) if i % 2 == 0 else (own, plain):
            t0 = time.perf_counter()
            await side.one()
            spent[side.own][0] += time.perf_counter() - t0
    batches: dict[bool, list[float]] = {False: [], True: []}
    for side in (plain, own, own, plain) * rounds:
        t0 = time.perf_counter()
        await side.bulk(size)
        batches[side.own].append(time.perf_counter() - t0)
    bulk = statistics.median(batches[True]) / statistics.median(batches[False])
    return spent[True][0] / spent[False][0], bulk


class _Scheduler(_Side):
    def __init__(self, scheduler: Any, own: bool) -> None:
        from benchmarks._stores import Noop

        super().__init__(own)
        self.s, self.job = scheduler, Noop

    async def one(self) -> None:
        await self.s.enqueue(self.job("request"), job_id=self.next_id())

    async def bulk(self, n: int) -> None:
        for _ in range(n):
            self.s.submit(self.job("bulk"), job_id=self.next_id())
        await self.s.flush()


async def _w17_jobsched(size: int) -> dict[str, float]:
    import jobsched as js

    out: dict[str, float] = {}
    folder = Path(tempfile.mkdtemp(prefix="jobsched-w16-"))
    try:
        with database() as plain_pg, database() as own_pg:
            urls = {
                "sqlite": (f"sqlite:///{folder / 'plain.db'}", f"sqlite:///{folder / 'own.db'}"),
                "pg": (plain_pg, own_pg),
            }
            for store, (plain_url, own_url) in urls.items():
                async with (
                    js.JobScheduler(num_workers=0, store=plain_url) as plain,
                    js.JobScheduler(num_workers=0, store=own_url) as own,
                ):
                    ratios = await _compare(_Scheduler(plain, False), _Scheduler(own, True), size)
                out[f"{store}_one_x"], out[f"{store}_bulk_x"] = ratios
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return out


def _own_key(job_id: str) -> int:
    """A negative 63-bit key from a hash, as the stores make of an id of one's
    own: keys land all over the primary key's B-tree, not at its end."""
    digest = hashlib.blake2b(job_id.encode(), digest_size=8).digest()
    return -(int.from_bytes(digest, "big") >> 1) - 1


_PAYLOAD = pickle.dumps(("benchmark", ()))


class _RawSQLite(_Side):
    """sqlite3 with the store's durability (WAL, synchronous NORMAL)."""

    def __init__(self, path: Path, own: bool) -> None:
        super().__init__(own)
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode = WAL")
        self.conn.execute("PRAGMA synchronous = NORMAL")
        self.conn.execute("CREATE TABLE jobs (id INTEGER PRIMARY KEY, status TEXT, payload BLOB)")
        verb = "INSERT OR IGNORE" if own else "INSERT"
        self.sql = f"{verb} INTO jobs (id, status, payload) VALUES (?, 'pending', ?)"

    def _insert(self, n: int) -> None:
        rows = [(_own_key(j) if (j := self.next_id()) else None, _PAYLOAD) for _ in range(n)]
        self.conn.execute("BEGIN IMMEDIATE")
        self.conn.executemany(self.sql, rows)
        self.conn.execute("COMMIT")

    async def one(self) -> None:
        self._insert(1)

    async def bulk(self, n: int) -> None:
        self._insert(n)


class _RawPostgres(_Side):
    """psycopg: a plain job by one INSERT (a batch by binary COPY), one of
    one's own by the store's statement, ``INSERT ... SELECT unnest(...) ON
    CONFLICT (id) DO NOTHING RETURNING id``."""

    def __init__(self, url: str, own: bool) -> None:
        import psycopg

        super().__init__(own)
        self.conn = psycopg.connect(url, autocommit=True)
        self.conn.execute(
            "CREATE TABLE jobs (id BIGINT PRIMARY KEY, status TEXT NOT NULL, payload BYTEA)"
        )
        self.serial = 0

    def _insert(self, n: int) -> None:
        conn = self.conn
        with conn.transaction():
            if self.own:
                ids = [_own_key(self.next_id() or "") for _ in range(n)]
                conn.execute(
                    "INSERT INTO jobs (id, status, payload) SELECT * FROM "
                    "unnest(%s::int8[], %s::text[], %s::bytea[]) "
                    "ON CONFLICT (id) DO NOTHING RETURNING id",
                    (ids, ["pending"] * n, [_PAYLOAD] * n),
                ).fetchall()
                return
            ids = list(range(self.serial + 1, self.serial + n + 1))
            self.serial += n
            if n == 1:
                conn.execute(
                    "INSERT INTO jobs (id, status, payload) VALUES (%s, 'pending', %s)",
                    (ids[0], _PAYLOAD),
                )
                return
            with conn.cursor().copy(
                "COPY jobs (id, status, payload) FROM STDIN (FORMAT BINARY)"
            ) as copy:
                copy.set_types(["int8", "text", "bytea"])
                for job_id in ids:
                    copy.write_row((job_id, "pending", _PAYLOAD))

    async def one(self) -> None:
        self._insert(1)

    async def bulk(self, n: int) -> None:
        self._insert(n)


async def _w17_raw(size: int) -> dict[str, float]:
    out: dict[str, float] = {}
    folder = Path(tempfile.mkdtemp(prefix="jobsched-w16-raw-"))
    try:
        plain, own = _RawSQLite(folder / "plain.db", False), _RawSQLite(folder / "own.db", True)
        out["sqlite_one_x"], out["sqlite_bulk_x"] = await _compare(plain, own, size)
        with database() as plain_url, database() as own_url:
            pg_plain, pg_own = _RawPostgres(plain_url, False), _RawPostgres(own_url, True)
            try:
                out["pg_one_x"], out["pg_bulk_x"] = await _compare(pg_plain, pg_own, size)
            finally:
                pg_plain.conn.close()
                pg_own.conn.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return out


# ── the entry point ───────────────────────────────────────────────────────


def run(system: str, workload: str, size: int) -> dict[str, float]:
    """One measurement of W16 or W17 on ``system`` (``raw`` or ``jobsched``)."""
    _secret()
    import anyio

    if system == "raw" and workload == "W16":
        return _w16_raw(size)
    measure = {
        ("raw", "W17"): _w17_raw,
        ("jobsched", "W16"): _w16_jobsched,
        ("jobsched", "W17"): _w17_jobsched,
    }[(system, workload)]
    return anyio.run(measure, size)


if __name__ == "__main__":
    if len(sys.argv) == 2:
        raw_member(sys.argv[1])
    else:
        system, workload, size = sys.argv[1:4]
        print(json.dumps(run(system, workload, int(size))))
