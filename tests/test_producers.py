"""Producers, results and deploys (the contract's section): ``at=``, ``wait``/``result``,
``num_workers=0``, ids you choose, stopping that hands work back, jobs others can load.

Tests that take ``make_scheduler`` run on the memory store, SQLite and
PostgreSQL, under asyncio and trio (tests/conftest.py).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import anyio
import pytest
from sample_jobs import FailTimes, Ok

import jobsched as js

pytestmark = pytest.mark.anyio

S = js.JobStatus
Make = Callable[..., js.JobScheduler]
NO_RETRY = js.RetryPolicy(max_retries=0)

#: Both backends on the real clock: the durable stores work in threads, which
#: trio's mock clock would jump over.
REAL_CLOCK_BACKENDS = pytest.mark.parametrize(
    "anyio_backend",
    [
        pytest.param(("asyncio", {}), id="asyncio"),
        pytest.param(("trio", {}), id="trio"),
    ],
)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def shared_url(request: pytest.FixtureRequest, tmp_path: Any) -> str:
    """One durable store that several schedulers open: a file, or a PostgreSQL schema."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'jobs.db'}"
    from pg import require_server, schema_url

    require_server()
    return schema_url(request.getfixturevalue("pg_session_database"))


def member(url: str, **kwargs: Any) -> js.JobScheduler:
    """A scheduler on the shared store (its own connection, as another process's)."""
    from pg import SECRET

    return js.JobScheduler(store=js.open_store(url, secret=SECRET), **kwargs)


# ── at= ──────────────────────────────────────────────────────────────────


async def test_at_in_the_future_delays_and_in_the_past_runs_now(make_scheduler: Make) -> None:
    """A job at a future time waits for it; one at a past time runs at once."""
    async with make_scheduler() as s:
        later = s.submit(Ok("later"), at=datetime.now(timezone.utc) + timedelta(hours=1))
        past = await s.enqueue(Ok("past"), at=datetime.now(timezone.utc) - timedelta(days=1))
        # Another zone names the same instant: only the instant counts.
        plus2 = timezone(timedelta(hours=2))
        soon = s.submit(Ok("soon"), at=datetime.now(plus2) + timedelta(hours=2))
        with anyio.fail_after(30):
            assert await s.result(past) == "past"
        queued = s.get(later)
        assert queued.status is S.PENDING
        # run_at is on the scheduler's clock: about an hour from now.
        assert 3500 < queued.run_at - s._clock() <= 3600  # type: ignore[attr-defined, operator]
        assert s.get(soon).status is S.PENDING
        assert s.cancel(later) and s.cancel(soon)


async def test_at_is_checked(make_scheduler: Make) -> None:
    """Naive datetimes, at with a delay, and non-datetimes are refused, nothing queued."""
    async with make_scheduler() as s:
        with pytest.raises(ValueError, match="aware datetime.*naive.*timezone"):
            s.submit(Ok(), at=datetime.now())
        with pytest.raises(ValueError, match="at= or delay=, not both"):
            s.submit(Ok(), at=datetime.now(timezone.utc), delay=5)
        with pytest.raises(TypeError, match="at must be an aware datetime"):
            s.submit(Ok(), at=time.time())  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="naive"):
            await s.enqueue(Ok(), at=datetime(2030, 1, 1))
        assert s.jobs() == []
        # delay=0 with at is fine: 0 is the default.
        s.submit(Ok(), at=datetime.now(timezone.utc), delay=0)


# ── wait() and result() ──────────────────────────────────────────────────


async def test_wait_and_result_give_one_jobs_outcome(make_scheduler: Make) -> None:
    """wait() returns the finished job as the store has it; result() its result."""
    async with make_scheduler() as s:
        ok = s.submit(Ok(41, seconds=0.01))
        with anyio.fail_after(30):
            job = await s.wait(ok)
            assert (job.status, job.result, job.attempts) == (S.COMPLETED, 41, 1)
            assert await s.result(ok) == 41
            # A job that ended long ago answers at once, timeout 0 too.
            assert await s.result(ok, timeout=0) == 41


