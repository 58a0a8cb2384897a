"""Named queues: ``queue=`` on a job, ``JobScheduler(queues=..., queue_limits=...)``.

On every store and backend: a scheduler runs only the queues it serves and
holds each limited queue to its bound without a held-back job taking a
worker. The stores' own side (claims filtered by queue, the rooms, the reads)
is the conformance suite's (jobsched/store/testing/test_queues.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import anyio
import pytest

import jobsched as js

pytestmark = pytest.mark.anyio

S = js.JobStatus

#: Attempts in flight now and at most, by queue (the jobs run in this process).
running: Counter[str] = Counter()
peaks: Counter[str] = Counter()


async def work(queue: str) -> str:
    running[queue] += 1
    peaks[queue] = max(peaks[queue], running[queue])
    try:
        await anyio.sleep(0.05)
    finally:
        running[queue] -= 1
    return queue


@pytest.fixture(autouse=True)
def _counts() -> None:
    running.clear()
    peaks.clear()


def on(queue: str) -> js.FunctionJob[str]:
    return js.FunctionJob(work, (queue,), queue=queue, timeout=None)


# ── the job's queue ─────────────────────────────────────────────────────


def test_a_job_is_on_the_default_queue_unless_it_names_one() -> None:
    assert on("default").queue == "default"
    assert js.FunctionJob(work, ("x",)).queue == "default"
    job = js.FunctionJob(work, ("x",), queue="emails.v2-eu_1", tenant="t", rate_key="r")
    assert (job.queue, job.tenant, job.rate_key) == ("emails.v2-eu_1", "t", "r")
    job.queue = "video"
    job.deadline = 5.0
    job.headers = {"a": "b"}
    assert (job.queue, job.tenant, job.deadline, job.headers) == ("video", "t", 5.0, {"a": "b"})
    job.queue = "default"
    assert job.queue == "default"


@pytest.mark.parametrize("bad", ["", "two words", "x" * 65, "émails", "a/b", 3, None])
def test_a_queue_name_outside_the_alphabet_is_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="queue must be a name of 1-64 characters"):
        js.FunctionJob(work, ("x",), queue=bad)  # type: ignore[arg-type]
    job = on("emails")
    with pytest.raises(ValueError, match="queue must be a name"):
        job.queue = bad  # type: ignore[assignment]
    assert job.queue == "emails"


def test_a_job_pickled_before_named_queues_is_on_the_default_queue() -> None:
    """Stored payloads carry the options tuple: those written before queues
    were four or five long."""
    job = js.FunctionJob(work, ("x",), tenant="t")
    assert len(job._options) == 4
    assert job.queue == "default"
    job._set_own_id("mine")
    assert len(job._options) == 5
    assert (job.queue, job.job_id) == ("default", "mine")


# ── the scheduler's arguments ───────────────────────────────────────────


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"queues": "emails"}, TypeError, r"for one queue write queues=\['emails'\]"),
        ({"queues": 5}, TypeError, "queues must be a collection"),
        ({"queues": []}, ValueError, "queues is empty"),
        ({"queues": ["bad name"]}, ValueError, "queue must be a name"),
        ({"queue_limits": {"video": 0}}, ValueError, r"queue_limits\['video'\] must be >= 1"),
        ({"queue_limits": {"video": "2"}}, TypeError, "must be an integer >= 1"),
        ({"queue_limits": {"video": True}}, TypeError, "must be an integer >= 1"),
        ({"queue_limits": ["video"]}, TypeError, "queue_limits must map"),
        ({"queue_limits": {"a b": 1}}, ValueError, "queue must be a name"),
        (
            {"queues": ["emails"], "queue_limits": {"video": 2}},
            ValueError,
            "queue_limits names 'video', which queues= leaves out",
        ),
    ],
)
def test_bad_queue_arguments_are_refused_at_construction(
    kwargs: dict[str, object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        js.JobScheduler(**kwargs)  # type: ignore[arg-type]
    with pytest.raises(error, match=message):
        js.BackgroundScheduler(**kwargs)  # type: ignore[arg-type]


@pytest.mark.memory_only("the memory store's refusal at submit")
async def test_memory_refuses_a_job_for_a_queue_it_does_not_serve(
    make_scheduler: Callable[..., js.JobScheduler],
) -> None:
    async with make_scheduler(queues=["emails"]) as s:
        kept = s.submit(on("emails"))
        with pytest.raises(ValueError, match="on queue 'video', which this scheduler does not"):
            s.submit(on("video"))
        await s.join()
        assert s.get(kept).status is S.COMPLETED
        assert len(s.jobs()) == 1  # nothing of the refused job was accepted


# ── running queues ──────────────────────────────────────────────────────


async def test_a_scheduler_runs_only_the_queues_it_serves(
    make_scheduler: Callable[..., js.JobScheduler], durable: bool
) -> None:
    """On a durable store another queue's job waits for a member that serves
    it; in memory nothing ever would, so submit refuses it."""
    async with make_scheduler(queues=["emails", "default"]) as s:
        served = [s.submit(on(q)) for q in ("emails", "default", "emails")]
        if durable:
            left = s.submit(on("video"))
        else:
            with pytest.raises(ValueError, match="which this scheduler does not serve"):
                s.submit(on("video"))
        for job_id in served:
            assert (await s.wait(job_id, timeout=60)).status is S.COMPLETED
        assert (await s.fetch(served[0])).queue == "emails"
        if durable:
            stored = await s.fetch(left)
            assert (stored.status, stored.queue) == (S.PENDING, "video")
    assert peaks["video"] == 0
    assert peaks["emails"] >= 1


async def test_queue_limits_hold_a_queue_to_its_bound_and_others_keep_running(
    make_scheduler: Callable[..., js.JobScheduler],
) -> None:
    async with make_scheduler(num_workers=4, queue_limits={"video": 2}) as s:
        ids = [s.submit(on("video")) for _ in range(6)]
        ids += [s.submit(on("emails")) for _ in range(4)]
        with anyio.fail_after(120):
            await s.join()
        for job_id in ids:
            assert (await s.fetch(job_id)).status is S.COMPLETED
    assert peaks["video"] == 2  # reached, never passed
    assert s.peak_running >= 3  # held-back video jobs left workers to emails
