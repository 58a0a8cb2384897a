"""jobsched: an in-process job scheduler on anyio.

The core (this package) owns all scheduling: the state machine, strategies,
the ready and delayed queues, retries, dependencies, recurring schedules and
listeners. Jobs run on executors found through the ``jobsched.executors``
entry-point group (``async``, ``thread`` and ``process`` are published as
separate distributions); the core never imports one.
"""

from typing import TYPE_CHECKING

from ._engine._attempts import setting_up as setting_up
from ._engine._scheduler import JobScheduler as JobScheduler
from ._engine._state import JobListener as JobListener
from ._engine._state import SubmitHook as SubmitHook
from ._enums import JobPriority as JobPriority
from ._enums import JobStatus as JobStatus
from ._exceptions import ExecutorNotFoundError as ExecutorNotFoundError
from ._exceptions import InvalidTransitionError as InvalidTransitionError
from ._exceptions import JobFailedError as JobFailedError
from ._exceptions import LeaseLostError as LeaseLostError
from ._exceptions import NonRetryableError as NonRetryableError
from ._exceptions import SchedulerError as SchedulerError
from ._exceptions import SchedulerStoppedError as SchedulerStoppedError
from ._exceptions import StoreNotFoundError as StoreNotFoundError
from ._exceptions import StoreUnavailableError as StoreUnavailableError
from ._exceptions import UnknownJobError as UnknownJobError
from ._exceptions import UnknownScheduleError as UnknownScheduleError
from ._exceptions import UpstreamFailedError as UpstreamFailedError
from ._jobs._current import CurrentJob as CurrentJob
from ._jobs._current import current_job as current_job
from ._jobs._executor import CancelToken as CancelToken
from ._jobs._executor import Executor as Executor
from ._jobs._executor import cancel_requested as cancel_requested
from ._jobs._function import FunctionJob as FunctionJob
from ._jobs._job import AsyncJob as AsyncJob
from ._jobs._job import BlockingJob as BlockingJob
from ._jobs._job import CpuBoundJob as CpuBoundJob
from ._jobs._job import Job as Job
from ._jobs._markers import result_of as result_of
from ._jobs._markers import results_of as results_of
from ._jobs._retry import RetryPolicy as RetryPolicy
from ._ordering._fairshare import FairShareStrategy as FairShareStrategy
from ._ordering._ratelimit import RateLimit as RateLimit
from ._ordering._strategies import AgingPriorityStrategy as AgingPriorityStrategy
from ._ordering._strategies import EarliestDeadlineFirstStrategy as EarliestDeadlineFirstStrategy
from ._ordering._strategies import FIFOStrategy as FIFOStrategy
from ._ordering._strategies import PriorityStrategy as PriorityStrategy
from ._ordering._strategies import SchedulingStrategy as SchedulingStrategy
from ._retention import Retention as Retention
from ._workflows._edges import After as After

if TYPE_CHECKING:
    from ._app._app import App as App
    from ._app._function import JobFunction as JobFunction
    from ._ordering._queue import ReadyQueue as ReadyQueue  # deprecated: jobsched.strategies
    from ._ordering._strategies import SortKey as SortKey  # deprecated: jobsched.strategies
    from ._queueinfo import QueueInfo as QueueInfo
    from ._sync._background import BackgroundScheduler as BackgroundScheduler
    from ._time._cron import CronTrigger as CronTrigger
    from ._time._scheduleinfo import ScheduleInfo as ScheduleInfo
    from ._workflows._workflow import Workflow as Workflow
    from ._workflows._workflow import WorkflowInfo as WorkflowInfo
    from .store._base import JobStore as JobStore
    from .store._registry import open_store as open_store

__all__ = [
    "After",
    "AgingPriorityStrategy",
    "App",
    "AsyncJob",
    "BackgroundScheduler",
    "BlockingJob",
    "CancelToken",
    "CpuBoundJob",
    "CronTrigger",
    "CurrentJob",
    "EarliestDeadlineFirstStrategy",
    "Executor",
    "ExecutorNotFoundError",
    "FIFOStrategy",
    "FairShareStrategy",
    "FunctionJob",
    "InvalidTransitionError",
    "Job",
    "JobFailedError",
    "JobFunction",
    "JobListener",
    "JobPriority",
    "JobScheduler",
    "JobStatus",
    "JobStore",
    "LeaseLostError",
    "NonRetryableError",
    "PriorityStrategy",
    "QueueInfo",
    "RateLimit",
    "Retention",
    "RetryPolicy",
    "ScheduleInfo",
    "SchedulerError",
    "SchedulerStoppedError",
    "SchedulingStrategy",
    "StoreNotFoundError",
    "StoreUnavailableError",
    "SubmitHook",
    "UnknownJobError",
    "UnknownScheduleError",
    "UpstreamFailedError",
    "Workflow",
    "WorkflowInfo",
    "cancel_requested",
    "current_job",
    "open_store",
    "result_of",
    "results_of",
    "setting_up",
]


def __getattr__(name: str) -> object:
    # Loaded on first use, to keep `import jobsched` cheap: the cron module
    # brings datetime and zoneinfo (and croniter once a trigger is built), the
    # store seam (JobStore, its row dataclasses, the URL registry) is only for
    # a durable store, and `__version__` needs importlib.metadata, which costs
    # more than jobsched.
    if name in ("App", "JobFunction"):
        # The app brings json, inspect and the engine's lazy parts: only for
        # a project that declares its jobs.
        from ._app import _app, _function

        globals()["App"] = _app.App
        globals()["JobFunction"] = _function.JobFunction
        return globals()[name]
    if name == "QueueInfo":
        # A frozen slots dataclass: only for an operator that lists queues.
        from ._queueinfo import QueueInfo

        globals()["QueueInfo"] = QueueInfo
        return QueueInfo
    if name == "ScheduleInfo":
        # A frozen slots dataclass: only for an app that lists its schedules.
        from ._time._scheduleinfo import ScheduleInfo

        globals()["ScheduleInfo"] = ScheduleInfo
        return ScheduleInfo
    if name in ("Workflow", "WorkflowInfo"):
        # Finding markers comes with it: only for an app that builds workflows.
        from ._workflows import _workflow

        globals()["Workflow"] = _workflow.Workflow
        globals()["WorkflowInfo"] = _workflow.WorkflowInfo
        return globals()[name]
    if name in ("JobStore", "open_store"):
        from .store import _base, _registry

        globals()["JobStore"] = _base.JobStore  # later lookups skip this hook
        globals()["open_store"] = _registry.open_store
        return globals()[name]
    if name == "CronTrigger":
        from ._time._cron import CronTrigger

        globals()["CronTrigger"] = CronTrigger  # later lookups skip this hook
        return CronTrigger
    if name == "BackgroundScheduler":
        # Threads and the blocking portal: only for an app that uses it.
        from ._sync._background import BackgroundScheduler

        globals()["BackgroundScheduler"] = BackgroundScheduler
        return BackgroundScheduler
    if name in ("ReadyQueue", "SortKey"):
        # For strategy authors only: moved to jobsched.strategies (issue 23).
        # Not cached, so that every use from here warns.
        import warnings

        from . import strategies

        warnings.warn(
            f"jobsched.{name} is deprecated: import it from jobsched.strategies",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(strategies, name)
    if name == "__version__":
        from importlib.metadata import version

        return version("jobsched-core")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
