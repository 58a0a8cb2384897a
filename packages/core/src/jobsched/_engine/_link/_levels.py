"""The members level check of a rolling upgrade (plan section 4.4, Q5).

A worker of code older than workflows, still running beside new members,
cancels the dependents of a ``"run"`` edge when their upstream fails and
hands a registered job a result marker as a raw dict. So a producer refuses
workflow features (a ``js.result_of``/``js.results_of`` marker, an
``After(on_failure="run")`` edge, ``enqueue_workflow``) while a live worker
of the store reports a level below the store's ``workflow_level`` (NULL: code
that did not report one), and says which worker and how to fix it.

The answer is cached per scheduler for :data:`LEVELS_EVERY` seconds: read
when the scheduler opens the store (a synchronous ``submit`` cannot read, so
it needs an answer at hand), again by ``enqueue_workflow`` and ``enqueue``
when older, and by the heartbeat while this scheduler uses the features. A
plain submit never looks; a store without levels (``workflow_level`` None)
is never read.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from ..._exceptions import SchedulerError, StoreUnavailableError
from ..._log import logger
from ...store._base import JobStore
from ...store._rows import MEMBER_EVERY, Member
from ._retry import StoreCalls

#: Seconds an answer is kept before it is read again.
LEVELS_EVERY = 30.0


class Levels:
    """This scheduler's cached answer: the live workers of an older level."""

    __slots__ = ("_calls", "_monotonic", "_old", "_owner", "_read_at", "_store", "_used", "_wall")

    def __init__(
        self,
        store: JobStore,
        owner: str,
        calls: StoreCalls,
        *,
        wall: Callable[[], float] = time.time,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._store = store
        self._owner = owner
        self._calls = calls
        self._wall = wall  # members' seen_at is wall-clock time
        self._monotonic = clock
        #: The live workers of an older level at the last read (none: empty).
        self._old: list[Member] = []
        self._read_at = -math.inf
        #: Set by the first use of a feature: the heartbeat keeps the answer fresh.
        self._used = False

    async def check(self, what: str) -> None:
        """Raise for ``what`` if a live worker is of an older level (read
        again when older than :data:`LEVELS_EVERY`; an outage raises
        ``StoreUnavailableError`` after the link's usual patience)."""
        self._used = True
        await self.refresh(retried=True)
        self._refuse(what)

    def check_cached(self, what: str) -> None:
        """``check`` on the answer at hand, for the synchronous submit."""
        self._used = True
        self._refuse(what)

    async def refresh(self, *, retried: bool = False) -> None:
        """Read the members list if the answer is older than LEVELS_EVERY."""
        need = self._store.workflow_level
        if need is None or self._monotonic() - self._read_at < LEVELS_EVERY:
            return
        store = self._store
        try:
            if retried:

                async def read() -> list[Member]:
                    # Before start() too (as a flush then writes): open is idempotent.
                    await store.open()
                    return await store.members()

                members = await self._calls.read("reading the members' levels", read, patience=None)
            else:
                members = await store.members()
        except NotImplementedError:
            members = []  # a store without a members list: no member to tell apart
        wall = self._wall()
        self._old = [
            m
            for m in members
            if m.workers > 0
            and wall - m.seen_at <= 3 * MEMBER_EVERY
            and (m.level is None or m.level < need)
            and m.owner != self._owner
        ]
        self._read_at = self._monotonic()

    async def first_read(self) -> None:
        """The answer a synchronous submit finds (the scheduler opens the
        store). A failed read leaves none: ``enqueue`` and the heartbeat read
        again."""
        try:
            await self.refresh()
        except Exception:
            logger.debug("reading the members' levels failed", exc_info=True)

    async def tick(self) -> None:
        """The heartbeat's: keep the answer fresh while the features are in use.
        A failed read keeps the answer it had (the next beat tries again)."""
        if not self._used:
            return
        try:
            await self.refresh()
        except StoreUnavailableError:
            pass  # the leases' own beats report an outage
        except Exception:
            logger.debug("reading the members' levels failed", exc_info=True)

    def _refuse(self, what: str) -> None:
        old = self._old
        if not old:
            return
        first = old[0]
        level = "none (code older than workflows)" if first.level is None else first.level
        more = f" (and {len(old) - 1} more)" if len(old) > 1 else ""
        raise SchedulerError(
            f"{what} is refused: the live worker {first.owner}{more} of the store "
            f"{self._store.url} reports level {level}, and workflow features need "
            f"level {self._store.workflow_level} on every worker (an older one cancels "
            '"run" dependents and passes result markers as raw dicts). Nothing was '
            "submitted. Upgrade every worker first, then use workflow features; "
            "`jobsched members` shows levels (docs/fleet.md, 'Upgrading a fleet')"
        )
