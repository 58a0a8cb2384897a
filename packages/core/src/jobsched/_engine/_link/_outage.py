"""An outage of the store, as the link tells it: once when it starts, once when it ends."""

from __future__ import annotations

import time
from collections.abc import Callable

from ..._exceptions import StoreUnavailableError
from ..._log import logger
from ...store._urls import mask_password


class Outage:
    """Which of the link's store calls are failing: one WARNING when the first
    fails, one INFO when a call succeeds and none is failing any more.

    Each call site has a name in ``failing`` until it succeeds, so a store
    that reads but cannot write (a full disk) is one outage, not one per
    read that got through.
    """

    def __init__(self, url: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.url = mask_password(url)
        self.failing: set[str] = set()
        #: When the outage began (``clock``), or None while the store is fine.
        self.since: float | None = None
        self.error: StoreUnavailableError | None = None
        self._clock = clock

    def failed(self, what: str, exc: StoreUnavailableError) -> None:
        """The call ``what`` failed with ``exc``."""
        self.failing.add(what)
        self.error = exc
        if self.since is None:
            self.since = self._clock()
            logger.warning(
                "the store %s is unavailable (%s: %s); retrying. Running jobs go on, "
                "and their outcomes are written when it is back",
                self.url,
                what,
                exc,
            )

    def drop(self, what: str) -> None:
        """Forget ``what`` without a success (it is not being called now)."""
        self.failing.discard(what)

    def ok(self, what: str) -> bool:
        """The call ``what`` succeeded; True if that ended the outage."""
        self.failing.discard(what)
        if self.since is None or self.failing:
            return False
        lasted = self._clock() - self.since
        self.since = self.error = None
        logger.info("the store %s is back after %.1f s unavailable", self.url, lasted)
        return True

    def down_for(self, since: float) -> float:
        """Seconds the store has been unavailable since ``since`` (0: it is not)."""
        if self.since is None:
            return 0.0
        return max(0.0, self._clock() - max(since, self.since))
