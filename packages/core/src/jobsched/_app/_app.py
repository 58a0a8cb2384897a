"""App: a project's jobs and scheduler settings, declared once.

Producers, workers (``jobsched worker --app``), the CLI and tests build
their schedulers from it, so they agree on more than a store URL.
"""

from __future__ import annotations

import math
import threading
import weakref
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar, overload

from .._enums import JobPriority
from .._exceptions import SchedulerError
from .._jobs._job import _DEFAULT_RETRY, Job, _is_coroutine_function
from .._jobs._options import DEFAULT_QUEUE
from .._jobs._retry import RetryPolicy
from .._jobs._text import check_text
from .._retention import Retention
from ._function import JobFunction, Spec
from ._periodic import Periodic, periodic_decorator
from ._target import enqueue_async, enqueue_sync

if TYPE_CHECKING:
    from .._engine._scheduler import JobScheduler
    from .._jobs._executor import Executor
    from .._ordering._ratelimit import RateLimit
    from .._ordering._strategies import SchedulingStrategy
    from .._sync._background import BackgroundScheduler
    from ..store._base import JobStore
    from ._testing import Testing

P = ParamSpec("P")
R = TypeVar("R")

#: The scheduler settings an App holds, in the order of the docs' table.
SETTINGS = (
    "store",
    "secret",
    "queues",
    "rate_limits",
    "executor_limits",
    "queue_limits",
    "strategy",
    "lease",
    "retention",
    "executors",
    "load_grace",
)
_STORE_OPTIONS = ("secret", "lease")


