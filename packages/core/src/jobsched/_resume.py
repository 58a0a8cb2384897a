"""Continuing an attempt that the worker stepped once by hand.

Most of a no-op job's cost in the original design was the machinery around
it: a task per attempt, a timer, a future. Here a worker runs attempts inline
inside its own long-lived cancel scope and steps each attempt's coroutine once
by hand. If it finishes without suspending, nothing could have cancelled it
or timed it out, so it needs no timeout and no cancel handle. If it suspends,
the worker sets the timeout on its scope and hands the rest of the coroutine
to the event loop through :class:`Resume`, exactly as ``await`` would have.
Both steps run inside the same scope, so cancel scopes the job opens itself
nest correctly (trio checks this strictly).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator
from typing import Any

import anyio

from ._log import logger

#: Seconds a cancelled or timed-out job may keep running (swallowing the
#: cancellation, or in shielded clean-up) before it is abandoned.
CANCEL_GRACE = 1.0


class Abandoned(Exception):
    """The attempt ignored its cancellation past the grace period and was closed."""


class Resume:
    """Awaitable that continues a coroutine iterator already stepped once.

    It forwards what the event loop sends or throws into the inner iterator
    (the PEP 380 semantics of ``yield from``, minus the first step), so
    asyncio futures and trio traps pass through untouched and cancellation
    reaches the job at its current await.

    It also bounds a job that will not stop: once ``scope`` is cancelled, the
    job has :data:`CANCEL_GRACE` seconds; the first time it resumes after
    that, ``GeneratorExit`` is thrown in at its await (``except Exception``
    cannot swallow it) and :class:`Abandoned` is raised, so the worker moves
    on. Two things cannot be bounded: a job that catches ``GeneratorExit`` too
    (``except BaseException`` without re-raising) keeps its worker until it
    returns, since dropping a coroutine inside its own cancel scopes would
    break the event loop; and a job that blocks the loop without awaiting
    cannot be interrupted by anything in Python.
    """

    __slots__ = ("_clock", "_first", "_it", "_scope")

    def __init__(
        self,
        it: Generator[Any, Any, Any],
        first: Any,
        scope: anyio.CancelScope,
        clock: Callable[[], float],
    ) -> None:
        self._it = it
        self._first = first
        self._scope = scope
        self._clock = clock

    def __await__(self) -> Generator[Any, Any, Any]:
        it = self._it
        scope = self._scope
        value = self._first
        self._first = None
        give_up_at: float | None = None
        while True:
            try:
                sent = yield value
            except GeneratorExit:
                it.close()
                raise
            except BaseException as exc:
                thrown: BaseException | None = exc
            else:
                thrown = None
            if scope.cancel_called:
                now = self._clock()
                if give_up_at is None:
                    give_up_at = now + CANCEL_GRACE
                elif now >= give_up_at:
                    try:
                        value = it.throw(GeneratorExit())
                    except BaseException as exc:
                        # It ended (GeneratorExit, a return, or an error from
                        # its clean-up): its frames, and any cancel scopes they
                        # opened, are unwound, so the worker can move on.
                        raise Abandoned(
                            f"kept running {CANCEL_GRACE}s after its cancellation; abandoned"
                        ) from (None if isinstance(exc, (GeneratorExit, StopIteration)) else exc)
                    # It caught GeneratorExit too and awaited again. Dropping it
                    # now would leave its cancel scopes open on the worker's
                    # task and break the event loop, so keep driving it: it
                    # holds its worker until it returns.
                    give_up_at = math.inf
                    logger.error(
                        "a job ignored GeneratorExit after its cancellation "
                        "(`except BaseException` without re-raising?); it keeps its "
                        "worker until it returns"
                    )
                    continue
            try:
                value = it.send(sent) if thrown is None else it.throw(thrown)
            except StopIteration as stop:
                return stop.value
