"""The PostgreSQL store's notifications (``JobStore.watch``): another
member's commit wakes this member's claimer at once, and a commit of jobs'
outcomes wakes their waiters, through LISTEN on a connection of its own."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel
import psycopg

from jobsched import StoreUnavailableError

from . import _connect, _schema, _sql

#: Seconds the LISTEN thread waits for a notification before looking
#: whether it should stop.
LISTEN_TICK = 0.25


class Notifications:
    """The store's ``watch``, over its connection settings."""

    _conninfo: str
    _raw_url: str

    async def watch(
        self, wake: Callable[[], None], finished: Callable[[], None] | None = None
    ) -> None:
        """Wake the claimer on every NOTIFY of another member's commit, and
        ``finished`` on every commit of jobs' outcomes.

        A connection of its own, outside the pool, in a thread of its own
        that owns it (a cancelled watch abandons the thread, which closes the
        connection within ``LISTEN_TICK``). If it breaks, it is made again a
        second later; the claimer's polling covers the gap.
        """
        token = anyio.lowlevel.current_token()
        while True:
            stop = threading.Event()
            try:
                await anyio.to_thread.run_sync(
                    self._listen, stop, wake, finished, token, abandon_on_cancel=True
                )
            except (StoreUnavailableError, psycopg.Error):
                pass  # unreachable or broken: listen again on a new connection
            finally:
                stop.set()
            await anyio.sleep(1.0)

    def _listen(
        self,
        stop: threading.Event,
        wake: Callable[[], None],
        finished: Callable[[], None] | None,
        token: Any,
    ) -> None:
        """Pass notifications on to ``wake`` (and ``finished``) until ``stop``."""
        conn = _connect.connect(self._conninfo, self._raw_url)
        try:
            conn.execute(f"LISTEN {_schema.CHANNEL}")
            woken = ended = True  # anything committed while not listening
            while not stop.is_set():
                try:
                    if woken:
                        anyio.from_thread.run_sync(wake, token=token)
                    if ended and finished is not None:
                        anyio.from_thread.run_sync(finished, token=token)
                except Exception:
                    return  # the event loop is gone
                woken = ended = False
                for note in conn.notifies(timeout=LISTEN_TICK, stop_after=1):
                    if note.payload == _sql.FINISHED:
                        ended = True
                    else:
                        woken = True
        finally:
            conn.close()
