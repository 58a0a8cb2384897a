"""The model-checked core: hypothesis drives JobScheduler with random programs.

A ``RuleBasedStateMachine`` generates a *program*: each rule appends one
operation (submit a job, possibly delayed or depending on earlier jobs by id,
by ``js.After`` with either failure policy, or by taking their results with
``js.result_of`` / ``js.results_of``; enqueue a workflow of such jobs, or
cancel one; cancel a job; cancel one from a listener when another reaches a status, or as it
starts; resubmit one; add or cancel a recurring schedule, or cancel its latest
job; let virtual time pass), and ``teardown`` runs the whole program against a fresh scheduler in a
single ``trio.run`` on ``MockClock(autojump_threshold=0)``
(:func:`scheduler_model.run_program`). After every operation the harness lets
the current virtual instant settle and checks the invariants; at the end it
replays every job's life against the model. See ``tests/scheduler_model.py``
for the full list of invariants.

Why a program run at teardown rather than one event-loop step per rule: the
rules are synchronous and the scheduler lives inside an event loop, so driving
it step by step would need the loop in another thread, where the mock clock
would jump while hypothesis picks the next rule. Running the program in one
``trio.run`` keeps virtual time frozen between operations, keeps every example
deterministic (trio's scheduler is seeded by hypothesis when hypothesis is
installed) and costs a few milliseconds per example. Hypothesis still shrinks
a failure to the shortest list of rules, which reads as the failing program.

Profiles (``JOBSCHED_HYPOTHESIS_PROFILE``): ``ci`` (the default) runs 200
derandomized examples; ``thorough`` runs 10,000 random ones. See
``docs/testing.md``.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

import profiles
import pytest
import scheduler_model as m
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    multiple,
    precondition,
    rule,
    run_state_machine_as_test,
)

import jobsched as js

PROFILE_ENV = profiles.PROFILE_ENV

settings.register_profile(
    "ci",
    max_examples=200,
    stateful_step_count=50,
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "thorough",
    max_examples=10_000,
    stateful_step_count=50,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)


def _profile() -> str:
    return profiles.chosen("tests/test_model.py")


PROFILE = _profile()

# ── Strategies: all times are multiples of 0.5 s, so virtual-time sums are exact ──

durations = st.sampled_from([None, 0.0, 1.0, 2.0, 3.0])  # None: never awaits
timeouts = st.sampled_from([0.5, 1.5, 2.5, 30.0])  # never equal to a duration: no ties
delays = st.sampled_from([0.0, 0.0, 0.5, 1.0, 3.0])
advances = st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0, 10.0])
cancel_triggers = st.sampled_from(
    [
        js.JobStatus.RUNNING,
        js.JobStatus.RETRY_WAIT,
        js.JobStatus.COMPLETED,
        js.JobStatus.FAILED,
        js.JobStatus.TIMED_OUT,
        js.JobStatus.CANCELLED,
    ]
)


@st.composite
def job_specs(draw: st.DrawFn) -> m.JobSpec:
    kind = draw(st.sampled_from(m.KINDS))
    timeout = draw(timeouts if kind in m.NEEDS_TIMEOUT else st.one_of(st.none(), timeouts))
    return m.JobSpec(
        kind=kind,
        k=draw(st.integers(1, 3)) if kind in ("flaky", "slow") else 0,
        duration=draw(durations),
        error=draw(st.sampled_from(sorted(m.ERRORS))),
        priority=draw(st.sampled_from(js.JobPriority)),
        timeout=timeout,
        max_retries=draw(st.integers(0, 3)),
        base_delay=draw(st.sampled_from([0.0, 0.5, 1.0])),
        deadline=draw(st.sampled_from([None, 10.0, 20.0])),
        rate_limited=draw(st.booleans()),
        tenant=draw(st.sampled_from([None, "a", "b"])),
        # Shorter and longer than the grace the scheduler gives a cancelled job.
        linger=draw(st.sampled_from([0.5, 2.0])) if kind == "linger" else 0.0,
    )


# "run" twice: a lenient edge is what most of the new paths need.
policies = st.sampled_from(["cancel", "run", "run"])
#: An upstream as a position in the pool a rule has (taken modulo its length):
#: plain strategies, not st.data(), keep generation cheap and shrinking simple.
picks = st.integers(0, 5)
flow_shapes = st.fixed_dictionaries(
    {
        "deps": st.lists(picks, max_size=1),
        "after": st.lists(st.tuples(picks, policies), max_size=3),
        "takes": st.lists(
            st.one_of(picks, st.lists(picks, min_size=1, max_size=3).map(tuple)), max_size=2
        ),
        "form": st.sampled_from(["model", "function"]),
    }
)


def flow(shape: dict[str, Any], pool: list[int]) -> dict[str, Any]:
    """A drawn shape on the upstreams in ``pool``: plain ids, After edges (one
    policy per upstream, the last drawn) and ``result_of`` / ``results_of`` markers."""
    if not pool:
        return {}

    def at(pick: int) -> int:
        return pool[pick % len(pool)]

    return {
        "deps": tuple(at(p) for p in shape["deps"]),
        "after": tuple({at(p): policy for p, policy in shape["after"]}.items()),
        "takes": tuple(
            at(t) if isinstance(t, int) else tuple(at(p) for p in t) for t in shape["takes"]
        ),
        "form": shape["form"],
    }


configs = st.builds(
    m.Config,
    num_workers=st.integers(1, 4),
    history_limit=st.sampled_from([0, 1, 3, 10_000]),
    strategy=st.sampled_from(sorted(m.STRATEGIES)),
    ending=st.sampled_from(["join", "join", "stop", "stop_cancel"]),
    prestart=st.sampled_from([0, 0, 3]),
    executor_limit=st.sampled_from([None, None, 1, 2]),
    # (rate, per, burst): token times stay dyadic, so float sums stay exact.
    rate=st.sampled_from([None, None, (1.0, 1.0, 1.0), (1.0, 2.0, 2.0), (2.0, 1.0, 3.0)]),
)


class SchedulerMachine(RuleBasedStateMachine):
    """Each rule appends one operation to the program that teardown runs."""

    jobs = Bundle("jobs")
    schedules = Bundle("schedules")

    def __init__(self) -> None:
        super().__init__()
        self.program = m.Program(m.Config())
        self.jobs_made = 0
        self.schedules_made = 0
        self.workflows_made = 0

    @initialize(config=configs)
    def configure(self, config: m.Config) -> None:
        self.program.config = config

    # With a job in the bundle from the start, the rules that need one are
    # enabled at once; otherwise hypothesis discards many programs as invalid.
    @initialize(target=jobs, spec=job_specs(), delay=delays)
    def first_job(self, spec: m.JobSpec, delay: float) -> int:
        return self._submit(spec, delay, ())

    def _submit(self, spec: m.JobSpec, delay: float, deps: tuple[int, ...]) -> int:
        index = self.jobs_made
        self.jobs_made += 1
        self.program.ops.append(m.Submit(index, spec, delay, deps))
        return index

    @rule(target=jobs, spec=job_specs(), delay=delays)
    def submit(self, spec: m.JobSpec, delay: float) -> int:
        return self._submit(spec, delay, ())

    @rule(
        target=jobs,
        spec=job_specs(),
        delay=delays,
        deps=st.lists(jobs, min_size=1, max_size=3),
    )
    def submit_after(self, spec: m.JobSpec, delay: float, deps: list[int]) -> int:
        return self._submit(spec, delay, tuple(deps))

    @rule(
        target=jobs,
        spec=job_specs(),
        delay=delays,
        pool=st.lists(jobs, min_size=1, max_size=3),
        shape=flow_shapes,
    )
    def submit_flow(
        self, spec: m.JobSpec, delay: float, pool: list[int], shape: dict[str, Any]
    ) -> int:
        index = self.jobs_made
        self.jobs_made += 1
        self.program.ops.append(m.Submit(index, spec, delay, **flow(shape, pool)))
        return index

    @rule(
        target=jobs,
        jobs_in=st.lists(st.tuples(job_specs(), delays, flow_shapes), min_size=1, max_size=3),
        outside=st.lists(jobs, max_size=3),
    )
    def enqueue_workflow(
        self, jobs_in: list[tuple[m.JobSpec, float, dict[str, Any]]], outside: list[int]
    ) -> object:
        # Each job's upstreams: jobs outside it, and the ones added before it.
        made: list[m.Submit] = []
        for spec, delay, shape in jobs_in:
            index = self.jobs_made
            self.jobs_made += 1
            pool = outside + [sub.index for sub in made]
            made.append(m.Submit(index, spec, delay, **flow(shape, pool)))
        self.program.ops.append(m.EnqueueWorkflow(self.workflows_made, tuple(made)))
        self.workflows_made += 1
        return multiple(*(sub.index for sub in made))

    @precondition(lambda self: self.workflows_made > 0)
    @rule(pick=picks)
    def cancel_workflow(self, pick: int) -> None:
        self.program.ops.append(m.CancelWorkflow(pick % self.workflows_made))

    @rule(job=jobs)
    def cancel(self, job: int) -> None:
        self.program.ops.append(m.Cancel(job))

    @rule(job=jobs, trigger=jobs, status=cancel_triggers)
    def cancel_when(self, job: int, trigger: int, status: js.JobStatus) -> None:
        self.program.ops.append(m.CancelWhen(job, trigger, status))

    @rule(job=jobs)
    def cancel_on_start(self, job: int) -> None:
        # Reaches the attempt before it has a cancel handle (the job's first step).
        self.program.ops.append(m.CancelWhen(job, job, js.JobStatus.RUNNING))

    @rule(job=jobs)
    def resubmit(self, job: int) -> None:
        self.program.ops.append(m.Resubmit(job))

    @rule(
        target=schedules,
        spec=job_specs(),
        interval=st.sampled_from([1.0, 1.5, 2.5, 4.0]),
        start_in=st.sampled_from([0.0, 0.5, 2.0]),
        allow_overlap=st.booleans(),
    )
    def schedule(
        self, spec: m.JobSpec, interval: float, start_in: float, allow_overlap: bool
    ) -> int:
        index = self.schedules_made
        self.schedules_made += 1
        self.program.ops.append(m.Schedule(index, spec, interval, start_in, allow_overlap))
        return index

    @rule(schedule=schedules)
    def cancel_schedule(self, schedule: int) -> None:
        self.program.ops.append(m.CancelSchedule(schedule))

    @rule(schedule=schedules)
    def cancel_latest_from(self, schedule: int) -> None:
        self.program.ops.append(m.CancelLatestFrom(schedule))

    @rule(seconds=advances)
    def advance(self, seconds: float) -> None:
        self.program.ops.append(m.Advance(seconds))

    def teardown(self) -> None:
        harness = m.run_program(self.program)
        TALLY.update(programs=1, operations=len(self.program.ops), jobs=len(harness.records))
        for label in sorted(harness.coverage()):
            event(label)


#: What the test ran, printed at its end (shown with ``pytest -s`` or ``-rP``).
TALLY: Counter[str] = Counter()


# The thorough profile runs for minutes: lift the suite's per-test timeout for it.
@pytest.mark.timeout(0 if PROFILE == "thorough" else 300)
def test_scheduler_matches_model() -> None:
    """Random programs of submits, cancels, schedules and waits never break an invariant."""
    TALLY.clear()
    began = time.perf_counter()
    run_state_machine_as_test(SchedulerMachine, settings=settings.get_profile(PROFILE))
    # Hypothesis also runs the programs it abandons for being too long, so
    # there are more programs than examples.
    print(
        f"\nmodel check, profile {PROFILE!r}: {settings.get_profile(PROFILE).max_examples} "
        f"examples, {TALLY['programs']} programs run ({TALLY['jobs']} jobs, "
        f"{TALLY['operations']} operations) in {time.perf_counter() - began:.0f} s"
    )


def test_unknown_profile_is_a_clear_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """A mistyped JOBSCHED_HYPOTHESIS_PROFILE stops the run and names the valid profiles."""
    monkeypatch.setenv(PROFILE_ENV, "thorugh")
    with pytest.raises(pytest.UsageError, match=r"'thorugh'.*'ci' \(the default\) or 'thorough'"):
        _profile()
