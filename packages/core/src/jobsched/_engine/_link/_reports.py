"""Jobs this member never claims, told once: signed by a key it lacks,
registered under a name its app does not declare, or waiting for an executor
it has not installed. Its claims never see them, so the claimer looks for
them now and then (``_timing.KEYS_EVERY``, ``EXECUTORS_EVERY``), less often
while a look is slow (``_timing.LOOKS_SHARE``)."""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable, Collection
from typing import TypeVar

from ..._jobs import _plugins
from ..._log import logger
from ...store._base import JobStore
from ...store._codec import Codec, key_name
from . import _timing
from ._retry import StoreCalls
from ._terms import Terms

T = TypeVar("T")


def _look_interval(every: float, cost: float) -> float:
    """Seconds from one look to the next of a kind that looks every ``every``
    seconds and whose last look took ``cost``: at least ``cost / LOOKS_SHARE``,
    as the claimer waits for a look (a slow one: a held xmin, see _timing).
    ``every`` 0 is a test's "look on every pass": it stays so, whatever the cost.
    """
    return max(every, cost / _timing.LOOKS_SHARE) if every > 0 else 0.0


class Reports:
    """What this member has told about the jobs it never claims, and when it last looked."""

    __slots__ = (
        "_calls",
        "_codec",
        "_executors_cost",
        "_executors_reported",
        "_executors_seen",
        "_keys_cost",
        "_keys_reported",
        "_keys_seen",
        "_names_reported",
        "_store",
        "_terms",
        "_timer",
        "unkeyed_schedules",
    )

    def __init__(
        self,
        store: JobStore,
        codec: Codec,
        calls: StoreCalls,
        terms: Terms,
        *,
        timer: Callable[[], float] = time.monotonic,
    ) -> None:
        self._store = store
        self._codec = codec
        self._calls = calls
        self._terms = terms
        self._timer = timer  # times the looks' store calls
        #: When each kind of look last ran (the claimer's clock), and the
        #: seconds its store calls took (see _look_interval).
        self._keys_seen = -math.inf
        self._keys_cost = 0.0
        #: Key ids this member logged that it lacks: each is logged once.
        self._keys_reported: set[bytes] = set()
        self._names_reported: set[str] = set()
        self._executors_seen = -math.inf
        self._executors_cost = 0.0
        #: Executors this member lacks that jobs wait on -> when it last
        #: logged them (monotonic); a name goes once no job waits on it.
        self._executors_reported: dict[str, float] = {}
        #: Stored schedules signed by a key this member lacks, logged once
        #: each (by the host, which fires them).
        self.unkeyed_schedules: set[str] = set()

    async def look_when_idle(self, clock: float) -> None:
        """An idle claimer's look (every KEYS_EVERY seconds at most, see
        _look_interval) for jobs signed by unknown keys and registered under
        unknown names."""
        if clock - self._keys_seen >= _look_interval(_timing.KEYS_EVERY, self._keys_cost):
            self._keys_seen = clock
            self._keys_cost = await self._unknown_keys() + await self._unknown_names()

    async def look_for_executors(self, installed: Collection[str], clock: float) -> None:
        """A look (every EXECUTORS_EVERY seconds at most, see _look_interval)
        for jobs waiting on an executor not in ``installed``."""
        every = _look_interval(_timing.EXECUTORS_EVERY, self._executors_cost)
        if clock - self._executors_seen >= every:
            self._executors_seen = clock
            self._executors_cost = await self._missing_executors(installed, clock)

    async def _timed(self, what: str, call: Callable[[], Awaitable[T]]) -> tuple[T, float]:
        """``call()`` through the link's retries, and the seconds its last
        try took: an outage's failed tries and backoffs are not the look's
        cost, and would hold the next look back long after the store is back."""
        started = 0.0

        async def timed() -> T:
            nonlocal started
            started = self._timer()
            return await call()

        # Retried as every store call is: an outage must not end the claimer.
        result = await self._calls.call(what, timed)
        return result, self._timer() - started

    async def _unknown_keys(self) -> float:
        """Log an ERROR, once per key id, for jobs this member never claims
        because a key it does not hold signed them; the look's cost (seconds)."""
        waiting, cost = await self._timed(
            "looking for jobs signed by unknown keys", self._store.waiting_for_keys
        )
        for kid, count in waiting.items():
            if kid not in self._keys_reported:
                self._keys_reported.add(kid)
                held = ", ".join(key_name(k) for k in self._codec.key_ids) or "none"
                logger.error(
                    "%d job(s) in the store %s are signed with key id %s, which this member "
                    "does not hold (its key ids: %s): they wait for a member that holds it; "
                    "add that key to secret=[...] or JOBSCHED_SECRET (the first key signs, "
                    "every one verifies)",
                    count,
                    self._store.url,
                    key_name(kid),
                    held,
                )
        return cost

    async def _unknown_names(self) -> float:
        """Log an ERROR, once per name, for registered jobs this member never
        claims because its app does not register their name; the look's cost."""
        waiting_for_names = getattr(self._store, "waiting_for_names", None)
        if waiting_for_names is None:  # a store written before registered jobs
            return 0.0
        names = self._terms.names
        waiting, cost = await self._timed(
            "looking for registered jobs of unknown names", lambda: waiting_for_names(names)
        )
        for name, count in sorted(waiting.items()):
            if name not in self._names_reported:
                self._names_reported.add(name)
                logger.error(
                    "%d job(s) in the store %s are registered under the name %r, which this "
                    "member's app does not register (it registers %d name(s)): they wait for "
                    "a member that does; deploy the code that declares it (@app.job) here, "
                    "or run a worker of the app that has it",
                    count,
                    self._store.url,
                    name,
                    len(names),
                )
        return cost

    async def _missing_executors(self, installed: Collection[str], clock: float) -> float:
        """Log a WARNING, once per executor name (again after
        EXECUTORS_REPEAT, or when it comes back after none waited), for
        jobs this member never claims because it lacks their executor; the
        look's cost (seconds)."""
        waiting, cost = await self._timed(
            "looking for jobs on executors this member lacks",
            lambda: self._store.waiting_for_executors(installed),
        )
        reported = self._executors_reported
        for name in [n for n in reported if n not in waiting]:
            del reported[name]  # resolved: told again if it comes back
        for name, count in sorted(waiting.items()):
            if clock - reported.get(name, -math.inf) < _timing.EXECUTORS_REPEAT:
                continue
            reported[name] = clock
            logger.warning(
                "%d job(s) in the store %s wait for the executor %r, which this member has "
                "not installed (its executors: %s), so it never claims them: they wait for a "
                "member that has it; to fix, on the workers that should run them: %s",
                count,
                self._store.url,
                name,
                ", ".join(sorted(installed)) or "none",
                _plugins.install_hint(name),
            )
        return cost
