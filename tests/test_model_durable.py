"""The durable model: hypothesis programs with "crash and reopen" on SQLite.

A ``RuleBasedStateMachine`` writes a program of *lives*: each life is one
scheduler process on the same SQLite file that runs some operations (enqueue
a job, maybe delayed, failing, slow, on the thread executor or depending on
earlier jobs; cancel one; let real time pass), maybe claiming far ahead of
its workers (prefetch, whatever its jobs' length), and then ends, either cleanly
(``stop()``) or by **crash**: the process is SIGKILLed wherever its jobs
are. A last life drains the store. ``teardown`` runs the program
(``tests/durable_life.py`` is the child) and checks what the store and the
jobs' own log say against the contract:

- every committed job is in the store and terminal;
- a completed job has its result, and ran to its end at least once;
- nothing runs again after it ended, unless a crash came in between (the
  outcome died with the process: at-least-once), and no attempt number is
  used twice, unless a crash came in between (a start not yet committed
  when the process died is no attempt in the store: the job, claimed ahead
  of the workers, goes back uncounted);
- no job starts before its delay, or before each upstream ended; a job whose
  upstream did not complete is cancelled and never starts;
- a job that fails more often than its policy retries ends FAILED; one that
  fails less ends COMPLETED, unless lost workers used up its retries;
- a cancelled job ends CANCELLED unless it had already finished.

The memory store's model (tests/test_model.py) runs on trio's mock clock; this
one runs in real processes and real time, so it is kept small: the ``ci``
profile runs 5 derandomized programs, ``thorough`` 200 random ones
(``JOBSCHED_HYPOTHESIS_PROFILE``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import profiles
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule, run_state_machine_as_test

import jobsched as js

S = js.JobStatus
TESTS = Path(__file__).resolve().parent
MAX_RETRIES = 2  # durable_life.FAST
LIFE_TIMEOUT = 120.0

PROFILES = {
    "ci": settings(
        max_examples=5,
        stateful_step_count=12,
        deadline=None,
        derandomize=True,
        database=None,
        print_blob=True,
        suppress_health_check=list(HealthCheck),
    ),
    "thorough": settings(
        max_examples=200,
        stateful_step_count=20,
        deadline=None,
        database=None,
        print_blob=True,
        suppress_health_check=list(HealthCheck),
    ),
}


@dataclass
class Life:
    ops: list[dict[str, object]] = field(default_factory=list)
    end: str = "drain"
    #: Claim far ahead of the workers (prefetch) whatever the jobs' length,
    #: so that crashes, cancels and stops meet jobs claimed but not started.
    ahead: bool = False


@dataclass
class Spec:
    delay: float
    failures: int
    seconds: float
    after: list[int]


class DurableMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.lives = [Life()]
        self.specs: dict[int, Spec] = {}

    @rule(
        delay=st.sampled_from([0.0, 0.0, 0.1, 0.3]),
        failures=st.sampled_from([0, 0, 1, MAX_RETRIES + 1]),
        seconds=st.sampled_from([0.0, 0.02, 0.3]),
        thread=st.booleans(),
        after=st.lists(st.integers(0, 50), max_size=2, unique=True),
    )
    def submit(
        self, delay: float, failures: int, seconds: float, thread: bool, after: list[int]
    ) -> None:
        index = len(self.specs)
        deps = sorted({a % index for a in after}) if index else []
        self.specs[index] = Spec(delay, failures, seconds, deps)
        self.lives[-1].ops.append(
            {
                "op": "submit",
                "index": index,
                "delay": delay,
                "failures": failures,
                "seconds": seconds,
                "thread": thread,
                "after": deps,
            }
        )

    @precondition(lambda self: bool(self.specs))
    @rule(which=st.integers(0, 50))
    def cancel(self, which: int) -> None:
        self.lives[-1].ops.append({"op": "cancel", "index": which % len(self.specs)})

    @rule(seconds=st.sampled_from([0.05, 0.2]))
    def wait(self, seconds: float) -> None:
        self.lives[-1].ops.append({"op": "wait", "seconds": seconds})

    @precondition(lambda self: len(self.lives) < 5)
    @rule(clean=st.booleans(), ahead=st.booleans())
    def reopen(self, clean: bool, ahead: bool = False) -> None:
        """End this life (crash: SIGKILL; clean: stop) and start the next."""
        self.lives[-1].end = "stop" if clean else "crash"
        self.lives.append(Life(ahead=ahead))

    @rule()
    def claim_ahead(self) -> None:
        """This life claims far ahead of its workers."""
        self.lives[-1].ahead = True

    def teardown(self) -> None:
        run_and_check(self.lives, self.specs)


@dataclass
class Events:
    """What the children printed and the jobs logged, in wall-clock time."""

    ids: dict[int, str] = field(default_factory=dict)
    accepted_at: dict[int, float] = field(default_factory=dict)
    cancelled_at: dict[int, float] = field(default_factory=dict)
    crashes: list[float] = field(default_factory=list)
    #: job id -> [(what, attempt, time)], what in start|fail|end.
    runs: dict[str, list[tuple[str, int, float]]] = field(default_factory=dict)


def run_and_check(lives: list[Life], specs: dict[int, Spec]) -> None:
    with _tmpdir() as tmp:
        db = f"sqlite:///{tmp / 'jobs.db'}"
        log = tmp / "log"
        events = Events()
        for number, life in enumerate(lives):
            _run_life(tmp, number, db, str(log), life, events)
        _read_log(log, events)
        stored = anyio.run(_fetch_all, db, events)
        _check(specs, lives, events, stored)


class _tmpdir:
    def __enter__(self) -> Path:
        import tempfile

        self._dir = tempfile.TemporaryDirectory(prefix="jobsched-model-")
        return Path(self._dir.name)

    def __exit__(self, *exc: object) -> None:
        self._dir.cleanup()


def _run_life(tmp: Path, number: int, db: str, log: str, life: Life, events: Events) -> None:
    ops_file = tmp / f"life-{number}.json"
    ops_file.write_text(
        json.dumps({"ids": events.ids, "ops": life.ops, "end": life.end, "ahead": life.ahead})
    )
    env = {**os.environ, "PYTHONPATH": str(TESTS)}
    child = subprocess.Popen(
        [sys.executable, str(TESTS / "durable_life.py"), db, log, str(ops_file)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert child.stdout is not None
    deadline = time.monotonic() + LIFE_TIMEOUT
    try:
        for line in child.stdout:
            words = line.split()
            if words[0] == "accepted":
                index = int(words[1])
                events.ids[index] = words[2]
                events.accepted_at[index] = float(words[3])
            elif words[0] == "cancelled":
                events.cancelled_at.setdefault(int(words[1]), float(words[2]))
            elif words[0] == "crash-point":
                child.send_signal(signal.SIGKILL)
                child.wait(timeout=30)
                events.crashes.append(time.time())
                return
            elif words[0] == "stopped":
                break
            assert time.monotonic() < deadline, f"life {number} ran past {LIFE_TIMEOUT}s"
        assert child.wait(timeout=LIFE_TIMEOUT) == 0, f"life {number} failed"
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stdout.close()


def _read_log(log: Path, events: Events) -> None:
    if not log.exists():
        return
    for line in log.read_text().splitlines():
        what, job_id, attempt, at = line.split()
        events.runs.setdefault(job_id, []).append((what, int(attempt), float(at)))


async def _fetch_all(db: str, events: Events) -> dict[int, js.Job]:
    async with js.JobScheduler(store=db) as s:
        return {index: await s.fetch(job_id) for index, job_id in events.ids.items()}


def _check(
    specs: dict[int, Spec], lives: list[Life], events: Events, stored: dict[int, js.Job]
) -> None:
    crashes = events.crashes
    for index, job in stored.items():
        spec = specs[index]
        job_id = events.ids[index]
        runs = events.runs.get(job_id, [])
        where = f"job {index} ({job_id}, {spec}, {job.status.value}, runs {runs})"
        assert job.status.is_terminal, where
        starts = [at for what, _, at in runs if what == "start"]
        ends = [at for what, _, at in runs if what == "end"]
        numbered = [(attempt, at) for what, attempt, at in runs if what == "start"]
        # Each start is a counted attempt, never one number twice, unless the
        # process died before that start was committed: a job claimed ahead
        # of the workers that the store never saw start goes back uncounted.
        first: dict[int, float] = {}
        for attempt, at in numbered:
            if attempt in first:
                assert any(first[attempt] < c < at for c in crashes), where
            first[attempt] = at
        # A start counts once it is committed: one whose process crashed
        # right after it may not have been (handed back uncounted).
        committed = [a for a, at in numbered if not any(c > at for c in crashes)]
        assert max(committed, default=0) <= job.attempts, where
        if job.status is S.COMPLETED:
            assert job.result == index and ends, where
        # Nothing runs again after it ended, unless the process died between.
        if ends:
            again = [at for at in starts if at > ends[0]]
            if again:
                assert any(ends[0] < c < again[0] for c in crashes), where
        if starts:
            assert starts[0] >= events.accepted_at[index] + spec.delay - 0.005, where
        upstreams = [stored[u] for u in spec.after]
        if any(u.status is not S.COMPLETED for u in upstreams):
            assert job.status is S.CANCELLED and not starts, where
            continue
        for u in spec.after:
            u_ends = [at for what, _, at in events.runs.get(events.ids[u], []) if what == "end"]
            assert not starts or (u_ends and starts[0] >= u_ends[0]), where
        cancelled = index in events.cancelled_at
        if cancelled:
            finished = [at for what, _, at in runs if what in ("end", "fail")]
            if not finished or finished[0] > events.cancelled_at[index]:
                assert job.status is S.CANCELLED, where
            continue
        if spec.failures > MAX_RETRIES:
            assert job.status is S.FAILED, where
        elif job.status is not S.COMPLETED:
            assert job.status is S.FAILED and job.last_error == "worker lost", where


#: Every life is a process: minutes, not the default 60 s; the thorough
#: profile's 200 programs take about 16 on a quiet machine.
TIMEOUTS = {"ci": 600, "thorough": 4 * 3600}


@pytest.mark.timeout(TIMEOUTS[profiles.chosen("tests/test_model_durable.py")])
def test_durable_store_matches_model() -> None:
    name = profiles.chosen("tests/test_model_durable.py")
    run_state_machine_as_test(DurableMachine, settings=PROFILES[name])
