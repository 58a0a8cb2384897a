"""jobsched: an in-process job scheduler on anyio.

The core (this package) owns all scheduling: the state machine, strategies,
the ready and delayed queues, retries, dependencies, recurring schedules and
listeners. Jobs run on executors found through the ``jobsched.executors``
entry-point group (``async``, ``thread`` and ``process`` are published as
separate distributions); the core never imports one.
"""

from typing import TYPE_CHECKING

from ._dispatch import setting_up as setting_up
from ._enums import JobPriority as JobPriority
from ._enums import JobStatus as JobStatus
from ._exceptions import ExecutorNotFoundError as ExecutorNotFoundError
from ._exceptions import InvalidTransitionError as InvalidTransitionError
from ._exceptions import JobFailedError as JobFailedError
from ._exceptions import NonRetryableError as NonRetryableError
from ._exceptions import SchedulerError as SchedulerError
from ._exceptions import SchedulerStoppedError as SchedulerStoppedError
from ._exceptions import StoreNotFoundError as StoreNotFoundError
from ._exceptions import StoreUnavailableError as StoreUnavailableError
from ._exceptions import UnknownJobError as UnknownJobError
from ._exceptions import UnknownScheduleError as UnknownScheduleError
from ._executor import CancelToken as CancelToken
from ._executor import Executor as Executor
from ._executor import cancel_requested as cancel_requested
from ._fairshare import FairShareStrategy as FairShareStrategy
from ._function_job import FunctionJob as FunctionJob
from ._jobs import AsyncJob as AsyncJob
from ._jobs import BlockingJob as BlockingJob
from ._jobs import CpuBoundJob as CpuBoundJob
from ._jobs import Job as Job
from ._queue import ReadyQueue as ReadyQueue
from ._ratelimit import RateLimit as RateLimit
from ._retry import RetryPolicy as RetryPolicy
from ._scheduleinfo import ScheduleInfo as ScheduleInfo
from ._scheduler import JobScheduler as JobScheduler
from ._state import JobListener as JobListener
from ._state import SubmitHook as SubmitHook
from ._store import JobStore as JobStore
from ._stores import open_store as open_store
from ._strategies import AgingPriorityStrategy as AgingPriorityStrategy
from ._strategies import EarliestDeadlineFirstStrategy as EarliestDeadlineFirstStrategy
from ._strategies import FIFOStrategy as FIFOStrategy
from ._strategies import PriorityStrategy as PriorityStrategy
from ._strategies import SchedulingStrategy as SchedulingStrategy
from ._strategies import SortKey as SortKey

if TYPE_CHECKING:
    from ._background import BackgroundScheduler as BackgroundScheduler
    from ._cron import CronTrigger as CronTrigger

__all__ = [
    "AgingPriorityStrategy",
    "AsyncJob",
    "BackgroundScheduler",
    "BlockingJob",
    "CancelToken",
    "CpuBoundJob",
    "CronTrigger",
    "EarliestDeadlineFirstStrategy",
    "Executor",
    "ExecutorNotFoundError",
    "FIFOStrategy",
    "FairShareStrategy",
    "FunctionJob",
    "InvalidTransitionError",
    "Job",
    "JobFailedError",
    "JobListener",
    "JobPriority",
    "JobScheduler",
    "JobStatus",
    "JobStore",
    "NonRetryableError",
    "PriorityStrategy",
    "RateLimit",
    "ReadyQueue",
    "RetryPolicy",
    "ScheduleInfo",
    "SchedulerError",
    "SchedulerStoppedError",
    "SchedulingStrategy",
    "SortKey",
    "StoreNotFoundError",
    "StoreUnavailableError",
    "SubmitHook",
    "UnknownJobError",
    "UnknownScheduleError",
    "cancel_requested",
    "open_store",
    "setting_up",
]


def __getattr__(name: str) -> object:
    # Loaded on first use, to keep `import jobsched` cheap: the cron module
    # brings datetime and zoneinfo (and croniter once a trigger is built), and
    # `__version__` needs importlib.metadata, which costs more than jobsched.
    if name == "CronTrigger":
        from ._cron import CronTrigger

        globals()["CronTrigger"] = CronTrigger  # later lookups skip this hook
        return CronTrigger
    if name == "BackgroundScheduler":
        # Threads and the blocking portal: only for an app that uses it.
        from ._background import BackgroundScheduler

        globals()["BackgroundScheduler"] = BackgroundScheduler
        return BackgroundScheduler
    if name == "__version__":
        from importlib.metadata import version

        return version("jobsched-core")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
