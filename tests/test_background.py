"""BackgroundScheduler: a JobScheduler on its own thread, driven from synchronous code.

These tests run no event loop of their own: they call the scheduler from
plain threads, as a Flask view or a script would. Waits are on events with
generous bounds; nothing sleeps to synchronise.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel
import pytest

import jobsched as js

WATCHDOG = 20  # seconds any single wait in these tests may take, at most
EXIT_BOUND = 45  # seconds a child script may take to start, run and exit

# Job functions at module level: a durable store loads them by reference.
RUNS: Counter[str] = Counter()


async def tagged(tag: str) -> str:
    """Counts its runs (on the scheduler's thread, so no lock) and returns its tag."""
    RUNS[tag] += 1
    return tag


async def idle() -> None:
    await anyio.lowlevel.checkpoint()


# Events jobs wait on or set, by name: a stored job's arguments are pickled,
# and an event isn't, so jobs carry the name.
EVENTS: dict[str, threading.Event] = {}
_event_names = iter(range(1 << 62))


def new_event() -> tuple[str, threading.Event]:
    """A fresh event and the name a job finds it by."""
    name = f"event-{next(_event_names)}"
    event = EVENTS[name] = threading.Event()
    return name, event


def wait_for(name: str, started: str | None = None) -> str:
    """A thread job that sets the event ``started``, then runs until the event
    ``name`` is set (or the watchdog)."""
    if started is not None:
        EVENTS[started].set()
    if not EVENTS[name].wait(WATCHDOG):
        raise TimeoutError("the test never released this job")
    return "released"


def until_cancelled(started: str) -> str:
    """A thread job that sets the event ``started``, then runs until its attempt is cancelled."""
    EVENTS[started].set()
    deadline = time.monotonic() + WATCHDOG
    while not js.cancel_requested():
        if time.monotonic() > deadline:
            raise TimeoutError("never cancelled")
        time.sleep(0.005)
    return "saw the cancel"


@pytest.fixture
def tag(request: pytest.FixtureRequest) -> str:
    """A prefix no other test's jobs use, for RUNS."""
    return str(request.node.nodeid)


@pytest.fixture
def bg(store_url: str) -> Iterator[js.BackgroundScheduler]:
    """A started BackgroundScheduler on the memory store, then on a SQLite file."""
    scheduler = js.BackgroundScheduler(store=store_url)
    scheduler.start()
    try:
        yield scheduler
    finally:
        if scheduler._loop._state not in ("new", "stopped"):
            scheduler.shutdown(cancel_running=True)


def run_threads(count: int, target: Callable[[int], None]) -> None:
    """Run ``target(i)`` in ``count`` threads at once; re-raise the first failure."""
    errors: list[BaseException] = []
    barrier = threading.Barrier(count)

    def body(i: int) -> None:
        try:
            barrier.wait(WATCHDOG)
            target(i)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WATCHDOG * 3)
        assert not thread.is_alive(), "a submitting thread hung"
    if errors:
        raise errors[0]


# ── many threads ─────────────────────────────────────────────────────────


def test_many_threads_submit_concurrently(bg: js.BackgroundScheduler, tag: str) -> None:
    """8 threads submit 200 jobs each at once: every job runs exactly once and completes."""
    completed: Counter[str] = Counter()
    bg.add_listener(
        lambda job, old, new: (
            completed.update([job.job_id]) if new is js.JobStatus.COMPLETED else None
        )
    )
    ids: list[list[str]] = [[] for _ in range(8)]

    def submit_many(t: int) -> None:
        for i in range(200):
            ids[t].append(bg.submit(js.FunctionJob(tagged, (f"{tag}:{t}:{i}",))))

    run_threads(8, submit_many)
    assert bg.join(timeout=60) is True
    every = [job_id for batch in ids for job_id in batch]
    assert len(set(every)) == 1600
    assert completed == Counter(every)  # each completed once, and nothing else did
    assert {k: v for k, v in RUNS.items() if k.startswith(f"{tag}:")} == {
        f"{tag}:{t}:{i}": 1 for t in range(8) for i in range(200)
    }
    for t, batch in enumerate(ids):
        assert [bg.get(job_id).result for job_id in batch] == [f"{tag}:{t}:{i}" for i in range(200)]


