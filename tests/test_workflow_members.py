"""Workflows across two PostgreSQL members (issue 37): real member processes
(tests/wf_member.py) on one fresh database, one serving the queue ``up``,
the other ``fan`` (tests/wf_member_jobs.py). The test process is a third,
with no workers: it enqueues, reads and cancels through the store.

- Upstreams run on one member and the fan-in on the other receives their
  results: a pickled function job (async, and in a process worker), and a
  registered (``@app.job``) fan-in.
- A ``"run"`` edge: a dependent on the other member runs after its upstream
  failed, the failure in its slot; a ``"cancel"`` one is cancelled.
- ``cancel_workflow`` from the third process stops jobs running on both.
- Progress written by a job on one member is read by ``fetch`` here.

Every wait is on a state (a member's line, a file, the store) with a
generous bound; nothing sleeps to synchronise.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pg
import pytest
import wf_member_jobs as wj
from test_fleet import TESTS, Member, wait_for

import jobsched as js
from jobsched import JobStatus as S

pytestmark = [pytest.mark.postgres, pytest.mark.anyio, pytest.mark.timeout(180)]

NO_RETRY = js.RetryPolicy(max_retries=0)
#: A bound on waiting for a job another member runs (a loaded machine).
WAIT = 120.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the store works in threads and sockets, on the real clock


class QueueMember(Member):
    """A member of tests/wf_member.py claiming from one queue only."""

    def __init__(self, url: str, queue: str) -> None:
        self.queue = queue
        self.process = subprocess.Popen(
            [sys.executable, str(TESTS / "wf_member.py"), url, queue],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(TESTS)},
        )
        self._start_reader()

    def _start_reader(self) -> None:
        import queue
        import threading

        self.lines = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.pid = self.process.pid


@pytest.fixture(scope="module")
def members() -> Iterator[tuple[str, QueueMember, QueueMember]]:
    """A fresh database and its two members (``up``, ``fan``), shared by the
    tests here (starting a member is most of a test's time); each stops
    cleanly at the end."""
    with pg.database() as url:
        started = [QueueMember(url, wj.UP), QueueMember(url, wj.FAN)]
        try:
            for member in started:  # started together, so their imports overlap
                member.ready()
            yield url, started[0], started[1]
            assert [member.stop() for member in started] == [0, 0]
        finally:
            for member in started:
                member.kill()


@pytest.fixture
async def s(members: tuple[str, QueueMember, QueueMember]) -> AsyncIterator[js.JobScheduler]:
    """The test's own scheduler: the app's, on the same store, with no workers."""
    store = js.open_store(members[0], secret=pg.SECRET)
    async with wj.app.scheduler(store=store, num_workers=0) as scheduler:
        yield scheduler


async def started(path: Path) -> int:
    """The pid a ``hold`` job wrote to ``path`` once it ran."""

    def written() -> str:
        return path.read_text() if path.exists() else ""

    return int(await anyio.to_thread.run_sync(lambda: wait_for(f"{path.name}", written, WAIT)))


def call(func: Any, *args: Any, queue: str, **options: Any) -> js.FunctionJob[Any]:
    return js.FunctionJob(func, args=args, queue=queue, retry=NO_RETRY, **options)


async def test_a_fan_in_on_one_member_gets_the_results_of_the_other(
    members: tuple[str, QueueMember, QueueMember], s: js.JobScheduler
) -> None:
    _, up, fan = members
    wf = js.Workflow("across members")
    shards = [wf.add(call(wj.shard, n, queue=wj.UP)) for n in range(20)]
    last = wf.add(call(wj.fan_in, js.results_of(shards), queue=wj.FAN))
    workflow_id = await s.enqueue_workflow(wf)
    got = await s.result(last.job_id, timeout=WAIT)
    assert got == {"pid": fan.pid, "values": [{"n": n, "pid": up.pid} for n in range(20)]}
    info = await s.workflow(workflow_id)
    assert (info.finished, info.counts) == (True, {S.COMPLETED: 21})


async def test_a_process_fan_in_gets_the_other_members_results_in_its_worker(
    members: tuple[str, QueueMember, QueueMember], s: js.JobScheduler
) -> None:
    """The results reach a process job's worker, a child of the fan-in's member."""
    _, up, fan = members
    wf = js.Workflow("into a worker process")
    shards = [wf.add(call(wj.shard, n, queue=wj.UP)) for n in range(3)]
    last = wf.add(
        call(wj.fan_in_in_process, js.results_of(shards), queue=wj.FAN, executor="process")
    )
    await s.enqueue_workflow(wf)
    got = await s.result(last.job_id, timeout=WAIT)
    assert got["pid"] not in (up.pid, fan.pid) and got["parent"] == fan.pid
    assert got["values"] == [{"n": n, "pid": up.pid} for n in range(3)]


async def test_a_registered_fan_in_gets_pickled_upstreams_results_as_json(
    members: tuple[str, QueueMember, QueueMember], s: js.JobScheduler
) -> None:
    """A registered fan-in added to the workflow of its upstreams (its JSON
    markers name them by the ids they had when added, which the store
    renumbers at the enqueue) gets their results on the other member."""
    _, up, fan = members
    wf = js.Workflow("registered fan-in")
    shards = [wf.add(call(wj.shard, n, queue=wj.UP)) for n in range(5)]
    last = wf.add(wj.gather.job(js.results_of(shards)))
    await s.enqueue_workflow(wf)
    got = await s.result(last.job_id, timeout=WAIT)
    assert got == {"pid": fan.pid, "values": [{"n": n, "pid": up.pid} for n in range(5)]}

    assert [(await s.fetch(shard.job_id)).result for shard in shards] == [
        {"n": n, "pid": up.pid} for n in range(5)
    ]


async def test_a_registered_fan_in_gets_a_pickled_result_as_is_and_fails_storing_it(
    members: tuple[str, QueueMember, QueueMember], s: js.JobScheduler
) -> None:
    """A pickled upstream's result reaches a registered job unpickled, as
    it is (workflows-plan §7.4, "registered (any executor)"), even one with no JSON
    form: returning it, the fan-in ends FAILED, not retried, saying where."""
    wf = js.Workflow("no JSON form")
    good = wf.add(call(wj.shard, 1, queue=wj.UP))
    odd = wf.add(call(wj.third, queue=wj.UP))
    await s.enqueue_workflow(wf)
    last = await wj.gather.enqueue(js.results_of([good, odd]))
    done = await s.wait(last, timeout=WAIT)
    assert (done.status, done.attempts) == (S.FAILED, 1)
    assert done.last_error is not None
    assert "cannot be stored as JSON: at ['values'][1] is a fractions.Fraction" in done.last_error
    assert (await s.fetch(odd.job_id)).result == Fraction(1, 3)


async def test_a_run_edge_runs_on_the_other_member_after_a_failure(
    members: tuple[str, QueueMember, QueueMember], s: js.JobScheduler
) -> None:
    _, up, fan = members
    wf = js.Workflow("run edge")
    ok = wf.add(call(wj.shard, 1, queue=wj.UP))
    bad = wf.add(call(wj.fail, "broken on purpose", queue=wj.UP))
    lenient = wf.add(
        call(wj.report, js.results_of([ok, bad]), queue=wj.FAN),
        depends_on=[js.After(bad, on_failure="run")],
    )
    strict = wf.add(call(wj.report, js.results_of([ok, bad]), queue=wj.FAN))
    workflow_id = await s.enqueue_workflow(wf)
    got = await s.result(lenient.job_id, timeout=WAIT)
    failed = await s.wait(bad.job_id, timeout=WAIT)
    assert failed.status is S.FAILED and failed.last_error is not None
    assert "broken on purpose" in failed.last_error
    assert got == {
        "pid": fan.pid,
        "slots": [
            repr({"n": 1, "pid": up.pid}),
            f"failed {bad.job_id} failed {failed.last_error}",
        ],
    }
    assert (await s.wait(strict.job_id, timeout=WAIT)).status is S.CANCELLED
    info = await s.workflow(workflow_id)
    assert info.finished
    assert info.counts == {S.COMPLETED: 2, S.FAILED: 1, S.CANCELLED: 1}


async def test_cancel_workflow_from_a_third_process_stops_jobs_on_both_members(
    members: tuple[str, QueueMember, QueueMember], s: js.JobScheduler, tmp_path: Path
) -> None:
    _, up, fan = members
    folder = str(tmp_path)
    wf = js.Workflow("cancelled")
    on_up = wf.add(call(wj.hold, folder, "up", queue=wj.UP, timeout=None))
    on_fan = wf.add(call(wj.hold, folder, "fan", queue=wj.FAN, timeout=None))
    after = wf.add(call(wj.fan_in, js.results_of([on_up, on_fan]), queue=wj.FAN))
    workflow_id = await s.enqueue_workflow(wf)
    ran_on = [await started(tmp_path / f"{name}.started") for name in ("up", "fan")]
    assert ran_on == [up.pid, fan.pid]
    running = [await s.fetch(job.job_id) for job in (on_up, on_fan, after)]
    assert [job.status for job in running] == [S.RUNNING, S.RUNNING, S.PENDING]

    assert await s.cancel_workflow(workflow_id) == 3
    for job in (on_up, on_fan, after):
        assert (await s.wait(job.job_id, timeout=WAIT)).status is S.CANCELLED
    info = await s.workflow(workflow_id)
    assert (info.finished, info.counts) == (True, {S.CANCELLED: 3})
    assert await s.cancel_workflow(workflow_id) == 0
    # Both members are free to run more of their queues.
    more = [await s.enqueue(call(wj.shard, 7, queue=q)) for q in (wj.UP, wj.FAN)]
    assert [(await s.result(job_id, timeout=WAIT))["pid"] for job_id in more] == [up.pid, fan.pid]


async def test_progress_on_one_member_is_read_by_fetch_in_another_process(
    members: tuple[str, QueueMember, QueueMember], s: js.JobScheduler, tmp_path: Path
) -> None:
    _, up, _ = members
    fifo = tmp_path / "gate"
    os.mkfifo(fifo)
    job_id = await s.enqueue(call(wj.progress_then_gate, str(fifo), queue=wj.UP))

    def reported() -> js.Job | None:
        job = anyio.from_thread.run(s.fetch, job_id)
        return job if job.progress is not None else None

    job = await anyio.to_thread.run_sync(lambda: wait_for("the first report", reported, WAIT))
    assert (job.status, job.progress, job.progress_message) == (
        S.RUNNING,
        0.5,
        f"half-way on {up.pid}",
    )

    def open_gate() -> None:
        with open(fifo, "w") as gate:
            gate.write("go\n")

    await anyio.to_thread.run_sync(open_gate)
    done = await s.wait(job_id, timeout=WAIT)
    assert (done.status, done.result, done.progress, done.progress_message) == (
        S.COMPLETED,
        "done",
        1.0,
        "done",
    )
