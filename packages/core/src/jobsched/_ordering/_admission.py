"""The take-next step with limits: per-executor and per-queue concurrency, per-key rate limits.

The scheduler uses :meth:`Admission.take` instead of the queue's bare
``pop_next`` only when it was given ``executor_limits``, ``queue_limits`` or
``rate_limits``, so a scheduler without them pays nothing. A job that may not start is set aside
(never returned, so it never occupies a worker) and the next job is tried, so
other work keeps flowing:

* Over its executor's (or its named queue's) limit, it is *held* in that
  executor's (queue's) heap, in the strategy's order. When an attempt on it
  ends, the worker that ran it comes back here and the best held jobs go back
  to the ready queue, one per free slot, to be ordered against everything
  else again.
* Without a token, it waits for the token in the delayed queue, with
  ``run_at`` set to when the token is due. Only one job per key waits there
  (the key's *head*); the rest of the key's waiters are kept in a heap in the
  strategy's order and the next one is sent to the delayed queue when the head
  starts. Putting every waiter in the delayed queue would wake them all for
  each token and push all but one back: quadratic in the backlog.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from heapq import heappop, heappush

from .._enums import JobStatus
from .._jobs import _plugins
from .._jobs._executor import Executor
from .._jobs._job import Job
from .._jobs._options import check_queue
from ._queue import JobQueue
from ._ratelimit import RateLimit
from ._strategies import SortKey

_RUNNING = JobStatus.RUNNING


class _Gate:
    """One executor's limit: who runs on it and who waits for a slot."""

    __slots__ = ("held", "limit", "released", "running")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.running: list[Job] = []  # admitted; pruned once they stop RUNNING
        self.held: list[tuple[SortKey, Job]] = []
        self.released: set[Job] = set()  # back in the ready queue, not yet popped

    def free(self) -> int:
        """Slots not taken by a running attempt or promised to a released job."""
        # A job admitted by take() becomes RUNNING before the worker next awaits,
        # so by the time this runs again, anything not RUNNING has finished.
        running = self.running
        if running:
            self.running = running = [j for j in running if j.status is _RUNNING]
        released = self.released
        if released:
            for job in [j for j in released if j.status._terminal]:  # type: ignore[attr-defined]
                released.discard(job)
        return self.limit - len(running) - len(released)


class _Waiters:
    """Jobs of one rate key waiting for tokens: the head in the delayed queue, the rest here."""

    __slots__ = ("head", "heap", "limit")

    def __init__(self, limit: RateLimit) -> None:
        self.limit = limit
        self.head: Job | None = None
        self.heap: list[tuple[SortKey, Job]] = []


