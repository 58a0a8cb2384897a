"""The durable model: hypothesis programs with "crash and reopen" on SQLite.

A ``RuleBasedStateMachine`` writes a program of *lives*: each life is one
scheduler process on the same SQLite file that runs some operations (enqueue
a job, maybe delayed, failing, slow, on the thread executor, depending on
earlier jobs by id or by ``js.After(id, on_failure="cancel"|"run")``, taking
their results with ``js.result_of``/``js.results_of``; enqueue a workflow, a
fan-out and a fan-in that takes all its results, maybe killed in the middle
of the enqueue; cancel one; let real time pass), maybe claiming far ahead of
its workers (prefetch, whatever its jobs' length), and then ends, either cleanly
(``stop()``) or by **crash**: the process is SIGKILLed wherever its jobs
are. A last life drains the store. ``teardown`` runs the program
(``tests/durable_life.py`` is the child) and checks what the store and the
jobs' own log say against the contract:

- every committed job is in the store and terminal (no job hangs, whatever
  its upstreams' ends);
- a completed job has its result, and ran to its end at least once;
- nothing runs again after it ended, unless a crash came in between (the
  outcome died with the process: at-least-once), and no attempt number is
  used twice, unless a crash came in between (a start not yet committed
  when the process died is no attempt in the store: the job, claimed ahead
  of the workers, goes back uncounted);
- no job starts before its delay, or before each upstream ended; a job with
  a cancel edge to an upstream that did not complete is cancelled and never
  starts; a run edge waits for its upstream's end, whatever it was;
- every start received, in each marker's place, its upstreams' results as
  stored (an ``UpstreamFailedError`` naming the upstream and its status in
  a failed upstream's ``results_of`` slot); a ``result_of`` of an upstream
  that did not complete fails the job before its body runs, not retried;
- a workflow whose process died in its enqueue is in the store whole or not
  at all;
- a job that fails more often than its policy retries ends FAILED; one that
  fails less ends COMPLETED, unless lost workers used up its retries;
- a cancelled job ends CANCELLED unless it had already finished.

The memory store's model (tests/test_model.py) runs on trio's mock clock; this
one runs in real processes and real time, so it is kept small: the ``ci``
profile runs 5 derandomized programs of at most 3 lives, ``thorough`` 200
random ones of up to 5 (``JOBSCHED_HYPOTHESIS_PROFILE``).
"""

from __future__ import annotations

import contextlib
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

PROFILE = profiles.chosen("tests/test_model_durable.py")
#: Lives in a program: each is a process that starts, opens the store and
#: ends (seconds on a loaded machine), so the ci profile's programs are
#: shorter; the thorough one crashes and reopens up to four times.
MAX_LIVES = {"ci": 3, "thorough": 5}

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
    #: upstream index -> "cancel" | "run": its edge's policy (a marker's
    #: upstream has a cancel edge unless depends_on names it with After "run").
    edges: dict[int, str]
    #: the markers: ("one", [u]) is result_of(u), ("many", [u, ...]) results_of.
    takes: list[tuple[str, list[int]]] = field(default_factory=list)


POLICY = st.sampled_from(["id", "cancel", "run"])
TAKES = st.lists(
    st.tuples(
        st.sampled_from(["one", "many"]), st.lists(st.integers(0, 50), min_size=1, max_size=3)
    ),
    max_size=2,
)
FAILURES = st.sampled_from([0, 0, 1, MAX_RETRIES + 1])


class DurableMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.lives = [Life()]
        self.specs: dict[int, Spec] = {}
        #: The jobs later ops may name: not a workflow whose enqueue was
        #: killed (it may be in the store or not).
        self.known: list[int] = []

    def _edges(
        self, after: list[tuple[int, str]], takes: list[tuple[str, list[int]]]
    ) -> tuple[list[list[object]], list[tuple[str, list[int]]], dict[int, str]]:
        """Map drawn numbers to known jobs: depends_on entries, markers, policies."""
        known = self.known
        if not known:
            return [], [], {}
        deps: dict[int, str] = {}
        for a, how in after:
            deps.setdefault(known[a % len(known)], how)
        marks = [
            (how, [known[a % len(known)] for a in on][: 1 if how == "one" else 3])
            for how, on in takes
        ]
        edges = {u: "run" if how == "run" else "cancel" for u, how in deps.items()}
        for _, on in marks:
            for u in on:
                edges.setdefault(u, "cancel")
        return [[u, how] for u, how in sorted(deps.items())], marks, edges

    @rule(
        delay=st.sampled_from([0.0, 0.0, 0.1, 0.3]),
        failures=FAILURES,
        seconds=st.sampled_from([0.0, 0.02, 0.3]),
        thread=st.booleans(),
        after=st.lists(st.tuples(st.integers(0, 50), POLICY), max_size=2),
        takes=TAKES,
    )
    def submit(
        self,
        delay: float,
        failures: int,
        seconds: float,
        thread: bool,
        after: list[tuple[int, str]],
        takes: list[tuple[str, list[int]]],
    ) -> None:
        index = len(self.specs)
        deps, marks, edges = self._edges(after, takes)
        self.specs[index] = Spec(delay, failures, seconds, edges, marks)
        self.known.append(index)
        self.lives[-1].ops.append(
            {
                "op": "submit",
                "index": index,
                "delay": delay,
                "failures": failures,
                "seconds": seconds,
                "thread": thread,
                "after": deps,
                "takes": marks,
            }
        )

    @precondition(lambda self: bool(self.known))
    @rule(which=st.integers(0, 50))
    def cancel(self, which: int) -> None:
        self.lives[-1].ops.append({"op": "cancel", "index": self.known[which % len(self.known)]})

    @rule(seconds=st.sampled_from([0.05, 0.2]))
    def wait(self, seconds: float) -> None:
        self.lives[-1].ops.append({"op": "wait", "seconds": seconds})

    @precondition(lambda self: len(self.lives) < MAX_LIVES[PROFILE])
    @rule(clean=st.booleans(), ahead=st.booleans())
    def reopen(self, clean: bool, ahead: bool = False) -> None:
        """End this life (crash: SIGKILL; clean: stop) and start the next."""
        self.lives[-1].end = "stop" if clean else "crash"
        self.lives.append(Life(ahead=ahead))

    @rule()
    def claim_ahead(self) -> None:
        """This life claims far ahead of its workers."""
        self.lives[-1].ahead = True

    @rule(
        failures=st.lists(FAILURES, min_size=1, max_size=4),
        after=st.lists(st.tuples(st.integers(0, 50), POLICY), max_size=1),
        lenient=st.booleans(),
        thread=st.booleans(),
        crash_during=st.sampled_from([0.0, 0.0, 0.0, 0.001, 0.01]),
    )
    def workflow(
        self,
        failures: list[int],
        after: list[tuple[int, str]],
        lenient: bool,
        thread: bool,
        crash_during: float,
    ) -> None:
        """A fan-out (its first job maybe depending on an earlier job) and a
        fan-in taking all their results, "run" edges if lenient; maybe the
        process is killed in the middle of the enqueue (then the life ends)."""
        if crash_during and len(self.lives) >= MAX_LIVES[PROFILE]:
            crash_during = 0.0
        deps, _, edges = self._edges(after, [])
        parts = []
        for n, fails in enumerate(failures):
            index = len(self.specs)
            self.specs[index] = Spec(0.0, fails, 0.02, edges if n == 0 else {})
            parts.append(
                {
                    "index": index,
                    "failures": fails,
                    "seconds": 0.02,
                    "thread": False,
                    "after": deps if n == 0 else [],
                }
            )
        index = len(self.specs)
        ups = [part["index"] for part in parts]
        policy = "run" if lenient else "cancel"
        self.specs[index] = Spec(0.0, 0, 0.0, dict.fromkeys(ups, policy), [("many", ups)])
        fan_in = {
            "index": index,
            "failures": 0,
            "seconds": 0.0,
            "thread": thread,
            "lenient": lenient,
        }
        self.lives[-1].ops.append(
            {"op": "workflow", "parts": parts, "fan_in": fan_in, "crash_during": crash_during}
        )
        if crash_during:
            self.lives[-1].end = "crash"
            self.lives.append(Life())
        else:
            self.known.extend([*ups, index])

    def teardown(self) -> None:
        run_and_check(self.lives, self.specs)


