"""W7's ``store`` row: jobsched's SQLite store driven directly, with no scheduler.

It makes the store calls a scheduler makes for W7 and nothing else: ids
reserved in one call, every job added in one ``add``, then rounds of 64 in
which the previous round's outcomes and the next claim are asked for together
(so the store's group commit writes them in one transaction, as it does for
the scheduler's committer and claimer), and a ``prune`` to the default
``history_limit`` every 1,000 finished jobs. Each claimed payload is
unpickled and its job run, as raw's loop does with its ``(function, args)``.

The payload is pickled once, as raw's is: this row is the store's own cost,
the ceiling for any scheduler on top of it. Its ratio to raw says how much of
jobsched's gap is the store (its schema, its fenced and indexed writes) and
how much is the scheduler's Python.
"""

from __future__ import annotations

import time
from pathlib import Path

import anyio

import jobsched as js
from jobsched._jobs._form import stored_form
from jobsched.store import Claimed, NewJob, Outcome
from jobsched.store._codec import Codec
from jobsched.store._members import new_owner

#: What the scheduler passes: its default ``history_limit``, how many finished
#: jobs go between prunes (jobsched._engine._link._timing.PRUNE_EVERY), the executor.
HISTORY_LIMIT = 10_000
PRUNE_EVERY = 1_000
EXECUTOR = "async"


async def store_w7(path: Path, size: int) -> dict[str, float]:
    from benchmarks._stores import WORKERS, Noop

    store = js.open_store(f"sqlite:///{path}")
    await store.open()
    codec = Codec(store.secret)
    owner = new_owner()  # the form a scheduler's is: host:pid:token
    payload = codec.dumps(stored_form(Noop("noop")), "noop")
    try:
        t0 = time.perf_counter()
        first = store.reserve_ids(size)
        now = time.time()
        # The default strategy's key: minus the priority (MEDIUM), then submit order.
        jobs = [
            NewJob(first + i, "noop", EXECUTOR, (-1.0, float(i)), now, now, payload)
            for i in range(size)
        ]
        await store.add(jobs, now)
        outcomes: list[Outcome] = []
        claims: list[Claimed] = []

        async def record(done: list[Outcome]) -> None:
            refused = (await store.record(owner, done)).refused
            if refused:
                raise RuntimeError(f"the store refused {len(refused)} outcomes")

        async def claim() -> None:
            claims[:] = await store.claim(
                owner, WORKERS, {EXECUTOR: WORKERS}, time.time(), store.lease
            )

        finished = since_prune = 0
        while True:
            async with anyio.create_task_group() as tg:
                if outcomes:
                    tg.start_soon(record, outcomes)
                tg.start_soon(claim)
            finished += len(outcomes)
            since_prune += len(outcomes)
            if since_prune >= PRUNE_EVERY:
                since_prune = 0
                await store.prune(HISTORY_LIMIT)
            if not claims:
                break
            outcomes = []
            for claimed in claims:
                await codec.loads(claimed.payload).run()
                outcomes.append(
                    Outcome(claimed.id, claimed.attempt, js.JobStatus.COMPLETED, time.time())
                )
        elapsed = time.perf_counter() - t0
    finally:
        await store.close()
    if finished != size:
        raise RuntimeError(f"the store finished {finished} jobs of {size}")
    return {"jobs_per_s": size / elapsed}
