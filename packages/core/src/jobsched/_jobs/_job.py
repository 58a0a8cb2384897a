"""Jobs: what to run and how (the Command pattern)."""

from __future__ import annotations

import functools
import inspect
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar, SupportsIndex

from .._enums import JobPriority, JobStatus
from ._flow import Flow
from ._ids import next_number, own_number
from ._options import DEFAULT_QUEUE, check_label, pack_options, queue_name
from ._retry import RetryPolicy

_DEFAULT_RETRY = RetryPolicy()


class Job(ABC):
    """What to run plus how to run it.

    Subclass :class:`AsyncJob` (``async def run``) or :class:`BlockingJob` /
    :class:`CpuBoundJob` (``def run_sync``), or wrap a callable in
    :class:`FunctionJob`. The execution state (``status``, ``attempts``,
    ``result``, ``last_error``, ``last_traceback``, the timestamps) is
    written only by the scheduler.

    :param name: a label for logs and listeners.
    :param priority: any int, higher runs first under the priority
        strategies; :class:`JobPriority` names four points on that scale.
    :param timeout: seconds one attempt may run (default 30); ``None`` for no limit.
    :param retry: when and how often a failed attempt is retried (default:
        up to 3 retries with backoff); ``RetryPolicy(max_retries=0)`` for none.
    :param deadline: a ``time.monotonic()`` time; used by EDF only.
    :param tenant: the fair-share queue the job belongs to.
    :param rate_key: the rate limit the job's starts count against.
    :param queue: the named queue it waits in (``"default"``); a scheduler
        given ``queues=`` runs only the jobs of those queues.
    """

    # Slots keep a queued job small (the benchmark counts bytes per queued
    # job) and attribute access fast. Subclasses without __slots__ still get a
    # __dict__ for their own fields.
    __slots__ = (
        "_flow",
        "_jobsched_id",
        "_options",
        "attempts",
        "finished_at",
        "last_error",
        "last_traceback",
        "name",
        "priority",
        "result",
        "retry",
        "run_at",
        "seq",
        "started_at",
        "status",
        "submitted_at",
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
        queue: str = DEFAULT_QUEUE,
    ) -> None:
        if timeout is not None and not timeout > 0:
            raise ValueError(
                f"timeout must be a positive number of seconds or None, got {timeout!r}"
            )
        if tenant is not None:
            check_label("tenant", tenant)
        if rate_key is not None:
            check_label("rate_key", rate_key)
        named = queue_name(queue)
        problem = _class_problem(type(self))
        if problem is not None:
            raise TypeError(problem)
        if not isinstance(priority, int) or isinstance(priority, bool):
            raise TypeError(
                f"priority must be an int (higher runs first; any int works, and "
                f"jobsched.JobPriority names four common levels), got {priority!r}"
            )
        if retry is not _DEFAULT_RETRY and not isinstance(retry, RetryPolicy):
            hint = (
                f"; for {retry!r} retries pass retry=jobsched.RetryPolicy(max_retries={retry!r})"
                if isinstance(retry, int) and not isinstance(retry, bool)
                else ""
            )
            raise TypeError(f"retry must be a jobsched.RetryPolicy, got {retry!r}{hint}")
        # The id is numbered when first needed (job_id or submit), see _numbers.
        self._jobsched_id = 0
        self.name: str = name
        self.priority: JobPriority | int = priority
        self.timeout: float | None = timeout
        self.retry: RetryPolicy = retry
        # A deadline is typed float | None, but a tuple passed anyway must not
        # pass for packed options.
        if (
            tenant is None and rate_key is None and named is None and type(deadline) is not tuple  # type: ignore[comparison-overlap]
        ):
            self._options: Any = deadline
        else:
            self._options = pack_options(deadline, tenant, rate_key, queue=named)
        self.status: JobStatus = JobStatus.PENDING
        self.attempts: int = 0
        self.result: Any = None
        self.last_error: str | None = None
        #: The formatted traceback of the failure ``last_error`` describes; None
        #: when it has none (a timeout, a cancellation) or nothing failed.
        self.last_traceback: str | None = None
        self.submitted_at: float = 0.0
        self.run_at: float = 0.0
        self.seq: int = 0
        self.started_at: float | None = None
        self.finished_at: float | None = None
        # Workflow membership, result markers and progress: see _flow.
        self._flow: Flow | None = None

    # The rarely set options share one slot: see _options.

    @property
    def deadline(self) -> float | None:
        """A ``time.monotonic()`` time, or None; used by EDF only."""
        options = self._options
        return options[0] if type(options) is tuple else options  # type: ignore[no-any-return]

    @deadline.setter
    def deadline(self, deadline: float | None) -> None:
        self._options = pack_options(
            deadline, self.tenant, self.rate_key, self.headers, self._own_id, self._queue_name
        )

    @property
    def tenant(self) -> str | None:
        """The fair-share queue the job belongs to, or None."""
        options = self._options
        return options[1] if type(options) is tuple else None

    @tenant.setter
    def tenant(self, tenant: str | None) -> None:
        self._options = pack_options(
            self.deadline, tenant, self.rate_key, self.headers, self._own_id, self._queue_name
        )

    @property
    def rate_key(self) -> str | None:
        """The rate limit the job's starts count against, or None."""
        options = self._options
        return options[2] if type(options) is tuple else None

    @rate_key.setter
    def rate_key(self, rate_key: str | None) -> None:
        self._options = pack_options(
            self.deadline, self.tenant, rate_key, self.headers, self._own_id, self._queue_name
        )

    @property
    def headers(self) -> dict[str, str] | None:
        """String pairs that travel with the job wherever it runs, or None.

        They are pickled with the job, so they reach a durable store's row and
        the process that claims it, like a message's headers in a queue.
        Integrations write here from a submit hook (see
        :meth:`JobScheduler.add_submit_hook`): jobsched-otel puts the W3C
        ``traceparent`` of the span current at submit. Assign a new dict to
        change them; the scheduler itself never reads them.
        """
        options = self._options
        return options[3] if type(options) is tuple else None

    @headers.setter
    def headers(self, headers: dict[str, str] | None) -> None:
        if headers is not None and not (
            isinstance(headers, dict)
            and all(type(k) is str and type(v) is str for k, v in headers.items())
        ):
            raise TypeError(f"headers must be a dict of str to str or None, got {headers!r}")
        self._options = pack_options(
            self.deadline, self.tenant, self.rate_key, headers, self._own_id, self._queue_name
        )

    @property
    def _own_id(self) -> str | None:
        """The id given at submit (``job_id=``), or None (a numbered ``job-<n>``)."""
        options = self._options
        # Options stored before own ids were a 4-tuple.
        return options[4] if type(options) is tuple and len(options) > 4 else None

    @property
    def queue(self) -> str:
        """The named queue the job waits in: ``"default"`` unless given."""
        named = self._queue_name
        return DEFAULT_QUEUE if named is None else named

    @queue.setter
    def queue(self, queue: str) -> None:
        named = queue_name(queue)
        self._options = pack_options(
            self.deadline, self.tenant, self.rate_key, self.headers, self._own_id, named
        )

    @property
    def _queue_name(self) -> str | None:
        """The queue's name, None for the default queue."""
        options = self._options
        # Options stored before named queues were a 4- or 5-tuple.
        return options[5] if type(options) is tuple and len(options) > 5 else None

    def _set_own_id(self, job_id: str) -> None:
        """Give the job an id of its own (checked by the caller, see check_own_id)."""
        self._options = pack_options(
            self.deadline, self.tenant, self.rate_key, self.headers, job_id, self._queue_name
        )
        self._jobsched_id = own_number(job_id)

    # The workflow fields share one slot too: see _flow. getattr, because a job
    # of a class that pickles itself its own way, stored before the slot
    # existed, comes back without it.

    @property
    def workflow_id(self) -> str | None:
        """The id (``"wf-<n>"``) of the workflow the job was enqueued in, or None."""
        flow = getattr(self, "_flow", None)
        number = None if flow is None else flow.workflow
        return f"wf-{number}" if type(number) is int else None

    @property
    def progress(self) -> float | None:
        """The fraction done (0 to 1) the job last reported through
        ``js.current_job().progress(...)``, or None."""
        flow = getattr(self, "_flow", None)
        return None if flow is None else flow.progress

    @property
    def progress_message(self) -> str | None:
        """The message the job last reported with its progress, or None."""
        flow = getattr(self, "_flow", None)
        return None if flow is None else flow.message

    @property
    def job_id(self) -> str:
        """The job's unique id, ``"job-<n>"`` or the one given at submit: what
        submit() returns and get() takes."""
        number = self._jobsched_id
        if not number:
            number = self._jobsched_id = next_number()
        elif number < 0:
            own = self._own_id
            if own is not None:
                return own
        return f"job-{number}"

    def __reduce_ex__(self, protocol: SupportsIndex) -> str | tuple[Any, ...]:
        # A copy or a pickle (the process executor) carries the id along, as
        # when ids were made in __init__, instead of numbering its own.
        if not self._jobsched_id:
            self._jobsched_id = next_number()
        return super().__reduce_ex__(protocol)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.job_id}, {self.name!r}, {self.status.value})"