def test_threads_cancel_and_get_while_others_submit(bg: js.BackgroundScheduler) -> None:
    """Cancels and reads from some threads while others submit: each cancel lands once."""
    release_name, release = new_event()
    blocker = bg.submit(js.FunctionJob(wait_for, (release_name,), timeout=None))
    delayed = [bg.submit(js.FunctionJob(idle), delay=600) for _ in range(100)]
    results: list[list[bool]] = [[], []]

    def work(t: int) -> None:
        if t < 2:  # two threads race to cancel the same jobs
            results[t] = [bg.cancel(job_id) for job_id in delayed]
        else:
            for _ in range(50):
                bg.get(bg.submit(js.FunctionJob(idle)))

    run_threads(6, work)
    # Exactly one of the two cancels of each job found it queued.
    assert [a + b for a, b in zip(*results)] == [1] * 100
    assert {bg.get(job_id).status for job_id in delayed} == {js.JobStatus.CANCELLED}
    release.set()
    assert bg.join(timeout=WATCHDOG)
    assert bg.get(blocker).result == "released"


# ── get, cancel, join ────────────────────────────────────────────────────


def test_join_returns_false_on_timeout_then_true(bg: js.BackgroundScheduler) -> None:
    """join(timeout) is False while a job still runs, True once every job is terminal."""
    release_name, release = new_event()
    started_name, started = new_event()
    job_id = bg.submit(js.FunctionJob(wait_for, (release_name, started_name), timeout=None))
    assert bg.join(timeout=0) is False
    assert started.wait(WATCHDOG)
    assert bg.join(timeout=0.05) is False
    assert bg.get(job_id).status is js.JobStatus.RUNNING
    release.set()
    assert bg.join() is True
    assert bg.get(job_id).status is js.JobStatus.COMPLETED
    assert bg.join(timeout=0) is True  # nothing left: at once


@pytest.mark.parametrize(
    ("timeout", "error", "match"),
    [
        (-1, ValueError, "timeout must be a number of seconds >= 0, got -1"),
        (float("nan"), ValueError, "got nan"),
        ("1", TypeError, "timeout must be a number of seconds or None, got '1'"),
    ],
)
def test_join_rejects_a_bad_timeout(
    timeout: Any, error: type[Exception], match: str, bg: js.BackgroundScheduler
) -> None:
    """A negative, NaN or non-numeric timeout is refused, naming it."""
    with pytest.raises(error, match=match):
        bg.join(timeout=timeout)


def test_get_and_cancel(bg: js.BackgroundScheduler) -> None:
    """get() knows a submitted id at once; cancel() is True for a queued job, False after."""
    queued = bg.submit(js.FunctionJob(idle, name="later"), delay=600)
    assert bg.get(queued).name == "later"
    assert bg.get(queued) in bg.jobs()
    assert bg.cancel(queued) is True
    assert bg.get(queued).status is js.JobStatus.CANCELLED
    assert bg.cancel(queued) is False  # finished
    done = bg.submit(js.FunctionJob(idle))
    assert bg.join(timeout=WATCHDOG)
    assert bg.cancel(done) is False
    with pytest.raises(js.UnknownJobError) as info:
        bg.get("job-999999999")
    assert isinstance(info.value, KeyError)
    assert "'job-999999999'" in str(info.value)


def test_cancel_a_running_thread_job(bg: js.BackgroundScheduler) -> None:
    """cancel() of a running thread job makes it CANCELLED and the job sees cancel_requested()."""
    started_name, started = new_event()
    job_id = bg.submit(js.FunctionJob(until_cancelled, (started_name,), timeout=None))
    assert started.wait(WATCHDOG)
    assert bg.cancel(job_id) is True
    assert bg.join(timeout=WATCHDOG)
    assert bg.get(job_id).status is js.JobStatus.CANCELLED


