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
from collections.abc import Callable, Sequence
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
        self._wanted: list[tuple[distributed.Future[Any], asyncio.Future[Any]]] = []
        self._fetcher: asyncio.Task[None] | None = None
        self._to_submit: list[tuple[str, Callable[[], Any], str, str, asyncio.Future[Any]]] = []

    async def attempt(self, key: str, func: Callable[[], Any], what: str) -> Any:
        """One attempt of ``what``: submit the task under ``key``, wait for its result."""
        flag = f"{key}-cancel"
        placed = self._submit(key, func, flag, what)
        try:
            future = await placed
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
            if placed.done() and not placed.cancelled():
                self._cancel_soon(placed.result(), flag)
            # Else _submit_batch cancels the task as soon as it exists.
            raise

    def _submit(
        self, key: str, func: Callable[[], Any], flag: str, what: str
    ) -> asyncio.Future[distributed.Future[Any]]:
        """The task's future, once submitted with the others that came in the same
        pass of the loop: one message to the Dask scheduler for all of them."""
        loop = asyncio.get_running_loop()
        placed: asyncio.Future[distributed.Future[Any]] = loop.create_future()
        self._to_submit.append((key, func, flag, what, placed))
        if len(self._to_submit) == 1:
            loop.call_soon(self._submit_batch)
        return placed

    def _submit_batch(self) -> None:
        batch, self._to_submit = self._to_submit, []
        futures: Sequence[distributed.Future[Any] | BaseException]
        try:
            futures = self.client.map(
                run_attempt,
                [func for _, func, _, _, _ in batch],
                [flag for _, _, flag, _, _ in batch],
                key=[key for key, _, _, _, _ in batch],
                pure=False,
            )
        except Exception:
            # One job that cannot be sent must not fail the others: each is
            # sent alone, under a key of its own (the client keeps the failed
            # batch's keys and would take them for tasks already sent).
            futures = [
                self._submit_one(f"{key}-alone", func, flag, what, placed)
                for key, func, flag, what, placed in batch
            ]
        for (_, _, flag, _, placed), future in zip(batch, futures, strict=True):
            if placed.cancelled():
                if isinstance(future, distributed.Future):
                    self._cancel_soon(future, flag)
            elif isinstance(future, BaseException):
                placed.set_exception(future)
            else:
                placed.set_result(future)

    def _submit_one(
        self, key: str, func: Callable[[], Any], flag: str, what: str, _: Any
    ) -> distributed.Future[Any] | BaseException:
        try:
            return self.client.submit(run_attempt, func, flag, key=key, pure=False)
        except (TypeError, pickle.PicklingError) as exc:
            cause = exc.__cause__ or exc
            return jobsched.NonRetryableError(
                f"{what} cannot be sent to the Dask cluster: {type(cause).__name__}: {cause}"
            )
        except Exception as exc:
            return exc

    def _cancel_soon(self, future: distributed.Future[Any], flag: str) -> None:
        cancel = asyncio.ensure_future(self._cancel(future, flag))
        self.cancels.add(cancel)
        cancel.add_done_callback(self.cancels.discard)

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

    async def _cancel(self, future: distributed.Future[Any], flag: str) -> None:
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
