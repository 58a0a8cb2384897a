"""One life of a scheduler on a SQLite file, for the durable model test.

``python durable_life.py DB LOG OPS`` runs the operations in the JSON file
OPS (see tests/test_model_durable.py), printing ``accepted <index> <job id>
<wall time before the enqueue>`` for each committed job. It ends with
``stopped`` after a clean stop, or prints ``crash-point`` and waits to be
SIGKILLed.
"""

from __future__ import annotations

import json
import sys
import time

import anyio
from durable_jobs import SlowStep, Step

import jobsched as js

FAST = js.RetryPolicy(max_retries=2, base_delay=0.02, max_delay=0.05, jitter=False)
#: Short, so a job whose process was killed is taken over quickly (this
#: process may reuse no pid, but the test runs many lives in a row).
LEASE = 0.5


def say(*words: object) -> None:
    print(*words, flush=True)


async def life(db: str, log: str, ops: dict[str, object]) -> None:
    ids: dict[int, str] = {int(k): v for k, v in ops["ids"].items()}  # type: ignore[union-attr]
    s = js.JobScheduler(store=js.open_store(db, lease=LEASE), num_workers=3)
    if ops.get("ahead"):
        from jobsched._engine._link import _timing

        # As many ahead as fit (PREFETCH_MAX), from the first claim on.
        _timing.PREFETCH_AHEAD = 3600.0
        s._attempt_time = 1e-5
    async with s:
        for op in ops["ops"]:  # type: ignore[union-attr]
            kind = op["op"]
            if kind == "submit":
                cls = SlowStep if op["thread"] else Step
                job = cls(log, op["index"], op["failures"], op["seconds"], retry=FAST)
                deps = [ids[i] for i in op["after"]]
                before = time.time()
                job_id = await s.enqueue(job, delay=op["delay"], depends_on=deps)
                ids[op["index"]] = job_id
                say("accepted", op["index"], job_id, f"{before:.6f}")
            elif kind == "cancel":
                say("cancelled", op["index"], f"{time.time():.6f}")
                s.cancel(ids[op["index"]])
                await s.flush()
            elif kind == "wait":
                await anyio.sleep(op["seconds"])
        if ops["end"] == "crash":
            say("crash-point")
            await anyio.sleep(3600)
        elif ops["end"] == "drain":
            with anyio.fail_after(120):
                await s.join()
    say("stopped")


if __name__ == "__main__":
    db, log, path = sys.argv[1:4]
    with open(path) as f:
        anyio.run(life, db, log, json.load(f))
