"""One fleet member for tests/test_fleet.py, run as a script (``tests`` on PYTHONPATH).

``python fleet_member.py URL LOG [--workers N] [--lease S] [--special]
[--rate KEY=RATE/PER/BURST] [--tick SECONDS]`` starts a scheduler on the
PostgreSQL store, prints ``ready PID``, then serves one command per line of
its standard input, answering each on one line of its standard output:

- ``submit KIND N [RATE_KEY]``: N jobs (``record``, ``once``: a record
  job with no retries, ``hold``, ``special``; ``nul`` and ``poison`` fail
  every attempt with a NUL, or the word POISON, in their error), committed;
  answers their ids, space-separated.
- ``cancel JOB_ID``: answers ``True`` or ``False``.
- ``fetch JOB_ID``: the job as the store has it, as JSON (``started``:
  whether the store holds its start).
- ``join``: waits until no job in the store is unfinished; answers ``joined``.
- ``use FOLDER``: later submits log to FOLDER (a test sharing the members
  keeps its own log); answers ``ok``.

At the end of its input it stops (running jobs finish or are cancelled by
the scheduler's own stop) and exits 0.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import fleet_jobs
import poison_jobs

import jobsched as js

SECRET = "fleet-test-secret"


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("folder")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--lease", type=float, default=30.0)
    parser.add_argument("--special", action="store_true")
    parser.add_argument("--rate", default=None)
    parser.add_argument("--tick", type=float, default=None)
    return parser.parse_args(argv)


def make(kind: str, folder: str, rate_key: str | None) -> js.Job:
    log = str(Path(folder) / "log")
    if kind == "record":
        return fleet_jobs.Record(log, rate_key=rate_key)
    if kind == "once":
        return fleet_jobs.Record(log, rate_key=rate_key, retry=js.RetryPolicy(max_retries=0))
    if kind == "hold":
        return fleet_jobs.Hold(folder, retry=fleet_jobs.QUICK_RETRY, timeout=None)
    if kind == "special":
        return fleet_jobs.Special(log)
    if kind in ("nul", "poison"):
        said = "parser choked on b'\x00\x01'" if kind == "nul" else "POISON in this error"
        return poison_jobs.Raises(said, name=kind, retry=fleet_jobs.QUICK_RETRY)
    raise ValueError(f"unknown kind {kind!r}")


async def serve(s: js.JobScheduler, folder: str) -> None:
    while line := await anyio.to_thread.run_sync(sys.stdin.readline):
        command, *args = line.split()
        answer: Any
        if command == "submit":
            kind, count, *rate_key = args
            key = rate_key[0] if rate_key else None
            ids = [s.submit(make(kind, folder, key)) for _ in range(int(count))]
            await s.flush()
            answer = " ".join(ids)
        elif command == "cancel":
            answer = s.cancel(args[0])
        elif command == "fetch":
            job = await s.fetch(args[0])
            answer = json.dumps(
                {
                    "status": job.status.value,
                    "attempts": job.attempts,
                    "result": job.result,
                    "last_error": job.last_error,
                    "started": job.started_at is not None,
                }
            )
        elif command == "use":
            folder = args[0]
            answer = "ok"
        elif command == "join":
            await s.join()
            answer = "joined"
        else:
            answer = f"unknown command {command!r}"
        print(answer, flush=True)


async def main(argv: list[str]) -> None:
    args = parse_args(argv)
    if "FLEET_OUTCOMES_WAITING_MAX" in os.environ:  # a measurement's knob
        from jobsched._engine._link import _timing

        _timing.OUTCOMES_WAITING_MAX = int(os.environ["FLEET_OUTCOMES_WAITING_MAX"])
    store = js.open_store(args.url, secret=SECRET, lease=args.lease)
    options: dict[str, Any] = {}
    if args.special:
        options["executors"] = {"special": fleet_jobs.SpecialExecutor()}
    if args.rate:
        key, _, spec = args.rate.partition("=")
        rate, per, burst = (float(x) for x in spec.split("/"))
        options["rate_limits"] = {key: js.RateLimit(rate, per, int(burst))}
    async with js.JobScheduler(num_workers=args.workers, store=store, **options) as s:
        if args.tick:
            log = str(Path(args.folder) / "log")
            s.schedule_recurring(
                functools.partial(fleet_jobs.tick, log), args.tick, allow_overlap=True, id="tick"
            )
        print(f"ready {os.getpid()}", flush=True)
        await serve(s, args.folder)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1:])
