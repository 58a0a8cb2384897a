"""Bugs the model-checked core (tests/test_model.py) found, each pinned by a focused test.

Virtual time only: trio's ``MockClock(autojump_threshold=0)``, so the waits
below cost nothing and every event happens at an exact time.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from trio.testing import MockClock

import jobsched as js

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> tuple[str, dict[str, Any]]:
    return "trio", {"clock": MockClock(autojump_threshold=0)}


async def _nap(seconds: float) -> None:
    await anyio.sleep(seconds)


def _job(name: str, priority: js.JobPriority, rate_key: str | None = None) -> js.FunctionJob:
    return js.FunctionJob(_nap, (1.0,), name=name, priority=priority, rate_key=rate_key)


async def test_rate_limited_held_job_does_not_hand_its_slot_to_a_worse_job() -> None:
    """A held job released into a free executor slot but refused a token passes the slot on
    to the best held job, not to a worse job that happens to be in the ready queue.

    Found by the model: with ``executor_limits`` and ``rate_limits`` together, the
    slot went to whatever was ready, so a LOW job overtook a HIGH one that had been
    waiting for that executor all along.
    """
    started: list[str] = []
    scheduler = js.JobScheduler(
        num_workers=2,
        executor_limits={"async": 1},
        # One token, the next one 10 s away: "first" takes it.
        rate_limits={"r": js.RateLimit(1, per=10.0)},
        clock=anyio.current_time,
    )

    def on_start(job: js.Job, old: js.JobStatus, new: js.JobStatus) -> None:
        if new is js.JobStatus.RUNNING:
            started.append(job.name)

    scheduler.add_listener(on_start)
    async with scheduler:
        first = scheduler.submit(_job("first", js.JobPriority.MEDIUM, rate_key="r"))
        await anyio.sleep(0.5)
        # The async slot is taken: the idle worker holds these two back.
        scheduler.submit(_job("limited", js.JobPriority.CRITICAL, rate_key="r"))
        scheduler.submit(_job("high", js.JobPriority.HIGH))
        # Becomes ready the moment "first" ends, in the same step that frees the slot.
        scheduler.submit(_job("low", js.JobPriority.LOW), depends_on=[first])
        with anyio.fail_after(100):
            await scheduler.join()
    assert started == ["first", "high", "low", "limited"]
