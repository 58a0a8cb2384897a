"""A reference model of ``JobScheduler`` and a harness that checks the real one against it.

``tests/test_model.py`` generates *programs* (a configuration plus a list of
operations: submits with plain, ``js.After`` and result-marker edges,
workflows enqueued and cancelled, cancels, recurring schedules, letting
virtual time pass)
and :func:`run_program` executes one against a real scheduler inside a single
``trio.run`` on ``MockClock(autojump_threshold=0)``. Jobs are async and only
ever wait on virtual time, so a 30 s timeout costs nothing and every event
happens at an exact time: durations, timeouts, delays, backoffs (no jitter)
and intervals are multiples of 0.5 s and token-bucket refills are dyadic, so
float sums are exact and the model may compare times with ``==``.

After every operation the driver waits until every task is blocked
(``trio.testing.wait_all_tasks_blocked``: nothing more can happen at this
virtual instant) and checks the invariants in :meth:`Harness.check_quiescent`;
a listener and the jobs themselves check what must hold at the moment of each
transition and each attempt. Nothing is asserted inside a job or listener
(the scheduler would record or log the error instead of failing the test):
problems are collected as *violations* and raised by the driver.

What is checked (each item names where):

* transitions: every one legal, seen by the listener in order, the job's own
  fields agreeing (status, ``finished_at``); ``run_at`` of a retry is its
  backoff (listener);
* attempts: never two of one job in flight, never more than ``max_retries +
  1``, at most ``num_workers`` (and the executor limit) at once,
  ``peak_running`` equal to the most the listener saw in flight; a job starts
  only once every ``"cancel"`` upstream COMPLETED and every ``"run"`` upstream
  ended, however, and its delay or backoff is over, and
  nothing ready strictly earlier that ranks better under the strategy
  waits (within a tenant for fair share); rate-limited starts never overdraw
  the token bucket (job bodies and listener);
* results (job bodies): each ``result_of`` receives its upstream's result,
  each ``results_of`` the list of them with an ``UpstreamFailedError``
  (upstream id, status, ``last_error``) in exactly the slots of upstreams that
  did not complete; a ``result_of`` of one that did not complete fails the
  job FAILED as it starts, with no body and no retry (:meth:`Harness.check_doomed`);
* workflows: enqueued all or none (none when an upstream outside is gone),
  each job's ``workflow_id``; ``cancel_workflow`` cancels every unfinished job
  and says how many; ``workflow()`` counts the jobs still held by status;
* at every quiescent point: no free worker while a job is ready (a dependent
  whose edges are all settled never waits: no hang), statuses as
  the listener saw them, every job with a failed, timed-out or cancelled
  ``"cancel"`` upstream CANCELLED, every successful ``cancel()`` effective, ``jobs()``
  and ``get()`` holding exactly the unfinished jobs plus ``history_limit``
  finished ones (:meth:`Harness.check_quiescent`);
* each job's whole life replayed against its spec: every attempt ends when
  and how the spec says (COMPLETED, RETRY_WAIT, FAILED or TIMED_OUT, so
  TIMED_OUT only when the last attempt timed out), or CANCELLED at the
  instant someone first cancelled it (a later ``cancel()`` of an attempt
  still cleaning up changes nothing); results and ``last_error`` as expected; a
  CANCELLED job was cancelled by ``cancel()``, by shutdown or by a failed
  ``"cancel"`` upstream, and a cascade happens at the upstream's instant
  (:meth:`Harness.check_life`);
* ``join()`` returns when the last job ends, with every job terminal;
  ``stop()`` leaves nothing running and rejects new work; recurring schedules
  fire on their fixed-rate slots, never after cancellation, and skip a slot
  only while the previous job runs (unless ``allow_overlap``); every
  attempt that lingers past ``CANCEL_GRACE`` is recorded and abandoned
  ``CANCEL_GRACE`` after its cancellation, with one warning, while its
  clean-up runs on to its end (never cut short); nothing else is logged.

The model never predicts an interleaving that the scheduler may legitimately
choose either way: two events at the same virtual instant (a job finishing
while the driver cancels it, a schedule firing as its previous job ends) are
judged by what was observed, and only strict orderings are enforced.
"""

from __future__ import annotations

import logging
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import trio
import trio.testing

import jobsched as js
from jobsched._engine._flowgraph import LOOKS
from jobsched._engine._resume import CANCEL_GRACE
from jobsched._enums import TRANSITIONS

S = js.JobStatus
PENDING, RUNNING, RETRY_WAIT = S.PENDING, S.RUNNING, S.RETRY_WAIT
COMPLETED, FAILED, TIMED_OUT, CANCELLED = S.COMPLETED, S.FAILED, S.TIMED_OUT, S.CANCELLED
BAD_ENDS = frozenset({FAILED, TIMED_OUT, CANCELLED})

#: Virtual seconds the final ``join()`` may take before the harness calls it hung.
JOIN_WATCHDOG = 1_000_000.0

STRATEGIES: dict[str, Callable[[], js.SchedulingStrategy]] = {
    "priority": js.PriorityStrategy,
    "fifo": js.FIFOStrategy,
    "aging": lambda: js.AgingPriorityStrategy(age_rate=0.5),
    "edf": js.EarliestDeadlineFirstStrategy,
    "fairshare": lambda: js.FairShareStrategy(weights={"a": 2}),
}
ERRORS: dict[str, type[Exception]] = {"ValueError": ValueError, "TimeoutError": TimeoutError}
KINDS = ("ok", "fail", "flaky", "fatal", "hang", "slow", "swallow", "convert", "linger")
#: Kinds whose attempts may never end on their own.
NEEDS_TIMEOUT = ("hang", "slow", "swallow", "convert", "linger")


# ── Programs ─────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class JobSpec:
    """What a model job does on each attempt, and how it is configured.

    ``kind``: ``ok`` returns; ``fail`` raises ``error`` every attempt;
    ``flaky`` raises for its first ``k`` attempts, then returns; ``fatal``
    raises :class:`NonRetryableError`; ``hang`` never returns (only its
    timeout or a cancel ends an attempt); ``slow`` hangs for its first ``k``
    attempts, then returns; ``swallow`` hangs and, when cancelled, swallows the
    cancellation and returns; ``convert`` hangs and, when cancelled, raises
    ``error`` instead (a ``TimeoutError`` of its own included); ``linger``
    hangs and, when cancelled, keeps running ``linger`` seconds in a shielded
    clean-up (past ``CANCEL_GRACE``, the scheduler records the attempt then and
    abandons it; the clean-up still runs to its end). Each attempt
    that returns or raises first sleeps ``duration`` virtual seconds; ``None``
    means it does not await at all.
    """

    kind: str = "ok"
    k: int = 0
    duration: float | None = None
    error: str = "ValueError"
    priority: int = 1
    timeout: float | None = 30.0
    max_retries: int = 0
    base_delay: float = 0.0
    max_delay: float = 4.0
    deadline: float | None = None
    #: Sets ``rate_key="r"``: limited if the config has a rate, otherwise a key
    #: the scheduler has no limit for (which must not limit anything).
    rate_limited: bool = False
    linger: float = 0.0
    tenant: str | None = None  # for the fair-share strategy

    def __post_init__(self) -> None:
        if self.kind in NEEDS_TIMEOUT and self.timeout is None:
            raise ValueError(f"a {self.kind!r} job needs a timeout, or join() never returns")

    @property
    def retry(self) -> js.RetryPolicy:
        return js.RetryPolicy(
            max_retries=self.max_retries,
            base_delay=self.base_delay,
            max_delay=self.max_delay,
            jitter=False,
        )

    def plan(self, attempt: int) -> tuple[str, float]:
        """How attempt number ``attempt`` ends (ok, error, fatal or timeout) and when."""
        if self.kind in ("hang", "swallow", "convert", "linger") or (
            self.kind == "slow" and attempt <= self.k
        ):
            assert self.timeout is not None
            return "timeout", self.timeout
        if self.duration is None:
            took = 0.0
        else:
            took = self.duration
            if self.timeout is not None and took > self.timeout:
                return "timeout", self.timeout
        if self.kind == "fail" or (self.kind == "flaky" and attempt <= self.k):
            return "error", took
        if self.kind == "fatal":
            return "fatal", took
        return "ok", took

    @property
    def lingers(self) -> float:
        """How long an attempt keeps running after its cancellation or timeout."""
        return self.linger if self.kind == "linger" else 0.0

    def backoff(self, attempt: int) -> float:
        """The retry delay after attempt ``attempt`` failed (no jitter)."""
        return min(self.max_delay, self.base_delay * 2 ** (attempt - 1))


