"""Workflows for the CLI's and the dashboard's tests, put in a store through
its own API (``add_workflow``, ``claim``, ``record``, ``progress``): the
engine's ``enqueue_workflow`` on durable stores comes later.

``fill`` makes three workflows and a plain job:

- ``nightly-etl``: extract (completed) -> transform (running, 40%,
  "page 4 of 10") and -> cleanup (a "run" edge), both -> load (its edge from
  cleanup "run" too);
- one named like a script, whose one job (named so too) completed;
- ``fan``: start -> 400 fetches -> sum, the fetches' edges to sum "run".
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import anyio

import jobsched as js
from jobsched.store import GraphJob, JobStore, NewJob, NewWorkflow, Outcome, ProgressRow

EVIL = "<script>alert(1)</script>"
OWNER = "test-host:1:0000abcd"
FETCHES = 400


def graph_job(
    number: int,
    name: str,
    status: js.JobStatus = js.JobStatus.PENDING,
    *,
    progress: float | None = None,
    message: str | None = None,
    own_id: str | None = None,
) -> GraphJob:
    """A job as a workflow's graph has it, made by hand."""
    return GraphJob(number, name, status, progress, 0, None, message, own_id)


@dataclass
class Filled:
    url: str
    etl: int = 0
    etl_jobs: dict[str, int] = field(default_factory=dict)
    #: The running transform's attempt: progress is fenced on it.
    attempt: int = 0
    evil: int = 0
    evil_job: int = 0
    big: int = 0
    plain: int = 0


def _new(
    number: int,
    name: str,
    workflow: int | None,
    key: float,
    now: float,
    after: tuple[int, ...] = (),
    run: tuple[int, ...] = (),
) -> NewJob:
    return NewJob(
        number, name, "async", (key,), now, now, b"P" + str(number).encode(),
        depends_on=after, workflow=workflow, run_on_failure=run,
    )  # fmt: skip


async def _run_one(store: JobStore, expected: int, now: float) -> int:
    """Claim the one job the test expects to be best; its attempt."""
    (claimed,) = await store.claim(OWNER, 1, {"async": 1}, now, 3600)
    assert claimed.id == expected, (claimed.id, expected)
    return claimed.attempt


async def _fill(filled: Filled) -> None:
    store = js.open_store(filled.url)
    await store.open()
    try:
        now = time.time()
        first = store.reserve_ids(FETCHES + 20)
        numbers = iter(range(first, first + FETCHES + 20))
        etl = filled.etl = next(numbers)
        n = filled.etl_jobs = {
            k: next(numbers) for k in ("extract", "transform", "cleanup", "load")
        }
        await store.add_workflow(
            NewWorkflow(etl, "nightly-etl", now, [
                _new(n["extract"], "extract", etl, 0.0, now),
                _new(n["transform"], "transform", etl, 1.0, now, (n["extract"],)),
                _new(n["cleanup"], "cleanup", etl, 2.0, now, (n["extract"],), (n["extract"],)),
                _new(n["load"], "load", etl, 3.0, now, (n["transform"], n["cleanup"]),
                     (n["cleanup"],)),
            ]),
            now,
        )  # fmt: skip
        attempt = await _run_one(store, n["extract"], now)
        await store.record(OWNER, [Outcome(n["extract"], attempt, js.JobStatus.COMPLETED, now)])
        attempt = filled.attempt = await _run_one(store, n["transform"], now)
        await store.progress(OWNER, [ProgressRow(n["transform"], attempt, 0.4, "page 4 of 10")])
        evil = filled.evil = next(numbers)
        job = filled.evil_job = next(numbers)
        await store.add_workflow(
            NewWorkflow(evil, EVIL, now, [_new(job, EVIL, evil, -1.0, now)]), now
        )
        attempt = await _run_one(store, job, now)
        await store.record(OWNER, [Outcome(job, attempt, js.JobStatus.COMPLETED, now)])
        big = filled.big = next(numbers)
        start = next(numbers)
        fetches = [next(numbers) for _ in range(FETCHES)]
        total = next(numbers)
        await store.add_workflow(
            NewWorkflow(big, "fan", now, [
                _new(start, "start", big, 10.0, now),
                *(_new(f, "fetch", big, 10.0, now, (start,)) for f in fetches),
                _new(total, "sum", big, 10.0, now, tuple(fetches), tuple(fetches)),
            ]),
            now,
        )  # fmt: skip
        filled.plain = next(numbers)
        await store.add([_new(filled.plain, "plain", None, 10.0, now)], now)
    finally:
        await store.close()


async def progress(url: str, job: int, attempt: int, fraction: float, message: str) -> None:
    """Write a running job's progress as its member would."""
    store = js.open_store(url)
    await store.open()
    try:
        await store.progress(OWNER, [ProgressRow(job, attempt, fraction, message)])
    finally:
        await store.close()


async def _make(url: str) -> None:
    store = js.open_store(url)
    await store.open()
    await store.close()


def empty(url: str) -> str:
    """A store at ``url`` holding nothing: made, as a worker would make it."""
    anyio.run(_make, url)
    return url


def fill(url: str) -> Filled:
    """The workflows above in the store at ``url`` (made if absent)."""
    filled = Filled(url)
    anyio.run(_fill, filled)
    return filled
