"""Building a JobScheduler: its arguments checked, its records and parts made and wired.

``JobScheduler.__init__`` keeps the public signature and calls :func:`compose`,
which sets the parts on the scheduler (``_seams.Seams`` declares what
each is). Kept apart so that the public class stays the public face.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any

from .._jobs._executor import Executor
from .._ordering._admission import (
    check_executor_limits,
    check_queue_limits,
    check_queues,
    check_rate_limits,
)
from .._ordering._fairshare import FairShareStrategy
from .._ordering._queue import queue_for
from .._ordering._ratelimit import RateLimit
from .._ordering._strategies import PriorityStrategy, SchedulingStrategy
from .._retention import Retention, check_retention
from ._attempts import abandon
from ._cancel import Canceller
from ._dispatch import Dispatcher
from ._executors import ExecutorSet
from ._history import RetainedHistory
from ._lifecycle import Lifecycle, LiveTasks
from ._memory import MemoryBacking
from ._outcomes import Outcomes
from ._state import JobTable, Parts, RunState, Settings
from ._stored import check_stored_options
from ._submission import Submission
from ._timers import Ticker

if TYPE_CHECKING:
    import random

    # Only a store given by URL or object loads the store seam (_store_for).
    from ..store._base import JobStore
    from ._held import ClaimedQueue, Held
    from ._link import StoreLink
    from ._linkhost import LinkHost
    from ._scheduler import JobScheduler


def compose(
    s: JobScheduler,
    strategy: SchedulingStrategy | None,
    *,
    num_workers: int,
    executors: Mapping[str, Executor] | None,
    rng: random.Random | None,
    history_limit: int,
    retention: Retention | None,
    clock: Callable[[], float] | None,
    rate_limits: Mapping[str, RateLimit] | None,
    executor_limits: Mapping[str, int] | None,
    store: str | JobStore,
    queues: Collection[str] | None,
    queue_limits: Mapping[str, int] | None,
    load_grace: float,
) -> None:
    """Check ``JobScheduler``'s arguments (its errors are raised here) and
    build its records and parts onto ``s``."""
    if not isinstance(num_workers, int) or num_workers < 0:
        raise ValueError(
            f"num_workers must be an integer >= 1 (or 0 for a producer on a durable "
            f"store), got {num_workers!r}"
        )
    if num_workers == 0 and store == "memory":
        raise ValueError(
            "num_workers=0 makes a producer, which only submits to a durable store for "
            "workers elsewhere to run; on the memory store nothing would ever run its "
            "jobs: give it workers, or a store such as store='sqlite:///jobs.db'"
        )
    if not isinstance(history_limit, int) or history_limit < 0:
        raise ValueError(f"history_limit must be an integer >= 0, got {history_limit!r}")
    keeping = check_retention(retention, history_limit)
    if (
        isinstance(load_grace, bool)
        or not isinstance(load_grace, (int, float))
        or not load_grace >= 0
        or load_grace == math.inf
    ):
        raise ValueError(
            f"load_grace must be a finite number of seconds >= 0 (how long a job "
            f"this member cannot load waits for one that can), got {load_grace!r}"
        )
    if strategy is not None and not isinstance(strategy, SchedulingStrategy):
        raise TypeError(f"strategy must be a jobsched.SchedulingStrategy, got {strategy!r}")
    for name, executor in (executors or {}).items():
        if not isinstance(executor, Executor):
            raise TypeError(
                f"executors[{name!r}] must be a jobsched.Executor instance, got {executor!r}"
            )
    in_memory = store == "memory" or _is_memory(store)
    clock = clock if clock is not None else time.monotonic
    # The records first: a durable backing's reads take them.
    s._run = RunState()
    s._table = JobTable(keeping)
    # The settings' clock, on the scheduler too: submit and the workers read it
    # per job, and a record's field is one attribute load more.
    s._clock = clock
    s._link = None
    # The attempt each held job's writes are fenced by (Held.fences), which
    # complete_in checks: empty in memory.
    fences: dict[int, int] = {}
    s._executors = ExecutorSet(executors or {})
    s._idle_workers = deque()
    durable_parts: tuple[StoreLink, Held, ClaimedQueue, LinkHost] | None = None
    if not in_memory:
        # Loaded here, not at import: the link brings the codec (hashlib,
        # hmac, pickle) and the members module (socket), which an
        # in-memory scheduler never needs (`import jobsched` stays cheap).
        from ._durable import DurableBacking
        from ._held import ClaimedQueue, Held
        from ._link import StoreLink
        from ._linkhost import LinkHost

        held = Held()
        claims = ClaimedQueue(held)
        host = LinkHost(held, claims, s._run, s._table, s._executors, s._idle_workers)
        link = StoreLink(_store_for(store), host, keeping)
        s._link = claims.link = link
        fences = held.fences
        durable_parts = (link, held, claims, host)
        check_stored_options(strategy)
        link.producer = num_workers == 0
    s._registry = None
    strategy = strategy if strategy is not None else PriorityStrategy()
    if rng is None:
        import random  # here: `import jobsched` skips random (and hashlib's sha512)

        rng = random.Random()

    s._queue = queue_for(strategy)
    # Limits live in the take-next step; without them workers pop the
    # queue directly and pay nothing for the feature.
    rates = check_rate_limits(rate_limits)
    gates = s._executors.bounds(check_executor_limits(executor_limits, s._executors))
    served = check_queues(queues)
    queue_gates = check_queue_limits(queue_limits)
    unserved = sorted(set(queue_gates) - served) if served is not None else []
    if unserved:
        raise ValueError(
            f"queue_limits names {', '.join(map(repr, unserved))}, which queues= "
            f"leaves out, so the limit could never apply: add it to queues=, or drop it"
        )
    s._settings = Settings(
        strategy,
        clock,
        rng,
        num_workers,
        history_limit,
        float(load_grace),
        served,
        queue_gates,
        gates,
    )
    # The ticker owns the attempts' deadlines; it fires the due sources the
    # memory backing hands it (its delayed jobs, schedules) and sleeps until
    # the next. (Attempts past their grace go to the dispatcher that runs them.)
    tasks = LiveTasks()
    s._timers = Ticker(s._run, clock, abandon, tasks.exited)
    # The one choice of backing: every part after this asks it, not which it is.
    s._backing = (
        MemoryBacking(
            s._settings,
            s._run,
            s._table,
            s._queue,
            s._idle_workers,
            s._timers,
            s.submit,
            rates,
        )
        if durable_parts is None
        else DurableBacking(*durable_parts, s._run, s._table, s._settings)
    )
    if s._link is not None:
        # The store applies the limits in its claims (see LinkHost.claim_capacity).
        s._link.rates = rates or None
        s._link.queues = served
        if isinstance(strategy, FairShareStrategy):
            s._link.tenants = dict(strategy.weights)
    # Running jobs that completed in a transaction of their own (complete_in),
    # by number: (attempt, result). Empty but for them, so the workers' hot
    # path tests it for free.
    completed_in: dict[int, tuple[int, Any]] = {}
    counted = (tasks.started, tasks.exited)
    # How attempts end and the dependency graph (it chooses finish_one from
    # the backing's ending); the checks before any change.
    outcomes = s._outcomes = Outcomes(
        s._table,
        s._run,
        s._settings,
        s._backing,
        completed_in=completed_in,
        link=s._link,
        held=fences,
        tasks=counted,
    )
    history = getattr(s._table.remember, "__self__", None)
    if isinstance(history, RetainedHistory):
        # A retention by age keeps an upstream while a job that depends on it
        # is unfinished, as the count bound's eviction does (Outcomes.evict).
        history.keep = lambda number: (
            number in outcomes.dependents and outcomes.graph().keep(number)
        )
    submission = s._submission = Submission(
        s._table, s._run, s._settings, s._executors, s._backing, s._link
    )
    # Bound once: submit calls them per job.
    s._check = submission.check
    s._add = s._backing.add
    s._hooks = submission.hooks
    s._dispatcher = Dispatcher(
        s._backing,
        outcomes.settle,
        outcomes.finish_one,
        s._table,
        s._timers,
        s._executors,
        s._run,
        clock=clock,
        idle=s._idle_workers,
        completed_in=completed_in,
        tasks=counted,
        host=outcomes,
    )
    outcomes.bind(s._dispatcher)
    s._cancelling = Canceller(s._table, s._backing, s._dispatcher, outcomes.finish)
    s._backing.bind(Parts(outcomes, submission, s._dispatcher, s._cancelling))
    s._lifecycle = Lifecycle(
        tasks,
        s._run,
        s._table,
        num_workers,
        s._idle_workers,
        s._timers,
        s._dispatcher,
        s._cancelling,
        s._executors,
        s._backing,
    )


def _is_memory(store: object) -> bool:
    """Whether ``store`` is ``open_store("memory")``'s: the scheduler keeps its jobs."""
    from ..store._registry import MemoryStore

    return isinstance(store, MemoryStore)


def _store_for(store: object) -> JobStore:
    from ..store._base import JobStore
    from ..store._registry import open_store

    if isinstance(store, JobStore):
        return store
    if isinstance(store, str):
        return open_store(store)
    raise TypeError(f"store must be 'memory', a store URL or a jobsched.JobStore, got {store!r}")