@dataclass(frozen=True)
class Config:
    """The scheduler under test and how the program ends.

    ``ending``: ``join`` cancels every schedule and joins; ``stop`` calls
    ``stop()`` with work still queued; ``stop_cancel`` calls
    ``stop(cancel_running=True)``. Submits before the scheduler starts are
    allowed, so up to ``prestart`` leading operations run before it does.
    """

    num_workers: int = 2
    history_limit: int = 10_000
    strategy: str = "priority"
    ending: str = "join"
    #: How many of the leading operations (up to the first Advance) run before start.
    prestart: int = 0
    #: ``executor_limits={"async": n}``: every model job is async, so this caps them all.
    executor_limit: int | None = None
    #: ``rate_limits={"r": RateLimit(rate, per, burst)}`` for jobs with ``rate_limited``.
    rate: tuple[float, float, float] | None = None

    @property
    def capacity(self) -> int:
        """The most attempts that may be in flight at once."""
        return min(self.num_workers, self.executor_limit or self.num_workers)


#: What a job takes in its arguments: an index is ``js.result_of(that job)``,
#: a tuple of indexes ``js.results_of([those jobs])``.
Take = int | tuple[int, ...]


@dataclass(frozen=True)
class Submit:
    """Submit job number ``index`` (jobs are numbered in submit order).

    ``deps`` are plain ids (a ``"cancel"`` edge each), ``after`` are
    ``js.After(job, on_failure=policy)`` edges, ``takes`` the markers in the
    job's arguments (each target an upstream, ``"cancel"`` unless ``after``
    says ``"run"``). ``form``: ``"model"`` is a :class:`ModelJob` (markers in
    its ``takes`` attribute), ``"function"`` a ``FunctionJob`` (markers in its
    ``args``).
    """

    index: int
    spec: JobSpec
    delay: float = 0.0
    deps: tuple[int, ...] = ()
    after: tuple[tuple[int, str], ...] = ()
    takes: tuple[Take, ...] = ()
    form: str = "model"

    def upstreams(self) -> dict[int, str]:
        """Every upstream's index and its edge's policy, in the order first named."""
        found = dict.fromkeys(self.deps, "cancel")
        explicit = dict(self.after)
        found.update(explicit)
        for take in self.takes:
            for index in (take,) if isinstance(take, int) else take:
                found.setdefault(index, "cancel")
        return found


@dataclass(frozen=True)
class EnqueueWorkflow:
    """Enqueue workflow number ``index``: its jobs (upstreams inside it are
    jobs listed before them), all or none."""

    index: int
    jobs: tuple[Submit, ...]


@dataclass(frozen=True)
class CancelWorkflow:
    index: int


@dataclass(frozen=True)
class Cancel:
    index: int


@dataclass(frozen=True)
class CancelWhen:
    """Arm a listener: when job ``trigger`` enters ``status``, cancel job ``target``."""

    target: int
    trigger: int
    status: js.JobStatus


@dataclass(frozen=True)
class Resubmit:
    index: int


@dataclass(frozen=True)
class Schedule:
    """Add recurring schedule number ``index``; each fire submits a job of ``spec``."""

    index: int
    spec: JobSpec
    interval: float
    start_in: float = 0.0
    allow_overlap: bool = False


@dataclass(frozen=True)
class CancelSchedule:
    index: int


@dataclass(frozen=True)
class CancelLatestFrom:
    """Cancel the most recent job that schedule ``index`` submitted, if any."""

    index: int


@dataclass(frozen=True)
class Advance:
    """Let ``seconds`` of virtual time pass (0: just let the current instant settle)."""

    seconds: float


Op = (
    Submit
    | Cancel
    | CancelWhen
    | Resubmit
    | Schedule
    | CancelSchedule
    | CancelLatestFrom
    | Advance
    | EnqueueWorkflow
    | CancelWorkflow
)


@dataclass
class Program:
    config: Config
    ops: list[Op] = field(default_factory=list)


# ── What the harness remembers about each job ────────────────────────────


@dataclass
class Body:
    """One attempt as the job's own code saw it."""

    attempt: int
    start: float
    end: float | None = None
    how: str = ""  # returned / raised / cancelled
    abandoned: bool = False  # recorded while it still ran (a clean-up past the grace)
    received: tuple[Any, ...] = ()  # what its markers stood for, as the job got them


@dataclass
class JobRecord:
    name: str
    spec: JobSpec
    job: js.Job
    #: Every upstream, plain, After or marker, once each.
    deps: tuple[JobRecord, ...] = ()
    #: The upstreams whose edge is ``on_failure="run"``.
    runs: frozenset[str] = frozenset()
    takes: tuple[Take, ...] = ()
    delay: float = 0.0
    workflow: WorkflowRecord | None = None
    schedule: ScheduleRecord | None = None
    submitted: bool = False
    submitted_at: float = 0.0
    status: js.JobStatus = PENDING  # as the listener saw it
    trace: list[tuple[float, js.JobStatus, js.JobStatus]] = field(default_factory=list)
    bodies: list[Body] = field(default_factory=list)
    active: bool = False
    cancelled_at: float | None = None  # when a cancel() of it returned True
    shutdown_cancel: bool = False  # running when stop(cancel_running=True) began
    no_retry_attempt: int | None = None  # running when stop() began: no retry after it

    def ready_since(self) -> float | None:
        """Since when the job may run: None while an upstream is unfinished (or,
        on a ``"cancel"`` edge, did not complete)."""
        if self.status is PENDING:
            finished = [d.finished_at() for d in self.deps]
            if any(not self.met(d) for d in self.deps):
                return None
            return max([self.submitted_at + self.delay, *(f for f in finished if f is not None)])
        if self.status is RETRY_WAIT:
            failed_at, _old, _new = self.trace[-1]
            return failed_at + self.spec.backoff(len(self.bodies))
        return None

    def finished_at(self) -> float | None:
        if self.trace and self.trace[-1][2]._terminal:  # type: ignore[attr-defined]
            return self.trace[-1][0]
        return None

    def met(self, dep: JobRecord) -> bool:
        """Whether the edge to ``dep`` lets this job run: it completed, or it
        ended however on a ``"run"`` edge."""
        if dep.name in self.runs:
            return dep.status._terminal  # type: ignore[attr-defined,no-any-return]
        return dep.status is COMPLETED

    def cancelled_by(self) -> list[JobRecord]:
        """The upstreams on a ``"cancel"`` edge that ended other than COMPLETED."""
        return [d for d in self.deps if d.name not in self.runs and d.status in BAD_ENDS]

    def doomed_by(self) -> JobRecord | None:
        """The first ``result_of`` upstream that ended other than COMPLETED (the
        job then fails as it starts, with no body), or None."""
        for take in self.takes:
            if not isinstance(take, int):
                continue
            dep = next(d for d in self.deps if d.name == f"j{take}")
            if dep.status in BAD_ENDS:
                return dep
        return None


