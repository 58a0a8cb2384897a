"""The store's lifetime: opened with the app, closed with it, and never created.

The dashboard reads a store that workers and schedulers made, as the CLI's
read commands do (docs/cli.md): opening a store creates its schema, so a
mistyped URL would show an empty store, and leave one behind. It asks
:meth:`JobStore.exists` first; while the answer is no, every page says so
(503, naming the fix) and asks again, and opens the store once it exists.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
from starlette.requests import Request
from starlette.responses import Response

from jobsched import JobStore, StoreUnavailableError

Endpoint = Callable[[Request], Awaitable[Response]]


class MissingStoreError(StoreUnavailableError):
    """The URL names no jobsched store (no file, or a database without its tables)."""


async def check_exists(store: JobStore) -> None:
    """Return when ``store`` exists or cannot tell; raise when it does not.

    :raises MissingStoreError: no jobsched store there; the message names the fix.
    :raises StoreUnavailableError: the store cannot be reached.
    """
    path = getattr(store, "path", None)
    if isinstance(path, Path) and not path.exists():
        raise MissingStoreError(
            f"no store at {store.url}: {str(path)!r} does not exist (a worker or a "
            "scheduler creates it; check the URL)"
        )
    if await store.exists() is False:
        raise MissingStoreError(
            f"no jobsched store at {store.url}: the database has no jobsched tables (a "
            "worker or a scheduler creates them; check the URL)"
        )


class StoreGate:
    """Opens the store once it exists, and lets a request through only then."""

    def __init__(self, store: JobStore) -> None:
        self.store = store
        self.opened = False
        self._lock = anyio.Lock()

    async def start(self) -> None:
        """At the app's startup: open the store, unless there is none yet (then
        the pages say so). An unreachable store fails the startup, as before."""
        try:
            await self.ready()
        except MissingStoreError as exc:
            logging.getLogger("jobsched.dashboard").warning("%s", exc)

    async def ready(self) -> None:
        """Open the store if it is not open yet and exists now.

        :raises MissingStoreError: it does not exist (yet).
        """
        if self.opened:
            return
        async with self._lock:
            if not self.opened:
                await check_exists(self.store)
                await self.store.open()
                self.opened = True

    async def stop(self) -> None:
        await self.store.close()

    def guard(self, endpoint: Endpoint) -> Endpoint:
        """``endpoint``, answered only once the store is open."""

        async def guarded(request: Request) -> Response:
            await self.ready()
            return await endpoint(request)

        guarded.__name__ = getattr(endpoint, "__name__", "endpoint")
        return guarded