def test_memory_cancel_unknown_is_false() -> None:
    """On the memory store an unknown id is simply not cancelled."""
    with js.BackgroundScheduler() as bg:
        assert bg.cancel("job-123456789") is False


# ── schedules ────────────────────────────────────────────────────────────


def make_idle() -> js.Job:
    """A schedule's factory, importable so a durable store can keep it."""
    return js.FunctionJob(idle, name="beat")


def test_recurring_and_cron_schedules(bg: js.BackgroundScheduler) -> None:
    """schedule_recurring fires from the scheduler's thread; cancel_recurring stops it."""
    fired = threading.Event()
    bg.add_listener(
        lambda job, old, new: (
            fired.set() if job.name == "beat" and new is js.JobStatus.COMPLETED else None
        )
    )
    beats = bg.schedule_recurring(make_idle, 0.01, id="beats")
    nightly = bg.schedule_cron(make_idle, "0 3 * * *", timezone="UTC", id="nightly", misfire="skip")
    assert (beats, nightly) == ("beats", "nightly")
    assert {i.id: i.misfire for i in bg.schedules()} == {"beats": "coalesce", "nightly": "skip"}
    assert fired.wait(WATCHDOG)
    assert bg.cancel_recurring(beats) is True
    assert bg.cancel_recurring(nightly) is True


def test_cancel_recurring_unknown_is_false() -> None:
    """On the memory store an unknown schedule id is not cancelled."""
    with js.BackgroundScheduler() as bg:
        assert bg.cancel_recurring("nope") is False
        schedule = bg.schedule_recurring(make_idle, 60, start_in=60)
        assert bg.cancel_recurring(schedule) is True
        assert bg.cancel_recurring(schedule) is False


# ── errors reach the calling thread ──────────────────────────────────────


def _error_of(call: Callable[[], object]) -> BaseException:
    try:
        call()
    except BaseException as exc:
        return exc
    raise AssertionError("no error raised")


def test_errors_are_the_schedulers(bg: js.BackgroundScheduler, store_url: str) -> None:
    """Each refused call raises, in the calling thread, what JobScheduler raises for it."""
    plain = js.JobScheduler(store=store_url)  # submit works on it unstarted
    job = js.FunctionJob(idle)
    bg.submit(job)
    twin = js.FunctionJob(idle)
    plain.submit(twin)
    cases: list[tuple[Callable[[], object], Callable[[], object]]] = [
        (lambda: bg.submit(job), lambda: plain.submit(twin)),  # resubmitted
        (
            lambda: bg.submit(js.FunctionJob(make_idle, executor="no-such-executor")),
            lambda: plain.submit(js.FunctionJob(make_idle, executor="no-such-executor")),
        ),
        (
            lambda: bg.submit(js.FunctionJob(idle), delay=-1),
            lambda: plain.submit(js.FunctionJob(idle), delay=-1),
        ),
        (lambda: bg.submit("not a job"), lambda: plain.submit("not a job")),  # type: ignore[arg-type]
        (
            lambda: bg.schedule_recurring(make_idle, 1.0, misfire="late"),
            lambda: plain.schedule_recurring(make_idle, 1.0, misfire="late"),
        ),
        (
            lambda: bg.schedule_cron(make_idle, "not cron", id="x"),
            lambda: plain.schedule_cron(make_idle, "not cron", id="x"),
        ),
    ]
    if store_url == "memory":
        cases.append(
            (
                lambda: bg.submit(js.FunctionJob(idle), depends_on=["job-999999999"]),
                lambda: plain.submit(js.FunctionJob(idle), depends_on=["job-999999999"]),
            )
        )
    else:
        # (On a durable store submit() takes ids it doesn't know: the store
        # holds other processes' jobs, and cancels a job whose upstream it lacks.)
        cases += [
            (  # a lambda can't be stored
                lambda: bg.submit(js.FunctionJob(lambda: None)),
                lambda: plain.submit(js.FunctionJob(lambda: None)),
            ),
            (  # a stored schedule needs an id
                lambda: bg.schedule_recurring(make_idle, 1.0),
                lambda: plain.schedule_recurring(make_idle, 1.0),
            ),
        ]
    for ours, theirs in cases:
        got, expected = _error_of(ours), _error_of(theirs)
        assert type(got) is type(expected)
        # Job ids and names differ between the two; the rest of the message is the same.
        assert str(got).split(":")[-1] == str(expected).split(":")[-1]
    assert isinstance(_error_of(lambda: bg.submit(job)), js.SchedulerError)
    assert isinstance(
        _error_of(lambda: bg.submit(js.FunctionJob(make_idle, executor="nope"))),
        js.ExecutorNotFoundError,
    )
    # Its submit opened the store: stopping the never-started scheduler
    # writes what it accepted and closes the store's connection.
    anyio.run(plain.stop)


