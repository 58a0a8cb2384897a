"""app.testing(): what a block enqueues is recorded, not stored; tests
assert on it and run it here, dependents and follow-up jobs included."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import anyio
import pytest
from app_jobs import add, app, fan_out, pickled, send_email

import jobsched as js

UTC = dt.timezone.utc


def test_records_instead_of_storing(tmp_path: Path) -> None:
    """Inside the block, enqueue returns an id and records the job; no
    producer starts, even on a durable store."""
    durable = js.App(f"sqlite:///{tmp_path / 'jobs.db'}")
    job = durable.job(name="t.add")(_plus)
    with durable.testing() as t:
        first = job.enqueue_sync(1, 2)
        second = anyio.run(job.enqueue, 3, 4)
    assert first != second
    assert [j.job_id for j in t.enqueued()] == [first, second]
    assert durable._producer is None
    assert not (tmp_path / "jobs.db").exists()


async def _plus(a: int, b: int) -> int:
    return a + b


def test_enqueued_filters_by_function() -> None:
    """enqueued(f) lists only f's jobs, in order; by name too."""
    when = dt.datetime(2026, 1, 1, tzinfo=UTC)
    with app.testing() as t:
        add.enqueue_sync(1)
        send_email.enqueue_sync("a@b.c", when)
        add.enqueue_sync(2)
    assert [j.arguments for j in t.enqueued(add)] == [{"a": 1}, {"a": 2}]  # type: ignore[attr-defined]
    assert [j.name for j in t.enqueued("app_jobs.send_email")] == ["app_jobs.send_email"]
    assert len(t.enqueued()) == 3


def test_assert_enqueued() -> None:
    """assert_enqueued matches the arguments as stored (defaults unfilled,
    tuples as tuples); with none, any call; a miss lists what was enqueued."""
    when = dt.datetime(2026, 1, 1, tzinfo=UTC)
    with app.testing() as t:
        add.enqueue_sync(1, b=3)
        send_email.options(queue="other").enqueue_sync("a@b.c", when, tags=("x",))
    assert t.assert_enqueued(add, 1, b=3).job_id == t.enqueued(add)[0].job_id
    t.assert_enqueued(add, a=1, b=3)
    t.assert_enqueued(send_email, "a@b.c", when, ("x",))
    t.assert_enqueued(send_email)
    with pytest.raises(AssertionError) as info:
        t.assert_enqueued(add, 2)
    message = str(info.value)
    assert "no call app_jobs.add(2) was enqueued; enqueued:" in message
    assert "app_jobs.add(a=1, b=3)" in message
    assert "app_jobs.send_email(to='a@b.c'" in message
    with pytest.raises(AssertionError, match=r"\(nothing\)"), app.testing() as empty:
        empty.assert_enqueued(add)
    with pytest.raises(TypeError, match="takes a JobFunction"):
        t.assert_enqueued(_plus)  # type: ignore[arg-type]


def test_assert_enqueued_on_a_pickled_function() -> None:
    """A serializer="pickle" function's calls are compared by their arguments too."""
    with app.testing() as t:
        pickled.enqueue_sync([1, 2])
    t.assert_enqueued(pickled, [1, 2])
    with pytest.raises(AssertionError):
        t.assert_enqueued(pickled, [3])


def test_own_job_id_is_idempotent_and_bad_ones_refused() -> None:
    """An own job_id recorded twice adds one job, as a store would; an
    invalid one is refused as submit refuses it."""
    with app.testing() as t:
        first = add.options(job_id="k-1").enqueue_sync(1)
        again = add.options(job_id="k-1").enqueue_sync(2)
        with pytest.raises(ValueError, match="starts with 'job-'"):
            add.options(job_id="job-7").enqueue_sync(1)
    assert first == again == "k-1"
    assert len(t.enqueued()) == 1


def test_unknown_dependency_is_refused() -> None:
    """depends_on must name a job enqueued in the block."""
    with app.testing(), pytest.raises(js.UnknownJobError, match="enqueue dependencies first"):
        add.options(depends_on=["nope"]).enqueue_sync(1)


@pytest.mark.anyio
async def test_run_runs_jobs_dependents_and_follow_ups() -> None:
    """run() runs the recorded jobs, their dependents and what they enqueue,
    until none is left, and returns them finished, in order."""
    with app.testing() as t:
        first = await add.enqueue(1)
        await add.options(depends_on=[first]).enqueue(10)
        await fan_out.enqueue(2)
        jobs = await t.run()
        assert [j.status for j in jobs] == [js.JobStatus.COMPLETED] * 5
        assert [j.result for j in jobs] == [3, 12, 2, 0, 1]
        assert await t.run() == []  # nothing left
        again = await add.enqueue(5)
        assert [j.job_id for j in await t.run()] == [again]
    assert len(t.enqueued()) == 6


def test_run_sync() -> None:
    """run_sync() is run() for synchronous tests: dependents run after their upstream."""
    with app.testing() as t:
        bad = send_email.enqueue_sync("a", dt.datetime(2026, 1, 1, tzinfo=UTC))
        add.options(depends_on=[bad]).enqueue_sync(1)
        jobs = t.run_sync()
    assert [j.status for j in jobs] == [js.JobStatus.COMPLETED, js.JobStatus.COMPLETED]


def test_testing_blocks_nest() -> None:
    """An inner block records its own; the outer one records again after it."""
    with app.testing() as outer:
        add.enqueue_sync(1)
        with app.testing() as inner:
            add.enqueue_sync(2)
        add.enqueue_sync(3)
    assert [j.arguments["a"] for j in outer.enqueued()] == [1, 3]  # type: ignore[attr-defined]
    assert [j.arguments["a"] for j in inner.enqueued()] == [2]  # type: ignore[attr-defined]
    assert app._testing is None


def test_a_failing_job_cancels_its_dependents() -> None:
    """A dependent of a job that fails is CANCELLED in run(), as anywhere."""
    other = js.App()
    fails = other.job(name="t.fails", retry=js.RetryPolicy(max_retries=0))(_fails)
    after = other.job(name="t.after")(_plus)
    with other.testing() as t:
        upstream = fails.enqueue_sync()
        after.options(depends_on=[upstream]).enqueue_sync(1, 2)
        jobs: list[Any] = t.run_sync()
    assert [j.status for j in jobs] == [js.JobStatus.FAILED, js.JobStatus.CANCELLED]
    assert "boom" in (jobs[0].last_error or "")


async def _fails() -> None:
    raise RuntimeError("boom")
