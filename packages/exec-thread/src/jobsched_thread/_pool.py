"""A pool of daemon threads that answers an asyncio loop: the thread executor's on asyncio."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from contextlib import suppress
from contextvars import Context
from queue import SimpleQueue
from typing import Any

__all__ = ["DaemonPool", "Raised"]


class Raised:
    """What a call raised, delivered as the future's *result*.

    Not as its exception: asyncio throws a future's exception into the
    awaiting task with ``coro.throw()``, and a ``GeneratorExit`` thrown
    through nested coroutines closes them instead of reaching the caller's
    ``except``. Raised from :meth:`ThreadExecutor.run`'s own frame, every
    exception (``SystemExit`` and ``GeneratorExit`` too) propagates as usual.
    """

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


_Item = tuple[asyncio.AbstractEventLoop, "asyncio.Future[Any]", Context, Callable[[], Any]]


class DaemonPool:
    """Worker threads fed from one queue; a new thread starts when none is idle.

    Unlike :class:`concurrent.futures.ThreadPoolExecutor`, whose threads the
    interpreter joins at exit, these are daemon threads: a job that ignores
    cancellation and runs on in an abandoned thread cannot hold the process
    open after the program is done. Each call hands its result straight to the
    loop (one asyncio future, no ``concurrent.futures.Future`` in between).

    Made and used on the event loop thread only; the workers touch nothing
    but the queue and the idle list.
    """

    __slots__ = ("_idle", "_queue", "_threads")

    def __init__(self) -> None:
        self._queue: SimpleQueue[_Item | None] = SimpleQueue()
        # One entry per thread waiting on the queue, as the semaphore of
        # ThreadPoolExecutor does it; list.append and list.pop are atomic,
        # so the workers need no lock to mark themselves idle.
        self._idle: list[None] = []
        self._threads = 0

    def submit(
        self, loop: asyncio.AbstractEventLoop, func: Callable[[], Any], context: Context
    ) -> asyncio.Future[Any]:
        """Run ``context.run(func)`` in a worker thread; the future, of the running
        ``loop``, gives its result or a :class:`Raised` with what it raised.
        Cancelling the future drops the result when it comes."""
        future = loop.create_future()
        item = (loop, future, context, func)
        try:
            self._idle.pop()
        except IndexError:
            threading.Thread(
                target=self._work,
                args=(item,),
                name=f"jobsched-thread-{self._threads + 1}",
                daemon=True,
            ).start()
            self._threads += 1  # only once started: shutdown() sends one stop per thread
        else:
            self._queue.put(item)
        return future

    def shutdown(self) -> None:
        """Let every thread go once the calls already submitted are done."""
        for _ in range(self._threads):
            self._queue.put(None)
        self._threads = 0

    def _work(self, item: _Item | None) -> None:
        idle, get = self._idle, self._queue.get
        while item is not None:
            loop, future, context, func = item
            try:
                result = context.run(func)
            except BaseException as exc:  # the job's own SystemExit too: this thread goes on
                result = Raised(exc)
            # Idle before the result reaches the loop, so the next call, which
            # may come as soon as it does, finds this thread instead of
            # starting another.
            idle.append(None)
            # A closed loop raises RuntimeError: nobody waits for this result.
            with suppress(RuntimeError):
                loop.call_soon_threadsafe(_set_result, future, result)
            # Drop the references before waiting, so a finished job's
            # result is not kept alive by an idle thread.
            item = loop = future = context = func = result = None  # type: ignore[assignment]
            item = get()


def _set_result(future: asyncio.Future[Any], result: Any) -> None:
    if not future.cancelled():  # the attempt was abandoned
        future.set_result(result)