def test_the_exception_object_crosses_threads() -> None:
    """The caller gets the very exception object raised on the loop, with its traceback."""
    with js.BackgroundScheduler() as bg:
        seen: list[BaseException] = []

        def fail_with(exc: BaseException) -> None:
            seen.append(exc)
            raise exc

        with pytest.raises(LookupError) as info:
            bg._loop.read("test", lambda: fail_with(LookupError("from the loop")))
        assert info.value is seen[0]
        frames = traceback.extract_tb(info.value.__traceback__)
        assert any(frame.name == "fail_with" for frame in frames)


def test_constructor_errors_are_the_schedulers() -> None:
    """Bad JobScheduler arguments raise at construction, as they do for JobScheduler."""
    with pytest.raises(ValueError, match="num_workers=0 makes a producer.*memory store"):
        js.BackgroundScheduler(num_workers=0)
    with pytest.raises(ValueError, match="num_workers must be an integer >= 1.*got -1"):
        js.BackgroundScheduler(num_workers=-1)
    with pytest.raises(ValueError, match="backend must be 'asyncio' or 'trio', got 'curio'"):
        js.BackgroundScheduler(backend="curio")
    with pytest.raises(ValueError, match="malformed store URL"):
        js.BackgroundScheduler(store="not a url")


# ── lifecycle ────────────────────────────────────────────────────────────


def test_calls_before_start_are_refused() -> None:
    """Before start(), every call says to start first; shutdown() says there is nothing to stop."""
    bg = js.BackgroundScheduler()
    calls: list[Callable[[], object]] = [
        lambda: bg.submit(js.FunctionJob(idle)),
        lambda: bg.get("job-1"),
        lambda: bg.jobs(),
        lambda: bg.cancel("job-1"),
        lambda: bg.join(),
        lambda: bg.fetch("job-1"),
        lambda: bg.schedule_recurring(make_idle, 1.0),
        lambda: bg.schedule_cron(make_idle, "@daily"),
        lambda: bg.cancel_recurring("x"),
        lambda: bg.add_listener(print),
    ]
    for call in calls:
        with pytest.raises(js.SchedulerError, match=r"needs a started scheduler: call start\(\)"):
            call()
    with pytest.raises(js.SchedulerError, match="never started"):
        bg.shutdown()
    assert bg.running is False


def test_calls_after_shutdown(store_url: str) -> None:
    """After shutdown() changes are refused with SchedulerStoppedError; reads still work."""
    bg = js.BackgroundScheduler(store=store_url)
    bg.start()
    assert bg.running
    job_id = bg.submit(js.FunctionJob(idle))
    assert bg.join(timeout=WATCHDOG)
    bg.shutdown()
    assert not bg.running
    for call in [
        lambda: bg.submit(js.FunctionJob(idle)),
        lambda: bg.cancel(job_id),
        lambda: bg.join(),
        lambda: bg.fetch(job_id),
        lambda: bg.schedule_recurring(make_idle, 1.0, id="x"),
        lambda: bg.cancel_recurring("x"),
    ]:
        with pytest.raises(js.SchedulerStoppedError, match="the scheduler was shut down"):
            call()
    assert bg.get(job_id).status is js.JobStatus.COMPLETED
    assert [job.job_id for job in bg.jobs()] == [job_id]
    bg.shutdown()  # again: harmless
    with pytest.raises(js.SchedulerError, match="already started"):
        bg.start()


