"""W19-W20, a queue that is behind (issue 34): a backlog, and a held xmin.

Run as ``python -m benchmarks._backlog SYSTEM WORKLOAD SIZE`` (the suite's
child protocol, see :mod:`benchmarks._child`). Each phase runs on a fresh
database on the server of :mod:`benchmarks._postgres`, with autovacuum
running (:func:`benchmarks._pgserver.autovacuum_on`: where the server has
it off, it is switched on server-wide for the run and restored after). The
workers are a member process (:mod:`benchmarks._backlog_member`): jobsched's
``JobScheduler`` or the hand-written ``SKIP LOCKED`` loop of W10
(``raw``). The producer is this process: for jobsched a producer
(``num_workers=0``) that submits and flushes batches, for raw the loop's
inserts. Jobs are no-ops that carry their submit time.

- W19 backlog: for N in :data:`BACKLOGS`, N jobs inserted first, then the
  member's :data:`W19_WORKERS` workers drain at full speed while the producer
  keeps about N waiting (N + :data:`FLOOR` to N + FLOOR + one batch of
  :data:`BATCH`, counted from the member's ``done`` lines: no count on the
  server), ``size`` seconds timed after a warm-up. Figures: jobs/s at 0,
  jobs/s at 4,000 and 100,000 over jobs/s at 0, and row versions made dead
  per completed job (``n_tup_upd + n_tup_del`` over every table) at each N.
- W20 held xmin: the member (:data:`W20_WORKERS` workers, as W10c8) under a
  steady load of half the throughput jobsched reaches in a W10c8-like drain
  measured first in the same run; phases: clean, held (``size`` seconds with
  an idle-in-transaction session that has taken an xid), recovery. Figures
  per phase: jobs/s, submit-to-start p99 and the peak of the dead tuples
  sampled each second.

``JOBSCHED_BENCH_BACKLOGS`` (e.g. ``0,500,2000``) replaces W19's N for
smoke runs (the figures keep their names); ``JOBSCHED_BENCH_W20_RATE``
fixes W20's load in jobs/s (both systems at one load; else each run
calibrates its own).
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import threading
import time
from typing import Any

from benchmarks._postgres import ROOT, database
from benchmarks._workloads import Metric, Workload

BACKLOGS = tuple(
    int(n) for n in os.environ.get("JOBSCHED_BENCH_BACKLOGS", "0,4000,100000").split(",")
)
#: Jobs per producer batch (one flush, or one insert transaction).
BATCH = 128
#: Jobs kept waiting beyond N, so the workers never find the queue empty.
FLOOR = 512
W19_WORKERS = 64
W20_WORKERS = 8
#: The calibrating drain of W20 (jobs, 8 workers, as W10c8).
CALIBRATION = 4_000

_X = ("4k", "100k")
_AUTOVACUUM = (
    "Autovacuum: the server's settings; where the server has autovacuum off, it is "
    "switched on server-wide for the run (ALTER SYSTEM SET autovacuum = on and "
    "pg_reload_conf()) and restored after"
)
_W20_METRICS = (
    *(
        m
        for phase in ("clean", "held", "recovery")
        for m in (
            Metric(f"{phase}_jobs_per_s", f"{phase}: throughput", "jobs/s", True),
            Metric(f"{phase}_p99_ms", f"{phase}: submit to start p99", "ms", False),
            Metric(f"{phase}_dead", f"{phase}: peak dead tuples", "rows", False),
        )
    ),
    Metric("held_p99_x", "held p99 / clean p99", "x", False),
    Metric("load", "the steady load (half a W10c8 drain)", "jobs/s", True),
)
WORKLOADS = {
    w.wid: w
    for w in (
        Workload(
            "W19",
            f"a backlog: N = 0, 4,000, 100,000 jobs waiting first, then a producer keeping "
            f"about N waiting while {W19_WORKERS} workers in a member process drain at full "
            "speed for n seconds, autovacuum running; throughput at N over at 0, and row "
            "versions made dead per completed job; raw: W10's SKIP LOCKED loop. " + _AUTOVACUUM,
            (180,),
            (30,),
            (
                Metric("jobs_per_s", "throughput at 0 waiting", "jobs/s", True),
                Metric("x_4k", "throughput at 4,000 waiting / at 0", "x", True),
                Metric("x_100k", "throughput at 100,000 waiting / at 0", "x", True),
                Metric("dead_0", "dead row versions per job at 0", "rows", False),
                Metric("dead_4k", "dead row versions per job at 4,000", "rows", False),
                Metric("dead_100k", "dead row versions per job at 100,000", "rows", False),
            ),
        ),
        Workload(
            "W20",
            f"a held xmin: steady load at half of a W10c8 drain, {W20_WORKERS} workers in a "
            "member process, then n seconds with an idle-in-transaction session holding an "
            "xid, then recovery; per phase throughput, submit-to-start p99 and peak dead "
            "tuples; raw: W10's SKIP LOCKED loop at the same load. " + _AUTOVACUUM,
            (600,),
            (60,),
            _W20_METRICS,
        ),
    )
}


class Member:
    """The worker process, its ``done`` count read in a thread."""

    def __init__(self, system: str, url: str, workers: int) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        cmd = [sys.executable, "-m", "benchmarks._backlog_member", system, url, str(workers)]
        self.system = system
        self.process = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT, env=env
        )
        assert self.process.stdout is not None
        if self.process.stdout.readline().strip() != "ready":
            raise RuntimeError(f"member {cmd} did not start (exit {self.process.wait()})")
        self.done = 0
        self.result: dict[str, Any] = {}
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            kind, _, rest = line.strip().partition(" ")
            if kind == "done":
                self.done = int(rest)
            elif kind == "result":
                self.result = json.loads(rest)

    def phase(self, name: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(f"phase {name}\n")
        self.process.stdin.flush()

    def close(self) -> dict[str, Any]:
        """Stop it; its per-phase result."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            code = self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise
        self._reader.join(timeout=10)
        if code != 0 or not self.result:
            raise RuntimeError(f"the {self.system} member ended with exit {code}")
        return self.result