async def test_wait_returns_only_one_jobs_end(make_scheduler: Make) -> None:
    """A short job's wait returns while a job queued after a long delay is still pending."""
    async with make_scheduler() as s:
        slow = s.submit(Ok("slow"), delay=3600)
        fast = s.submit(Ok("fast"))
        with anyio.fail_after(30):
            assert await s.result(fast) == "fast"
        assert s.get(slow).status is S.PENDING
        s.cancel(slow)


async def test_result_of_a_failed_job_raises_job_failed_error(make_scheduler: Make) -> None:
    """JobFailedError carries the finished job; its message names status and last_error."""
    async with make_scheduler() as s:
        failed = s.submit(FailTimes(5, retry=NO_RETRY))
        with anyio.fail_after(30), pytest.raises(js.JobFailedError) as info:
            await s.result(failed)
    error = info.value
    assert isinstance(error, js.SchedulerError)
    assert error.job.job_id == failed
    assert (error.job.status, error.job.attempts) == (S.FAILED, 1)
    assert "failed" in str(error) and "ConnectionError: attempt 1" in str(error)


async def test_wait_for_a_cancelled_job(make_scheduler: Make) -> None:
    """A cancelled job is finished: wait returns it, result raises naming the status."""
    async with make_scheduler() as s:
        queued = s.submit(Ok(), delay=3600)
        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:

                async def cancel_soon() -> None:
                    await anyio.sleep(0.05)
                    s.cancel(queued)

                tg.start_soon(cancel_soon)
                job = await s.wait(queued)
            assert job.status is S.CANCELLED
            with pytest.raises(js.JobFailedError, match="cancelled"):
                await s.result(queued)


async def test_wait_times_out_and_refuses_unknown_ids(make_scheduler: Make) -> None:
    """TimeoutError when the job doesn't end in time; UnknownJobError for an id not held."""
    async with make_scheduler() as s:
        later = s.submit(Ok(), delay=3600)
        with anyio.fail_after(30):
            with pytest.raises(TimeoutError, match=f"{later}.*did not finish within 0.2 s"):
                await s.wait(later, timeout=0.2)
            with pytest.raises(TimeoutError):
                await s.result(later, timeout=0)
            with pytest.raises(js.UnknownJobError, match="job-999999"):
                await s.wait("job-999999")
            with pytest.raises(js.UnknownJobError):
                await s.result("not an id")
            with pytest.raises(ValueError, match="timeout must be"):
                await s.wait(later, timeout=-1)
            with pytest.raises(TypeError, match="timeout must be"):
                await s.wait(later, timeout="1")  # type: ignore[arg-type]
        assert s.get(later).status is S.PENDING
        s.cancel(later)


@pytest.mark.memory_only("a durable store's jobs run on in other members after a stop")
async def test_wait_on_the_memory_store_needs_a_running_scheduler(make_scheduler: Make) -> None:
    """Never started: SchedulerError; stopped under the waiter: SchedulerStoppedError."""
    s = make_scheduler()
    queued = s.submit(Ok())
    with pytest.raises(js.SchedulerError, match="never started"):
        await s.wait(queued)
    async with make_scheduler() as s:
        later = s.submit(Ok(), delay=3600)
        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:

                async def stop_soon() -> None:
                    await anyio.sleep(0.05)
                    await s.stop()

                tg.start_soon(stop_soon)
                with pytest.raises(js.SchedulerStoppedError, match="stopped with it pending"):
                    await s.wait(later)


