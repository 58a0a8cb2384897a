"""Leases: the heartbeat that keeps this member's jobs.

The *heartbeat* task extends the leases of the jobs this member holds (and of
those whose outcomes wait to be committed), learns which of them someone
cancelled, hands back claims stuck behind long jobs and jobs this member
cannot load, and reports the member (``_members``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection

import anyio

from ..._exceptions import StoreUnavailableError
from ...store._base import JobStore
from ._closing import Closing
from ._commit import Committer
from ._host import Host
from ._members import Members
from ._retry import StoreCalls


class Heartbeat:
    """The heartbeat task, and the lease renewal a claim makes first after an outage."""

    __slots__ = (
        "_calls",
        "_closing",
        "_committer",
        "_host",
        "_members",
        "_owner",
        "_renew_first",
        "_store",
        "_unreleased",
        "_wakeup",
        "_wall",
    )

    def __init__(
        self,
        store: JobStore,
        owner: str,
        *,
        wall: Callable[[], float],
        host: Host,
        calls: StoreCalls,
        closing: Closing,
        committer: Committer,
        members: Members,
    ) -> None:
        self._store = store
        self._owner = owner
        self._wall = wall
        self._host = host
        self._calls = calls
        self._closing = closing
        self._committer = committer
        self._members = members
        self._wakeup = anyio.Event()
        #: Stale claims whose hand-back the store refused (an outage): the
        #: next beat tries again (see _hand_back_stale).
        self._unreleased: list[int] = []
        #: Set when an outage starts: the next claim renews this member's
        #: leases first, so that a lease which ran out while the store was
        #: away is not taken over from this member by its own claim.
        self._renew_first = False

    def wake(self) -> None:
        """Jobs to hand back (see ``Host.deferred``), or closing: beat now."""
        self._wakeup.set()

    def outage_began(self) -> None:
        """The store became unavailable: leases first at the next claim."""
        self._renew_first = True

    async def renew_if_due(self) -> None:
        """Before a claim: after an outage, renew the leases first, so this
        claim does not take over this member's own jobs whose leases ran out."""
        if self._renew_first:
            await self._extend()
            self._renew_first = False

    def _holding(self) -> Collection[int]:
        """The jobs whose leases this member keeps: those the host holds, and
        those whose outcomes wait to be committed. The host lets go of a job
        when its outcome is made, but the row stays RUNNING under this member
        until that outcome is committed; a commit that stalls past the lease
        (an outage, a slow database) must not let another member take the
        finished job over as lost and run it again."""
        held = self._host.held()
        uncommitted = self._committer.outcomes_uncommitted()
        if uncommitted is None:
            return held
        waiting = {outcome.id for outcome in uncommitted}
        waiting.update(held)
        return waiting

    async def _extend(self) -> None:
        held = self._holding()
        if held:
            store = self._store
            cancelled = await store.extend(self._owner, held, self._wall() + store.lease)
            if cancelled:
                self._host.cancel_held(cancelled)

    async def _hand_back_stale(self, numbers: list[int]) -> None:
        """Release claimed-ahead jobs stuck behind long attempts (or behind
        a commit that an outage holds up: the workers wait for it). One try,
        so the heartbeat is not held up: if the store is unavailable they
        stay held (renewed) and the next beat tries again."""
        try:
            await self._calls.read(
                "handing back claims stuck behind long jobs",
                lambda: self._store.release(self._owner, numbers),
                patience=0.0,
            )
        except StoreUnavailableError:
            self._unreleased = numbers
            return
        self._unreleased = []
        self._host.handed_back(numbers)

    async def _hand_back_unloadable(self) -> None:
        """Hand back the jobs this member could not load (``Host.deferred``),
        for a member that can. One try, as for stale claims: on an outage
        they stay held (renewed) and the next beat tries again."""
        jobs = self._host.deferred()
        if not jobs:
            return
        try:
            await self._calls.read(
                "handing back jobs this member cannot load",
                lambda: self._store.defer(self._owner, jobs),
                patience=0.0,
            )
        except StoreUnavailableError:
            self._host.undeferred(jobs)

    async def run(self) -> None:
        """Extend the leases of held jobs; pass on cancels requested elsewhere."""
        calls, closing = self._calls, self._closing
        # A third of the lease, so two missed beats still keep it; at least
        # every second, so a cancel asked on another member arrives in time.
        every = min(self._store.lease / 3, 1.0)
        failures = 0
        # Until closed, leaving by the one way out that forgets the member
        # (a close during a beat must not skip it).
        while True:
            if failures:
                # A failed beat is tried again soon (with backoff), with the
                # jobs held then: a lease the outage ran out may still be kept.
                await calls.backoff(failures)
            else:
                with anyio.move_on_after(every):
                    await self._wakeup.wait()
            if closing.closing:
                await self._members.forget()
                return
            if self._wakeup.is_set():
                # Woken for jobs to hand back (wake): a new event, so the
                # next wait waits; one set meanwhile wakes it at once.
                self._wakeup = anyio.Event()
            await self._members.report()
            stale = self._unreleased + self._host.stale_claims()
            if stale:
                await self._hand_back_stale(stale)
            await self._hand_back_unloadable()
            if not self._holding():
                failures = 0
                calls.drop("renewing leases")
                continue
            try:
                with anyio.CancelScope(shield=True):
                    await self._extend()
            except StoreUnavailableError as exc:
                failures += 1
                calls.failed("renewing leases", exc)
                continue
            failures = 0
            self._renew_first = False
            calls.ok("renewing leases")
