"""Seams: the scheduler's former private names that tests still read.

The suite reaches inside a ``JobScheduler`` by names that have since moved
into the records and parts (``_state.Settings``, ``RunState``,
``JobTable``). ``Seams`` answers them as properties over their new homes, so
those tests pass unchanged. No engine code reads them: a property costs a
call, and the parts hold the records themselves.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping, Sized
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections import deque

    import anyio

    from .._enums import JobStatus
    from .._jobs._job import Job
    from .._ordering._queue import JobQueue
    from .._time._recurring import Schedule
    from ._backing import Backing
    from ._cancel import Canceller
    from ._dispatch import Dispatcher
    from ._durable import DurableBacking
    from ._executors import ExecutorSet
    from ._lifecycle import Lifecycle
    from ._link import StoreLink
    from ._memory import MemoryBacking
    from ._state import JobListener, JobTable, RunState, Settings
    from ._timers import Ticker


class Seams:
    """Read-only views of moved state, for tests only; and the records and
    parts ``_compose`` sets on the scheduler, declared."""

    __slots__ = ()

    _settings: Settings
    _run: RunState
    _table: JobTable
    _clock: Callable[[], float]  # _settings.clock: submit reads it per job
    _timers: Ticker
    #: Where jobs are kept (see _backing): memory or a durable store.
    _backing: Backing
    _cancelling: Canceller
    _lifecycle: Lifecycle
    #: The workers and their attempts (see _dispatch).
    _dispatcher: Dispatcher
    _executors: ExecutorSet
    _queue: JobQueue  # the memory backing's heaps (empty on a durable store)
    _idle_workers: deque[anyio.Event]
    #: A durable store's link (see _link): None for the in-memory one.
    _link: StoreLink | None
    #: The registered functions by name (``js.App``), for registered jobs
    #: claimed or fetched from the store; None without an app.
    _registry: Mapping[str, Any] | None

    @property
    def _num_workers(self) -> int:
        return self._settings.num_workers

    @property
    def _load_grace(self) -> float:
        return self._settings.load_grace

    @property
    def _state(self) -> int:
        return self._run.phase

    @property
    def _stopping(self) -> bool:
        return self._run.stopping

    @property
    def _watching(self) -> bool:
        return self._timers.watching

    @property
    def _ticker_sleeps_until(self) -> float:
        return self._timers.sleeps_until

    @property
    def _listeners(self) -> list[JobListener]:
        return self._table.listeners

    @property
    def _push(self) -> Callable[[Job, float], None]:
        return self._memory().push

    @_push.setter
    def _push(self, push: Callable[[Job, float], None]) -> None:
        # Both: a retried job and a released dependent are queued through it.
        memory = self._memory()
        memory.push = memory.release = push

    def _memory(self) -> MemoryBacking:
        from ._memory import MemoryBacking

        assert isinstance(self._backing, MemoryBacking), "the memory store's seam"
        return self._backing

    @property
    def _load_handbacks(self) -> int:
        # Read by the worker's stop summary on any store: none in memory.
        held = getattr(self._backing, "held", None)
        return 0 if held is None else int(held.load_handbacks)

    @property
    def _attempt_time(self) -> float:
        return self._durable().held.attempt_time

    @_attempt_time.setter
    def _attempt_time(self, seconds: float) -> None:
        self._durable().held.attempt_time = seconds

    def _durable(self) -> DurableBacking:
        from ._durable import DurableBacking

        assert isinstance(self._backing, DurableBacking), "a durable store's seam"
        return self._backing

    @property
    def _recurring(self) -> dict[str, Schedule]:
        # The memory store's schedules; a durable store keeps none here.
        recurring: dict[str, Schedule] = getattr(self._backing.schedules, "recurring", {})
        return recurring

    def _hand_back_running(self) -> int:
        return self._cancelling.cut_short_running()

    @property
    def _claimed(self) -> Sized:
        # Claimed jobs not taken yet (the workers read the backing's).
        return self._backing.waiting

    @property
    def _transition(self) -> Callable[[Job, JobStatus], None]:
        return self._table.transition

    # The lifecycle's (step 7, E1): tests wrap the stop's wake-up, replace the
    # ticker task, and count a replacement ticker's exit.
    @property
    def _wake_all(self) -> Callable[[], None]:
        return self._lifecycle.wake_all

    @_wake_all.setter
    def _wake_all(self, wake_all: Callable[[], None]) -> None:
        self._lifecycle.wake_all = wake_all  # type: ignore[method-assign]

    @property
    def _ticker(self) -> Callable[[], Coroutine[Any, Any, None]]:
        return self._lifecycle.ticker

    @_ticker.setter
    def _ticker(self, ticker: Callable[[], Coroutine[Any, Any, None]]) -> None:
        self._lifecycle.ticker = ticker

    @property
    def _task_exited(self) -> Callable[[], None]:
        return self._lifecycle.tasks.exited
