"""The attempt on the Dask client's own loop, and the way back to the scheduler's loop.

The distributed client runs on asyncio (Tornado) in a thread of its own; the
scheduler runs on asyncio or trio in another. An attempt is a coroutine
handed to the client's loop with :func:`asyncio.run_coroutine_threadsafe`;
its end wakes the scheduler's loop through :func:`waker`. Neither loop ever
blocks on the other.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import pickle
from collections.abc import Callable
from typing import Any

import anyio
import distributed

import jobsched

from ._task import run_attempt

logger = logging.getLogger("jobsched.dask")


class ClientLoopState:
    """What the attempts of one client share; touched on the client's loop only."""

    def __init__(self, client: distributed.Client) -> None:
        self.client = client
        #: Cancels in flight: shutdown waits for them, so no flag is lost to
        #: a closing client.
        self.cancels: set[asyncio.Task[None]] = set()
        # Finished tasks whose results are wanted, fetched in batches: one
        # gather per task costs the scheduler and the workers a round trip
        # each, which a Dask user's gather of many futures does not pay.
        self._wanted: list[tuple[distributed.Future, asyncio.Future[Any]]] = []
        self._fetcher: asyncio.Task[None] | None = None

    async def attempt(self, key: str, func: Callable[[], Any], what: str) -> Any:
        """One attempt of ``what``: submit the task under ``key``, wait for its result."""
        client = self.client
        flag = f"{key}-cancel"
        try:
            future = client.submit(run_attempt, func, flag, key=key, pure=False)
        except (TypeError, pickle.PicklingError) as exc:
            cause = exc.__cause__ or exc
            raise jobsched.NonRetryableError(
                f"{what} cannot be sent to the Dask cluster: {type(cause).__name__}: {cause}"
            ) from None
        try:
            # Waits for the end without fetching the result.
            await future.exception()
            if future.status != "finished":
                # An error or a cancel: raised from what the client holds.
                return await future
            wanted = asyncio.get_running_loop().create_future()
            self._wanted.append((future, wanted))
            if self._fetcher is None:
                self._fetcher = asyncio.ensure_future(self._fetch())
            return await wanted
        except asyncio.CancelledError:
            cancel = asyncio.ensure_future(self._cancel(future, flag))
            self.cancels.add(cancel)
            cancel.add_done_callback(self.cancels.discard)
            raise

    async def _fetch(self) -> None:
        """Gather the wanted results, a batch at a time, until none is left."""
        try:
            while self._wanted:
                batch, self._wanted = self._wanted, []
                futures = [future for future, _ in batch]
                try:
                    results = await self.client.gather(futures)
                except Exception:
                    # One lost result (its worker died since) must not fail
                    # the others: each attempt fetches its own.
                    outcomes = await asyncio.gather(*futures, return_exceptions=True)
                    for (_, wanted), outcome in zip(batch, outcomes, strict=True):
                        if wanted.done():
                            continue
                        if isinstance(outcome, BaseException):
                            wanted.set_exception(outcome)
                        else:
                            wanted.set_result(outcome)
                else:
                    for (_, wanted), result in zip(batch, results, strict=True):
                        if not wanted.done():  # else its attempt was cancelled
                            wanted.set_result(result)
        finally:
            self._fetcher = None

    async def _cancel(self, future: distributed.Future, flag: str) -> None:
        """Set the attempt's cancel flag (the job sees it), then cancel its future."""
        try:
            await distributed.Event(flag, client=self.client).set()
            await self.client.cancel([future])
        except Exception:
            logger.warning("could not cancel the Dask task %s", future.key, exc_info=True)

    async def settle(self) -> None:
        """Wait for the cancels in flight."""
        while self.cancels:
            await asyncio.wait(list(self.cancels))


def waker(event: anyio.Event) -> Callable[[Any], None]:
    """A callback, safe from any thread, that sets ``event`` on the running loop.

    Call it on the scheduler's loop; the callback never blocks its caller.
    """
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        import trio  # not asyncio, so anyio runs on trio

        token = trio.lowlevel.current_trio_token()

        def wake_trio(_: Any) -> None:
            # RunFinishedError: the run is over, nobody waits any more.
            with contextlib.suppress(trio.RunFinishedError):
                token.run_sync_soon(event.set)

        return wake_trio

    def wake_asyncio(_: Any) -> None:
        # RuntimeError: the loop is closed, nobody waits any more.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(event.set)

    return wake_asyncio
