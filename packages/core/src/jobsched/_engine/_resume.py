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

The price of running inline: the job's own cancel scopes and task groups live
on the worker's task, so the job can never be moved off it, nor dropped while
one of them is open (the task's scope stack would be corrupted, which kills
the event loop on trio). A job that outlives its cancellation by
:data:`CANCEL_GRACE` is therefore not taken from its task; the *worker* leaves
instead: the scheduler records the attempt, starts a fresh worker, and this
task only finishes driving the job, then exits (see
``Dispatcher.abandon``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator
from typing import Any

import anyio

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

    It also ends a job that swallows its cancellation: once ``scope`` is
    cancelled, the job has :data:`CANCEL_GRACE` seconds; after that, the next
    cancellation delivered to it is replaced by ``GeneratorExit``
    (``except Exception`` cannot swallow it), and whatever the job then does
    (ends, raises, returns) raises :class:`Abandoned`. It is replaced only
    where that is safe: at an await whose wait was already undone by the
    cancellation (never at an ordinary wake-up, which would lose what the wait
    returned, such as a task group's "children done"), and only while the job
    has no child tasks of its own running (a task group waiting for them would
    be left with orphans). A job that catches ``GeneratorExit`` too, or whose
    children never end, runs on until it returns; the scheduler stops waiting
    for it after the grace anyway.
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
        close_at: float | None = None
        closed = False
        while True:
            try:
                sent = yield value
            except GeneratorExit:
                it.close()
                raise
            except BaseException as exc:
                thrown: BaseException | None = exc
                sent = None
            else:
                thrown = None
            if scope.cancel_called:
                if close_at is None:
                    close_at = self._clock() + CANCEL_GRACE
                elif self._clock() >= close_at and _closable(sent, thrown):
                    close_at = math.inf  # once: a job that survives it is left alone
                    closed = True
                    thrown = GeneratorExit()
            try:
                value = it.send(sent) if thrown is None else it.throw(thrown)
            except StopIteration as stop:
                if closed:
                    raise Abandoned(_ABANDONED) from None
                return stop.value
            except BaseException as exc:
                if closed:
                    # It unwound (GeneratorExit, or a task group's group of
                    # it): its frames and scopes are gone, the worker goes on.
                    cause = None if _only_generator_exits(exc) else exc
                    raise Abandoned(_ABANDONED) from cause
                raise


_ABANDONED = f"kept running {CANCEL_GRACE}s after its cancellation; closed and abandoned"


def _closable(sent: Any, thrown: BaseException | None) -> bool:
    """True if a cancellation is being delivered and the job has no child tasks."""
    cancelled = anyio.get_cancelled_exc_class()
    if thrown is not None:
        delivering = isinstance(thrown, cancelled)
    else:
        # trio sends a trap its outcome (outcome.Error(Cancelled()) when the
        # wait was aborted by a cancellation); asyncio throws CancelledError.
        delivering = isinstance(getattr(sent, "error", None), cancelled)
    if not delivering:
        return False
    me = anyio.get_current_task().id
    return not any(task.parent_id == me for task in anyio.get_running_tasks())


def _only_generator_exits(exc: BaseException) -> bool:
    """True for GeneratorExit or a cancellation, alone or in (nested) exception groups."""
    inner = getattr(exc, "exceptions", None)  # BaseExceptionGroup, also the 3.10 backport
    if isinstance(inner, tuple):
        return all(_only_generator_exits(e) for e in inner)
    return isinstance(exc, (GeneratorExit, anyio.get_cancelled_exc_class()))
