"""``inputs`` (issue 37): the upstreams a dependent receives, as stored, by
id; ids the store does not hold left out; the results' total size instead
when it exceeds the bound. Every store has it (``JobStore``'s default
fetches each job)."""

from __future__ import annotations

import pytest

import jobsched as js
from jobsched.store import Input, JobStore, NewJob, Outcome

pytestmark: pytest.MarkDecorator = pytest.mark.anyio

S = js.JobStatus
NOW = 1_700_000_000.0


def new(job_id: int) -> NewJob:
    return NewJob(job_id, f"j{job_id}", "async", (0.0,), NOW, NOW, b"P" + bytes([job_id]))


async def test_inputs_are_the_upstreams_as_stored(store: JobStore) -> None:
    await store.add([new(1), new(2), new(3)], NOW)
    claims = {c.id: c for c in await store.claim("m1", 5, {"async": 99}, NOW, 30)}
    await store.record(
        "m1",
        [
            Outcome(1, claims[1].attempt, S.COMPLETED, NOW + 1, result=b"J[1]"),
            Outcome(2, claims[2].attempt, S.FAILED, NOW + 1, error="E: no"),
        ],
    )
    assert await store.inputs([2, 1, 44], 1 << 20) == {
        1: Input(1, S.COMPLETED, b"J[1]", None),
        2: Input(2, S.FAILED, None, "E: no"),
    }
    assert await store.inputs([1], 3) == 4
