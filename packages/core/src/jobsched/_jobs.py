"""Jobs: what to run and how (the Command pattern)."""

from __future__ import annotations

import functools
import inspect
import itertools
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, ClassVar

from ._enums import JobPriority, JobStatus
from ._retry import RetryPolicy

_job_ids = itertools.count(1)
_DEFAULT_RETRY = RetryPolicy()


class Job(ABC):
    """What to run plus how to run it.

    Subclass :class:`AsyncJob` (``async def run``) or :class:`BlockingJob` /
    :class:`CpuBoundJob` (``def run_sync``), or wrap a callable in
    :class:`FunctionJob`. The execution state (``status``, ``attempts``,
    ``result``, the timestamps) is written only by the scheduler.

    :param name: a label for logs and listeners.
    :param priority: used by the priority strategies.
    :param timeout: seconds one attempt may run; ``None`` for no limit.
    :param retry: when and how often a failed attempt is retried.
    :param deadline: a ``time.monotonic()`` time; used by EDF only.
    :param tenant: the fair-share queue the job belongs to.
    :param rate_key: the rate limit the job's starts count against.
    """

    # Slots keep a queued job small (the benchmark counts bytes per queued
    # job) and attribute access fast. Subclasses without __slots__ still get a
    # __dict__ for their own fields.
    __slots__ = (
        "attempts",
        "deadline",
        "finished_at",
        "job_id",
        "last_error",
        "name",
        "priority",
        "rate_key",
        "result",
        "retry",
        "run_at",
        "seq",
        "started_at",
        "status",
        "submitted_at",
        "tenant",
        "timeout",
    )

    #: The name of the executor plugin that runs this kind of job.
    executor: ClassVar[str]

    def __init__(
        self,
        name: str,
        *,
        priority: JobPriority | int = JobPriority.MEDIUM,
        timeout: float | None = 30.0,
        retry: RetryPolicy = _DEFAULT_RETRY,
        deadline: float | None = None,
        tenant: str | None = None,
        rate_key: str | None = None,
    ) -> None:
        if timeout is not None and not timeout > 0:
            raise ValueError(
                f"timeout must be a positive number of seconds or None, got {timeout!r}"
            )
        if tenant is not None:
            _check_label("tenant", tenant)
        if rate_key is not None:
            _check_label("rate_key", rate_key)
        cls = type(self)
        if not _is_runnable(cls):
            raise TypeError(
                f"{cls.__qualname__} implements neither run() nor run_sync(): subclass "
                "jobsched.AsyncJob and define `async def run(self)`, or "
                "jobsched.BlockingJob and define `def run_sync(self)`"
            )
        self.job_id = f"job-{next(_job_ids)}"
        self.name = name
        self.priority = priority
        self.timeout = timeout
        self.retry = retry
        self.deadline = deadline
        self.tenant = tenant
        self.rate_key = rate_key
        self.status = JobStatus.PENDING
        self.attempts = 0
        self.result: Any = None
        self.last_error: str | None = None
        self.submitted_at = 0.0
        self.run_at = 0.0
        self.seq = 0
        self.started_at: float | None = None
        self.finished_at: float | None = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.job_id}, {self.name!r}, {self.status.value})"


def _check_label(name: str, value: object) -> None:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string or None, got {value!r}")
    if not value.strip():
        raise ValueError(
            f"{name} must be a non-empty name or None, got {value!r}; use None for "
            f"jobs without a {name}"
        )


@functools.cache
def _is_runnable(cls: type) -> bool:
    return hasattr(cls, "executor") and (hasattr(cls, "run") or hasattr(cls, "run_sync"))


class AsyncJob(Job):
    """A job written with ``await``; it runs on the event loop."""

    __slots__ = ()
    executor: ClassVar[str] = "async"

    @abstractmethod
    async def run(self) -> Any:
        """Do the work. Return a result, or raise to fail this attempt."""


class BlockingJob(Job):
    """Synchronous work (blocking I/O); it runs in a thread."""

    __slots__ = ()
    executor: ClassVar[str] = "thread"

    @abstractmethod
    def run_sync(self) -> Any:
        """Do the work. Return a result, or raise to fail this attempt."""


class CpuBoundJob(BlockingJob):
    """Synchronous CPU-heavy work; it runs in a worker process.

    The job is pickled (with cloudpickle) into the worker and only the return
    value comes back, so changes the job makes to its own fields are lost.
    """

    __slots__ = ()
    executor: ClassVar[str] = "process"


class FunctionJob(Job):
    """A job made from a plain callable.

    ``executor`` defaults to ``"async"`` for a coroutine function and to
    ``"thread"`` otherwise; ``name`` defaults to the function's qualified name.
    """

    __slots__ = ("args", "executor", "func", "kwargs")

    def __init__(
        self,
        func: Callable[..., Any],
        args: Sequence[Any] = (),
        kwargs: Mapping[str, Any] | None = None,
        *,
        executor: str | None = None,
        name: str | None = None,
        priority: JobPriority | int = JobPriority.MEDIUM,
        timeout: float | None = 30.0,
        retry: RetryPolicy = _DEFAULT_RETRY,
        deadline: float | None = None,
        tenant: str | None = None,
        rate_key: str | None = None,
    ) -> None:
        if not callable(func):
            raise TypeError(f"FunctionJob needs a callable, got {func!r}")
        is_coro = _is_coroutine_function(func)
        if executor is None:
            executor = "async" if is_coro else "thread"
        elif is_coro and executor != "async":
            raise ValueError(
                f"{_qualname(func)} is a coroutine function and cannot run on the "
                f"{executor!r} executor; use executor='async' or pass a plain function"
            )
        self.executor = executor  # type: ignore[misc]
        self.func = func
        self.args = tuple(args)
        self.kwargs = dict(kwargs) if kwargs else {}
        super().__init__(
            name if name is not None else _qualname(func),
            priority=priority,
            timeout=timeout,
            retry=retry,
            deadline=deadline,
            tenant=tenant,
            rate_key=rate_key,
        )

    def run(self) -> Awaitable[Any]:
        """Call the coroutine function (the ``async`` executor awaits it)."""
        return self.func(*self.args, **self.kwargs)  # type: ignore[no-any-return]

    def run_sync(self) -> Any:
        """Call the plain function (thread and process executors)."""
        return self.func(*self.args, **self.kwargs)


def _is_coroutine_function(func: Callable[..., Any]) -> bool:
    while isinstance(func, functools.partial):
        func = func.func
    return inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(
        getattr(func, "__call__", None)  # noqa: B004 - an async __call__ counts too
    )


def _qualname(func: Callable[..., Any]) -> str:
    while isinstance(func, functools.partial):
        func = func.func
    return getattr(func, "__qualname__", None) or repr(func)