class App:
    """A project's jobs (``@app.job``) and the settings every scheduler of it shares.

    :param store: ``"memory"`` (the default), a store URL, or a
        :class:`~jobsched.JobStore`.
    :param secret: the store's signing key(s) for pickled jobs (default:
        ``JOBSCHED_SECRET``); with a store URL only.
    :param lease: seconds a claimed attempt stays owned without a
        heartbeat; with a store URL only.
    :param retention: a :class:`~jobsched.Retention`: how long each
        scheduler of the app keeps finished jobs (and ``jobsched worker``).
    :param load_grace: seconds a pickled job that does not load is tried on
        other members before it fails.

    The rest (``queues``, ``rate_limits``, ``executor_limits``,
    ``queue_limits``, ``strategy``, ``executors``) are
    :class:`~jobsched.JobScheduler`'s, checked here with its errors.
    """

    def __init__(
        self,
        store: str | JobStore = "memory",
        *,
        secret: str | bytes | Collection[str | bytes] | None = None,
        queues: Collection[str] | None = None,
        rate_limits: Mapping[str, RateLimit] | None = None,
        executor_limits: Mapping[str, int] | None = None,
        queue_limits: Mapping[str, int] | None = None,
        strategy: SchedulingStrategy | None = None,
        lease: float | None = None,
        retention: Retention | None = None,
        executors: Mapping[str, Executor] | None = None,
        load_grace: float | None = None,
    ) -> None:
        given = {
            "store": store,
            "secret": secret,
            "queues": queues,
            "rate_limits": rate_limits,
            "executor_limits": executor_limits,
            "queue_limits": queue_limits,
            "strategy": strategy,
            "lease": lease,
            "retention": retention,
            "executors": executors,
            "load_grace": load_grace,
        }
        self._settings = {k: v for k, v in given.items() if v is not None}
        if store == "memory":
            del self._settings["store"]
        self._jobs: dict[str, JobFunction[Any, Any]] = {}
        self._periodic: dict[str, Periodic] = {}
        # The schedulers it built: the one running on the caller's loop
        # takes enqueues made there.
        self._built: weakref.WeakSet[JobScheduler] = weakref.WeakSet()
        self._producer: BackgroundScheduler | None = None
        self._producer_lock = threading.Lock()
        self._testing: Testing | None = None
        # Same errors as the scheduler's, at once rather than at first use.
        _scheduler_kwargs(self._settings, validate=True)

    # ── settings ─────────────────────────────────────────────────────────

    def settings(self) -> dict[str, Any]:
        """The scheduler settings this app holds (only those given)."""
        return dict(self._settings)

    @property
    def jobs(self) -> Mapping[str, JobFunction[Any, Any]]:
        """The registered functions by name."""
        return dict(self._jobs)

    @property
    def durable(self) -> bool:
        """Whether the app's store is a durable one (not ``"memory"``)."""
        return _durable(self._settings.get("store", "memory"))

    def scheduler(self, **overrides: Any) -> JobScheduler:
        """A :class:`~jobsched.JobScheduler` with the app's settings (``overrides`` win).

        It runs the app's registered jobs and, with workers, keeps its
        periodic jobs. Inside ``async with app.scheduler():`` ``enqueue``
        uses it.

        :raises TypeError: an override that is no setting or scheduler argument.
        """
        from .._engine._scheduler import JobScheduler

        kwargs = _scheduler_kwargs({**self._settings, **overrides})
        scheduler = JobScheduler(**kwargs)
        self._adopt(scheduler)
        return scheduler

    def background(self, **overrides: Any) -> BackgroundScheduler:
        """A :class:`~jobsched.BackgroundScheduler` with the app's settings
        (``overrides`` win), as :meth:`scheduler`."""
        from .._sync._background import BackgroundScheduler

        kwargs = _scheduler_kwargs({**self._settings, **overrides})
        background = BackgroundScheduler(**kwargs)
        self._adopt(background.scheduler)
        return background

    def _adopt(self, scheduler: JobScheduler) -> None:
        scheduler._use_registry(self._jobs)
        self._built.add(scheduler)
        if scheduler._settings.num_workers:
            for periodic in self._periodic.values():
                periodic.register(scheduler)

    # ── registering ──────────────────────────────────────────────────────

    @overload
    def job(self, name: Callable[P, R], /) -> JobFunction[P, R]: ...
    @overload
    def job(
        self,
        name: str | None = None,
        *,
        queue: str = DEFAULT_QUEUE,
        executor: str | None = None,
        priority: JobPriority | int = JobPriority.MEDIUM,
        timeout: float | None = 30.0,
        retry: RetryPolicy = _DEFAULT_RETRY,
        tenant: str | None = None,
        rate_key: str | None = None,
        serializer: str = "json",
    ) -> Callable[[Callable[P, R]], JobFunction[P, R]]: ...
    def job(
        self,
        name: Any = None,
        *,
        queue: str = DEFAULT_QUEUE,
        executor: str | None = None,
        priority: JobPriority | int = JobPriority.MEDIUM,
        timeout: float | None = 30.0,
        retry: RetryPolicy = _DEFAULT_RETRY,
        tenant: str | None = None,
        rate_key: str | None = None,
        serializer: str = "json",
    ) -> Any:
        """Register a function (async or sync) as a job; returns a :class:`JobFunction`.

        :param name: the name it is stored under (default ``module.qualname``).
        :param serializer: ``"json"`` (arguments and result as JSON) or
            ``"pickle"`` (a signed pickle, as a :class:`~jobsched.FunctionJob`).
        :raises ValueError: the name is registered already, or the function is
            a lambda or nested function without ``name=`` (a worker could
            not import it), or an option is not valid.
        """
        if callable(name) and not isinstance(name, str):
            return self.job()(name)
        if name is not None and (not isinstance(name, str) or not name):
            raise ValueError(f"a job's name must be a non-empty str, got {name!r}")
        if serializer not in ("json", "pickle"):
            raise ValueError(f'serializer must be "json" or "pickle", got {serializer!r}')

        def register(fn: Callable[P, R]) -> JobFunction[P, R]:
            if isinstance(fn, JobFunction):
                raise ValueError(f"{fn!r} is registered already: apply @app.job once")
            if not callable(fn):
                raise TypeError(f"@app.job registers a function, got {fn!r}")
            registered = name if name is not None else _default_name(fn)
            check_text("name", registered)
            if registered in self._jobs:
                raise ValueError(
                    f"a job named {registered!r} is registered already "
                    f"({self._jobs[registered].fn!r}): give one of them another name=..."
                )
            spec = _spec(fn, registered, executor, queue, priority, timeout, retry, tenant,
                         rate_key, serializer)  # fmt: skip
            function: JobFunction[P, R] = JobFunction(self, fn, registered, spec)
            self._jobs[registered] = function
            return function

        return register

    def periodic(
        self,
        cron: str | None = None,
        every: float | None = None,
        *,
        timezone: str | None = None,
        id: str | None = None,
        misfire: str = "coalesce",
    ) -> Callable[[Any], Any]:
        """Keep a job on a schedule in every worker of the app.

        Stacked on ``@app.job`` (or on a plain function, which it registers
        too); every scheduler with workers the app builds registers it.

        :param cron: a cron expression (in ``timezone``, local by default); or
        :param every: seconds between fires.
        :param id: the schedule's id (the job's name by default).
        :param misfire: fires missed while no worker ran: ``"coalesce"``
            (one run), ``"skip"`` (none) or ``"all"`` (each).
        :raises ValueError: not exactly one of ``cron`` and ``every``, a bad
            expression, zone, interval or ``misfire``, or an id taken.
        :raises TypeError: the function needs arguments.
        """
        return periodic_decorator(self, cron, every, timezone, id, misfire)

    # ── enqueueing ───────────────────────────────────────────────────────

    async def _enqueue(self, job: Job, submit: dict[str, Any]) -> str:
        return await enqueue_async(self, job, submit)

    def _enqueue_sync(self, job: Job, submit: dict[str, Any]) -> str:
        return enqueue_sync(self, job, submit)

    def testing(self) -> Testing:
        """A context manager that records what is enqueued instead of storing it
        (see docs/testing.md)."""
        from ._testing import Testing

        return Testing(self)

    def shutdown_producer(self) -> None:
        """Stop the app's producer (started by an ``enqueue`` outside a
        scheduler), if it runs; the interpreter's exit does it otherwise."""
        with self._producer_lock:
            producer, self._producer = self._producer, None
        if producer is not None:
            producer.shutdown()

    def _producer_for(self, what: str) -> BackgroundScheduler:
        """The app's producer, started on first use."""
        if not self.durable:
            raise SchedulerError(
                f"{what} outside a running scheduler needs a durable store, and this app's "
                "is the memory store, where only a running scheduler of this process can "
                "run the job: enqueue inside `async with app.scheduler():` (or "
                "`with app.background():`), or give the App a store URL"
            )
        with self._producer_lock:
            if self._producer is None:
                producer = self.background(num_workers=0)
                producer.start()
                self._producer = producer
            return self._producer