@dataclass
class WorkflowRecord:
    name: str
    records: list[JobRecord] = field(default_factory=list)
    workflow_id: str = ""
    cancelled_at: float | None = None


@dataclass
class ScheduleRecord:
    name: str
    spec: JobSpec
    interval: float
    first_run: float
    allow_overlap: bool
    schedule_id: str = ""
    jobs: list[JobRecord] = field(default_factory=list)
    cancelled_at: float | None = None


def job_options(spec: JobSpec) -> dict[str, Any]:
    """The options a job of ``spec`` is made with, for either form."""
    return {
        "priority": spec.priority,
        "timeout": spec.timeout,
        "retry": spec.retry,
        "deadline": spec.deadline,
        "rate_key": "r" if spec.rate_limited else None,
        "tenant": spec.tenant,
    }


class ModelJob(js.AsyncJob):
    """An async job that plays its :class:`JobSpec` and reports each attempt to
    the harness; its ``takes`` attribute holds its result markers until bound."""

    def __init__(
        self, spec: JobSpec, harness: Harness, name: str, takes: tuple[Any, ...] = ()
    ) -> None:
        super().__init__(name, **job_options(spec))
        self.spec = spec
        self.harness = harness
        self.takes = takes

    async def run(self) -> Any:
        return await play(self.harness, self, self.spec, self.takes)


def function_job(spec: JobSpec, harness: Harness, name: str, takes: tuple[Any, ...]) -> js.Job:
    """A ``FunctionJob`` that plays ``spec``: its markers are its ``args``."""
    made: list[js.Job] = []

    async def model_function(*received: Any) -> Any:
        return await play(harness, made[0], spec, received)

    job = js.FunctionJob(model_function, args=takes, name=name, **job_options(spec))
    made.append(job)
    return job


async def play(harness: Harness, job: js.Job, spec: JobSpec, received: tuple[Any, ...]) -> Any:
    """One attempt of a model job, reported to the harness as it begins and ends."""
    body = harness.body_enter(job, received)
    try:
        result = await _play(job.name, spec, body.attempt)
    except anyio.get_cancelled_exc_class():
        harness.body_exit(job, body, "cancelled")
        raise
    except BaseException:
        harness.body_exit(job, body, "raised")
        raise
    harness.body_exit(job, body, "returned")
    return result


async def _play(name: str, spec: JobSpec, attempt: int) -> Any:
    if spec.kind == "hang" or (spec.kind == "slow" and attempt <= spec.k):
        await anyio.sleep_forever()
    if spec.kind == "swallow":
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            # Deliberately wrong: the scheduler must still record the
            # attempt as cancelled or timed out.
            return "swallowed"
    if spec.kind == "linger":
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await anyio.sleep(spec.linger)
            return "lingered"
    if spec.kind == "convert":
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            raise ERRORS[spec.error](f"{name} converted its cancellation") from None
    if spec.duration is not None:
        await anyio.sleep(spec.duration)
    if spec.kind == "fail" or (spec.kind == "flaky" and attempt <= spec.k):
        raise ERRORS[spec.error](f"{name} attempt {attempt}")
    if spec.kind == "fatal":
        raise js.NonRetryableError(f"{name} gives up")
    return f"{name}#{attempt}"


def _described(got: Any) -> Any:
    """A received ``UpstreamFailedError`` as a comparable tuple; anything else as is."""
    if isinstance(got, js.UpstreamFailedError):
        return ("UpstreamFailedError", got.job_id, got.status, got.last_error)
    return got


class _LogWatch(logging.Filter):
    """Counts (and drops) the warnings about abandoned attempts; anything else
    jobsched logs at WARNING or above, except the reports of a job's failures,
    retries and timeouts, is a violation (and still logged)."""

    def __init__(self, harness: Harness) -> None:
        super().__init__()
        self.harness = harness

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        message = record.getMessage()
        if record.levelno == logging.WARNING and "abandoned" in message:
            self.harness.abandoned += 1
            return False
        if hasattr(record, "job_id") and "internal error" not in message:
            return True  # a job's failure, retry or timeout, reported as it should be
        self.harness.violation(f"{record.name} logged: {message}")
        return True


class _ChildLogWatch(logging.Handler):
    """Records from ``jobsched.*`` loggers skip the parent's filters: catch them here."""

    def __init__(self, harness: Harness) -> None:
        super().__init__(logging.WARNING)
        self.harness = harness

    def emit(self, record: logging.LogRecord) -> None:
        if record.name != "jobsched":
            self.harness.violation(f"{record.name} logged: {record.getMessage()}")


# ── The harness ──────────────────────────────────────────────────────────


