"""The ``process`` executor plugin for jobsched: runs ``CpuBoundJob``\\s in worker processes.

Published under the name ``process`` in the ``jobsched.executors``
entry-point group. The pieces, parent side to child side:

- ``_executor``: :class:`ProcessExecutor`, on the event loop: slots, the
  idle workers, what cancellation, timeouts and deaths do to an attempt.
- ``_pool``: one worker process seen from the parent (start, request,
  end), how its death is detected, its process group.
- ``_transfer``: moving jobs and replies without stalling the event loop.
- ``_wire``: the message format both sides speak, and streamed pickles.
- ``_worker``: the loop each worker process runs, and the reply format.
- ``_errors``: :class:`WorkerDiedError` and rebuilding a worker's exception.
"""

from __future__ import annotations

# Not typing's: a worker imports this package first, and typing would cost
# it more than the rest of its start (type checkers honour this name as well).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ._errors import WorkerDiedError as WorkerDiedError
    from ._executor import ProcessExecutor as ProcessExecutor

__all__ = ["ProcessExecutor", "WorkerDiedError"]


def __getattr__(name: str) -> Any:
    # Loaded on first use, not with the package: each worker process imports
    # this package for its loop (_worker), and a worker that imported the
    # parent's side too (anyio, all of jobsched) took several times longer
    # to start.
    if name == "ProcessExecutor":
        from ._executor import ProcessExecutor

        return ProcessExecutor
    if name == "WorkerDiedError":
        from ._errors import WorkerDiedError

        return WorkerDiedError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