def test_context_manager_waits_for_running_jobs() -> None:
    """Leaving the with block waits for a running job, which completes; queued ones stay."""
    release_name, release = new_event()
    started_name, started = new_event()
    with js.BackgroundScheduler() as bg:
        running = bg.submit(js.FunctionJob(wait_for, (release_name, started_name), timeout=None))
        queued = bg.submit(js.FunctionJob(idle), delay=600)
        assert started.wait(WATCHDOG)
        # Only lets the job end: whenever it fires, the exit must wait for the job.
        threading.Timer(0.05, release.set).start()
    assert bg.get(running).status is js.JobStatus.COMPLETED
    assert bg.get(queued).status is js.JobStatus.PENDING
    assert not bg.running


def test_context_manager_cancels_running_jobs_when_the_body_fails() -> None:
    """A body that raises: running jobs are cancelled, and its exception comes out as itself."""
    started_name, started = new_event()
    error = KeyError("from the body")
    bg = js.BackgroundScheduler()
    ids: list[str] = []

    def body() -> None:
        with bg:
            ids.append(bg.submit(js.FunctionJob(until_cancelled, (started_name,), timeout=None)))
            assert started.wait(WATCHDOG)
            raise error

    assert _error_of(body) is error
    job_id = ids[0]
    assert bg.get(job_id).status is js.JobStatus.CANCELLED


def test_shutdown_without_wait_then_with_wait(bg: js.BackgroundScheduler) -> None:
    """wait=False returns while a job still runs; the job then finishes, and wait=True waits."""
    release_name, release = new_event()
    started_name, started = new_event()
    job_id = bg.submit(js.FunctionJob(wait_for, (release_name, started_name), timeout=None))
    assert started.wait(WATCHDOG)
    assert bg.join(timeout=0) is False
    bg.shutdown(wait=False)
    assert not bg.running
    # The job can't end before it is released, so the shutdown can't have.
    assert bg.get(job_id).status is js.JobStatus.RUNNING
    assert bg._loop._thread is not None and bg._loop._thread.is_alive()
    release.set()
    bg.shutdown()  # waits for the thread
    assert bg._loop._thread is not None and not bg._loop._thread.is_alive()
    assert bg.get(job_id).status is js.JobStatus.COMPLETED


def test_shutdown_cancel_running(bg: js.BackgroundScheduler, store_url: str) -> None:
    """shutdown(cancel_running=True) cancels running attempts in memory and hands them
    back to a durable store; queued jobs stay PENDING."""
    started_name, started = new_event()
    running = bg.submit(js.FunctionJob(until_cancelled, (started_name,), timeout=None))
    queued = bg.submit(js.FunctionJob(idle), delay=600)
    assert started.wait(WATCHDOG)
    bg.shutdown(cancel_running=True)
    cut = js.JobStatus.CANCELLED if store_url == "memory" else js.JobStatus.PENDING
    assert bg.get(running).status is cut
    assert bg.get(queued).status is js.JobStatus.PENDING


def test_a_later_shutdown_cancels_what_an_earlier_one_waits_for(
    bg: js.BackgroundScheduler,
) -> None:
    """shutdown(wait=False) lets a job run; shutdown(cancel_running=True) then cuts it
    short (cancelled in memory, handed back to a durable store)."""
    started_name, started = new_event()
    running = bg.submit(js.FunctionJob(until_cancelled, (started_name,), timeout=None))
    assert started.wait(WATCHDOG)
    bg.shutdown(wait=False)
    assert bg.get(running).status is js.JobStatus.RUNNING
    bg.shutdown(cancel_running=True)
    cut = js.JobStatus.CANCELLED if bg._scheduler._link is None else js.JobStatus.PENDING
    assert bg.get(running).status is cut


