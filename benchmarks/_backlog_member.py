"""The worker processes of W19-W20: jobsched's member and the hand-written loop.

``python -m benchmarks._backlog_member SYSTEM URL WORKERS`` (SYSTEM: ``raw``
or ``jobsched``) runs jobs until its standard input closes. It prints
``ready`` once serving and ``done N`` (jobs run so far) every
:data:`TICK` seconds, so the producer can keep a backlog without counting
rows on the server. A line ``phase NAME`` on its input starts a phase; at
the end it prints ``result JSON``: per phase, the jobs run and the
submit-to-start latencies' p50 and p99 (ms), each job carrying its submit
time (the machine's one wall clock, read by both processes).
"""

from __future__ import annotations

import json
import os
import pickle
import select
import sys
import threading
import time
import uuid
from typing import Any

import jobsched as js
from benchmarks._work import percentile

#: Seconds between the member's ``done`` lines.
TICK = 0.005


class Phases:
    """The phase now, and per phase the jobs run and their latencies."""

    def __init__(self) -> None:
        self.name = "start"
        self.done = 0
        self.latencies: dict[str, list[float]] = {"start": []}
        self.done_at: dict[str, int] = {"start": 0}
        self.stopped = threading.Event()
        # JOBSCHED_BENCH_TRACE=PATH: per wall-clock second of the starts, the
        # jobs started, their latency's max and how many waited over 100 and
        # 500 ms, written to PATH at the end (to line a p99 up with the
        # server's log of slow statements, autovacuum and checkpoints).
        self.trace_path = os.environ.get("JOBSCHED_BENCH_TRACE")
        self.trace: dict[int, list[float]] = {}

    def started(self, submitted_at: float) -> None:
        now = time.time()
        latency = now - submitted_at
        self.latencies[self.name].append(latency)
        if self.trace_path:
            second = self.trace.setdefault(int(now), [0, 0.0, 0, 0])
            second[0] += 1
            second[1] = max(second[1], latency)
            second[2] += latency > 0.1
            second[3] += latency > 0.5

    def switch(self, name: str) -> None:
        self.name = name
        self.latencies.setdefault(name, [])
        self.done_at[name] = self.done

    def read_input(self) -> None:
        """Phases from standard input until it closes (in a thread)."""
        for line in sys.stdin:
            kind, _, name = line.strip().partition(" ")
            if kind == "phase":
                self.switch(name)
        self.stopped.set()

    def report(self) -> None:
        def tick() -> None:
            while not self.stopped.wait(TICK):
                sys.stdout.write(f"done {self.done}\n")
                sys.stdout.flush()

        threading.Thread(target=tick, daemon=True).start()

    def result(self) -> dict[str, Any]:
        if self.trace_path:
            with open(self.trace_path, "w") as out:
                for second, (n, worst, over100, over500) in sorted(self.trace.items()):
                    out.write(f"{second} {n} {worst * 1e3:.1f} {over100} {over500}\n")
        names = list(self.done_at)
        out = {}
        for i, name in enumerate(names):
            end = self.done_at[names[i + 1]] if i + 1 < len(names) else self.done
            lat = self.latencies[name]
            out[name] = {
                "done": end - self.done_at[name],
                "p50_ms": percentile(lat, 50) * 1e3 if lat else None,
                "p99_ms": percentile(lat, 99) * 1e3 if lat else None,
            }
        return out


# ── jobsched ────────────────────────────────────────────────────────────────

_PHASES = Phases()


class Stamped(js.AsyncJob):
    """A no-op job that carries its submit time (stored as its own field)."""

    __slots__ = ("at",)

    def __init__(self, name: str, at: float) -> None:
        super().__init__(name)
        self.at = at

    async def run(self) -> None:
        _PHASES.started(self.at)


async def _jobsched(url: str, workers: int) -> None:
    import anyio
    import anyio.to_thread

    scheduler = js.JobScheduler(num_workers=workers, store=url)

    def completed(job: js.Job, old: js.JobStatus, new: js.JobStatus) -> None:
        if new is js.JobStatus.COMPLETED:
            _PHASES.done += 1

    scheduler.add_listener(completed)
    async with scheduler:
        print("ready", flush=True)
        _PHASES.report()
        await anyio.to_thread.run_sync(_PHASES.read_input)
        await scheduler.stop(cancel_running=True)


# ── raw: the loop of benchmarks._postgres_raw, batches of 64 ────────────────


def _raw(url: str, batch: int) -> None:
    from benchmarks import _postgres_raw as raw

    owner = f"raw-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    conn = raw.connect(url)
    listener = raw.connect(url)
    listener.execute(f"LISTEN {raw.CHANNEL}")
    threading.Thread(target=_PHASES.read_input, daemon=True).start()
    print("ready", flush=True)
    _PHASES.report()
    while not _PHASES.stopped.is_set():
        rows = conn.execute(raw._CLAIM, (batch, owner)).fetchall()
        for _, payload in rows:
            _, (at,) = pickle.loads(payload)
            _PHASES.started(at)
        if rows:
            conn.execute(raw._DONE, ([job_id for job_id, _ in rows], owner))
            _PHASES.done += len(rows)
            continue
        # Empty: wait for an insert's NOTIFY (or a moment, to see the stop).
        select.select([listener.fileno()], [], [], TICK)
        for _ in listener.notifies(timeout=0):
            pass
    conn.close()
    listener.close()


# ── where the time goes: every statement's wall time, by its text ──────────
# pg_stat_statements needs shared_preload_libraries (a server restart);
# this counts what the member waits for instead, per statement.
_SPENT: dict[str, list[float]] = {}


def _profile() -> None:
    import psycopg

    plain = psycopg.Cursor.execute

    def execute(self: Any, query: Any, params: Any = None, **kw: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return plain(self, query, params, **kw)
        finally:
            text = query if isinstance(query, str) else repr(query)
            key = f"{_PHASES.name:>8} " + " ".join(text.split())[:80]
            spent = _SPENT.setdefault(key, [0, 0.0])
            spent[0] += 1
            spent[1] += time.perf_counter() - t0

    psycopg.Cursor.execute = execute  # type: ignore[method-assign]


def _print_profile() -> None:
    total = sum(t for _, t in _SPENT.values()) or 1.0
    for key, (calls, spent) in sorted(_SPENT.items(), key=lambda kv: -kv[1][1])[:30]:
        print(f"profile {spent:8.2f}s {100 * spent / total:5.1f}% {calls:7d} calls "
              f"{1e3 * spent / calls:7.2f} ms  {key}", file=sys.stderr)  # fmt: skip


def main(argv: list[str]) -> None:
    system, url, workers = argv[0], argv[1], int(argv[2])
    if os.environ.get("JOBSCHED_BENCH_PROFILE"):
        _profile()
    if system == "jobsched":
        import anyio

        anyio.run(_jobsched, url, workers)
    elif system == "raw":
        _raw(url, 64)
    else:
        raise SystemExit(f"unknown system {system!r}: raw or jobsched")
    if _SPENT:
        _print_profile()
    sys.stdout.write("result " + json.dumps(_PHASES.result()) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    # Through the module's own name: the stored jobs name it by reference.
    from benchmarks import _backlog_member

    _backlog_member.main(sys.argv[1:])
