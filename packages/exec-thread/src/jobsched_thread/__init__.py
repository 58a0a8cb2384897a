"""The ``thread`` executor plugin for jobsched: runs ``BlockingJob``\\s in threads.

Published under the name ``thread`` in the ``jobsched.executors`` entry-point
group. Threads cannot be killed, so cancellation is cooperative: a cancelled
or timed-out job sees :func:`jobsched.cancel_requested` turn True, and the
scheduler moves on without waiting for its thread.
"""

from ._executor import ThreadExecutor as ThreadExecutor

__all__ = ["ThreadExecutor"]
