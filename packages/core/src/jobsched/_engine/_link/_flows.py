"""A workflow queued for the group commit (``StoreLink.add_workflow``).

It is appended in order with the submits around it and written by the
committer as a step of its own (``JobStore.add_workflow``: one transaction,
all or nothing) between the adds queued before it and those after
(plan section 5.3). Its caller awaits it: the changes its add made (jobs
cancelled at once), or the error the store gave it (a held id), which is
that caller's to handle, never the committer's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from typing import Any

import anyio

from ...store._flowrows import NewWorkflow
from ...store._rows import Change


class FlowWrite:
    """One workflow's write: awaited for its changes, or its error raised."""

    __slots__ = ("_done", "_flush", "changes", "error", "workflow")

    def __init__(self, workflow: NewWorkflow, flush: Callable[[], Awaitable[None]]) -> None:
        self.workflow = workflow
        #: What the store's add made (set once written).
        self.changes: list[Change] = []
        #: What the store raised for it (nothing of it was written).
        self.error: Exception | None = None
        self._flush = flush
        self._done = anyio.Event()

    def written(self, changes: list[Change]) -> None:
        """The store took it: its jobs are in."""
        self.changes = changes
        self._done.set()

    def refused(self, error: Exception) -> None:
        """The store refused it whole (a held id, a value it cannot keep)."""
        self.error = error
        self._done.set()

    def __await__(self) -> Generator[Any, None, list[Change]]:
        return self._wait().__await__()

    async def _wait(self) -> list[Change]:
        if not self._done.is_set():
            try:
                # Everything appended up to it committed (by the committer,
                # or here when no committer runs yet): it is written then.
                await self._flush()
            except ValueError:
                # Another job of the batch refused: said to that job's
                # flushes. This workflow's own end is below.
                if not self._done.is_set():
                    raise
        if not self._done.is_set():  # flush returned before its batch was written: a bug
            raise RuntimeError("the workflow's write was not made by the flush that covered it")
        if self.error is not None:
            raise self.error
        return self.changes
