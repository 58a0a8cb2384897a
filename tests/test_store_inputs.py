"""What workflows read and write in the SQLite and PostgreSQL stores (issue
37, part of S5): ``inputs``, the upstreams a dependent receives (sizes
first), and ``progress``, fenced on (owner, attempt) as outcomes are, read
back by ``fetch``. The default ``inputs`` every store has is the
conformance suite's (jobsched.store.testing: test_inputs.py).

Runs on asyncio only: the stores work in threads (see test_durable.py).
"""

from __future__ import annotations

import both_stores
import pytest

import jobsched as js
from jobsched.store import Input, JobStore, NewJob, Outcome, ProgressRow

pytestmark = pytest.mark.anyio

S = js.JobStatus
NOW = 1_700_000_000.0
EXECUTORS = {"async": 99}


# A store open on a fresh SQLite file or PostgreSQL schema (tests/both_stores.py).
anyio_backend, store = both_stores.anyio_backend, both_stores.store


def new(job_id: int, *, own: bool = False) -> NewJob:
    return NewJob(job_id, f"j{job_id}", "async", (0.0,), NOW, NOW, b"P", own_id=own)


async def test_inputs_are_the_upstreams_as_stored(store: JobStore) -> None:
    await store.add([new(1), new(2), new(3), new(-7, own=True)], NOW)
    claims = {c.id: c for c in await store.claim("m", 9, EXECUTORS, NOW, 30)}
    await store.record(
        "m",
        [
            Outcome(1, claims[1].attempt, S.COMPLETED, NOW + 1, result=b"J1"),
            Outcome(2, claims[2].attempt, S.FAILED, NOW + 1, error="E: no"),
            Outcome(-7, claims[-7].attempt, S.COMPLETED, NOW + 1, result=b"J77"),
        ],
    )
    got = await store.inputs([1, 2, 3, -7, 99], 1 << 20)
    assert got == {
        1: Input(1, S.COMPLETED, b"J1", None),
        2: Input(2, S.FAILED, None, "E: no"),
        3: Input(3, S.RUNNING, None, None),
        -7: Input(-7, S.COMPLETED, b"J77", None),
    }
    # Over the bound: the total size, no result read.
    assert await store.inputs([1, -7], 4) == 5


async def test_progress_is_written_for_the_attempt_running_and_read_back(
    store: JobStore,
) -> None:
    await store.add([new(1), new(2), new(3)], NOW)
    claims = {c.id: c for c in await store.claim("m", 9, EXECUTORS, NOW, 30)}
    await store.progress(
        "m",
        [
            ProgressRow(1, claims[1].attempt, 0.5, "half"),
            ProgressRow(2, claims[2].attempt + 1, 0.9, "a later attempt's"),
        ],
    )
    await store.progress("other", [ProgressRow(3, claims[3].attempt, 0.1, "not its owner")])
    one, two, three = [await store.fetch(i) for i in (1, 2, 3)]
    assert one is not None and (one.progress, one.progress_message) == (0.5, "half")
    assert two is not None and (two.progress, two.progress_message) == (None, None)
    assert three is not None and (three.progress, three.progress_message) == (None, None)
    # Once the attempt ended, a late write is fenced out.
    await store.record("m", [Outcome(1, claims[1].attempt, S.COMPLETED, NOW + 1)])
    await store.progress("m", [ProgressRow(1, claims[1].attempt, 0.75, "late")])
    one = await store.fetch(1)
    assert one is not None and (one.progress, one.progress_message) == (0.5, "half")
    assert one.workflow is None