@pytest.mark.parametrize("store", ["memory", "sqlite"])
def test_background_scheduler_blocks_for_one_job(store: str, tmp_path: Any) -> None:
    """BackgroundScheduler's fetch, wait and result block the calling thread."""
    url = store if store == "memory" else f"sqlite:///{tmp_path / 'jobs.db'}"
    with js.BackgroundScheduler(store=url) as s:
        ok = s.submit(Ok("done", seconds=0.01))
        failed = s.submit(FailTimes(5, retry=NO_RETRY))
        later = s.submit(Ok(), at=datetime.now(timezone.utc) + timedelta(hours=1))
        assert s.result(ok, timeout=30) == "done"
        assert s.wait(ok).status is S.COMPLETED
        assert s.fetch(ok).result == "done"
        with pytest.raises(js.JobFailedError, match="failed after 1 attempt"):
            s.result(failed, timeout=30)
        with pytest.raises(TimeoutError):
            s.wait(later, timeout=0.1)
        with pytest.raises(js.UnknownJobError):
            s.wait("job-999999", timeout=5)
        s.cancel(later)


# ── num_workers=0: producers ─────────────────────────────────────────────


class Elsewhere(js.AsyncJob):
    """A job for an executor only the workers have (the producer has none)."""

    executor = "elsewhere"

    async def run(self) -> None:
        return None


def test_a_producer_needs_a_durable_store() -> None:
    """num_workers=0 on the memory store raises ValueError; negative counts too."""
    with pytest.raises(ValueError, match="num_workers=0 makes a producer.*durable store"):
        js.JobScheduler(num_workers=0)
    with pytest.raises(ValueError, match="num_workers=0 makes a producer"):
        js.BackgroundScheduler(num_workers=0, store="memory")
    with pytest.raises(ValueError, match="got -1"):
        js.JobScheduler(num_workers=-1, store="sqlite:///unused.db")


@REAL_CLOCK_BACKENDS
async def test_a_producer_never_runs_jobs_and_workers_do(shared_url: str) -> None:
    """The producer's jobs run on the worker; wait() in the producer sees them end."""
    async with member(shared_url, num_workers=0) as producer:
        ids = [await producer.enqueue(Ok(i)) for i in range(5)]
        failed = await producer.enqueue(FailTimes(9, retry=NO_RETRY))
        # Alone, the producer claims nothing: the job is still waiting after
        # many of a worker's claim rounds.
        with pytest.raises(TimeoutError):
            await producer.wait(ids[0], timeout=1.0)
        assert (await producer.fetch(ids[0])).status is S.PENDING
        assert producer.peak_running == 0
        ran: set[str] = set()
        async with member(shared_url) as worker:
            worker.add_listener(lambda job, old, new: ran.add(job.job_id))
            with anyio.fail_after(60):
                assert [await producer.result(i) for i in ids] == list(range(5))
                with pytest.raises(js.JobFailedError, match="failed"):
                    await producer.result(failed)
        assert producer.peak_running == 0
        assert ran == {*ids, failed}
        # The producer's own view never saw them run.
        assert all(producer.get(i).status is S.PENDING for i in ids)


@REAL_CLOCK_BACKENDS
async def test_a_producer_needs_no_executor_and_fires_no_schedule(
    shared_url: str, tmp_path: Any
) -> None:
    """A producer submits jobs for executors it lacks, and its stored schedules
    fire only once a worker runs."""
    from functools import partial

    from durable_jobs import make_note

    async with member(shared_url, num_workers=0) as producer:
        job_id = await producer.enqueue(Elsewhere("for the workers"))
        producer.schedule_recurring(partial(make_note, str(tmp_path / "log")), 0.05, id="beat")
        await producer.flush()
        with pytest.raises(TimeoutError):
            await producer.wait(job_id, timeout=1.0)
        store = producer._link.store  # type: ignore[union-attr]
        assert [row.name for row in await store.jobs()] == ["for the workers"]
        worker = member(shared_url, executors={"elsewhere": _Null()})
        fired = anyio.Event()
        worker.add_listener(lambda job, old, new: job.name == "scheduled beat" and fired.set())
        async with worker:
            with anyio.fail_after(60):
                assert (await producer.wait(job_id)).status is S.COMPLETED
                await fired.wait()  # the schedule fired, in the worker
            worker.cancel_recurring("beat")


