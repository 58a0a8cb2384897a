"""This member's line in the store's members list (``jobsched members``, the
dashboard): reported by the heartbeat, forgotten at stop."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable

import anyio

from ..._exceptions import StoreUnavailableError
from ..._log import logger
from ...store._base import JobStore
from ...store._rows import MEMBER_EVERY, Member
from ._host import Host
from ._levels import Levels
from ._terms import Terms


class Members:
    """Reports this member every MEMBER_EVERY seconds, and forgets it at stop."""

    __slots__ = (
        "_failed", "_host", "_levels", "_owner", "_reported", "_started", "_store", "_terms",
        "_wall",
    )  # fmt: skip

    def __init__(
        self,
        store: JobStore,
        owner: str,
        host: Host,
        terms: Terms,
        wall: Callable[[], float],
        levels: Levels,
    ) -> None:
        self._store = store
        self._levels = levels
        self._owner = owner
        self._host = host
        self._terms = terms
        self._wall = wall
        #: When this member started, and last reported.
        self._started = wall()
        self._reported = -math.inf
        self._failed = False

    async def report(self) -> None:
        """Every MEMBER_EVERY seconds: this member's line in the members list."""
        now = self._wall()
        if now - self._reported < MEMBER_EVERY:
            return
        self._reported = now
        member = Member(
            owner=self._owner,
            workers=self._host.num_workers,
            busy=len(self._host.held()),
            started_at=self._started,
            seen_at=now,
            names=self._terms.member_names(),
            queues=self._terms.member_queues(),
            executors=() if self._terms.producer else self._host.executor_names(),
        )
        try:
            await self._store.report_member(member)
        except StoreUnavailableError:
            pass  # the leases' own beats report an outage; the next report retries
        except Exception:
            # The members list is for people: a store that fails it in a way
            # of its own must not end the heartbeat, which keeps the leases.
            if not self._failed:
                self._failed = True
                logger.warning(
                    "the store %s could not record this member for the members list; "
                    "its jobs are not affected",
                    self._store.url,
                    exc_info=True,
                )
        await self._levels.tick()

    async def forget(self) -> None:
        """Leave the members list (at stop); bounded, shielded."""
        with anyio.move_on_after(MEMBER_EVERY, shield=True):
            # Unreachable: it goes stale, then leaves the list after MEMBERS_KEEP.
            with contextlib.suppress(StoreUnavailableError):
                await self._store.forget_member(self._owner)
