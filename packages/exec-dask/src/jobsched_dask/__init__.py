"""The ``dask`` executor plugin for jobsched: runs jobs as tasks on a Dask cluster.

Published under the name ``dask`` in the ``jobsched.executors`` entry-point
group, the way a third party publishes an executor: nothing of it lives in
the core. The pieces:

- ``_executor``: :class:`DaskExecutor`, on the scheduler's event loop: the
  client, the bridge to its loop thread, what cancellation does to a task.
- ``_task``: what runs on a Dask worker: the job, with a cancel token that
  reads the attempt's flag on the Dask scheduler.
"""

from ._executor import DaskExecutor as DaskExecutor
from ._executor import TaskLostError as TaskLostError

__all__ = ["DaskExecutor", "TaskLostError"]