class Admission:
    """Decides, in the take-next step, whether the next ready job may start now.

    :param queue: the scheduler's queue.
    :param key: the strategy's key, to order held and waiting jobs.
    :param push: the scheduler's ``_push(job, now)``: queues a job in the
        ready or the delayed queue by its ``run_at`` and wakes whoever must
        know (an idle worker, the ticker).
    :param clock: the scheduler's clock.
    """

    __slots__ = (
        "_clock",
        "_gates",
        "_key",
        "_limits",
        "_push",
        "_queue",
        "_queue_gates",
        "_waiters",
    )

    def __init__(
        self,
        queue: JobQueue,
        key: Callable[[Job], SortKey],
        push: Callable[[Job, float], None],
        clock: Callable[[], float],
        rate_limits: Mapping[str, RateLimit],
        executor_limits: Mapping[str, int],
        queue_limits: Mapping[str, int] | None = None,
    ) -> None:
        self._queue = queue
        self._key = key
        self._push = push
        self._clock = clock
        self._limits = dict(rate_limits)
        self._gates = {name: _Gate(n) for name, n in executor_limits.items()}
        self._queue_gates = {name: _Gate(n) for name, n in (queue_limits or {}).items()}
        self._waiters: dict[str, _Waiters] = {}

    def take(self) -> Job | None:
        """The next job that may start now, or None; it is counted as started."""
        gates, queue_gates = self._gates, self._queue_gates
        if gates or queue_gates:
            self._release_held()
        pop = self._queue.pop_next
        limits = self._limits
        now: float | None = None
        while True:
            job = pop()
            if job is None:
                return None
            gate = gates.get(job.executor) if gates else None
            queue_gate = queue_gates.get(job.queue) if queue_gates else None
            # Popped: no longer promised a slot by either gate, whichever holds it now.
            if gate is not None and gate.released:
                gate.released.discard(job)
            if queue_gate is not None and queue_gate.released:
                queue_gate.released.discard(job)
            if gate is not None and gate.free() <= 0:
                heappush(gate.held, (self._key(job), job))
                continue
            if queue_gate is not None and queue_gate.free() <= 0:
                heappush(queue_gate.held, (self._key(job), job))
                continue
            rate_key = job.rate_key
            if rate_key is not None and limits:
                limit = limits.get(rate_key)
                if limit is not None:
                    if now is None:
                        now = self._clock()
                    if not self._take_token(job, rate_key, limit, now):
                        if (gate is not None and gate.held) or (
                            queue_gate is not None and queue_gate.held
                        ):
                            # The slot it was released into goes to the best
                            # held job, not to whatever the ready queue has next.
                            self._release_held()
                        continue
            if gate is not None:
                gate.running.append(job)
            if queue_gate is not None:
                queue_gate.running.append(job)
            return job

    def limit(self, name: str, limit: int) -> None:
        """Run at most ``limit`` attempts on executor ``name`` (the smaller limit wins)."""
        gate = self._gates.get(name)
        if gate is None:
            self._gates[name] = _Gate(limit)
        elif limit < gate.limit:
            gate.limit = limit

    def cancelled(self, job: Job) -> None:
        """``job`` was cancelled while queued; if it headed a key's waiters, the next one leads."""
        waiters = self._waiters.get(job.rate_key) if job.rate_key is not None else None
        if waiters is not None and waiters.head is job:
            waiters.head = None
            self._next_head(job.rate_key, waiters, self._clock())  # type: ignore[arg-type]

    def _release_held(self) -> None:
        for gate in (*self._gates.values(), *self._queue_gates.values()):
            if not gate.held:
                continue
            free = gate.free()
            held = gate.held
            while free > 0 and held:
                job = heappop(held)[1]
                if job.status._terminal:  # type: ignore[attr-defined]
                    continue
                gate.released.add(job)
                free -= 1
                # run_at is in the past: "now" = run_at puts it in the ready queue.
                self._push(job, job.run_at)

    def _take_token(self, job: Job, rate_key: str, limit: RateLimit, now: float) -> bool:
        waiters = self._waiters.get(rate_key)
        if waiters is not None and waiters.head is not job:
            # Others already wait for this key's tokens: queue behind them.
            heappush(waiters.heap, (self._key(job), job))
            return False
        due = limit.take(now)
        if due is None:
            if waiters is not None:
                waiters.head = None
                self._next_head(rate_key, waiters, now)
            return True
        if waiters is None:
            waiters = self._waiters[rate_key] = _Waiters(limit)
        waiters.head = job
        job.run_at = due
        self._push(job, now)
        return False

    def _next_head(self, rate_key: str, waiters: _Waiters, now: float) -> None:
        heap = waiters.heap
        while heap:
            job = heappop(heap)[1]
            if job.status._terminal:  # type: ignore[attr-defined]
                continue
            waiters.head = job
            job.run_at = max(now, waiters.limit.available_at(now))
            self._push(job, now)
            return
        del self._waiters[rate_key]


def check_rate_limits(rate_limits: Mapping[str, RateLimit] | None) -> dict[str, RateLimit]:
    """``rate_limits`` as a dict, validated.

    :raises TypeError: not a mapping of rate keys to :class:`RateLimit`.
    :raises ValueError: a key is an empty string.
    """
    if rate_limits is None:
        return {}
    if not isinstance(rate_limits, Mapping):
        raise TypeError(
            f"rate_limits must map rate keys to jobsched.RateLimit, got {rate_limits!r}"
        )
    for key, limit in rate_limits.items():
        if not isinstance(key, str) or not key:
            raise ValueError(
                f"rate_limits keys must be non-empty strings (the jobs' rate_key), got {key!r}"
            )
        if not isinstance(limit, RateLimit):
            raise TypeError(
                f"rate_limits[{key!r}] must be a jobsched.RateLimit, e.g. "
                f"RateLimit(10, per=1.0), got {limit!r}"
            )
    return dict(rate_limits)