class _Null(js.Executor):
    name = "elsewhere"

    async def run(self, job: js.Job) -> None:
        return None


@pytest.mark.postgres
@REAL_CLOCK_BACKENDS
async def test_wait_on_postgres_is_woken_by_the_stores_notifications(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With polling turned off, a producer's wait() still returns when a worker
    commits the outcome: the store's NOTIFY wakes it."""
    from pg import require_server, schema_url

    from jobsched._engine import _storedreads

    require_server()
    url = schema_url(request.getfixturevalue("pg_session_database"))
    async with member(url, num_workers=0) as producer:
        ids = [await producer.enqueue(Ok(i), delay=0.3) for i in range(3)]
        failed = await producer.enqueue(FailTimes(9, retry=NO_RETRY), delay=0.3)
        monkeypatch.setattr(_storedreads, "POLL_INTERVAL", 3600.0)
        async with member(url):
            with anyio.fail_after(60):
                assert [await producer.result(i) for i in ids] == [0, 1, 2]
                assert (await producer.wait(failed)).status is S.FAILED


def test_a_background_producer_and_a_background_worker(tmp_path: Any) -> None:
    """BackgroundScheduler(num_workers=0) enqueues; another one on the store runs the jobs."""
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    with js.BackgroundScheduler(num_workers=0, store=url) as producer:
        job_id = producer.submit(Ok("from the producer"))
        with pytest.raises(TimeoutError):
            producer.wait(job_id, timeout=1.0)
        with js.BackgroundScheduler(store=url):
            assert producer.result(job_id, timeout=60) == "from the producer"
        assert producer.get(job_id).status is S.PENDING  # its own view: it never ran it


# ── ids you choose ───────────────────────────────────────────────────────


async def test_an_id_of_your_own_makes_submit_idempotent(make_scheduler: Make) -> None:
    """The same id twice adds one job; the first stands, unfinished or finished."""
    async with make_scheduler() as s:
        assert s.submit(Ok("first", seconds=0.05), job_id="order-42") == "order-42"
        assert s.submit(Ok("second"), job_id="order-42") == "order-42"
        assert await s.enqueue(Ok("third"), job_id="order-42") == "order-42"
        with anyio.fail_after(30):
            assert await s.result("order-42") == "first"
        # Finished and kept: still nothing added.
        assert await s.enqueue(Ok("fourth"), job_id="order-42") == "order-42"
        assert await s.result("order-42") == "first"
        assert [j.job_id for j in s.jobs()] == ["order-42"]
        job = await s.fetch("order-42")
        assert (job.job_id, job.result, job.attempts) == ("order-42", "first", 1)
        assert s.get("order-42").job_id == "order-42"
        # The id works wherever an id does: dependencies, cancel.
        after = s.submit(Ok("after"), depends_on=["order-42"], job_id="after-42")
        queued = s.submit(Ok(), delay=3600, job_id="queued é/42 ✓")
        with anyio.fail_after(30):
            assert await s.result(after) == "after"
        assert s.cancel(queued)
        assert (await s.wait(queued)).status is S.CANCELLED
        assert s.submit(Ok(), job_id=queued) == queued  # cancelled and kept: not again
        assert (await s.fetch(queued)).status is S.CANCELLED


async def test_an_id_of_your_own_is_checked(make_scheduler: Make) -> None:
    """Empty, too long, job- prefixed or non-str ids are refused; nothing is queued."""
    async with make_scheduler() as s:
        with pytest.raises(ValueError, match="must not be empty"):
            s.submit(Ok(), job_id="")
        with pytest.raises(ValueError, match="at most 200 characters, got 201"):
            s.submit(Ok(), job_id="x" * 201)
        with pytest.raises(ValueError, match="starts with 'job-'.*another prefix"):
            await s.enqueue(Ok(), job_id="job-7")
        with pytest.raises(TypeError, match="job_id must be a str or None, got 42"):
            s.submit(Ok(), job_id=42)  # type: ignore[arg-type]
        assert s.jobs() == []
        assert s.submit(Ok(), job_id="x" * 200) == "x" * 200


@REAL_CLOCK_BACKENDS
async def test_one_job_per_id_across_members_submitting_at_once(shared_url: str) -> None:
    """Two members enqueue the same ids concurrently: the store holds one job per id,
    and each runs once."""
    ids = [f"request-{i}" for i in range(40)]
    async with member(shared_url, num_workers=0) as a, member(shared_url, num_workers=0) as b:

        async def enqueue_all(s: js.JobScheduler, tag: str) -> None:
            for job_id in ids:
                assert await s.enqueue(Ok(tag), job_id=job_id) == job_id

        async def submit_all(s: js.JobScheduler, tag: str) -> None:
            for job_id in ids:  # submits that share group commits
                assert s.submit(Ok(tag), job_id=job_id) == job_id
            await s.flush()

        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                tg.start_soon(enqueue_all, a, "a")
                tg.start_soon(submit_all, b, "b")
                tg.start_soon(enqueue_all, b, "b2")
        store = a._link.store  # type: ignore[union-attr]
        rows = await store.jobs(limit=1000)
        assert len(rows) == len(ids)
        started: list[str] = []
        worker = member(shared_url)
        worker.add_listener(lambda job, old, new: new is S.RUNNING and started.append(job.job_id))
        async with worker:
            with anyio.fail_after(60):
                results = {job_id: await a.result(job_id) for job_id in ids}
        assert sorted(started) == sorted(ids)
        assert set(results.values()) <= {"a", "b", "b2"}
        # Each member's own view holds only the jobs the store took from it.
        assert len(a.jobs()) + len(b.jobs()) == len(ids)


@REAL_CLOCK_BACKENDS
async def test_the_member_that_lost_an_own_ids_insert_runs_the_stored_job(
    shared_url: str,
) -> None:
    """A member whose own-id submit lost the insert to another member's runs
    the stored job, never its own copy, even when it claims that job before
    its own insert has come back (made certain here: its add waits)."""
    from pg import SECRET

    late = js.open_store(shared_url, secret=SECRET)
    real_add = late.add
    let_add = anyio.Event()

    async def add_later(jobs: Any, now: float) -> Any:
        await let_add.wait()
        return await real_add(jobs, now)

    late.add = add_later  # type: ignore[method-assign]
    ran: list[js.Job] = []
    running = anyio.Event()

    def started(job: js.Job, old: S, new: S) -> None:
        if new is S.RUNNING:
            ran.append(job)
            running.set()

    async with member(shared_url, num_workers=0) as a, js.JobScheduler(store=late) as b:
        b.add_listener(started)
        copy = Ok("b's copy")
        assert b.submit(copy, job_id="order-1") == "order-1"  # its insert waits
        assert await a.enqueue(Ok("a's job"), job_id="order-1") == "order-1"  # and loses
        with anyio.fail_after(60):
            await running.wait()  # b claimed the stored job before its add came back
            let_add.set()
            assert await a.result("order-1") == "a's job"
        assert [(job.name, job is copy) for job in ran] == [('ok "a\'s job"', False)]
        assert (await b.fetch("order-1")).name == 'ok "a\'s job"'


# ── stopping never cancels durable work ─────────────────────────────────


def durable_url(tmp_path: Any) -> str:
    return f"sqlite:///{tmp_path / 'jobs.db'}"


@REAL_CLOCK_BACKENDS
async def test_stop_lets_jobs_finish_within_grace_and_hands_back_the_rest(
    shared_url: str,
) -> None:
    """A job that ends within the grace completes; one still running after it goes
    back to the store, PENDING with its attempt uncounted, and runs again elsewhere."""
    first = member(shared_url, num_workers=2)
    started = anyio.Event()
    first.add_listener(
        lambda job, old, new: new is S.RUNNING and job.name == "long" and started.set()
    )
    async with first:
        short = first.submit(Ok("short", seconds=0.3))
        long = first.submit(Ok("long", seconds=3600, name="long", timeout=None))
        with anyio.fail_after(30):
            await started.wait()
        with anyio.fail_after(60):
            await first.stop(grace=1.0)
    assert first.get(short).status is S.COMPLETED
    async with member(shared_url, num_workers=0) as look:
        stored = await look.fetch(long)
        assert (stored.status, stored.attempts, stored.last_error) == (S.PENDING, 0, None)
        assert (await look.fetch(short)).result == "short"


@REAL_CLOCK_BACKENDS
async def test_leaving_async_with_on_an_error_hands_back_never_cancels(shared_url: str) -> None:
    """The body raises: the running job is handed back at once, not CANCELLED; a
    failure while stopping keeps its retry in the store."""
    started = anyio.Event()
    s = member(shared_url)
    s.add_listener(lambda job, old, new: new is S.RUNNING and started.set())
    with pytest.raises(RuntimeError, match="the request failed"):  # noqa: PT012
        async with s:
            job_id = s.submit(Ok("long", seconds=3600, timeout=None))
            with anyio.fail_after(30):
                await started.wait()
            raise RuntimeError("the request failed")
    async with member(shared_url, num_workers=0) as look:
        stored = await look.fetch(job_id)
    assert (stored.status, stored.attempts) == (S.PENDING, 0)


@pytest.mark.parametrize("how", ["grace", "cancel_running", "error"])
def test_background_shutdown_hands_back_on_a_durable_store(tmp_path: Any, how: str) -> None:
    """shutdown(grace=...), shutdown(cancel_running=True) and leaving the `with` on
    an error give the running job back to the store; nothing ends CANCELLED."""
    url = durable_url(tmp_path)
    bg = js.BackgroundScheduler(store=url)

    def start_long() -> str:
        job_id = bg.submit(Ok("long", seconds=3600, timeout=None))
        deadline = time.monotonic() + 60
        while bg.get(job_id).status is not S.RUNNING and time.monotonic() < deadline:
            time.sleep(0.01)
        return job_id

    if how == "error":
        with pytest.raises(KeyError), bg:  # noqa: PT012 - the body is the subject
            job_id = start_long()
            raise KeyError("the body failed")
    else:
        bg.start()
        job_id = start_long()
        if how == "grace":
            bg.shutdown(grace=0.2)
        else:
            bg.shutdown(cancel_running=True)
    with js.BackgroundScheduler(store=url, num_workers=0) as look:
        stored = look.fetch(job_id)
    assert (stored.status, stored.attempts) == (S.PENDING, 0)


def test_stop_and_shutdown_check_grace(tmp_path: Any) -> None:
    """A negative, NaN or non-number grace is refused by name."""

    async def main() -> None:
        s = js.JobScheduler(store=durable_url(tmp_path))
        with pytest.raises(ValueError, match="grace must be a number of seconds >= 0, got -1"):
            await s.stop(grace=-1)
        with pytest.raises(TypeError, match="grace must be a number of seconds or None"):
            await s.stop(grace="soon")  # type: ignore[arg-type]
        await s.stop()

    anyio.run(main)
    with js.BackgroundScheduler() as bg, pytest.raises(ValueError, match="got nan"):
        bg.shutdown(grace=float("nan"))


EXIT_SCRIPT = """
import sys
import jobsched as js
from jobsched._engine import _lifecycle
from sample_jobs import Ok

_lifecycle.DEFAULT_GRACE = 0.5  # the default grace, shortened for the test
bg = js.BackgroundScheduler(store=sys.argv[1])
bg.start()
job_id = bg.submit(Ok("long", seconds=3600, timeout=None))
while bg.get(job_id).status is not js.JobStatus.RUNNING:
    pass
print(job_id)
# No shutdown(): the exit hook stops the scheduler.
"""


def test_the_exit_hook_hands_running_jobs_back(tmp_path: Any) -> None:
    """A script that exits with a durable job running, never calling shutdown(),
    leaves it PENDING in the store with its attempt uncounted."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    url = durable_url(tmp_path)
    tests = Path(__file__).resolve().parent
    env = {**os.environ, "PYTHONPATH": f"{tests}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    done = subprocess.run(
        [sys.executable, "-c", EXIT_SCRIPT, url],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    job_id = done.stdout.strip()
    with js.BackgroundScheduler(store=url, num_workers=0) as look:
        stored = look.fetch(job_id)
    assert (stored.status, stored.attempts) == (S.PENDING, 0)


# ── jobs other processes can load ────────────────────────────────────────


class MainJob(js.AsyncJob):
    async def run(self) -> str:
        return "ran"


def main_function(x: int) -> int:
    return x


@pytest.fixture
def in_main(monkeypatch: pytest.MonkeyPatch) -> None:
    """MainJob and main_function as a script's own: defined in __main__."""
    import sys

    main = sys.modules["__main__"]
    for thing in (MainJob, main_function):
        monkeypatch.setattr(thing, "__module__", "__main__")
        monkeypatch.setattr(main, thing.__name__, thing, raising=False)


@REAL_CLOCK_BACKENDS
@pytest.mark.usefixtures("in_main")
async def test_main_jobs_are_refused_on_postgres_and_kept_on_sqlite(shared_url: str) -> None:
    """A job class or function from __main__ can't be loaded by other members:
    PostgreSQL refuses it at submit, naming it and the fix; SQLite keeps it."""
    async with member(shared_url) as s:
        jobs = [
            MainJob("main"),
            js.FunctionJob(main_function, (1,)),
            js.FunctionJob(max, ([MainJob("as an argument")],), {"key": id}),
        ]
        if "postgresql" not in shared_url:
            ids = [await s.enqueue(job) for job in jobs]
            with anyio.fail_after(30):
                assert await s.result(ids[1]) == 1
            return
        for job, name in zip(jobs, ["MainJob", "main_function", "MainJob"], strict=True):
            with pytest.raises(TypeError, match=rf"refers to {name} defined in __main__.*module"):
                s.submit(job)
        with pytest.raises(TypeError, match="move it into a module"):
            await s.enqueue(MainJob("again"))
        assert s.jobs() == []
        # A job that only mentions the name is fine.
        assert await s.result(await s.enqueue(Ok("__main__"))) == "__main__"


# ── a real deploy ────────────────────────────────────────────────────────

TESTS = Path(__file__).resolve().parent
SCRIPT = str(Path(sys.prefix) / "bin" / "jobsched")
WORKER_OPTIONS = ["--workers", "8", "--grace", "0.5"]


@pytest.mark.postgres
@pytest.mark.parametrize("anyio_backend", [pytest.param(("asyncio", {}), id="asyncio")])
async def test_a_deploy_loses_nothing_and_cancels_nothing(
    request: pytest.FixtureRequest,
) -> None:
    """A producer that runs jobs too and two `jobsched worker` processes share
    PostgreSQL; 200 jobs of 0.2 s (and some of 3 s, longer than the grace). Mid-run
    one worker gets SIGTERM and the producer stops: every job completes, once
    (attempts 1: nothing counted as failed or lost), and none ends CANCELLED."""
    import os
    import signal
    import subprocess

    from pg import SECRET, require_server, schema_url

    require_server()
    url = schema_url(request.getfixturevalue("pg_session_database"))
    tests, script = TESTS, SCRIPT
    env = {k: v for k, v in os.environ.items() if k != "JOBSCHED_STORE"}
    env.update(PYTHONPATH=str(tests), JOBSCHED_SECRET=SECRET)

    def worker() -> subprocess.Popen[str]:
        return subprocess.Popen(
            [script, "worker", "--store", url, "--import", "sample_jobs", *WORKER_OPTIONS],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tests,
            env=env,
        )

    def started(process: subprocess.Popen[str]) -> list[str]:
        # Its signal handler is in place once it says so: a SIGTERM before
        # that would kill it (exit -15), not drain it, and a loaded machine
        # can take longer to start a worker than the producer takes to run
        # its first 30 jobs.
        assert process.stderr is not None
        seen = []
        for line in process.stderr:
            seen.append(line)
            if "started on" in line:
                return seen
        raise AssertionError(f"the worker exited before it started: {''.join(seen)}")

    producer = member(url, num_workers=4)
    ids: list[str] = []
    workers = [worker(), worker()]
    try:
        with anyio.fail_after(120):
            early = [
                await anyio.to_thread.run_sync(started, w, abandon_on_cancel=True) for w in workers
            ]
        async with producer:
            for i in range(200):
                long = i % 40 == 0  # 5 jobs that outlast the grace: handed back
                job = Ok(i, seconds=3.0 if long else 0.2, timeout=None)
                ids.append(producer.submit(job, job_id=f"deploy-{i}"))
            await producer.flush()
            # Mid-run: some jobs done, many running or queued.
            with anyio.fail_after(120):
                await producer.wait(ids[30])
            workers[0].send_signal(signal.SIGTERM)
            await producer.stop(grace=0.1)
        _, err = workers[0].communicate(timeout=60)
        err = "".join(early[0]) + err
        assert workers[0].returncode == 0, err
        assert "handed back to the store" in err or "none cut short" in err, err
        async with member(url, num_workers=0) as look:
            with anyio.fail_after(300):
                jobs = [await look.wait(i) for i in ids]
        assert [j.status for j in jobs] == [S.COMPLETED] * len(ids)
        assert [j.result for j in jobs] == list(range(200))
        assert {j.attempts for j in jobs} == {1}
    finally:
        for process in workers:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.communicate(timeout=60)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.communicate()


def test_the_cli_finds_a_job_by_the_id_given_at_submit(tmp_path: Any) -> None:
    """`jobsched show` and `cancel` take an id of your own, and the number it is listed by."""
    import subprocess

    from pg import SECRET

    url = durable_url(tmp_path)
    with js.BackgroundScheduler(store=js.open_store(url, secret=SECRET), num_workers=0) as s:
        s.submit(Ok("later"), job_id="receipt-42", delay=3600)
    env = {"PYTHONPATH": str(TESTS), "JOBSCHED_SECRET": SECRET, "PATH": ""}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [SCRIPT, *args, "--store", url], capture_output=True, text=True, env=env, timeout=60
        )

    shown = cli("show", "receipt-42")
    assert shown.returncode == 0, shown.stderr
    assert "pending" in shown.stdout
    # The listing shows the job by its number: that works too.
    from jobsched._jobs._ids import own_number

    assert cli("show", f"job-{own_number('receipt-42')}").returncode == 0
    cancelled = cli("cancel", "receipt-42")
    assert cancelled.returncode == 0, cancelled.stderr
    with js.BackgroundScheduler(store=js.open_store(url, secret=SECRET), num_workers=0) as s:
        assert s.fetch("receipt-42").status is S.CANCELLED


@REAL_CLOCK_BACKENDS
async def test_a_dependent_of_an_id_the_store_holds_sees_that_job(shared_url: str) -> None:
    """A member that resubmits a finished id and a job depending on it in one batch:
    the id adds nothing, and the dependent runs (its upstream completed)."""
    async with member(shared_url) as first:
        assert await first.result(await first.enqueue(Ok("up"), job_id="up")) == "up"
    async with member(shared_url) as second:
        assert second.submit(Ok("not again"), job_id="up") == "up"
        down = second.submit(Ok("down"), depends_on=["up"])
        await second.flush()
        with anyio.fail_after(60):
            assert await second.result(down) == "down"
            assert await second.result("up") == "up"