class Producer:
    """Submits batches of stamped no-op jobs: jobsched's producer or raw's inserts."""

    def __init__(self, system: str, url: str) -> None:
        self.system = system
        self.submitted = 0
        if system == "raw":
            from benchmarks import _postgres_raw as raw

            raw.create_schema(url)
            self._conn = raw.connect(url)
        else:
            import anyio.from_thread

            import jobsched as js

            self._portal_cm = anyio.from_thread.start_blocking_portal()
            self._portal = self._portal_cm.__enter__()
            self._scheduler = js.JobScheduler(num_workers=0, store=url)
            self._portal.call(self._scheduler.start)
            _experiment(url)

    def submit(self, count: int) -> None:
        """``count`` jobs, committed."""
        if self.system == "raw":
            from benchmarks import _postgres_raw as raw
            from benchmarks._work import noop

            now = time.time()
            payloads = [(pickle.dumps((noop, (now,))),)] * count
            with self._conn.transaction(), self._conn.cursor() as cursor:
                cursor.executemany(
                    "INSERT INTO jobs (status, priority, payload) VALUES ('pending', 0, %s)",
                    payloads,
                )
                cursor.execute(f"NOTIFY {raw.CHANNEL}")
        else:
            self._portal.call(self._submit, count)
        self.submitted += count

    async def _submit(self, count: int) -> None:
        from benchmarks._backlog_member import Stamped

        now = time.time()
        for _ in range(count):
            self._scheduler.submit(Stamped("w", now))
        await self._scheduler.flush()

    def close(self) -> None:
        if self.system == "raw":
            self._conn.close()
        else:
            self._portal.call(self._scheduler.stop)
            self._portal_cm.__exit__(None, None, None)


def _experiment(url: str) -> None:
    """``JOBSCHED_BENCH_SETUP``'s statements (``;`` between), once the store
    made its schema: the B side of an A/B of a schema change."""
    setup = os.environ.get("JOBSCHED_BENCH_SETUP", "")
    if not setup.strip():
        return
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        for statement in filter(str.strip, setup.split(";")):
            conn.execute(statement)


def _fill(producer: Producer, count: int) -> None:
    for start in range(0, count, 1_000):
        producer.submit(min(1_000, count - start))


# ── W19 ─────────────────────────────────────────────────────────────────────


def _backlog_phase(system: str, waiting: int, seconds: float) -> tuple[float, float]:
    """Jobs/s while about ``waiting`` wait, and dead row versions per job."""
    from benchmarks._pgserver import DeadSampler

    with database() as url:
        producer = Producer(system, url)
        try:
            _fill(producer, waiting + FLOOR)
            member = Member(system, url, W19_WORKERS)
            sampler = DeadSampler(url)
            try:
                target = waiting + FLOOR
                warm = min(10.0, seconds / 5)
                t0 = time.monotonic()
                timed = False
                before: dict[str, int] = {}
                done0 = 0
                while time.monotonic() - t0 < warm + seconds:
                    if not timed and time.monotonic() - t0 >= warm:
                        timed, done0, before = True, member.done, sampler.stats()
                        member.phase("run")
                        sampler.phase = "run"
                        t1 = time.monotonic()
                    if producer.submitted - member.done < target:
                        producer.submit(BATCH)
                    else:
                        time.sleep(0.002)
                elapsed = time.monotonic() - t1
                done = member.done - done0
                result = member.close()
                after = sampler.stats()
            finally:
                sampler.close()
                if member.process.poll() is None:
                    member.close()
        finally:
            producer.close()
    ran = result["run"]["done"] or done
    return done / elapsed, (after["killed"] - before["killed"]) / max(1, ran)


