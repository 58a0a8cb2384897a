"""Leases: the heartbeat that keeps this member's jobs, and its line in the members list.

The *heartbeat* task extends the leases of the jobs this member holds (and of
those whose outcomes wait in the batch), learns which of them someone
cancelled, and reports the member for ``jobsched members`` and the dashboard.
"""

from __future__ import annotations

import contextlib
from collections.abc import Collection

import anyio

from ..._exceptions import StoreUnavailableError
from ..._log import logger
from ...store._rows import MEMBER_EVERY, Member
from ._commit import Committing


class Leasing(Committing):
    """The heartbeat task and the lease renewals a claim also makes."""

    async def heartbeat(self) -> None:
        """Extend the leases of held jobs; pass on cancels requested elsewhere."""
        try:
            await self._beat()
        finally:
            self._task_done()

    def _holding(self) -> Collection[int]:
        """The jobs whose leases this member keeps: those the host holds, and
        those whose outcomes wait in the batch. The host lets go of a job
        when its outcome is made, but the row stays RUNNING under this member
        until that outcome is committed; a commit that stalls past the lease
        (an outage, a slow database) must not let another member take the
        finished job over as lost and run it again."""
        held = self._host.held()
        batch = self._batch
        if not self._outcomes and (batch is None or not batch.outcomes):
            return held
        waiting = {outcome.id for outcome in self._outcomes}
        if batch is not None:
            waiting.update(outcome.id for outcome in batch.outcomes)
        waiting.update(held)
        return waiting

    async def _extend(self) -> None:
        held = self._holding()
        if held:
            store = self.store
            cancelled = await store.extend(self.owner, held, self._wall() + store.lease)
            if cancelled:
                self._host.cancel_held(cancelled)

    async def _hand_back_stale(self, numbers: list[int]) -> None:
        """Release claimed-ahead jobs stuck behind long attempts (or behind
        a commit that an outage holds up: the workers wait for it). One try,
        so the heartbeat is not held up: if the store is unavailable they
        stay held (renewed) and the next beat tries again."""
        try:
            await self.read(
                "handing back claims stuck behind long jobs",
                lambda: self.store.release(self.owner, numbers),
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
            await self.read(
                "handing back jobs this member cannot load",
                lambda: self.store.defer(self.owner, jobs),
                patience=0.0,
            )
        except StoreUnavailableError:
            self._host.undeferred(jobs)

    async def _beat(self) -> None:
        store = self.store
        # A third of the lease, so two missed beats still keep it; at least
        # every second, so a cancel asked on another member arrives in time.
        every = min(store.lease / 3, 1.0)
        failures = 0
        # Until closed, leaving by the one way out that forgets the member
        # (a close during a beat must not skip it).
        while True:
            if failures:
                # A failed beat is tried again soon (with backoff), with the
                # jobs held then: a lease the outage ran out may still be kept.
                await self._backoff(failures)
            else:
                with anyio.move_on_after(every):
                    await self._beat_wakeup.wait()
            if self.closing:
                await self._forget_member()
                return
            if self._beat_wakeup.is_set():
                # Woken for jobs to hand back (wake_heartbeat): a new event,
                # so the next wait waits; one set meanwhile wakes it at once.
                self._beat_wakeup = anyio.Event()
            await self._report_member()
            stale = self._unreleased + self._host.stale_claims()
            if stale:
                await self._hand_back_stale(stale)
            await self._hand_back_unloadable()
            if not self._holding():
                failures = 0
                self._outage.drop("renewing leases")
                continue
            try:
                with anyio.CancelScope(shield=True):
                    await self._extend()
            except StoreUnavailableError as exc:
                failures += 1
                self._failed("renewing leases", exc)
                continue
            failures = 0
            self._renew_first = False
            self._ok("renewing leases")

    def _member_names(self) -> tuple[str, ...]:
        """The registered job names this member reports (see StoreLink.names)."""
        return ()

    async def _report_member(self) -> None:
        """Every MEMBER_EVERY seconds: this member's line in the members list."""
        now = self._wall()
        if now - self._member_reported < MEMBER_EVERY:
            return
        self._member_reported = now
        member = Member(
            owner=self.owner,
            workers=self._host.num_workers,
            busy=len(self._host.held()),
            started_at=self._member_started,
            seen_at=now,
            names=self._member_names(),
        )
        try:
            await self.store.report_member(member)
        except StoreUnavailableError:
            pass  # the leases' own beats report an outage; the next report retries
        except Exception:
            # The members list is for people: a store that fails it in a way
            # of its own must not end the heartbeat, which keeps the leases.
            if not self._member_failed:
                self._member_failed = True
                logger.warning(
                    "the store %s could not record this member for the members list; "
                    "its jobs are not affected",
                    self.store.url,
                    exc_info=True,
                )

    async def _forget_member(self) -> None:
        with anyio.move_on_after(MEMBER_EVERY, shield=True):
            # Unreachable: it goes stale, then leaves the list after MEMBERS_KEEP.
            with contextlib.suppress(StoreUnavailableError):
                await self.store.forget_member(self.owner)
