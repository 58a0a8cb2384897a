"""Riding out an outage: store calls retried with backoff, logged as one outage.

A store call that fails with :class:`StoreUnavailableError` (the store's mark
for a transient failure: a dropped connection, a locked or full database) is
retried with capped, jittered backoff (``_timing.STORE_BACKOFF``), and never
ends the scheduler. A :class:`JobDataError` (a value of one job the store
cannot keep) is its caller's to handle (``_commit``). Any other exception is a
bug, logged as one in a line that says where to report it, and ends the
scheduler as it always did.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio

from ..._exceptions import SchedulerError, StoreUnavailableError
from ..._log import logger
from ...store._errors import REPORT_BUGS, JobDataError
from . import _timing
from ._closing import Closing
from ._outage import Outage

T = TypeVar("T")


class LinkClosed(Exception):
    """The link closed while a call waited to be retried: the task ends."""


class StoreCalls:
    """Store calls for the link's tasks and for callers that wait anyway.

    ``down`` is called when an outage begins (before it is logged), ``back``
    when it ends; the link's other parts learn of an outage through these.
    """

    __slots__ = ("_back", "_closing", "_down", "_outage", "_rng")

    def __init__(
        self,
        outage: Outage,
        closing: Closing,
        down: Callable[[], None],
        back: Callable[[], None],
    ) -> None:
        self._outage = outage
        self._closing = closing
        self._down = down
        self._back = back
        self._rng = random.Random()

    async def call(
        self,
        what: str,
        call: Callable[[], Awaitable[T]],
        *,
        give_up: Callable[[float], bool] | None = None,
        own: bool = True,
        data: bool = False,
    ) -> T:
        """``call()`` until it succeeds; a StoreUnavailableError is retried.

        Each call runs shielded, so its caller knows whether it finished.
        ``give_up(seconds failing)`` True re-raises the error instead; without
        it, the link closing ends the retries with :class:`LinkClosed`.
        ``own``: a call of the link's tasks, which any other error ends
        (logged as a bug); a caller's own read raises it to that caller.
        ``data``: the caller handles a :class:`JobDataError` (``_commit``);
        elsewhere it is an error like any other.
        """
        failures = 0
        first = 0.0
        while True:
            try:
                with anyio.CancelScope(shield=True):
                    result = await call()
            except StoreUnavailableError as exc:
                if not failures:
                    first = time.monotonic()
                failures += 1
                self.failed(what, exc)
                if give_up is not None:
                    if give_up(time.monotonic() - first):
                        raise
                elif self._closing.closing:
                    raise LinkClosed() from exc
                await self.backoff(failures)
                continue
            except Exception as exc:
                if not own or (data and isinstance(exc, JobDataError)):
                    raise
                if isinstance(exc, SchedulerError):
                    # The store's own word for a state no retry mends (a
                    # corrupt file): it ends the scheduler, said as it is.
                    logger.error("%s", exc)
                    raise
                # Neither an outage nor one job's data: nothing the scheduler
                # can do about it but stop, and say whose bug it is.
                logger.critical(
                    "a bug in jobsched or in the store %s ended a store call (%s: %s: %s): "
                    "report it with this traceback at %s",
                    self._outage.url,
                    what,
                    type(exc).__name__,
                    " ".join(str(exc).split()),
                    REPORT_BUGS,
                )
                raise
            self.ok(what)
            return result

    async def read(
        self, what: str, call: Callable[[], Awaitable[T]], patience: float | None = math.inf
    ) -> T:
        """``call()`` for a caller that waits anyway (``join()``, ``wait()``,
        stop's hand-back): retried through an outage, logged as one with the
        link's own calls.

        :param patience: seconds of failing calls before giving up (None:
            ``_timing.UNAVAILABLE_WAIT``); once the link closes, at the next failure.
        :raises StoreUnavailableError: given up.
        """
        closing = self._closing

        def give_up(failing: float) -> bool:
            # Closing: the store is about to close under the caller anyway.
            limit = _timing.UNAVAILABLE_WAIT if patience is None else patience
            return closing.closing or failing >= limit

        try:
            return await self.call(what, call, give_up=give_up, own=False)
        except BaseException:
            # Given up, or the caller cancelled (a wait's timeout): the call
            # is not failing any more, so the outage can end without it.
            self._outage.drop(what)
            raise

    def failed(self, what: str, exc: StoreUnavailableError) -> None:
        """The call ``what`` failed for a transient reason (see :class:`Outage`)."""
        if self._outage.since is None:
            self._down()
        self._outage.failed(what, exc)

    def ok(self, what: str) -> None:
        """The call ``what`` succeeded (see :class:`Outage`)."""
        if self._outage.ok(what):
            self._back()

    def drop(self, what: str) -> None:
        """Forget ``what`` without a success (it is not being called now)."""
        self._outage.drop(what)

    async def backoff(self, failures: int) -> None:
        """Wait before the next try after ``failures`` failures in a row."""
        delay = _timing.STORE_BACKOFF.delay(failures, self._rng)
        if self._closing.closing:
            # The committer still writing at stop: a backoff all the same
            # (the wakeup below is set for good now).
            await anyio.sleep(delay)
            return
        # Cut short by close(): the call is tried once more, then the task ends.
        with anyio.move_on_after(delay):
            await self._closing.backoff_cut()