def _durable(store: object) -> bool:
    return not (store == "memory" or getattr(store, "url", None) == "memory")


def _default_name(fn: Callable[..., Any]) -> str:
    qualname = getattr(fn, "__qualname__", None)
    module = getattr(fn, "__module__", None)
    if not qualname or not module or "<locals>" in qualname or "<lambda>" in qualname:
        raise ValueError(
            f"{fn!r} is a lambda or a function defined inside another, which a worker "
            "cannot import by its name: define it at a module's top level, or give it "
            "a name with @app.job(name=...)"
        )
    return f"{module}.{qualname}"


def _spec(
    fn: Callable[..., Any],
    name: str,
    executor: str | None,
    queue: str,
    priority: JobPriority | int,
    timeout: float | None,
    retry: RetryPolicy,
    tenant: str | None,
    rate_key: str | None,
    serializer: str,
) -> Spec:
    from .._jobs._function import FunctionJob

    is_coro = _is_coroutine_function(fn)
    if executor is None:
        executor = "async" if is_coro else "thread"
    elif is_coro and executor != "async":
        raise ValueError(
            f"{name} is a coroutine function and cannot run on the {executor!r} executor; "
            "use executor='async' or register a plain function"
        )
    if not isinstance(executor, str) or not executor:
        raise ValueError(f"executor must be an executor's name (a str), got {executor!r}")
    # Every option checked now, with a job's own errors, rather than at enqueue.
    FunctionJob(_nothing, executor=executor, name=name, priority=priority, timeout=timeout,
                retry=retry, tenant=tenant, rate_key=rate_key, queue=queue)  # fmt: skip
    return Spec(executor, queue, priority, timeout, retry, tenant, rate_key, serializer)


def _nothing() -> None:
    """A stand-in function for checking a plain function's options."""


def _scheduler_kwargs(settings: dict[str, Any], validate: bool = False) -> dict[str, Any]:
    """JobScheduler's (or BackgroundScheduler's) arguments for these settings."""
    kwargs = dict(settings)
    store = kwargs.pop("store", "memory")
    options = {k: kwargs.pop(k) for k in _STORE_OPTIONS if kwargs.get(k) is not None}
    for key in _STORE_OPTIONS:
        kwargs.pop(key, None)
    retention = kwargs.get("retention")
    if retention is not None and not isinstance(retention, Retention):
        raise TypeError(
            f"retention must be a jobsched.Retention, got {retention!r} "
            "(e.g. retention=js.Retention(completed=86400, failed=timedelta(days=7)))"
        )
    grace = kwargs.get("load_grace")
    if grace is not None:
        if isinstance(grace, bool) or not isinstance(grace, (int, float)):
            raise TypeError(f"load_grace must be a number of seconds, got {grace!r}")
        if not (grace >= 0 and math.isfinite(grace)):
            raise ValueError(f"load_grace must be a finite number of seconds >= 0, got {grace!r}")
    if options and (not isinstance(store, str) or store == "memory"):
        raise ValueError(
            f"{' and '.join(f'{k}=' for k in options)} apply to a store given by URL; "
            f"the store {store!r} takes them itself: pass them to open_store(url, ...), "
            "or give the App a store URL"
        )
    if isinstance(store, str) and store != "memory":
        from ..store._registry import open_store

        # A store object per scheduler: each opens and closes its own.
        store = open_store(store, **options)
    kwargs["store"] = store
    if validate:
        from .._engine._scheduler import JobScheduler

        kwargs.pop("load_grace", None)  # checked above; JobScheduler's own later
        JobScheduler(**kwargs)
    return kwargs