@dataclass
class Events:
    """What the children printed and the jobs logged, in wall-clock time."""

    ids: dict[int, str] = field(default_factory=dict)
    accepted_at: dict[int, float] = field(default_factory=dict)
    #: A workflow's jobs before its enqueue: index -> wall time before it.
    pending_at: dict[int, float] = field(default_factory=dict)
    cancelled_at: dict[int, float] = field(default_factory=dict)
    crashes: list[float] = field(default_factory=list)
    #: job id -> [(what, attempt, time)], what in start|fail|end.
    runs: dict[str, list[tuple[str, int, float]]] = field(default_factory=dict)
    #: job id -> [(attempt, what its markers became)], one per start.
    got: dict[str, list[tuple[int, object]]] = field(default_factory=dict)


def run_and_check(lives: list[Life], specs: dict[int, Spec]) -> None:
    with _tmpdir() as tmp:
        db = f"sqlite:///{tmp / 'jobs.db'}"
        log = tmp / "log"
        events = Events()
        for number, life in enumerate(lives):
            _run_life(tmp, number, db, str(log), life, events)
        _read_log(log, events)
        stored, finished = anyio.run(_fetch_all, db, events, _killed_workflows(lives))
        _check(specs, lives, events, stored, finished)


def _killed_workflows(lives: list[Life]) -> list[list[int]]:
    """The indices of each workflow whose enqueue the process died in."""
    return [
        [*(part["index"] for part in op["parts"]), op["fan_in"]["index"]]  # type: ignore[attr-defined, index]
        for life in lives
        for op in life.ops
        if op["op"] == "workflow" and op["crash_during"]
    ]


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
            elif words[0] == "pending":
                events.pending_at[int(words[1])] = float(words[3])
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
        what, job_id, attempt, at, *got = line.split(" ", 4)
        events.runs.setdefault(job_id, []).append((what, int(attempt), float(at)))
        if got:
            events.got.setdefault(job_id, []).append((int(attempt), json.loads(got[0])))


async def _fetch_all(
    db: str, events: Events, killed: list[list[int]]
) -> tuple[dict[int, js.Job], dict[int, float]]:
    """Every job by index, and when each finished in wall-clock time.

    A workflow whose enqueue the process died in is all in the store or not
    at all (checked here); when it is, its jobs are checked as the others."""
    async with js.JobScheduler(store=db) as s:
        stored = {index: await s.fetch(job_id) for index, job_id in events.ids.items()}
        for indices in killed:
            present = {}
            for index in indices:
                with contextlib.suppress(js.UnknownJobError):
                    present[index] = await s.fetch(f"w{index}")
            assert len(present) in (0, len(indices)), f"half a workflow: {sorted(present)}"
            if present and indices[0] not in events.ids:
                for index, job in present.items():
                    events.ids[index] = job.job_id
                    if index in events.pending_at:
                        events.accepted_at[index] = events.pending_at[index]
                stored.update(present)
        # fetch gives times on this scheduler's clock (asyncio's: monotonic).
        offset = time.time() - anyio.current_time()
    finished = {i: job.finished_at + offset for i, job in stored.items() if job.finished_at}
    return stored, finished


def _expected(spec: Spec, events: Events, stored: dict[int, js.Job]) -> list[object]:
    """What a job's markers stand for, given how its upstreams ended."""

    def one(u: int) -> object:
        job = stored[u]
        if job.status is S.COMPLETED:
            return job.result
        return {"failed": events.ids[u], "status": job.status.value}

    return [one(on[0]) if how == "one" else [one(u) for u in on] for how, on in spec.takes]


