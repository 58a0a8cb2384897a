"""Running jobs' progress, written to the store at most once a second per job.

``js.current_job().progress(...)`` sets the job's fields here at once and
notes the job with :class:`ProgressWriter`; a task of the writer, started by
the first note (a member whose jobs never report progress has no task, no
entry and no write), wakes every :data:`WAKE` seconds while it has entries and
writes the values of the jobs whose last write is at least :data:`EVERY`
seconds old, in one ``JobStore.progress`` call fenced on (owner, attempt).
A job's last values go with its attempt's outcome instead (``forget``), so a
job that calls progress a thousand times in a second costs the store a write
or two. The task ends after :data:`IDLE` seconds without entries, and at the
link's close.

A note may come from a thread job's thread: the entries are kept under a
lock, and a task started from a thread goes through the loop's token.
Loaded on the first note, never by ``import jobsched``.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
import anyio.from_thread

from ..._exceptions import StoreUnavailableError
from ..._log import logger
from ...store._flowrows import ProgressRow

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from ...store._base import JobStore

#: Seconds between the task's looks at its entries.
WAKE = 0.25
#: Seconds between two writes of one job's progress, at least.
EVERY = 1.0
#: Seconds without entries before the task ends (the next note starts one).
IDLE = 10.0


class _Entry:
    """One job's progress as noted, and when it was last written."""

    __slots__ = ("attempt", "dirty", "fraction", "message", "sent")

    def __init__(self, attempt: int) -> None:
        self.attempt = attempt
        self.fraction: float | None = None
        self.message: str | None = None
        self.dirty = True
        self.sent = -math.inf


class ProgressWriter:
    """The dirty jobs' progress, and the task that writes it (see the module)."""

    __slots__ = (
        "_closed",
        "_entries",
        "_lock",
        "_loop",
        "_now",
        "_owner",
        "_running",
        "_scope",
        "_store",
        "_tasks",
        "_thread_id",
        "writes",
    )

    def __init__(
        self,
        store: JobStore,
        owner: str,
        tasks: TaskGroup,
        token: Any,
        loop_thread: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        # tasks, token, loop_thread: the scheduler's task group, its loop's
        # token (for a start from a thread) and the loop's thread.
        self._store = store
        self._owner = owner
        self._tasks = tasks
        self._loop = token
        self._thread_id = loop_thread
        self._now = clock
        self._entries: dict[int, _Entry] = {}
        self._lock = threading.Lock()
        self._running = False
        self._closed = False
        self._scope: anyio.CancelScope | None = None
        #: Store calls made (for tests and curious operators).
        self.writes = 0

    def note(self, number: int, attempt: int, fraction: float | None, message: str | None) -> None:
        """Job ``number``'s attempt reported these values: write them soon.
        Callable from any thread."""
        with self._lock:
            if self._closed:
                return
            entry = self._entries.get(number)
            if entry is None or entry.attempt != attempt:
                entry = self._entries[number] = _Entry(attempt)
            entry.fraction = fraction
            entry.message = message
            entry.dirty = True
            start = not self._running
            self._running = True
        if start:
            self._start()

    def forget(self, number: int) -> None:
        """Job ``number``'s attempt ended: its outcome carries its last values."""
        if self._entries:
            with self._lock:
                self._entries.pop(number, None)

    def close(self) -> None:
        """The link closes: no more writes (outcomes carry the last values)."""
        with self._lock:
            self._closed = True
            self._entries.clear()
        if self._scope is not None:
            self._scope.cancel()

    def _start(self) -> None:
        try:
            if threading.get_ident() == self._thread_id:
                self._spawn()
            else:
                anyio.from_thread.run_sync(self._spawn, token=self._loop)
        except RuntimeError:
            # The scheduler's group or loop is gone (a thread job outliving
            # its stop): nothing will write, and the outcome was written.
            with self._lock:
                self._running = False

    def _spawn(self) -> None:
        self._tasks.start_soon(self._run, name="jobsched-store-progress")

    async def _run(self) -> None:
        idle_since: float | None = None
        try:
            with anyio.CancelScope() as self._scope:
                while not self._closed:
                    await anyio.sleep(WAKE)
                    now = self._now()
                    rows = self._due(now)
                    if rows:
                        await self._write(rows)
                    with self._lock:
                        if self._entries:
                            idle_since = None
                            continue
                        if idle_since is None:
                            idle_since = now
                        elif now - idle_since >= IDLE:
                            # Under the lock: a note from now on starts a new task.
                            self._running = False
                            return
        except BaseException:
            with self._lock:
                self._running = False
            raise
        finally:
            self._scope = None

    def _due(self, now: float) -> list[ProgressRow]:
        """The rows to write now, marked written; entries that stopped
        mattering (written over a second ago, nothing new) dropped."""
        rows: list[ProgressRow] = []
        with self._lock:
            entries = self._entries
            for number, entry in list(entries.items()):
                if now - entry.sent < EVERY:
                    continue
                if not entry.dirty:
                    del entries[number]  # a note now would be written at once anyway
                    continue
                rows.append(ProgressRow(number, entry.attempt, entry.fraction, entry.message))
                entry.dirty = False
                entry.sent = now
        return rows

    async def _write(self, rows: list[ProgressRow]) -> None:
        self.writes += 1
        try:
            with anyio.CancelScope(shield=True):
                await self._store.progress(self._owner, rows)
        except StoreUnavailableError:
            # The other tasks of the link report the outage; these rows
            # are written on a later wake, with whatever is newest then.
            with self._lock:
                for row in rows:
                    entry = self._entries.get(row.id)
                    if entry is not None and entry.attempt == row.attempt:
                        entry.dirty = True
        except Exception:
            # Progress is advice: a store that cannot take it must not end
            # the jobs that report it. Their outcomes still carry the values.
            logger.exception(
                "writing the progress of %d job(s) to %s failed; it is not retried",
                len(rows),
                self._store.url,
            )