class Harness:
    """Runs one program against a real scheduler and checks it against the model."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self.config = program.config
        self.strategy = STRATEGIES[self.config.strategy]()
        self.records: dict[str, JobRecord] = {}  # by job id
        self.by_index: dict[int, JobRecord] = {}
        self.schedules: dict[int, ScheduleRecord] = {}
        self.workflows: dict[int, WorkflowRecord] = {}
        self.triggers: list[CancelWhen] = []
        self.violations: list[str] = []
        self.active = 0
        self.running = 0
        self.peak = 0
        self.stopping = False
        self.labels: set[str] = set()
        self.abandoned = 0  # warnings the scheduler logged about abandoned attempts
        self.stopped_at: float | None = None
        # The model's token bucket for rate key "r": (tokens, last refill time).
        self.tokens = self.config.rate[2] if self.config.rate else 0.0
        self.refilled: float | None = None
        self.scheduler: js.JobScheduler | None = None

    # Problems are collected, not raised: an assertion inside a job or a
    # listener would be swallowed by the scheduler.
    def violation(self, message: str) -> None:
        self.violations.append(f"[t={self.now():g}] {message}")

    def raise_violations(self, where: str) -> None:
        if self.violations:
            shown = "\n  ".join(self.violations[:20])
            raise AssertionError(f"{len(self.violations)} violation(s) {where}:\n  {shown}")

    @staticmethod
    def now() -> float:
        try:
            return trio.current_time()
        except RuntimeError:
            return float("nan")

    @property
    def s(self) -> js.JobScheduler:
        assert self.scheduler is not None
        return self.scheduler

    # ── Running a program ──

    def run(self) -> None:
        logger = logging.getLogger("jobsched")
        watch, children = _LogWatch(self), _ChildLogWatch(self)
        logger.addFilter(watch)
        logger.addHandler(children)
        try:
            trio.run(self._main, clock=trio.testing.MockClock(autojump_threshold=0))
        finally:
            logger.removeFilter(watch)
            logger.removeHandler(children)
        lingered = sum(
            1
            for rec in self.records.values()
            if rec.spec.lingers >= CANCEL_GRACE
            for body in rec.bodies
            if body.end is not None
        )
        if self.abandoned != lingered:
            self.violation(
                f"{self.abandoned} attempts abandoned, {lingered} lingered past the grace"
            )
        self.raise_violations("after the scheduler exited")

    async def _main(self) -> None:
        config = self.config
        self.scheduler = js.JobScheduler(
            self.strategy,
            num_workers=config.num_workers,
            history_limit=config.history_limit,
            rng=random.Random(0),
            clock=anyio.current_time,
            executor_limits={"async": config.executor_limit} if config.executor_limit else None,
            rate_limits={"r": js.RateLimit(*config.rate)} if config.rate else None,
        )
        self.s.add_listener(self.on_transition)
        ops = list(enumerate(self.program.ops))
        while ops and len(ops) > len(self.program.ops) - config.prestart:
            if isinstance(ops[0][1], Advance):
                break
            step, op = ops.pop(0)
            await self.apply(op)
            self.raise_violations(f"after step {step} ({op}), before start")
        async with self.s:
            for step, op in ops:
                await self.apply(op)
                await trio.testing.wait_all_tasks_blocked()
                self.check_quiescent()
                if self.workflows:
                    await self.check_workflows()
                self.raise_violations(f"after step {step} ({op})")
            await self.end()
            await trio.testing.wait_all_tasks_blocked()
            self.check_quiescent()
            self.check_final()
            self.raise_violations(f"at the end ({config.ending})")
        if self.active:
            self.violation(f"{self.active} job bodies still running after the scheduler exited")
        for rec in self.records.values():
            if rec.status is RUNNING:
                self.violation(f"{rec.name} still RUNNING after the scheduler exited")

    async def apply(self, op: Op) -> None:
        if isinstance(op, Submit):
            self.submit(op)
        elif isinstance(op, Cancel):
            rec = self.by_index.get(op.index)
            if rec is not None:
                self.cancel(rec, "the driver")
        elif isinstance(op, CancelWhen):
            self.triggers.append(op)
        elif isinstance(op, Resubmit):
            self.resubmit(op)
        elif isinstance(op, Schedule):
            self.schedule(op)
        elif isinstance(op, CancelSchedule):
            self.cancel_schedule(self.schedules[op.index])
        elif isinstance(op, CancelLatestFrom):
            sched = self.schedules[op.index]
            if sched.jobs:
                self.cancel(sched.jobs[-1], "the driver")
        elif isinstance(op, Advance):
            await anyio.sleep(op.seconds)
        elif isinstance(op, EnqueueWorkflow):
            await self.enqueue_workflow(op)
        elif isinstance(op, CancelWorkflow):
            await self.cancel_workflow(op)
        else:  # pragma: no cover - the generator only makes the ops above
            raise TypeError(f"unknown op {op!r}")

    def known_ids(self) -> set[str]:
        return {job.job_id for job in self.s.jobs()}

    def target(self, index: int, inside: WorkflowRecord | None) -> str | js.Job:
        """How a marker or an After names upstream ``index``: the Job itself
        inside its own workflow (its id is final only once enqueued), else
        the Job or its id, both ways exercised."""
        rec = self.by_index[index]
        if inside is not None and rec.workflow is inside:
            return rec.job
        return rec.job if index % 2 else rec.job.job_id

    def make(self, op: Submit, inside: WorkflowRecord | None = None) -> JobRecord:
        """The job ``op`` submits, its markers and edges, and its record."""
        takes = tuple(
            js.result_of(self.target(take, inside))
            if isinstance(take, int)
            else js.results_of([self.target(t, inside) for t in take])
            for take in op.takes
        )
        name = f"j{op.index}"
        if op.form == "function":
            job = function_job(op.spec, self, name, takes)
        else:
            job = ModelJob(op.spec, self, name, takes)
        upstreams = op.upstreams()
        rec = JobRecord(
            name,
            op.spec,
            job,
            deps=tuple(self.by_index[d] for d in upstreams),
            runs=frozenset(f"j{d}" for d, policy in upstreams.items() if policy == "run"),
            takes=op.takes,
            delay=op.delay,
            workflow=inside,
        )
        self.by_index[op.index] = rec
        if op.after or op.takes:
            self.labels.add(f"{op.form} job with edges or markers")
        return rec

    def depends_on(self, op: Submit, inside: WorkflowRecord | None = None) -> list[Any]:
        plain: list[Any] = [self.target(d, inside) for d in op.deps]
        return plain + [js.After(self.target(d, inside), on_failure=p) for d, p in op.after]  # type: ignore[arg-type]

    def submit(self, op: Submit) -> None:
        rec = self.make(op)
        job = rec.job
        known = self.known_ids()
        missing = [d.name for d in rec.deps if d.job.job_id not in known]
        self.records[job.job_id] = rec  # the listener may see it during submit()
        rec.submitted, rec.submitted_at = True, self.now()
        try:
            job_id = self.s.submit(job, delay=op.delay, depends_on=self.depends_on(op))
        except js.UnknownJobError as exc:
            del self.records[job.job_id]
            rec.submitted = False
            if not missing:
                self.violation(f"submit of {rec.name} raised {exc!r} but all deps are known")
            elif rec.trace:
                self.violation(f"{rec.name}: a rejected submit changed its status: {rec.trace}")
            return
        if missing:
            self.violation(f"{rec.name} submitted although deps {missing} were evicted/unknown")
        if job_id != job.job_id:
            self.violation(f"submit returned {job_id!r}, not the job's id {job.job_id!r}")
        self.check_added(rec)

    def check_added(self, rec: JobRecord) -> None:
        """Right after a submit or an enqueue: its times, and PENDING unless an
        upstream on a ``"cancel"`` edge ended otherwise than COMPLETED."""
        job = rec.job
        if job.submitted_at != rec.submitted_at or job.run_at != rec.submitted_at + rec.delay:
            self.violation(f"{rec.name}: submitted_at/run_at {job.submitted_at}/{job.run_at}")
        bad = rec.cancelled_by()
        if bad:
            if job.status is not CANCELLED:
                self.violation(f"{rec.name} submitted after dep {bad[0].name} ended, not cancelled")
        elif job.status is not PENDING:
            self.violation(f"{rec.name} is {job.status.value} right after submit")

    async def enqueue_workflow(self, op: EnqueueWorkflow) -> None:
        """All of the workflow's jobs, or none when an upstream outside it is gone."""
        flow = WorkflowRecord(f"w{op.index}")
        self.workflows[op.index] = flow
        wf = js.Workflow(flow.name)
        known = self.known_ids()
        missing = []
        flow.records = [self.make(sub, flow) for sub in op.jobs]
        for sub, rec in zip(op.jobs, flow.records, strict=True):
            outside = [d for d in rec.deps if d.workflow is not flow]
            missing += [d.name for d in outside if d.job.job_id not in known]
            try:
                wf.add(rec.job, depends_on=self.depends_on(sub, flow), delay=sub.delay)
            except js.UnknownJobError as exc:
                # add() knows a Job never submitted (a refused one) at once.
                if all(d.submitted for d in outside):
                    self.violation(f"{flow.name}.add({rec.name}) raised {exc!r}")
                self.labels.add("workflow refused (an upstream is gone)")
                return
        now = self.now()
        for rec in flow.records:
            self.records[rec.job.job_id] = rec  # the listener may see them as they are added
            rec.submitted, rec.submitted_at = True, now
        try:
            flow.workflow_id = await self.s.enqueue_workflow(wf)
        except js.UnknownJobError as exc:
            if not missing:
                self.violation(f"enqueue of {flow.name} raised {exc!r} but all deps are known")
            for rec in flow.records:
                del self.records[rec.job.job_id]
                rec.submitted = False
                if rec.trace or rec.job.job_id in self.known_ids():
                    self.violation(f"{rec.name} of {flow.name} refused, yet added: {rec.trace}")
            self.labels.add("workflow refused (an upstream is gone)")
            return
        if missing:
            self.violation(f"{flow.name} enqueued although deps {missing} were evicted/unknown")
        self.labels.add("workflow enqueued")
        for rec in flow.records:
            if rec.job.workflow_id != flow.workflow_id:
                self.violation(f"{rec.name}.workflow_id {rec.job.workflow_id!r}")
            self.check_added(rec)

    async def cancel_workflow(self, op: CancelWorkflow) -> None:
        """Every unfinished job of it is cancelled, as cancel() would; how many."""
        flow = self.workflows[op.index]
        if not flow.workflow_id:
            return  # refused at enqueue
        unfinished = [r for r in flow.records if not r.status._terminal]  # type: ignore[attr-defined]
        before = {r.name: r.status for r in unfinished}
        try:
            count = await self.s.cancel_workflow(flow.workflow_id)
        except js.UnknownJobError:
            # Forgotten with the last of its jobs (history_limit).
            known = self.known_ids()
            if any(r.job.job_id in known for r in flow.records):
                self.violation(f"cancel_workflow({flow.name}): unknown, yet a job of it is held")
            return
        if count != len(unfinished):
            self.violation(
                f"cancel_workflow({flow.name}) said {count}, {len(unfinished)} unfinished"
            )
        if flow.cancelled_at is None:
            flow.cancelled_at = self.now()
        # Ended during the call, but not by it: a job outside the workflow, or
        # one a listener's cancel() ended (the call cancels dependents before
        # their upstreams, so its own cancels never cascade inside it).
        not_by_call = {
            r.job.job_id
            for r in self.records.values()
            if r.status in BAD_ENDS and (r.workflow is not flow or r.cancelled_at is not None)
        }
        for rec in unfinished:
            reason = rec.job.last_error or ""
            if reason.startswith("upstream ") and reason.split(" ")[1] in not_by_call:
                # A listener of one of the call's cancels ended an upstream of
                # it first; the cascade ended it. It counts, but no cancel()
                # returned True for it (check_cancel_reason checks the blame).
                self.labels.add("cancel_workflow: a job ended by a listener's cascade")
            elif rec.cancelled_at is None:
                rec.cancelled_at = self.now()
            if before[rec.name] is not RUNNING and rec.job.status is not CANCELLED:
                self.violation(f"cancel_workflow left {rec.name} {rec.job.status.value}")
        if unfinished:
            self.labels.add("workflow cancelled with jobs unfinished")

    async def check_workflows(self) -> None:
        """``workflow()`` counts the jobs it still holds by status."""
        known = self.known_ids()
        for flow in self.workflows.values():
            if not flow.workflow_id:
                continue
            held = [r for r in flow.records if r.job.job_id in known]
            try:
                info = await self.s.workflow(flow.workflow_id)
            except js.UnknownJobError:
                if held:
                    self.violation(f"workflow({flow.name}) unknown, yet {len(held)} jobs held")
                continue
            counts = dict(Counter(r.status for r in held))
            finished = all(r.status._terminal for r in held)  # type: ignore[attr-defined]
            if info.counts != counts or info.finished != finished:
                self.violation(
                    f"workflow({flow.name}) counts {info.counts} finished {info.finished}, "
                    f"held {counts}"
                )

    def resubmit(self, op: Resubmit) -> None:
        rec = self.by_index.get(op.index)
        if rec is None or not rec.submitted:
            return
        before, seen = rec.job.status, len(rec.trace)
        try:
            self.s.submit(rec.job)
        except js.SchedulerError as exc:
            if isinstance(exc, js.UnknownJobError) or "already submitted" not in str(exc):
                self.violation(f"resubmit of {rec.name} raised the wrong error: {exc!r}")
        else:
            self.violation(f"resubmit of {rec.name} was accepted")
        if rec.job.status is not before or len(rec.trace) != seen:
            self.violation(f"a rejected resubmit changed {rec.name}")

    def cancel(self, rec: JobRecord, by: str) -> None:
        job = rec.job
        known = rec.submitted and job.job_id in self.known_ids()
        before = job.status
        result = self.s.cancel(job.job_id)
        expected = known and not before._terminal  # type: ignore[attr-defined]
        if result != expected:
            self.violation(
                f"cancel({rec.name}) by {by} returned {result} for a job "
                f"{'known' if known else 'unknown'} and {before.value}"
            )
        if result:
            if by != "the driver":
                self.labels.add(f"listener cancelled a {before.value} job")
            if rec.cancelled_at is None:
                rec.cancelled_at = self.now()
            if before is not RUNNING and job.status is not CANCELLED:
                self.violation(f"cancel({rec.name}) of a {before.value} job left it {job.status}")

    def schedule(self, op: Schedule) -> None:
        sched = ScheduleRecord(
            f"s{op.index}", op.spec, op.interval, self.now() + op.start_in, op.allow_overlap
        )
        self.schedules[op.index] = sched

        def factory() -> js.Job:
            job = ModelJob(sched.spec, self, f"{sched.name}#{len(sched.jobs)}")
            rec = JobRecord(job.name, sched.spec, job, schedule=sched)
            rec.submitted, rec.submitted_at = True, self.now()
            self.records[job.job_id] = rec
            sched.jobs.append(rec)
            return job

        sched.schedule_id = self.s.schedule_recurring(
            factory, op.interval, start_in=op.start_in, allow_overlap=op.allow_overlap
        )

    def cancel_schedule(self, sched: ScheduleRecord) -> None:
        result = self.s.cancel_recurring(sched.schedule_id)
        if result != (sched.cancelled_at is None):
            self.violation(f"cancel_recurring({sched.name}) returned {result}")
        if sched.cancelled_at is None:
            sched.cancelled_at = self.now()

    async def end(self) -> None:
        ending = self.config.ending
        if ending == "join":
            for sched in self.schedules.values():
                if sched.cancelled_at is None:
                    self.cancel_schedule(sched)
            called = self.now()
            try:
                with anyio.fail_after(JOIN_WATCHDOG):
                    await self.s.join()
            except TimeoutError:
                stuck = [r.name for r in self.records.values() if not r.status._terminal]  # type: ignore[attr-defined]
                self.violation(f"join() did not return; unfinished: {stuck}")
                return
            last = max([called, *(r.finished_at() or 0.0 for r in self.records.values())])
            if self.now() != last:
                self.violation(f"join() returned at {self.now()}, the last job ended at {last}")
            return
        cancel_running = ending == "stop_cancel"
        self.stopping = True
        now = self.stopped_at = self.now()
        for sched in self.schedules.values():
            if sched.cancelled_at is None:
                sched.cancelled_at = now  # the ticker stops with the scheduler
        for rec in self.records.values():
            if rec.status is RUNNING:
                if cancel_running:
                    rec.shutdown_cancel = True
                else:
                    rec.no_retry_attempt = len(rec.bodies)
        await self.s.stop(cancel_running=cancel_running)
        # What stop() leaves: no work in flight, nothing new accepted.
        unfinished = [r for r in self.records.values() if not r.status._terminal]  # type: ignore[attr-defined]
        for rec in unfinished:
            if rec.status is RUNNING:
                self.violation(f"{rec.name} still RUNNING after stop()")
        probe = ModelJob(JobSpec(), self, "late")
        try:
            self.s.submit(probe)
        except js.SchedulerStoppedError:
            pass
        else:
            self.violation("submit() after stop() was accepted")
        try:
            await self.s.join()
        except js.SchedulerStoppedError:
            if not unfinished:
                self.violation("join() after stop() raised with every job finished")
        else:
            if unfinished:
                self.violation(f"join() after stop() returned with {len(unfinished)} unfinished")

    # ── Hooks: the job bodies and the listener ──

    def body_enter(self, job: js.Job, received: tuple[Any, ...]) -> Body:
        rec = self.records.get(job.job_id)
        now = self.now()
        if rec is None:  # pragma: no cover - would be a harness bug
            self.violation(f"unknown job {job.name} started")
            return Body(job.attempts, now)
        self.check_received(rec, received)
        if job.status is not RUNNING or rec.status is not RUNNING:
            self.violation(f"{rec.name} body started while {job.status.value}")
        if rec.active:
            self.violation(f"{rec.name} has two attempts in flight")
        if job.attempts != len(rec.bodies) + 1:
            self.violation(f"{rec.name} attempt {job.attempts} after {len(rec.bodies)} bodies")
        if job.attempts > rec.spec.max_retries + 1:
            self.violation(f"{rec.name} attempt {job.attempts} > max_retries + 1")
        if job.started_at != now:
            self.violation(f"{rec.name}: started_at {job.started_at} != now")
        self.active += 1
        if self.active > self.config.capacity:
            self.violation(f"{self.active} attempts in flight, capacity {self.config.capacity}")
        rec.active = True
        body = Body(job.attempts, now, received=received)
        rec.bodies.append(body)
        return body

    def check_received(self, rec: JobRecord, received: tuple[Any, ...]) -> None:
        """What the markers stood for as the body began: each ``result_of`` the
        upstream's result (a failed one would have failed the job before its
        body); in ``results_of`` an ``UpstreamFailedError`` describing exactly
        each upstream that did not complete."""
        if len(received) != len(rec.takes):
            self.violation(f"{rec.name} received {received!r} for {rec.takes}")
            return
        doomed = rec.doomed_by()
        if doomed is not None:
            self.violation(f"{rec.name}'s body ran although {doomed.name} ended {doomed.status}")
        for take, got in zip(rec.takes, received, strict=True):
            if isinstance(take, int):
                want: Any = self.by_index[take].job.result
            else:
                if not isinstance(got, list):
                    self.violation(f"{rec.name} received {got!r} for results_of {take}")
                    continue
                want = [self.expected(self.by_index[t]) for t in take]
                got = [_described(g) for g in got]
            if got != want:
                self.violation(f"{rec.name} received {got!r}, expected {want!r}")
            elif not isinstance(take, int) and any(isinstance(w, tuple) for w in want):
                self.labels.add("results_of held an UpstreamFailedError")

    @staticmethod
    def expected(upstream: JobRecord) -> Any:
        """An upstream's slot in a ``results_of``, as :func:`_described` puts it."""
        job = upstream.job
        if upstream.status is COMPLETED:
            return job.result
        return ("UpstreamFailedError", job.job_id, upstream.status, job.last_error)

    def body_exit(self, job: js.Job, body: Body, how: str) -> None:
        rec = self.records[job.job_id]
        body.end, body.how = self.now(), how
        if not body.abandoned:
            rec.active = False
            self.active -= 1

    def on_transition(self, job: js.Job, old: js.JobStatus, new: js.JobStatus) -> None:
        try:
            self._on_transition(job, old, new)
        except Exception as exc:  # a harness bug must fail the test, not be logged
            self.violation(f"listener crashed on {job!r} {old}->{new}: {exc!r}")

    def _on_transition(self, job: js.Job, old: js.JobStatus, new: js.JobStatus) -> None:
        now = self.now()
        rec = self.records.get(job.job_id)
        if rec is None:
            self.violation(f"listener saw an unknown job {job!r}: {old} -> {new}")
            return
        if old is not rec.status:
            self.violation(f"{rec.name}: {old.value} -> {new.value}, but it was {rec.status.value}")
        if new not in TRANSITIONS.get(old, ()):
            self.violation(f"{rec.name}: illegal {old.value} -> {new.value}")
        if job.status is not new:
            self.violation(f"{rec.name}: listener told {new.value}, job says {job.status.value}")
        if old is RUNNING and rec.active:
            # Recorded while its body still runs: abandoned (check_life judges
            # when); it no longer counts as in flight.
            rec.bodies[-1].abandoned = True
            rec.active = False
            self.active -= 1
        if new._terminal and job.finished_at != now:  # type: ignore[attr-defined]
            self.violation(f"{rec.name}: finished_at {job.finished_at} at {new.value} (now {now})")
        if new is RETRY_WAIT and job.run_at != now + rec.spec.backoff(len(rec.bodies)):
            self.violation(
                f"{rec.name}: retry at {job.run_at}, backoff is {rec.spec.backoff(len(rec.bodies))}"
            )
        if new is RUNNING:
            self.check_start(rec, now)
            self.running += 1
            self.peak = max(self.peak, self.running)
        if old is RUNNING:
            self.running -= 1
        rec.trace.append((now, old, new))
        rec.status = new
        for trigger in list(self.triggers):
            target = self.by_index.get(trigger.target)
            if f"j{trigger.trigger}" == rec.name and trigger.status is new and target is not None:
                self.triggers.remove(trigger)
                self.cancel(target, f"a listener on {rec.name} {new.value}")

    def limited(self, rec: JobRecord) -> bool:
        return rec.spec.rate_limited and self.config.rate is not None

    def take_token(self, rec: JobRecord, now: float) -> None:
        """Every attempt of a rate-limited job takes a token from the model's bucket."""
        assert self.config.rate is not None
        rate, per, burst = self.config.rate
        if self.refilled is not None:
            self.tokens = min(burst, self.tokens + (now - self.refilled) * rate / per)
        self.refilled = now
        if self.tokens < 1.0 - 1e-9:
            self.violation(f"{rec.name} started with {self.tokens:g} tokens: over the rate limit")
        self.tokens = max(0.0, self.tokens - 1.0)

    def check_start(self, rec: JobRecord, now: float) -> None:
        """At the moment ``rec`` starts an attempt: is it allowed to, and is it the best?"""
        if self.limited(rec):
            self.take_token(rec, now)
        if self.stopping:
            self.violation(f"{rec.name} started after stop() began")
        for dep in rec.deps:
            if not rec.met(dep):
                self.violation(f"{rec.name} started while its dep {dep.name} is {dep.status.value}")
            elif dep.status is not COMPLETED:
                self.labels.add("ran after an upstream failed (run edge)")
        ready = rec.ready_since()
        if ready is None or ready > now:
            self.violation(f"{rec.name} started at {now}, ready only from {ready}")
        # Anything that was ready strictly before now and ranks better should
        # have been taken first (at the same instant, either order is fine).
        # Fair share orders by key only within a tenant.
        key = self.strategy.key(rec.job)
        per_tenant = isinstance(self.strategy, js.FairShareStrategy)
        for other in self.records.values():
            if other is rec or other.status not in (PENDING, RETRY_WAIT) or self.limited(other):
                continue  # a rate-limited job may wait for its token
            if per_tenant and other.spec.tenant != rec.spec.tenant:
                continue
            since = other.ready_since()
            if since is not None and since < now and self.strategy.key(other.job) < key:
                self.violation(
                    f"{rec.name} started although {other.name} ranks better under "
                    f"{self.config.strategy} and was ready since {since}"
                )

    def coverage(self) -> set[str]:
        """Labels for what this run exercised (shown by ``--hypothesis-show-statistics``)."""
        seen = {f"ending: {self.config.ending}", *self.labels}
        for rec in self.records.values():
            if rec.spec.kind in ("swallow", "convert", "linger") and rec.bodies:
                seen.add(f"a job ran that {rec.spec.kind}s its cancellation")
            seen.add(f"final: {rec.status.value}")
            exits = [(old, new) for _t, old, new in rec.trace if new is CANCELLED]
            if exits:
                how = rec.job.last_error or ""
                seen.add(f"cancelled from {exits[0][0].value}: {how.split(' ')[0]}")
            if len(rec.bodies) > 1:
                seen.add("retried")
        if any(len(s.jobs) > 1 for s in self.schedules.values()):
            seen.add("schedule fired twice or more")
        if len(self.records) > len(self.known_ids()):
            seen.add("history evicted jobs")
        if self.peak == self.config.capacity > 1:
            seen.add("full capacity used")
        if self.config.rate and any(self.limited(r) and r.bodies for r in self.records.values()):
            seen.add("rate-limited jobs ran")
        if self.config.executor_limit:
            seen.add("executor limit")
        return seen

    # ── Invariants ──

    def check_quiescent(self) -> None:
        """What must hold whenever nothing more can happen at this virtual instant."""
        now, s, cfg = self.now(), self.s, self.config
        running = [r for r in self.records.values() if r.status is RUNNING]
        for rec in self.records.values():
            if rec.job.status is not rec.status:
                self.violation(
                    f"{rec.name} is {rec.job.status.value}, listener last saw {rec.status}"
                )
            if rec.status is RUNNING and not rec.active:
                self.violation(f"{rec.name} is RUNNING but its attempt is not")
            if rec.active and rec.status is not RUNNING:
                self.violation(f"{rec.name} attempt runs but the job is {rec.status.value}")
            if (
                rec.cancelled_at is not None
                and rec.status is not CANCELLED
                # A lingering attempt runs on until its clean-up ends.
                and not (rec.status is RUNNING and now < rec.cancelled_at + rec.spec.lingers)
            ):
                self.violation(f"{rec.name} was cancelled at {rec.cancelled_at}, is {rec.status}")
            bad = rec.cancelled_by()
            if bad and rec.status is not CANCELLED:
                self.violation(
                    f"{rec.name} is {rec.status.value} although dep {bad[0].name} ended "
                    f"{bad[0].status.value}"
                )
        if len(running) > cfg.capacity:
            self.violation(f"{len(running)} RUNNING jobs with capacity {cfg.capacity}")
        if s.peak_running != self.peak or s.peak_running > cfg.capacity:
            self.violation(f"peak_running {s.peak_running}, listener saw {self.peak}")
        if len(running) < cfg.capacity and not self.stopping:
            ready = [
                r
                for r in self.records.values()
                if (since := r.ready_since()) is not None and since <= now
            ]
            idle = [r.name for r in ready if not self.limited(r)]
            if idle:
                self.violation(f"a worker is free but ready jobs {idle} wait")
            if any(self.limited(r) for r in ready) and self.tokens_at(now) >= 1.0:
                self.violation("a worker and a token are free but rate-limited jobs wait")
        self.check_history()

    def tokens_at(self, now: float) -> float:
        assert self.config.rate is not None
        rate, per, burst = self.config.rate
        if self.refilled is None:
            return self.tokens
        return min(burst, self.tokens + (now - self.refilled) * rate / per)

    def check_history(self) -> None:
        s = self.s
        known = self.known_ids()
        limit = self.config.history_limit
        finished = [r for r in self.records.values() if r.status._terminal]  # type: ignore[attr-defined]
        for rec in self.records.values():
            if not rec.status._terminal and rec.job.job_id not in known:  # type: ignore[attr-defined]
                self.violation(f"unfinished {rec.name} missing from jobs()")
        if known - self.records.keys():
            self.violation(f"jobs() holds jobs nobody submitted: {known - self.records.keys()}")
        kept = [r for r in finished if r.job.job_id in known]
        # An upstream of an unfinished job is kept, whatever the limit (the
        # guard); the others are the limit's. The engine looks at a few of the
        # oldest per finish (LOOKS), so with that many pinned ones at the old
        # end an unpinned one may outstay the limit for a while.
        pinned = {
            d.job.job_id
            for r in self.records.values()
            if not r.status._terminal  # type: ignore[attr-defined]
            for d in r.deps
            if d.status._terminal  # type: ignore[attr-defined]
        }
        for job_id in pinned - known:
            self.violation(f"upstream {job_id} of an unfinished job was evicted")
        bound = min(limit, len(finished))
        loose = [r for r in kept if r.job.job_id not in pinned]
        if len(kept) < bound or (len(pinned) < LOOKS and len(loose) > bound):
            self.violation(
                f"{len(kept)} finished jobs kept ({len(kept) - len(loose)} pinned), "
                f"history_limit={limit}, {len(finished)} finished"
            )
        for rec in finished:
            try:
                got = s.get(rec.job.job_id)
            except js.UnknownJobError:
                if rec.job.job_id in known:
                    self.violation(f"get({rec.name}) raised but jobs() has it")
            else:
                if got is not rec.job or rec.job.job_id not in known:
                    self.violation(f"get({rec.name}) disagrees with jobs()")

    def check_final(self) -> None:
        """After the ending: every job's whole life against the model."""
        if self.config.ending == "join":
            for rec in self.records.values():
                if not rec.status._terminal:  # type: ignore[attr-defined]
                    self.violation(f"{rec.name} is {rec.status.value} after join()")
        for rec in self.records.values():
            self.check_life(rec)
        for sched in self.schedules.values():
            self.check_schedule(sched)

    def waits(self, spec: JobSpec, stop_at: float) -> set[float]:
        """How long after ``stop_at`` (its cancellation or timeout) an attempt may be recorded.

        Its clean-up, or ``CANCEL_GRACE`` if that is shorter and the grace ran
        out before stop() began (after that, stop() waits for it anyway).
        """
        if spec.lingers <= CANCEL_GRACE:
            return {spec.lingers}
        grace_end = stop_at + CANCEL_GRACE
        if self.stopped_at is None or grace_end < self.stopped_at:
            return {CANCEL_GRACE}
        if grace_end == self.stopped_at:
            return {CANCEL_GRACE, spec.lingers}  # the same instant: either comes first
        return {spec.lingers}

    def check_life(self, rec: JobRecord) -> None:
        """Replay ``rec``'s transitions and attempts against its spec."""
        job, spec, name = rec.job, rec.spec, rec.name
        runs = [t for t, _old, new in rec.trace if new is RUNNING]
        exits = [(t, new) for t, old, new in rec.trace if old is RUNNING]
        doomed = rec.doomed_by()
        if doomed is not None and runs:
            self.check_doomed(rec, doomed, runs, exits)
            return
        if job.attempts != len(runs) or len(rec.bodies) != len(runs):
            self.violation(
                f"{name}: attempts {job.attempts}, {len(runs)} starts, {len(rec.bodies)} bodies"
            )
            return
        for body in rec.bodies:
            a = body.attempt
            start = body.start
            if runs[a - 1] != start:
                self.violation(
                    f"{name} attempt {a}: body started at {start}, listener at {runs[a - 1]}"
                )
            if a > len(exits):
                continue  # still running (only after stop(): already reported)
            end, new = exits[a - 1]
            if body.abandoned:
                if spec.lingers <= CANCEL_GRACE:
                    self.violation(f"{name} attempt {a} abandoned, lingering only {spec.lingers}s")
                elif body.end is not None and body.end != end + spec.lingers - CANCEL_GRACE:
                    self.violation(f"{name} attempt {a}: abandoned at {end}, ended {body.end}")
            elif body.end != end:
                self.violation(f"{name} attempt {a}: body ended {body.end}, job left RUNNING {end}")
            outcome, took = spec.plan(a)
            if new is CANCELLED:
                # The first cancel counts: a cancel() of an attempt that a
                # shutdown already cancelled, and that still cleans up,
                # returns True but changes nothing.
                cancels = [rec.cancelled_at, self.stopped_at if rec.shutdown_cancel else None]
                if not any(t is not None for t in cancels):
                    self.violation(f"{name} attempt {a} CANCELLED, but nobody cancelled it")
                    continue
                cancel_at = min(t for t in cancels if t is not None)
                # The attempt stops when cancelled (or at its timeout, if
                # that came first), plus the clean-up of a lingering job.
                stop_at = min(cancel_at, start + took) if outcome == "timeout" else cancel_at
                if cancel_at - start > took + spec.lingers:
                    self.violation(f"{name} attempt {a} cancelled at {end}, after its natural end")
                elif end - stop_at not in self.waits(spec, stop_at):
                    self.violation(f"{name} attempt {a} cancelled at {cancel_at}, ended at {end}")
                continue
            retry_left = a <= spec.max_retries and rec.no_retry_attempt != a
            expected = {
                "ok": COMPLETED,
                "fatal": FAILED,
                "error": RETRY_WAIT if retry_left else FAILED,
                "timeout": RETRY_WAIT if retry_left else TIMED_OUT,
            }[outcome]
            waits = self.waits(spec, start + took) if outcome == "timeout" else {0.0}
            if new is not expected or end - start - took not in waits:
                self.violation(
                    f"{name} attempt {a} ({outcome} after {took}s) ended {new.value} "
                    f"after {end - start}s; expected {expected.value}"
                )
            if new is RETRY_WAIT and a < len(runs) and runs[a] < end + spec.backoff(a):
                self.violation(f"{name} retried at {runs[a]}, before its backoff ended")
        if not rec.status._terminal:  # type: ignore[attr-defined]
            return
        if rec.status is COMPLETED:
            if job.result != f"{name}#{job.attempts}":
                self.violation(f"{name} result {job.result!r}")
        elif rec.status is FAILED:
            outcome, _ = spec.plan(job.attempts)
            if outcome == "fatal":
                want = f"NonRetryableError: {name} gives up"
            else:
                want = f"{spec.error}: {name} attempt {job.attempts}"
            if job.last_error != want:
                self.violation(f"{name} FAILED with last_error {job.last_error!r}, want {want!r}")
        elif rec.status is TIMED_OUT:
            if job.last_error != f"timed out after {spec.timeout}s":
                self.violation(f"{name} TIMED_OUT with last_error {job.last_error!r}")
        else:
            self.check_cancel_reason(rec)

    def check_doomed(
        self,
        rec: JobRecord,
        doomed: JobRecord,
        runs: list[float],
        exits: list[tuple[float, js.JobStatus]],
    ) -> None:
        """A ``result_of`` upstream on a ``"run"`` edge did not complete: the
        one attempt raises ``UpstreamFailedError`` as it starts, before any
        body, and the job ends FAILED, never retried (or CANCELLED, cancelled
        at that very instant)."""
        job, name = rec.job, rec.name
        self.labels.add("result_of a failed upstream failed the job")
        if rec.bodies or job.attempts != 1 or len(runs) != 1:
            self.violation(
                f"{name}: {job.attempts} attempts, {len(rec.bodies)} bodies, although "
                f"{doomed.name} ended {doomed.status.value}"
            )
            return
        if not exits:
            return  # still running: only after stop(), reported there
        end, new = exits[0]
        if end != runs[0]:
            self.violation(f"{name} started at {runs[0]} and ended {new.value} at {end}")
        if new is CANCELLED:
            if rec.cancelled_at != end and not rec.shutdown_cancel:
                self.violation(f"{name} CANCELLED as it started, but nobody cancelled it then")
            return
        want = js.UpstreamFailedError(doomed.job.job_id, doomed.status, doomed.job.last_error)
        if new is not FAILED or job.last_error != f"UpstreamFailedError: {want}":
            self.violation(
                f"{name} ended {new.value} ({job.last_error!r}) although {doomed.name} "
                f"ended {doomed.status.value}; want FAILED ({want})"
            )

    def check_cancel_reason(self, rec: JobRecord) -> None:
        """A CANCELLED job was cancelled by someone, by shutdown, or by its upstream."""
        reason = rec.job.last_error or ""
        if reason == "cancelled":
            if rec.cancelled_at is None:
                self.violation(f"{rec.name} says 'cancelled' but no cancel() returned True for it")
        elif reason == "scheduler shut down":
            if not rec.shutdown_cancel:
                self.violation(f"{rec.name} cancelled by a shutdown that cancelled nothing running")
        elif reason.startswith("upstream "):
            _, dep_id, status = reason.split(" ")
            deps = {d.job.job_id: d for d in rec.cancelled_by()}
            dep = deps.get(dep_id)
            if dep is None or dep.status.value != status:
                self.violation(f"{rec.name} blames {reason!r}, not a failed cancel-edge dependency")
            elif rec.finished_at() != max(dep.finished_at() or 0.0, rec.submitted_at):
                self.violation(f"{rec.name} cancelled at {rec.finished_at()}, not with {dep.name}")
            if rec.cancelled_at is not None:
                self.violation(f"{rec.name}: cancel() returned True, yet {reason!r}")
        else:
            self.violation(f"{rec.name} CANCELLED with last_error {reason!r}")

    def check_schedule(self, sched: ScheduleRecord) -> None:
        """Fixed-rate fires on the grid, none after cancel, the overlap guard obeyed."""
        end = sched.cancelled_at
        assert end is not None  # every ending stops every schedule
        fires = {rec.submitted_at: rec for rec in sched.jobs}
        if len(fires) != len(sched.jobs):
            self.violation(f"{sched.name} fired twice at one instant")
        for t in fires:
            k = (t - sched.first_run) / sched.interval
            if k < 0 or k != int(k) or t > end:
                self.violation(f"{sched.name} fired at {t}, off its slots or after cancel at {end}")
        previous: JobRecord | None = None
        t = sched.first_run
        while t <= end:
            fired = fires.get(t)
            prev_end = previous.finished_at() if previous is not None else None
            if sched.allow_overlap or previous is None or (prev_end is not None and prev_end < t):
                must = True
            elif prev_end is None or prev_end > t:
                must = False
            else:
                must = None  # it ended at this very instant: either order is fine
            if t == end and fired is None:
                must = None  # cancelled at this instant: either order is fine
            if must is True and fired is None:
                self.violation(f"{sched.name} did not fire at {t}")
            elif must is False and fired is not None:
                self.violation(f"{sched.name} fired at {t} while {previous.name} ran")  # type: ignore[union-attr]
            if fired is not None:
                previous = fired
            t += sched.interval


def run_program(program: Program) -> Harness:
    """Execute ``program`` against a fresh scheduler; raise AssertionError on any violation."""
    harness = Harness(program)
    harness.run()
    return harness