def test_a_waiting_join_ends_with_the_shutdown(store_url: str) -> None:
    """join() waiting in another thread raises SchedulerStoppedError when the scheduler stops
    with jobs that will never finish (here)."""
    bg = js.BackgroundScheduler(store=store_url)
    bg.start()
    bg.submit(js.FunctionJob(idle), delay=600)
    assert bg.join(timeout=0.01) is False
    outcome: list[BaseException | bool] = []
    joiner = threading.Thread(target=lambda: outcome.append(_error_of_or(bg.join)))
    joiner.start()
    bg.shutdown()
    joiner.join(WATCHDOG)
    assert not joiner.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], js.SchedulerStoppedError)


def _error_of_or(call: Callable[[], bool]) -> BaseException | bool:
    try:
        return call()
    except BaseException as exc:
        return exc


def test_start_failure_can_be_retried(tmp_path: Path) -> None:
    """A store that can't be opened fails start() with its own error; start() then works."""
    folder = tmp_path / "not-yet"
    bg = js.BackgroundScheduler(store=f"sqlite:///{folder / 'jobs.db'}")
    with pytest.raises(js.StoreUnavailableError):
        bg.start()
    assert not bg.running
    with pytest.raises(js.SchedulerError, match="needs a started scheduler"):
        bg.submit(js.FunctionJob(idle))
    folder.mkdir()
    bg.start()
    try:
        job_id = bg.submit(js.FunctionJob(tagged, ("retry-start",)))
        assert bg.join(timeout=WATCHDOG)
        assert bg.get(job_id).result == "retry-start"
    finally:
        bg.shutdown()


def test_trio_backend() -> None:
    """backend="trio" runs the scheduler on trio."""
    seen: list[str] = []

    async def which() -> str:
        import trio

        try:
            trio.lowlevel.current_task()
        except RuntimeError:  # not in a trio run
            return "not trio"
        return "trio"

    for backend in ["asyncio", "trio"]:
        with js.BackgroundScheduler(backend=backend) as bg:
            job_id = bg.submit(js.FunctionJob(which))
            assert bg.join(timeout=WATCHDOG)
            seen.append(bg.get(job_id).result)
    assert seen == ["not trio", "trio"]


# ── calls from the scheduler's own thread and jobs ───────────────────────


def test_calls_from_a_listener(store_url: str) -> None:
    """On the scheduler's thread, quick calls run directly; ones that would wait are refused."""
    outcomes: dict[str, object] = {}
    done = threading.Event()
    bg = js.BackgroundScheduler(store=store_url)

    def listener(job: js.Job, old: js.JobStatus, new: js.JobStatus) -> None:
        if job.name != "first" or new is not js.JobStatus.COMPLETED:
            return
        outcomes["get"] = bg.get(job.job_id) is job
        calls: list[tuple[str, Callable[[], object]]] = [
            ("submit", lambda: bg.submit(js.FunctionJob(tagged, ("chained",)))),
            ("join", bg.join),
            ("fetch", lambda: bg.fetch(job.job_id)),
            ("shutdown", bg.shutdown),
        ]
        for name, call in calls:
            try:
                outcomes[name] = call()
            except js.SchedulerError as exc:
                outcomes[name] = exc
        done.set()

    with bg:
        bg.add_listener(listener)
        bg.submit(js.FunctionJob(idle, name="first"))
        assert done.wait(WATCHDOG)
        assert bg.join(timeout=WATCHDOG)
    assert outcomes["get"] is True
    if store_url == "memory":
        assert bg.get(str(outcomes["submit"])).result == "chained"
    else:
        assert "durable store waits for the commit" in str(outcomes["submit"])
    assert "can't be called on that loop's own thread" in str(outcomes["join"])
    assert "can't be called on that loop's own thread" in str(outcomes["fetch"])
    assert "on the scheduler's own thread" in str(outcomes["shutdown"])


def shut_down_from_inside(holder: list[js.BackgroundScheduler], wait: bool) -> str:
    """A thread job that shuts its own scheduler down."""
    try:
        holder[0].shutdown(wait=wait)
    except js.SchedulerError as exc:
        return str(exc)
    return "asked"