def _check(
    specs: dict[int, Spec],
    lives: list[Life],
    events: Events,
    stored: dict[int, js.Job],
    finished: dict[int, float],
) -> None:
    crashes = events.crashes
    for index, job in stored.items():
        spec = specs[index]
        job_id = events.ids[index]
        runs = events.runs.get(job_id, [])
        where = f"job {index} ({job_id}, {spec}, {job.status.value}, {job.last_error}, runs {runs})"
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
        # A cancel edge's upstream that did not complete cancels the job.
        strict = [u for u, how in spec.edges.items() if how == "cancel"]
        if any(stored[u].status is not S.COMPLETED for u in strict):
            assert job.status is S.CANCELLED and not starts, where
            continue
        # It starts after each upstream ended: a completed one's body ran
        # to its end first, any other (on a run edge) was stored as ended.
        for u in spec.edges:
            if not starts:
                break
            if stored[u].status is S.COMPLETED:
                u_runs = events.runs.get(events.ids[u], [])
                u_ends = [at for what, _, at in u_runs if what == "end"]
                assert u_ends and starts[0] >= u_ends[0], where
            else:
                assert starts[0] >= finished[u] - 0.05, (where, u, finished[u])
        # Every start received its upstreams' results, an UpstreamFailedError
        # in a failed one's slot of a results_of.
        expected = _expected(spec, events, stored)
        got = events.got.get(job_id, [])
        if spec.takes:
            assert len(got) == len(starts), where
        for attempt, inputs in got:
            assert inputs == expected, (where, attempt, inputs, expected)
        cancelled = index in events.cancelled_at
        # A result_of of an upstream that did not complete fails the job
        # before its body runs, not retried.
        refused = [
            u
            for how, on in spec.takes
            if how == "one"
            for u in on
            if stored[u].status is not S.COMPLETED
        ]
        if refused:
            assert not starts, where
            if job.status is S.FAILED:
                error = job.last_error or ""
                # It names the upstream, unless lost workers ended it first.
                assert error == "worker lost" or any(events.ids[u] in error for u in refused), where
                # Not retried: only an attempt lost with its process adds one.
                assert job.attempts <= 1 + len(crashes), where
            else:
                assert cancelled and job.status is S.CANCELLED, where
            continue
        if cancelled:
            finished_runs = [at for what, _, at in runs if what in ("end", "fail")]
            if not finished_runs or finished_runs[0] > events.cancelled_at[index]:
                assert job.status is S.CANCELLED, where
            continue
        if spec.failures > MAX_RETRIES:
            assert job.status is S.FAILED, where
        elif job.status is not S.COMPLETED:
            assert job.status is S.FAILED and job.last_error == "worker lost", where


def test_a_job_lost_with_its_process_gets_its_results_on_the_retry() -> None:
    """A dependent whose attempt died with its process is retried by the next
    one with its markers bound: the thorough profile found it run unbound."""
    step = {"delay": 0.0, "failures": 0, "thread": False, "after": []}
    upstream = {"op": "submit", "index": 0, "seconds": 0.0, "takes": [], **step}
    # Long enough to be running (its start committed) when the process dies.
    dependent = {"op": "submit", "index": 1, "seconds": 2.0, "takes": [["one", [0]]], **step}
    lives = [
        Life(ops=[upstream, dependent, {"op": "wait", "seconds": 0.8}], end="crash"),
        Life(),
    ]
    specs = {
        0: Spec(0.0, 0, 0.0, {}),
        1: Spec(0.0, 0, 2.0, {0: "cancel"}, [("one", [0])]),
    }
    run_and_check(lives, specs)


#: Every life is a process: minutes, not the default 60 s; the thorough
#: profile's 200 programs take about 16 on a quiet machine.
TIMEOUTS = {"ci": 600, "thorough": 4 * 3600}


@pytest.mark.timeout(TIMEOUTS[PROFILE])
def test_durable_store_matches_model() -> None:
    run_state_machine_as_test(DurableMachine, settings=PROFILES[PROFILE])