@functools.cache
def _class_problem(cls: type) -> str | None:
    """Why instances of ``cls`` could never run, or None; checked once per class."""
    name = cls.__qualname__
    if not (hasattr(cls, "executor") and (hasattr(cls, "run") or hasattr(cls, "run_sync"))):
        return (
            f"{name} implements neither run() nor run_sync(): subclass "
            "jobsched.AsyncJob and define `async def run(self)`, or "
            "jobsched.BlockingJob and define `def run_sync(self)`"
        )
    # A wrong kind of function would only fail when the job runs, attempt
    # after attempt; say so when the job is made instead.
    run = getattr(cls, "run", None)
    if issubclass(cls, AsyncJob) and inspect.isfunction(run) and not _is_coroutine_function(run):
        return (
            f"{name}.run is a plain `def`, but an AsyncJob's run is awaited on the event "
            f"loop: write `async def run(self)`, or subclass jobsched.BlockingJob and "
            "implement `def run_sync(self)` for blocking code"
        )
    run_sync = getattr(cls, "run_sync", None)
    if issubclass(cls, BlockingJob) and (
        inspect.iscoroutinefunction(run_sync) or inspect.isasyncgenfunction(run_sync)
    ):
        return (
            f"{name}.run_sync is an `async def`, but run_sync is called in a thread or "
            "process and never awaited: write `def run_sync(self)`, "
            "or subclass jobsched.AsyncJob and implement `async def run(self)`"
        )
    return None


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


def _is_coroutine_function(func: Callable[..., Any]) -> bool:
    while isinstance(func, functools.partial):
        func = func.func
    if not inspect.isroutine(func) and inspect.isroutine(getattr(func, "__wrapped__", None)):
        # A callable object standing for a function (an @app.job JobFunction):
        # calling it calls that function.
        func = func.__wrapped__  # type: ignore[attr-defined]
    return inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(
        getattr(func, "__call__", None)  # noqa: B004 - an async __call__ counts too
    )