def join_from_inside(holder: list[js.BackgroundScheduler]) -> str:
    """A thread job that waits for every job of its own scheduler, itself included."""
    try:
        holder[0].join(timeout=1)
    except js.SchedulerError as exc:
        return str(exc)
    return "joined"


def test_join_from_a_thread_job_is_refused() -> None:
    """A job can't join() its own scheduler: it would wait for itself."""
    holder: list[js.BackgroundScheduler] = []
    with js.BackgroundScheduler() as bg:
        holder.append(bg)
        job_id = bg.submit(js.FunctionJob(join_from_inside, (holder,)))
        assert bg.join(timeout=WATCHDOG)
        assert "inside one of this scheduler's jobs" in bg.get(job_id).result


def test_shutdown_from_a_thread_job() -> None:
    """A job can't wait for its own scheduler's shutdown; it can ask for one (wait=False)."""
    holder: list[js.BackgroundScheduler] = []
    with js.BackgroundScheduler() as bg:
        holder.append(bg)
        refused = bg.submit(js.FunctionJob(shut_down_from_inside, (holder, True)))
        assert bg.join(timeout=WATCHDOG)
        assert "from inside one of this scheduler's jobs" in bg.get(refused).result
        asked = bg.submit(js.FunctionJob(shut_down_from_inside, (holder, False)))
        bg._loop._thread.join(WATCHDOG)  # type: ignore[union-attr]
        assert not bg.running
    assert bg.get(asked).status is js.JobStatus.COMPLETED
    assert bg.get(asked).result == "asked"


def test_a_forked_child_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """In a forked child (another pid), calls say the scheduler must be started there."""
    with js.BackgroundScheduler() as bg:
        real = os.getpid()
        monkeypatch.setattr(os, "getpid", lambda: real + 1)
        with pytest.raises(js.SchedulerError, match="in a forked child"):
            bg.submit(js.FunctionJob(idle))
        with pytest.raises(js.SchedulerError, match="in a forked child"):
            bg.shutdown()
        monkeypatch.undo()


def test_a_crashed_scheduler_says_so(caplog: pytest.LogCaptureFixture) -> None:
    """If the scheduler's thread ends on an internal error, calls name it and shutdown raises it."""
    bg = js.BackgroundScheduler()
    scheduler = bg.scheduler
    crashed = threading.Event()

    async def broken_ticker() -> None:
        try:
            await anyio.lowlevel.checkpoint()
            raise RuntimeError("boom")
        finally:
            scheduler._task_exited()
            crashed.set()

    scheduler._ticker = broken_ticker  # type: ignore[method-assign]
    bg.start()
    assert crashed.wait(WATCHDOG)
    assert bg._loop._thread is not None
    bg._loop._thread.join(WATCHDOG)
    with pytest.raises(js.SchedulerStoppedError, match=r"ended on an error \(RuntimeError: boom\)"):
        bg.submit(js.FunctionJob(idle))
    # The one error, as itself: a task group's wrapper of one says nothing more.
    with pytest.raises(RuntimeError, match="boom"):
        bg.shutdown()
    bg.shutdown()  # reported once
    assert "stopped on an error" in caplog.text


def test_signature_follows_job_scheduler() -> None:
    """BackgroundScheduler takes every JobScheduler argument, with the same defaults."""
    import inspect

    ours = inspect.signature(js.BackgroundScheduler).parameters
    theirs = inspect.signature(js.JobScheduler).parameters
    for name, param in theirs.items():
        assert ours[name].default == param.default, name
        assert ours[name].kind == param.kind, name
    shutdown = inspect.signature(js.BackgroundScheduler.shutdown).parameters
    assert shutdown["wait"].default is True
    assert shutdown["cancel_running"].default is False


# ── a durable store ──────────────────────────────────────────────────────


