"""One life of a scheduler on a SQLite file, for the durable model test.

``python durable_life.py DB LOG OPS`` runs the operations in the JSON file
OPS (see tests/test_model_durable.py), printing ``accepted <index> <job id>
<wall time before the enqueue>`` for each committed job (``pending ...``
the same before a workflow's enqueue: its jobs have ids of their own). It
ends with ``stopped`` after a clean stop, or prints ``crash-point`` and
waits to be SIGKILLed.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import anyio
from durable_jobs import SlowStep, Step

import jobsched as js

FAST = js.RetryPolicy(max_retries=2, base_delay=0.02, max_delay=0.05, jitter=False)
#: Short, so a job whose process was killed is taken over quickly (this
#: process may reuse no pid, but the test runs many lives in a row).
LEASE = 0.5


def say(*words: object) -> None:
    print(*words, flush=True)


def _step(log: str, op: dict[str, Any], ids: dict[int, str]) -> js.Job:
    # Markers name upstreams by id: a Job of an earlier life is not at hand,
    # and an id is what a marker takes for a job submitted before.
    takes = [
        js.result_of(ids[on[0]]) if how == "one" else js.results_of([ids[i] for i in on])
        for how, on in op.get("takes", ())
    ]
    cls = SlowStep if op["thread"] else Step
    return cls(log, op["index"], op["failures"], op["seconds"], takes, retry=FAST)


def _depends_on(op: dict[str, Any], ids: dict[int, str]) -> list[str | js.After]:
    """``after``: [index, "id" | "cancel" | "run"]: a bare id, or an After."""
    return [
        ids[i] if how == "id" else js.After(ids[i], on_failure=how)  # type: ignore[arg-type]
        for i, how in op["after"]
    ]


async def _workflow(s: js.JobScheduler, log: str, op: dict[str, Any], ids: dict[int, str]) -> None:
    """A fan-out and its fan-in (which takes their results) as one workflow.

    Each job has an id of its own (``w<index>``), printed as ``pending``
    before the enqueue, so the test can ask the store for every one of them
    even when this process dies in the middle."""
    wf = js.Workflow(f"fan-in {op['fan_in']['index']}")
    added: dict[int, js.Job] = {}
    for part in op["parts"]:
        job = _step(log, part, ids)
        added[part["index"]] = wf.add(
            job, depends_on=_depends_on(part, ids), job_id=f"w{part['index']}"
        )
    fan_in = op["fan_in"]
    lenient = fan_in["lenient"]
    cls = SlowStep if fan_in["thread"] else Step
    takes = [js.results_of(list(added.values()))]
    job = cls(log, fan_in["index"], fan_in["failures"], fan_in["seconds"], takes, retry=FAST)
    edges = [js.After(j, on_failure="run") for j in added.values()] if lenient else []
    wf.add(job, depends_on=edges, job_id=f"w{fan_in['index']}")
    every = [*op["parts"], fan_in]
    before = time.time()
    for one in every:
        say("pending", one["index"], f"w{one['index']}", f"{before:.6f}")
    await s.enqueue_workflow(wf)
    for one in every:
        ids[one["index"]] = f"w{one['index']}"
        say("accepted", one["index"], f"w{one['index']}", f"{before:.6f}")


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
                job = _step(log, op, ids)
                deps = _depends_on(op, ids)
                before = time.time()
                job_id = await s.enqueue(job, delay=op["delay"], depends_on=deps)
                ids[op["index"]] = job_id
                say("accepted", op["index"], job_id, f"{before:.6f}")
            elif kind == "workflow" and op["crash_during"]:
                # Killed wherever the enqueue is: it must have stored the
                # whole workflow or none of it.
                async with anyio.create_task_group() as tg:
                    tg.start_soon(_workflow, s, log, op, ids)
                    await anyio.sleep(op["crash_during"])
                    say("crash-point")
                    await anyio.sleep(3600)
            elif kind == "workflow":
                await _workflow(s, log, op, ids)
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