def check_executor_limits(
    executor_limits: Mapping[str, int] | None, executors: Mapping[str, Executor]
) -> dict[str, int]:
    """``executor_limits`` as a dict, validated against the executors that can be used.

    A name must be installed (an entry point in ``jobsched.executors``) or
    given in ``executors=``. Checked at construction, from the entry-point
    metadata alone, so a typo fails where it is written and no plugin is
    imported before a job needs it.

    :raises TypeError: not a mapping of names to integers.
    :raises ValueError: a limit is below 1, or an executor is unknown.
    """
    if executor_limits is None:
        return {}
    if not isinstance(executor_limits, Mapping):
        raise TypeError(
            f"executor_limits must map executor names to integers, got {executor_limits!r}"
        )
    for name, limit in executor_limits.items():
        if isinstance(limit, bool) or not isinstance(limit, int):
            raise TypeError(f"executor_limits[{name!r}] must be an integer >= 1, got {limit!r}")
        if limit < 1:
            raise ValueError(
                f"executor_limits[{name!r}] must be >= 1 (attempts at once), got {limit!r}; "
                "to stop running an executor's jobs, don't submit them"
            )
        if name not in executors and name not in _plugins.registered():
            known = sorted(set(executors) | set(_plugins.registered())) or ["none"]
            raise ValueError(
                f"executor_limits names unknown executor {name!r} (known: "
                f"{', '.join(known)}); fix the name, install the plugin that publishes "
                f"it, or pass executors={{{name!r}: ...}}"
            )
    return dict(executor_limits)


def check_queues(queues: Collection[str] | None) -> frozenset[str] | None:
    """``queues`` (the queues a scheduler serves) as a frozenset, validated.

    :raises TypeError: a single str (one queue is ``queues=["emails"]``), or
        not a collection.
    :raises ValueError: it is empty, or a name is not a queue's.
    """
    if queues is None:
        return None
    if isinstance(queues, str) or not isinstance(queues, Collection):
        hint = f"; for one queue write queues=[{queues!r}]" if isinstance(queues, str) else ""
        raise TypeError(f"queues must be a collection of queue names or None, got {queues!r}{hint}")
    if not queues:
        raise ValueError(
            "queues is empty, so this scheduler would claim nothing; list the queues it "
            "serves, or pass queues=None (every queue)"
        )
    return frozenset(check_queue(name) for name in queues)


def check_queue_limits(queue_limits: Mapping[str, int] | None) -> dict[str, int]:
    """``queue_limits`` as a dict, validated.

    :raises TypeError: not a mapping of queue names to integers.
    :raises ValueError: a limit is below 1, or a name is not a queue's.
    """
    if queue_limits is None:
        return {}
    if not isinstance(queue_limits, Mapping):
        raise TypeError(f"queue_limits must map queue names to integers, got {queue_limits!r}")
    for name, limit in queue_limits.items():
        check_queue(name)
        if isinstance(limit, bool) or not isinstance(limit, int):
            raise TypeError(f"queue_limits[{name!r}] must be an integer >= 1, got {limit!r}")
        if limit < 1:
            raise ValueError(
                f"queue_limits[{name!r}] must be >= 1 (attempts at once), got {limit!r}; "
                f"to run none of its jobs here, leave {name!r} out of queues="
            )
    return dict(queue_limits)


def executor_capacity(name: str, executor: Executor) -> int | None:
    """``executor.capacity``, validated: the most attempts it runs at once, or None.

    :raises ValueError: it is not an integer >= 1 or None.
    """
    capacity = getattr(executor, "capacity", None)
    if capacity is None:
        return None
    if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
        raise ValueError(
            f"executor {name!r} ({type(executor).__qualname__}) has capacity={capacity!r}; "
            "an executor's capacity must be an integer >= 1 (attempts at once), or None "
            "for no bound of its own"
        )
    return capacity


def with_capacities(
    executor_limits: dict[str, int], executors: Mapping[str, Executor]
) -> dict[str, int]:
    """``executor_limits`` lowered to the capacity of each executor that has one."""
    limits = dict(executor_limits)
    for name, executor in executors.items():
        capacity = executor_capacity(name, executor)
        if capacity is not None:
            limits[name] = min(limits.get(name, capacity), capacity)
    return limits
