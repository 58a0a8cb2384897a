"""Group commit: write transactions that arrive together share one commit.

With ``synchronous = FULL`` every commit waits for an fsync (milliseconds on
most disks), and a scheduler's writes come in pairs: when a round of jobs
ends, its outcomes (the committer) and the claim of the next round (the
claimer) are asked for in the same pass of the event loop. Run apart, that is
two fsyncs per round; run as one transaction, one. Each write still succeeds
or fails alone: it runs inside its own SAVEPOINT, and one that raises is
rolled back to it while the others commit.

The first caller of a group leads it: it lets the event loop run once (so
writes asked for on the same wakeup join), then runs every queued write in one
transaction on a worker thread and wakes their callers. A write that arrives
while a group runs waits for the next group, led by the first of them.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import anyio
from anyio.lowlevel import checkpoint

from ._errors import is_transient

T = TypeVar("T")


class Write(Generic[T]):
    """One write function, its outcome, and how its caller is woken."""

    __slots__ = ("done", "error", "fn", "lead", "result", "wake")

    def __init__(self, fn: Callable[[sqlite3.Connection], T]) -> None:
        self.fn = fn
        self.result: T | None = None
        self.error: BaseException | None = None
        self.done = False
        #: Set when this write's caller must lead the next group.
        self.lead = False
        self.wake = anyio.Event()

    def outcome(self) -> T:
        if self.error is not None:
            raise self.error
        return self.result  # type: ignore[return-value]


class GroupCommit:
    """Runs write functions on one connection, those that arrive together in
    one ``BEGIN IMMEDIATE`` transaction."""

    def __init__(
        self,
        connection: Callable[[], sqlite3.Connection],
        lock: threading.Lock,
        limiter: anyio.CapacityLimiter,
    ) -> None:
        """:param connection: the open connection (raises when the store is closed)."""
        self._connection = connection
        self._lock = lock
        self._limiter = limiter
        self._queue: list[Write[Any]] = []
        self._leading = False
        #: Transactions run, and writes they carried (the tests and benchmarks read them).
        self.groups = 0
        self.writes = 0

    async def write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` in a write transaction (shared with writes that arrive with it)."""
        me: Write[T] = Write(fn)
        self._queue.append(me)
        if self._leading:
            try:
                await me.wake.wait()
            except BaseException:
                if me.lead:
                    # Made the leader as this task was cancelled: lead anyway,
                    # without its own write, so the queued ones still run.
                    self._queue.remove(me)
                    await self._run_group()
                elif me in self._queue:
                    self._queue.remove(me)  # never ran, and never will
                raise
            if not me.lead:
                return me.outcome()
        else:
            self._leading = True
        await self._run_group(own=me)
        return me.outcome()

    async def _run_group(self, own: Write[Any] | None = None) -> None:
        # Shielded: the writes queued behind this leader wait for it.
        with anyio.CancelScope(shield=True):
            group: list[Write[Any]] = []
            try:
                # One pass of the event loop: the tasks woken with this one
                # (a round of jobs ended) ask for their writes now.
                await checkpoint()
                group, self._queue = self._queue, []
                if group:
                    await anyio.to_thread.run_sync(self._transact, group, limiter=self._limiter)
            finally:
                for write in group:
                    if not write.done and write.error is None:
                        write.error = RuntimeError("the write was interrupted")  # never expected
                    if write is not own:
                        write.wake.set()
                if self._queue:
                    after = self._queue[0]
                    after.lead = True
                    after.wake.set()
                else:
                    self._leading = False

    def _transact(self, group: list[Write[Any]]) -> None:
        """Run ``group`` in one transaction (on a worker thread)."""
        try:
            conn = self._connection()
        except Exception as exc:
            for write in group:
                write.error = exc
            return
        with self._lock:
            try:
                conn.execute("BEGIN IMMEDIATE")
                for write in group:
                    self._run_one(conn, write)
                conn.execute("COMMIT")
            except Exception as exc:
                # Nothing of the group is committed: every write fails with it
                # (a transient error is retried whole by the caller).
                rollback(conn)
                for write in group:
                    write.error = exc
                    write.result = None
                return
            self.groups += 1
            self.writes += len(group)

    @staticmethod
    def _run_one(conn: sqlite3.Connection, write: Write[Any]) -> None:
        conn.execute("SAVEPOINT one_write")
        try:
            write.result = write.fn(conn)
        except BaseException as exc:
            if is_transient(exc) or not conn.in_transaction:
                # A full disk or an I/O error may have rolled back the whole
                # transaction already (SQLite does so for SQLITE_FULL and
                # SQLITE_IOERR): the group cannot commit, and the writes
                # after this one would run outside it.
                raise
            conn.execute("ROLLBACK TO one_write")
            write.error = exc
        conn.execute("RELEASE one_write")
        write.done = True


def rollback(conn: sqlite3.Connection) -> None:
    """End the open transaction, if any, whatever the state of the file."""
    if conn.in_transaction:
        # A failing ROLLBACK: the error that brought us here is the one to report.
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
