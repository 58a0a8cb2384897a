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

from collections.abc import Generator
from typing import Any


class Resume:
    """Awaitable that continues a coroutine iterator already stepped once.

    It forwards what the event loop sends or throws into the inner iterator
    (the PEP 380 semantics of ``yield from``, minus the first step), so
    asyncio futures and trio traps pass through untouched and cancellation
    reaches the job at its current await.
    """

    __slots__ = ("_first", "_it")

    def __init__(self, it: Generator[Any, Any, Any], first: Any) -> None:
        self._it = it
        self._first = first

    def __await__(self) -> Generator[Any, Any, Any]:
        it = self._it
        value = self._first
        self._first = None
        while True:
            try:
                sent = yield value
            except GeneratorExit:
                it.close()
                raise
            except BaseException as exc:
                try:
                    value = it.throw(exc)
                except StopIteration as stop:
                    return stop.value
            else:
                try:
                    value = it.send(sent)
                except StopIteration as stop:
                    return stop.value
