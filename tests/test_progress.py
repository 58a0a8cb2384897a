"""A running job's progress (``js.current_job().progress``, issue 37): its
checks, the job's fields at once in this process, the store within about a
second, read from another process, the last values kept with the attempt's
outcome, and the throttle (a thousand reports cost a write or two); for
async, thread and process jobs, on the memory store, SQLite and PostgreSQL."""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import anyio.to_thread
import progress_jobs as pj
import pytest
from trio.testing import MockClock

import jobsched as js
from jobsched.store import ProgressRow

pytestmark = pytest.mark.anyio

FUNCTIONS = {
    "async": pj.report_async,
    "thread": pj.report_thread,
    "process": pj.report_process,
}


class Counted:
    """A store's progress writes, counted: its ``progress`` wrapped."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.calls: list[list[ProgressRow]] = []
        self.wanted: tuple[float, Callable[[], None]] | None = None
        written = store.progress

        async def progress(owner: str, rows: Any) -> None:
            await written(owner, rows)
            self.calls.append(list(rows))
            if self.wanted is not None and any(
                r.fraction is not None and abs(r.fraction - self.wanted[0]) < 1e-6 for r in rows
            ):
                self.wanted[1]()

        store.progress = progress

    async def written(self, fraction: float) -> None:
        """Return once a write of ``fraction`` committed (one before the call counts)."""
        if any(
            r.fraction is not None and abs(r.fraction - fraction) < 1e-6
            for rows in self.calls
            for r in rows
        ):
            return
        event = anyio.Event()
        self.wanted = (fraction, event.set)
        await event.wait()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def durable_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A durable store's URL: a SQLite file, or a schema of the session's database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'jobs.db'}"
    from pg import schema_url

    return schema_url(request.getfixturevalue("pg_session_database"))


def _open(url: str) -> Any:
    from pg import SECRET

    return js.open_store(url, secret=SECRET) if url.startswith("postgres") else js.open_store(url)


async def _read_elsewhere(url: str, job_id: str) -> dict[str, Any]:
    """What another process's ``fetch`` reads of the job."""
    done = await anyio.run_process(
        [sys.executable, str(Path(pj.__file__)), url, job_id],
        check=False,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert done.returncode == 0, done.stderr.decode()
    return json.loads(done.stdout.decode().strip().splitlines()[-1])  # type: ignore[no-any-return]


@pytest.fixture
def gate() -> Iterator[str]:
    """A name for a job's gate, with its events made (and dropped after)."""
    name = f"gate-{threading.get_ident()}-{os.urandom(4).hex()}"
    pj.GATES[name] = threading.Event()
    pj.REPORTED[name] = threading.Event()
    yield name
    pj.GATES.pop(name).set()
    pj.REPORTED.pop(name)


def _fifo(tmp_path: Path) -> str:
    path = tmp_path / "gate.fifo"
    os.mkfifo(path)
    return str(path)


def _open_fifo_gate(path: str) -> None:
    with open(path, "w") as gate:
        gate.write("go\n")


def test_outside_a_job_it_raises() -> None:
    """No job, no handle: RuntimeError, and so no progress."""
    with pytest.raises(RuntimeError, match="outside a running job"):
        js.current_job().progress(0.5)


@pytest.mark.memory_only("the checks of the values are the handle's, whatever the store")
async def test_bad_values_are_refused_and_good_ones_kept(
    make_scheduler: Callable[..., js.JobScheduler],
) -> None:
    """A bool, a value out of [0, 1], NaN, a str fraction, a message that is
    no str: ValueError naming the problem, nothing changed. A Fraction and
    an int are reals; a message's NUL is escaped and a long one cut; None
    leaves a value as it was."""
    async with make_scheduler() as s:
        job_id = s.submit(js.FunctionJob(pj.check_values))
        await s.join()
        job = s.get(job_id)
    assert job.status is js.JobStatus.COMPLETED, job.last_error
    seen = job.result
    said, after = seen[: len(pj.BAD)], seen[len(pj.BAD) :]
    for (kwargs, word), message in zip(pj.BAD, said):
        assert message is not None, f"progress(**{kwargs!r}) was taken"
        assert word in message, (kwargs, message)
    assert after == [
        (None, None),
        (0.5, "a\\x00b"),
        (0.5, 1_000),
        (1.0, "xxx"),
        0.0,
    ]
    assert (job.progress, job.progress_message[:3]) == (0.0, "xxx")


@pytest.mark.memory_only("the store's side is test_progress_reaches_the_store_and_another_process")
@pytest.mark.parametrize("executor", ["async", "thread"])
async def test_progress_shows_at_once_in_this_process(
    executor: str, gate: str, make_scheduler: Callable[..., js.JobScheduler]
) -> None:
    """The job's fields show a report as soon as it is made, from the
    scheduler's own task or the job's thread; the last report stays."""
    async with make_scheduler() as s:
        job_id = s.submit(
            js.FunctionJob(FUNCTIONS[executor], (gate,), executor=executor, timeout=None)
        )
        await anyio.to_thread.run_sync(pj.REPORTED[gate].wait)
        job = s.get(job_id)
        assert (job.progress, job.progress_message) == pj.FIRST
        pj.GATES[gate].set()
        await s.join()
        job = s.get(job_id)
        assert job.status is js.JobStatus.COMPLETED, job.last_error
        assert (job.progress, job.progress_message) == pj.LAST
        job = await s.fetch(job_id)
        assert (job.progress, job.progress_message) == pj.LAST


async def test_a_retry_starts_with_no_progress(
    gate: str, make_scheduler: Callable[..., js.JobScheduler], durable: bool
) -> None:
    """Attempt 1 reports and fails: while attempt 2 runs, before it reports,
    the job shows no progress, here and in the store; then its own."""
    from jobsched._jobs._ids import id_number

    retry = js.RetryPolicy(max_retries=1, base_delay=0.0, jitter=False)
    async with make_scheduler() as s:
        job_id = s.submit(js.FunctionJob(pj.fail_then_wait, (gate,), retry=retry, timeout=None))
        try:
            assert await anyio.to_thread.run_sync(pj.REPORTED[gate].wait, 60)
            job = s.get(job_id)
            assert (job.status, job.attempts) == (js.JobStatus.RUNNING, 2)
            assert (job.progress, job.progress_message) == (None, None)
            if durable:
                row = await s._link.store.fetch(id_number(job_id))  # type: ignore[union-attr]
                assert row is not None and row.attempts == 2
                assert (row.progress, row.progress_message) == (None, None)
        finally:
            pj.GATES[gate].set()  # a failed assert must not leave the stop waiting for the job
        await s.join()
        job = await s.fetch(job_id)
    assert (job.status, job.result) == (js.JobStatus.COMPLETED, "second"), job.last_error
    assert (job.progress, job.progress_message) == pj.LAST


def test_an_attempt_that_ended_reports_nothing(gate: str) -> None:
    """A thread an attempt abandoned at its timeout reports while the job's
    next attempt runs: the job's fields keep the running attempt's values."""
    retry = js.RetryPolicy(max_retries=1, base_delay=0.0, jitter=False)

    async def main() -> js.Job:
        async with js.JobScheduler(num_workers=1) as s:
            job_id = s.submit(js.FunctionJob(pj.report_late, (gate,), timeout=0.3, retry=retry))
            await s.join()
            return s.get(job_id)

    job = anyio.run(main)
    assert (job.status, job.result) == (js.JobStatus.COMPLETED, "second"), job.last_error
    assert (job.progress, job.progress_message) == (0.2, "attempt 2")


@pytest.mark.memory_only("the durable runs are test_progress_reaches_the_store_and_another_process")
async def test_a_process_job_reports_to_its_scheduler(
    make_scheduler: Callable[..., js.JobScheduler],
) -> None:
    """A process job's reports, made in its worker, reach the job's fields here."""
    async with make_scheduler() as s:
        job_id = s.submit(
            js.FunctionJob(pj.report_process, ("", 500), executor="process", timeout=None)
        )
        await s.join()
        job = s.get(job_id)
    assert job.status is js.JobStatus.COMPLETED, job.last_error
    assert (job.progress, job.progress_message) == pj.LAST


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
@pytest.mark.parametrize("executor", ["async", "thread", "process"])
async def test_progress_reaches_the_store_and_another_process(
    executor: str, gate: str, durable_url: str, tmp_path: Path
) -> None:
    """A report is written to the store while the attempt runs (another
    process's fetch reads it), and the attempt's outcome keeps the last one."""
    store = _open(durable_url)
    counted = Counted(store)
    fifo = _fifo(tmp_path) if executor == "process" else ""
    args = (fifo,) if executor == "process" else (gate,)
    async with js.JobScheduler(store=store) as s:
        job_id = s.submit(
            js.FunctionJob(FUNCTIONS[executor], args, executor=executor, timeout=None)
        )
        await counted.written(pj.FIRST[0])
        job = s.get(job_id)
        assert (job.progress, job.progress_message) == pj.FIRST
        there = await _read_elsewhere(durable_url, job_id)
        assert there["status"] == "running"
        assert there["progress"] == pj.FIRST[0]
        assert there["message"] == pj.FIRST[1]
        if executor == "process":
            await anyio.to_thread.run_sync(_open_fifo_gate, fifo)
        else:
            pj.GATES[gate].set()
        await s.join()
        job = s.get(job_id)
        assert job.status is js.JobStatus.COMPLETED, job.last_error
        assert (job.progress, job.progress_message) == pj.LAST
    there = await _read_elsewhere(durable_url, job_id)
    assert there["status"] == "completed"
    assert there["progress"] == pj.LAST[0]
    assert there["message"] == pj.LAST[1]


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_a_thousand_reports_cost_at_most_two_writes(gate: str, durable_url: str) -> None:
    """A job reports a thousand times, waits for the store's first write,
    and reports a thousand times more: one write carries the first burst's
    last values, at most one more the second's, and the outcome the last."""
    store = _open(durable_url)
    counted = Counted(store)
    async with js.JobScheduler(store=store) as s:
        job_id = s.submit(js.FunctionJob(pj.burst_twice, (gate,)))
        await counted.written(0.999)
        pj.GATES[gate].set()
        await s.join()
        job = await s.fetch(job_id)
    assert job.status is js.JobStatus.COMPLETED, job.last_error
    assert 1 <= len(counted.calls) <= 2, counted.calls
    first = counted.calls[0]
    assert [(r.attempt, r.fraction, r.message) for r in first] == [(1, 0.999, "first 999")]
    assert (job.progress, job.progress_message) == (0.999, "second 999")


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_no_report_no_writer(durable_url: str) -> None:
    """A member whose jobs never report progress starts no writer and writes none."""
    store = _open(durable_url)
    counted = Counted(store)
    async with js.JobScheduler(store=store) as s:
        s.submit(js.FunctionJob(sum, ([1, 2],)))
        await s.join()
        assert s._backing.link.progress_writer is None  # type: ignore[attr-defined]
    assert counted.calls == []


class _FakeStore:
    """Takes progress writes, noting when (the loop's clock) and what; fails
    the first ``failures`` of them as a store that is away does."""

    url = "fake://progress"

    def __init__(self, failures: int = 0) -> None:
        self.writes: list[tuple[float, list[ProgressRow]]] = []
        self.failures = failures

    async def progress(self, owner: str, rows: Any) -> None:
        assert owner == "me"
        if self.failures:
            self.failures -= 1
            raise js.StoreUnavailableError("away for a moment")
        self.writes.append((anyio.current_time(), list(rows)))


_MOCK = pytest.param(("trio", {"clock": MockClock(autojump_threshold=0)}), id="trio-mock")


def _writer(store: _FakeStore, group: Any) -> Any:
    from jobsched._engine._link._progress import ProgressWriter

    return ProgressWriter(
        store,  # type: ignore[arg-type]
        "me",
        group,
        anyio.lowlevel.current_token(),
        threading.get_ident(),
        clock=anyio.current_time,
    )


@pytest.mark.parametrize("anyio_backend", [_MOCK])
async def test_the_writer_writes_each_job_at_most_once_a_second() -> None:
    """Two jobs reporting every 0.1 s for 5 s (virtual time): each written
    at most once a second, in one call for both, with its attempt and its
    newest values; after forget nothing more, and the task ends by itself."""
    from jobsched._engine._link import _progress

    store = _FakeStore()
    async with anyio.create_task_group() as group:
        writer = _writer(store, group)
        for i in range(50):
            writer.note(1, 1, i / 50, f"a{i}")
            writer.note(2, 3, None, f"b{i}")
            await anyio.sleep(0.1)
        writer.forget(1)
        writer.forget(2)
        written = len(store.writes)
        await anyio.sleep(_progress.IDLE + 1)
        assert len(store.writes) == written
        assert not writer._running  # ended by itself: a note starts a new one
        writer.note(1, 2, 0.5, None)
        await anyio.sleep(_progress.WAKE * 2)
        assert store.writes[-1][1] == [ProgressRow(1, 2, 0.5, None)]
        writer.close()
    times = [at for at, _ in store.writes[:written]]
    assert 4 <= len(times) <= 6, times
    assert all(b - a >= _progress.EVERY for a, b in zip(times, times[1:])), times
    for _, rows in store.writes[:written]:
        assert [(r.id, r.attempt) for r in rows] == [(1, 1), (2, 3)]
        a, b = rows
        assert a.message == f"a{round(a.fraction * 50)}" and b.fraction is None
    assert writer.writes == len(store.writes)


@pytest.mark.parametrize("anyio_backend", [_MOCK])
async def test_the_writer_rides_out_a_store_away() -> None:
    """A write the store could not take is made again, with the newest values."""
    store = _FakeStore(failures=2)
    async with anyio.create_task_group() as group:
        writer = _writer(store, group)
        writer.note(7, 1, 0.1, "first")
        await anyio.sleep(0.3)  # the first try failed
        writer.note(7, 1, 0.2, "newer")
        await anyio.sleep(3)
        writer.close()
    assert [rows for _, rows in store.writes] == [[ProgressRow(7, 1, 0.2, "newer")]]
    assert writer.writes == 3


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_an_outcome_keeps_its_attempts_last_progress(durable_url: str) -> None:
    """The store writes an outcome's progress with it (a completion with
    progress is no plain one: its result and cleared error are written as
    ever); an outcome without progress leaves what the writer wrote; a
    retry clears both (the next attempt starts with none), and so does a
    hand-back of a cut attempt."""
    from jobsched.store import NewJob, Outcome

    now = 1_700_000_000.0
    status = js.JobStatus
    store = _open(durable_url)
    await store.open()
    try:
        await store.add(
            [NewJob(i, f"j{i}", "async", (0.0,), now, now, b"P") for i in (1, 2, 3, 4, 5)], now
        )
        claims = {c.id: c for c in await store.claim("m", 9, {"async": 9}, now, 30)}
        await store.progress(
            "m", [ProgressRow(i, claims[i].attempt, 0.3, "written") for i in (3, 4, 5)]
        )
        await store.hand_back("m", [(5, claims[5].attempt, now + 1)])
        ended = [
            Outcome(1, claims[1].attempt, status.COMPLETED, now + 1, result=b"J1", progress=1.0,
                    progress_message="all done"),
            Outcome(2, claims[2].attempt, status.FAILED, now + 1, error="E: no", progress=0.5),
            Outcome(3, claims[3].attempt, status.RETRY_WAIT, now + 1, run_at=now + 9,
                    error="E: again", progress_message="page 2"),
            Outcome(4, claims[4].attempt, status.COMPLETED, now + 1, result=b"J4"),
        ]  # fmt: skip
        assert ended[0].plain is False and ended[3].plain is True
        recorded = await store.record("m", ended)
        assert recorded.refused == []
        rows = {i: await store.fetch(i) for i in (1, 2, 3, 4, 5)}
    finally:
        await store.close()
    seen = {
        i: (r.status, r.result, r.last_error, r.progress, r.progress_message)
        for i, r in rows.items()
        if r is not None
    }
    assert seen == {
        1: (status.COMPLETED, b"J1", None, 1.0, "all done"),
        2: (status.FAILED, None, "E: no", 0.5, None),
        3: (status.RETRY_WAIT, None, "E: again", None, None),
        4: (status.COMPLETED, b"J4", None, 0.3, "written"),
        5: (status.PENDING, None, None, None, None),
    }


def test_a_process_worker_sends_progress_once_a_second_and_the_last_before_its_reply(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """In the worker: the first report goes at once, the next ones wait for
    their second (a long one here), the newest of them goes at the job's
    end, and nothing goes after it."""
    import socket

    from jobsched_process import _wire, _worker

    monkeypatch.setattr(_worker.Progress, "EVERY", 3600.0)
    ours, theirs = socket.socketpair()
    with ours, theirs:
        progress = _worker.Progress(theirs)
        for i in range(1_000):
            progress(i / 1_000, f"step {i}")
        progress.close()
        progress(1.0, "after its reply")
        theirs.close()
        got = []
        while True:
            try:
                kind, size = _wire.read_header(ours)
            except EOFError:
                break
            assert kind == _wire.PROGRESS
            got.append(_wire.BodyReader(ours, size).load())
    assert got == [(0.0, "step 0"), (0.999, "step 999")]
