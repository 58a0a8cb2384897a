"""One worker for tests/test_workflow_crash.py, run as a script (``tests`` on
PYTHONPATH), speaking tests/test_fleet.py's ``Member`` protocol.

``python wf_crash_member.py URL FOLDER [--workers N] [--lease S]`` starts a
scheduler on the store at URL, prints ``ready PID``, then serves one command
per line of its standard input, answering each on one line of its output:

- ``enqueue N``: one workflow of N steps (tests/wf_crash_jobs.py, logging to
  FOLDER/steps) and a fan-in taking ``results_of`` all of them (logging to
  FOLDER/fan-in), committed; answers JSON ``{"workflow", "fan_in", "steps"}``.
- ``fetch JOB_ID``: the job as the store has it, as JSON.
- ``workflow ID``: the workflow's counts by status and ``finished``, as JSON.
- ``join``: waits until no job in the store is unfinished; answers ``joined``.

At the end of its input it stops and exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import wf_crash_jobs
from pg import SECRET

import jobsched as js

#: Short waits before a retry: the steps the kill caught run again at once.
RETRY = js.RetryPolicy(max_retries=3, base_delay=0.05, max_delay=0.2)


async def enqueue(s: js.JobScheduler, folder: Path, count: int) -> dict[str, Any]:
    wf = js.Workflow("crash fan-out")
    steps = [
        wf.add(js.FunctionJob(wf_crash_jobs.step, args=(str(folder / "steps"), n), retry=RETRY))
        for n in range(count)
    ]
    results = js.results_of(steps)
    last = wf.add(
        js.FunctionJob(wf_crash_jobs.fan_in, args=(str(folder / "fan-in"), results), retry=RETRY)
    )
    workflow_id = await s.enqueue_workflow(wf)
    return {"workflow": workflow_id, "fan_in": last.job_id, "steps": [j.job_id for j in steps]}


async def answer(s: js.JobScheduler, folder: Path, command: str, args: list[str]) -> Any:
    if command == "enqueue":
        return await enqueue(s, folder, int(args[0]))
    if command == "fetch":
        job = await s.fetch(args[0])
        return {
            "status": job.status.value,
            "attempts": job.attempts,
            "result": job.result,
            "last_error": job.last_error,
            "workflow_id": job.workflow_id,
        }
    if command == "workflow":
        info = await s.workflow(args[0])
        counts = {status.value: n for status, n in info.counts.items() if n}
        return {"counts": counts, "finished": info.finished}
    if command == "join":
        await s.join()
        return "joined"
    return f"unknown command {command!r}"


async def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("folder", type=Path)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--lease", type=float, default=30.0)
    args = parser.parse_args(argv)
    store = js.open_store(args.url, secret=SECRET, lease=args.lease)
    async with js.JobScheduler(num_workers=args.workers, store=store) as s:
        print(f"ready {os.getpid()}", flush=True)
        while line := await anyio.to_thread.run_sync(sys.stdin.readline):
            command, *rest = line.split()
            said = await answer(s, args.folder, command, rest)
            print(said if isinstance(said, str) else json.dumps(said), flush=True)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1:])
