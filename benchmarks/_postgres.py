"""W10-W12, a fleet on PostgreSQL: jobsched's store against a hand-written psycopg loop.

Run as ``python -m benchmarks._postgres SYSTEM WORKLOAD SIZE`` (the suite's
child protocol, see :mod:`benchmarks._child`). Every run creates a database
of its own on the local server (``JOBSCHED_BENCH_PG``, default
``postgresql://postgres@127.0.0.1:5432``; names start with
``JOBSCHED_BENCH_PREFIX``, default ``jobsched_bench``) and drops it at the end. ``raw`` is
:mod:`benchmarks._postgres_raw`; procrastinate and APScheduler 4 run W10 in
:mod:`benchmarks._postgres_others`.

- W10: ``size`` no-op jobs submitted, run and completed through one member
  with :data:`WORKERS` workers; timed from the first submit until every
  completion is committed.
- W11: submit-to-start latency on an idle member (another process, woken by
  NOTIFY): ``size`` jobs one at a time, each after a random pause of 5-25 ms
  so the member is idle again; from just before the submit (``enqueue``,
  or the raw insert's commit) to the member marking the job started, both
  read on the machine-wide ``time.monotonic()``.
- W12: W10 through two members (this process and a member process) against
  one (this process alone), each on a fresh database in the same run: the
  two-member throughput and its ratio to one member's.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from benchmarks._work import percentile
from benchmarks._workloads import Metric, Workload

#: Workers of a member, as for the SQLite store (W7): a claim takes at most
#: as many jobs as are idle, and every transaction waits for a commit.
WORKERS = 64
SERVER = os.environ.get("JOBSCHED_BENCH_PG", "postgresql://postgres@127.0.0.1:5432")
#: How the names of the runs' databases start (the smoke test checks none is left).
PREFIX = os.environ.get("JOBSCHED_BENCH_PREFIX", "jobsched_bench")

WORKLOADS = {
    w.wid: w
    for w in (
        Workload(
            "W10",
            f"no-op async jobs through one member on the local PostgreSQL (submit, run, "
            f"complete), {WORKERS} workers; raw: a hand-written psycopg loop, batched inserts, "
            "SKIP LOCKED claims and completions",
            (20_000,),
            (5_000,),
            (Metric("jobs_per_s", "throughput", "jobs/s", True),),
        ),
        Workload(
            "W11",
            "submit-to-start latency on an idle member (another process, woken by NOTIFY)",
            (500,),
            (200,),
            (
                Metric("p50_ms", "submit to start p50", "ms", False),
                Metric("p99_ms", "submit to start p99", "ms", False),
            ),
        ),
        Workload(
            "W12",
            "W10 through two members (two processes) against one, same run",
            (20_000,),
            (5_000,),
            (
                Metric("jobs_per_s", "two-member throughput", "jobs/s", True),
                Metric("speedup", "two members / one", "x", True),
            ),
        ),
    )
}
#: Systems beyond the suite's three that run W10 (benchmarks._postgres_others).
EXTRA_SYSTEMS = ("procrastinate",)
ROOT = Path(__file__).resolve().parent.parent


# ── databases and member processes ─────────────────────────────────────────


@contextmanager
def database() -> Iterator[str]:
    """A fresh database on the server for one run; its URL. Dropped on the way out."""
    import psycopg

    name = f"{PREFIX}_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(f"{SERVER}/postgres", autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"{SERVER}/{name}"
    finally:
        with psycopg.connect(f"{SERVER}/postgres", autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


class Member:
    """A member process: says ``ready``, reports ``started ID MONOTONIC``, stops at EOF."""

    def __init__(self, module: str, url: str, *, report: bool) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        cmd = [sys.executable, "-m", module, url, *(["--report"] if report else [])]
        self.process = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT, env=env
        )
        if self._line() != "ready":
            raise RuntimeError(f"member {cmd} did not start")

    def _line(self) -> str:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"member process ended (exit {self.process.wait()})")
        return line.strip()

    def started(self) -> tuple[str, float]:
        """The next job the member started: its id and when."""
        kind, job_id, at = self._line().split()
        assert kind == "started", kind
        return job_id, float(at)

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise


def _latencies(samples: list[float]) -> dict[str, float]:
    return {"p50_ms": percentile(samples, 50) * 1e3, "p99_ms": percentile(samples, 99) * 1e3}


def _pause(rng: random.Random) -> float:
    return rng.uniform(0.005, 0.025)


# ── raw ─────────────────────────────────────────────────────────────────────
# psycopg is imported by the runs only: the suite imports this module for its
# workloads wherever the benchmark dependencies are not installed.


def _raw_throughput(url: str, size: int, *, members: int) -> float:
    from benchmarks import _postgres_raw as raw

    raw.create_schema(url)
    extra = [Member("benchmarks._postgres_raw", url, report=False) for _ in range(members - 1)]
    conn = raw.connect(url)
    try:
        t0 = time.perf_counter()
        raw.insert(conn, size)
        asyncio.run(raw.dispatch(conn, f"raw-{os.getpid()}"))
        # The other members may still be finishing their last batch.
        while raw.left(conn):
            time.sleep(0.001)
        elapsed = time.perf_counter() - t0
    finally:
        conn.close()
        for member in extra:
            member.close()
    return size / elapsed


def raw_w10(size: int) -> dict[str, float]:
    with database() as url:
        return {"jobs_per_s": _raw_throughput(url, size, members=1)}


def raw_w11(size: int) -> dict[str, float]:
    from benchmarks import _postgres_raw as raw

    rng = random.Random(0)
    samples = []
    with database() as url:
        raw.create_schema(url)
        member = Member("benchmarks._postgres_raw", url, report=True)
        conn = raw.connect(url)
        try:
            for _ in range(size):
                time.sleep(_pause(rng))
                t0 = time.monotonic()
                job_id = raw.insert_one(conn)
                started, at = member.started()
                assert started == str(job_id), (started, job_id)
                samples.append(at - t0)
        finally:
            conn.close()
            member.close()
    return _latencies(samples)


def raw_w12(size: int) -> dict[str, float]:
    with database() as url:
        one = _raw_throughput(url, size, members=1)
    with database() as url:
        two = _raw_throughput(url, size, members=2)
    return {"jobs_per_s": two, "speedup": two / one}


# ── the entry point ─────────────────────────────────────────────────────────


def run(system: str, workload: str, size: int) -> dict[str, float]:
    """One measurement of a PostgreSQL workload, each on databases of its own."""
    # The PostgreSQL store refuses to start without a secret; member processes
    # inherit it. Set here, in the run's own process: the suite imports this
    # module too, and its other children (the SQLite rows) must not sign.
    os.environ.setdefault("JOBSCHED_SECRET", "benchmark-secret")
    if system == "raw":
        return {"W10": raw_w10, "W11": raw_w11, "W12": raw_w12}[workload](size)
    if system == "jobsched":
        from benchmarks import _postgres_jobsched

        return _postgres_jobsched.run(workload, size)
    from benchmarks import _postgres_others

    with database() as url:
        return _postgres_others.run(system, workload, url, size)


if __name__ == "__main__":
    system, workload, size = sys.argv[1:4]
    print(json.dumps(run(system, workload, int(size))))