def w19(system: str, seconds: int) -> dict[str, float]:
    from benchmarks._pgserver import autovacuum_on

    out: dict[str, float] = {}
    rates = {}
    with autovacuum_on():
        # By position: JOBSCHED_BENCH_BACKLOGS may name fewer (an A/B at one N).
        for waiting, name in zip(BACKLOGS, ("0", *_X), strict=False):
            rate, dead = _backlog_phase(system, waiting, seconds)
            print(f"W19 {system} N={waiting}: {rate:.0f} jobs/s, {dead:.2f} dead/job",
                  file=sys.stderr, flush=True)  # fmt: skip
            rates[name] = rate
            out[f"dead_{name}"] = dead
    out["jobs_per_s"] = rates["0"]
    for name in _X:
        if name in rates:
            out[f"x_{name}"] = rates[name] / rates["0"]
    return out


# ── W20 ─────────────────────────────────────────────────────────────────────


def _calibrate() -> float:
    """Jobs/s of jobsched draining CALIBRATION jobs with W20_WORKERS workers."""
    import anyio

    from benchmarks import _postgres_jobsched

    return anyio.run(_postgres_jobsched._w10, CALIBRATION, W20_WORKERS)["jobs_per_s"]


def w20(system: str, held: int) -> dict[str, float]:
    from benchmarks._pgserver import DeadSampler, autovacuum_on, held_xid

    with autovacuum_on():
        # One load for both systems where the caller fixes it (the suite's
        # children each calibrate otherwise: the same notion, not one figure).
        fixed = os.environ.get("JOBSCHED_BENCH_W20_RATE")
        rate = float(fixed) if fixed else _calibrate() / 2
        around = min(60.0, max(5.0, held / 3))
        phases = (("clean", around), ("held", float(held)), ("recovery", around))
        print(f"W20 {system}: {rate:.0f} jobs/s, phases {phases}", file=sys.stderr, flush=True)
        with database() as url:
            producer = Producer(system, url)
            member = Member(system, url, W20_WORKERS)
            sampler = DeadSampler(url)
            elapsed: dict[str, float] = {}
            try:
                tick = 0.01
                for name, seconds in phases:
                    member.phase(name)
                    sampler.phase = name
                    print(f"W20 {system}: {name} at {time.time():.0f}", file=sys.stderr, flush=True)
                    holder = held_xid(url) if name == "held" else None
                    if holder is not None:
                        holder.__enter__()
                    try:
                        t0, first = time.monotonic(), producer.submitted
                        while (now := time.monotonic()) - t0 < seconds:
                            owed = rate * (now - t0) - (producer.submitted - first)
                            if owed >= 1:
                                producer.submit(int(owed))
                            time.sleep(tick)
                        elapsed[name] = time.monotonic() - t0
                    finally:
                        if holder is not None:
                            holder.__exit__(None, None, None)
                result = member.close()
            finally:
                sampler.close()
                if member.process.poll() is None:
                    member.close()
                producer.close()
    out: dict[str, float] = {}
    for name, _ in phases:
        out[f"{name}_jobs_per_s"] = result[name]["done"] / elapsed[name]
        out[f"{name}_p99_ms"] = result[name]["p99_ms"] or 0.0
        out[f"{name}_dead"] = float(max(sampler.samples.get(name, [0])))
    out["held_p99_x"] = out["held_p99_ms"] / out["clean_p99_ms"]
    out["load"] = rate
    return out


def run(system: str, workload: str, size: int) -> dict[str, float]:
    if system not in ("raw", "jobsched"):
        raise ValueError(f"{workload} runs raw and jobsched, not {system!r}")
    os.environ.setdefault("JOBSCHED_SECRET", "benchmark-secret")
    return {"W19": w19, "W20": w20}[workload](system, size)


if __name__ == "__main__":
    system, workload, size = sys.argv[1:4]
    print(json.dumps(run(system, workload, int(size))))
