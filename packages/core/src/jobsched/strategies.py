"""Scheduling strategies, and what you need to write one.

A strategy orders the runnable jobs. Most give each job a key when it becomes
runnable, and the smallest key runs first: subclass :class:`SchedulingStrategy`
and implement ``key(job) -> SortKey`` (a tuple, compared as tuples are; it must
not depend on the current time, since it is computed once, and should end in
``job.seq`` so that no two jobs tie). A strategy whose order cannot be a key
per job (fair share across tenants) also overrides ``ready_queue()`` to return
a new :class:`ReadyQueue`, the ready side the scheduler then pushes to and pops
from.

The built-in strategies are here too (and in :mod:`jobsched`).
``jobsched.ReadyQueue`` and ``jobsched.SortKey`` still work, with a
``DeprecationWarning``: import them from here.
"""

from ._ordering._fairshare import FairShareStrategy as FairShareStrategy
from ._ordering._queue import ReadyQueue as ReadyQueue
from ._ordering._strategies import AgingPriorityStrategy as AgingPriorityStrategy
from ._ordering._strategies import EarliestDeadlineFirstStrategy as EarliestDeadlineFirstStrategy
from ._ordering._strategies import FIFOStrategy as FIFOStrategy
from ._ordering._strategies import PriorityStrategy as PriorityStrategy
from ._ordering._strategies import SchedulingStrategy as SchedulingStrategy
from ._ordering._strategies import SortKey as SortKey

__all__ = [
    "AgingPriorityStrategy",
    "EarliestDeadlineFirstStrategy",
    "FIFOStrategy",
    "FairShareStrategy",
    "PriorityStrategy",
    "ReadyQueue",
    "SchedulingStrategy",
    "SortKey",
]