def test_submit_returns_once_committed(tmp_path: Path) -> None:
    """With SQLite, another reader of the store sees each job as soon as submit() returns."""
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    reader = js.open_store(url)
    with (
        js.BackgroundScheduler(store=url) as bg,
        anyio.from_thread.start_blocking_portal() as portal,
    ):
        portal.call(reader.open)
        try:
            for i in range(20):
                job_id = bg.submit(js.FunctionJob(tagged, (f"committed-{i}",)), delay=600)
                stored = portal.call(reader.fetch, int(job_id.removeprefix("job-")))
                assert stored is not None, f"{job_id} not in the store when submit returned"
                assert stored.status is js.JobStatus.PENDING
            cancelled = bg.cancel(job_id)
            assert cancelled
            stored = portal.call(reader.fetch, int(job_id.removeprefix("job-")))
            assert stored is not None and stored.status is js.JobStatus.CANCELLED
        finally:
            portal.call(reader.close)


def test_fetch_reads_the_store(tmp_path: Path) -> None:
    """fetch() returns the job as the store has it, with its result."""
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    with js.BackgroundScheduler(store=url) as bg:
        job_id = bg.submit(js.FunctionJob(tagged, ("fetched",)))
        assert bg.join(timeout=WATCHDOG)
        assert bg.fetch(job_id).result == "fetched"
        with pytest.raises(js.UnknownJobError):
            bg.fetch("job-999999999")


# ── interpreter exit ─────────────────────────────────────────────────────

EXIT_SCRIPT = """
import os, subprocess, sys, time
import anyio
import jobsched as js

def stuck(pidfile):
    # A process job that started a process of its own, and sleeps.
    child = subprocess.Popen(["sleep", "60"])
    with open(pidfile + ".tmp", "w") as f:
        f.write(f"{os.getpid()} {child.pid}")
    os.rename(pidfile + ".tmp", pidfile)
    time.sleep(60)

async def ignores_cancel():
    with anyio.CancelScope(shield=True):
        await anyio.sleep(60)

pidfile, log_path, kind = sys.argv[1:]
log = open(log_path, "a", buffering=1)
s = js.BackgroundScheduler()
s.start()
s.add_listener(lambda job, old, new: log.write(f"{job.name} {new.value}\\n"))
if kind == "process":
    s.submit(js.FunctionJob(stuck, (pidfile,), executor="process", name="stuck", timeout=None))
    while not os.path.exists(pidfile):
        time.sleep(0.01)
else:
    import jobsched._sync._loopthread
    jobsched._sync._loopthread.EXIT_TIMEOUT = 1.0
    s.submit(js.FunctionJob(ignores_cancel, name="stubborn", timeout=None))
    while "stubborn running" not in open(log_path).read():
        time.sleep(0.01)
print("main returns", flush=True)
"""


def _gone(pid: int) -> bool:
    """True if no process ``pid`` runs (a zombie waiting for a reaper counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def _run_script(tmp_path: Path, kind: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    log = tmp_path / "log"
    log.touch()
    done = subprocess.run(
        [sys.executable, "-c", EXIT_SCRIPT, str(tmp_path / "pids"), str(log), kind],
        capture_output=True,
        text=True,
        timeout=EXIT_BOUND,
    )
    return done, log


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc to see which processes run")
def test_exit_without_shutdown_ends_the_process_workers(tmp_path: Path) -> None:
    """A script that exits with a process job running, never calling shutdown(), exits
    promptly; the job ends CANCELLED and neither its worker nor the worker's child survives."""
    done, log = _run_script(tmp_path, "process")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "main returns\n"
    assert "Traceback" not in done.stderr
    # Shut down cleanly: the scheduler recorded the job's end, not just died.
    assert log.read_text().splitlines() == ["stuck running", "stuck cancelled"]
    worker, child = map(int, (tmp_path / "pids").read_text().split())
    assert _gone(worker), f"worker process {worker} survived"
    assert _gone(child), f"the job's child process {child} survived"


def test_exit_with_a_job_that_ignores_cancellation(tmp_path: Path) -> None:
    """An async job that shields itself from cancellation doesn't hold the exit: after
    EXIT_TIMEOUT the interpreter goes on exiting, with a warning."""
    done, log = _run_script(tmp_path, "stubborn")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "main returns\n"
    assert "did not stop within 1.0s at exit" in done.stderr
    assert log.read_text().splitlines()[0] == "stubborn running"
