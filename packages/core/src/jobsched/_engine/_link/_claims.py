"""Claims: the claimer task that feeds the idle workers, and the store's wake-ups.

The *claimer* claims as many runnable jobs as there are idle workers, best
first, and hands them to the scheduler; it claims the fires of stored
schedules that are due, and tells once about jobs this member never claims
(signed by a key it lacks, or for an executor it has not installed). The
store's ``watch`` wakes it between polls; what it claims is set in
``_terms``, what it tells about jobs it never claims in ``_reports``.

Claimed jobs are not attempts until they start (issue 32). A member claims
more than its idle workers take (the claims ahead), and a member killed
holding them must not cost them an attempt they never ran. Of the ways to
tell the store which held jobs started, this one keeps the schema and the
fence: the claim numbers the attempt as before (so an outcome is fenced on
the same (owner, attempt), and ``release`` hands back as before) but
leaves ``started_at`` empty (``claim(starting=0)``); the member writes each
start in its group commit when a worker takes the job (``ClaimedQueue.take``),
with the outcome itself when the job ends before that commit (one write of
the row, so short jobs pay nothing). A takeover hands a row without a start
back uncounted instead of failing it. Counting attempts only at the start
would have moved the fence to a number the store has not written yet; a
start written before the job runs would cost a round trip per job. The
price: a job whose start was not committed when its member died runs
again under the same attempt number, and a job that kills its member as
it starts would be handed back for ever; so a job handed back by a
takeover is started (counted) by its next claim, and it still runs out of
attempts, at most two deaths each.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import math
import time
from collections.abc import Callable, Mapping

import anyio

from ..._exceptions import StoreUnavailableError
from ...store._base import JobStore
from ...store._rows import Claimed, NewJob
from . import _timing
from ._closing import Closing
from ._host import Host
from ._leases import Heartbeat
from ._reports import Reports
from ._retry import LinkClosed, StoreCalls
from ._settled import Settled
from ._terms import Terms


def takes(method: Callable[..., object], name: str) -> bool:
    """Whether ``method`` takes the keyword ``name`` (a store written before
    it was part of the seam does not)."""
    try:
        return name in inspect.signature(method).parameters
    except (TypeError, ValueError):
        return False


class Claimer:
    """The claimer task: claims for the idle workers, schedule fires, the
    store's wake-ups."""

    __slots__ = (
        "_calls",
        "_claim_settled",
        "_claims_names",
        "_closing",
        "_heartbeat",
        "_host",
        "_owner",
        "_reports",
        "_schedules_seen",
        "_settled",
        "_store",
        "_terms",
        "_wakeup",
        "_wall",
        "claims_ahead",
    )

    def __init__(
        self,
        store: JobStore,
        owner: str,
        *,
        wall: Callable[[], float],
        host: Host,
        terms: Terms,
        calls: StoreCalls,
        closing: Closing,
        heartbeat: Heartbeat,
        reports: Reports,
        settled: Settled,
    ) -> None:
        self._store = store
        self._owner = owner
        self._wall = wall
        self._host = host
        self._terms = terms
        self._calls = calls
        self._closing = closing
        self._heartbeat = heartbeat
        self._reports = reports
        self._settled = settled
        #: Whether the store's claim takes ``starting`` (see JobStore.claim):
        #: then jobs claimed ahead are not started until their start is written.
        self.claims_ahead = takes(store.claim, "starting")
        #: Whether the store's claim takes ``names``; found at the first claim.
        self._claims_names: bool | None = None
        #: Set when no claim is on its way (see claims_settled).
        self._claim_settled: anyio.Event | None = None
        self._wakeup = anyio.Event()
        #: When the claimer last looked for due schedules (monotonic); reset
        #: by a schedule put here or a wake from the store.
        self._schedules_seen = -math.inf

    def wake(self) -> None:
        """A worker freed up, or new work may be claimable."""
        self._wakeup.set()

    def schedules_changed(self) -> None:
        """A schedule was put here: look for due ones at the next pass."""
        self._schedules_seen = -math.inf

    def store_woke(self) -> None:
        """Another member's commit (a new job, a cancel, or a new schedule),
        or the store back after an outage (notifications may have been missed)."""
        self._schedules_seen = -math.inf
        self._wakeup.set()
        self._settled.wake()  # a cancel ends jobs too

    def _store_finished(self) -> None:
        # Another member committed jobs' outcomes: only waiters care.
        self._settled.wake()

    async def run(self) -> None:
        """Claim as many jobs as workers are idle, best first, until closed."""
        async with anyio.create_task_group() as tg:
            # The store's notifications wake the claimer between polls.
            tg.start_soon(self._watch, name="jobsched-store-watch")
            if self._terms.producer:
                # Claims nothing: the watch alone runs, for wait() and join().
                while not self._closing.closing:
                    await self._wakeup.wait()
                    self._wakeup = anyio.Event()
            else:
                with contextlib.suppress(LinkClosed):
                    await self._claim_all()
            tg.cancel_scope.cancel()

    async def _watch(self) -> None:
        """The store's ``watch``, subscribed again after a transient failure."""
        calls = self._calls
        failures = 0
        while True:
            started = time.monotonic()
            try:
                if _watches_finished(self._store):
                    await self._store.watch(self.store_woke, finished=self._store_finished)
                else:  # a store written before the finished callback
                    await self._store.watch(self.store_woke)
                return
            except StoreUnavailableError as exc:
                if time.monotonic() - started > 10 * _timing.STORE_BACKOFF.max_delay:
                    failures = 0  # it ran well for a while: a new outage
                failures += 1
                calls.failed("watching for changes", exc)
            await calls.backoff(failures)
            if self._closing.closing:
                return
            # Whether the new subscription holds is not known until it
            # fails: the next call that succeeds may end the outage.
            calls.drop("watching for changes")
            self.store_woke()  # what it missed meanwhile

    async def fire(
        self, schedule: str, fire_time: float, next_fire: float, job: NewJob | None
    ) -> bool:
        """The store's ``fire`` for this member, retried while the store is unavailable."""
        return await self._calls.call(
            "firing a schedule",
            lambda: self._store.fire(self._owner, schedule, fire_time, next_fire, job),
        )

    async def _claim(
        self, limit: int, executors: Mapping[str, int], queue_room: Mapping[str, int] | None
    ) -> list[Claimed]:
        store, terms = self._store, self._terms
        # After an outage: leases first, so this claim does not take over
        # this member's own jobs whose leases ran out meanwhile.
        await self._heartbeat.renew_if_due()
        # Without queues the call is the one a store written before named
        # queues takes.
        named: dict[str, object] = (
            {}
            if terms.queues is None and queue_room is None
            else {"queues": terms.queues, "queue_room": queue_room}
        )
        if self.claims_ahead:
            # None starts at the claim, not even for the workers idle now:
            # a member killed between the claim's commit and their start
            # would cost those jobs an attempt they never ran. Each start is
            # written when a worker takes the job (ClaimedQueue.take).
            named["starting"] = 0
        if self._claims_names is None:
            self._claims_names = takes(store.claim, "names")
        if self._claims_names:
            # Always, even empty: a member without an app claims no registered job.
            named["names"] = terms.names
        return await store.claim(
            self._owner,
            limit,
            executors,
            self._wall(),
            store.lease,
            rates=terms.rates,
            tenants=terms.tenants,
            **named,  # type: ignore[arg-type]
        )

    async def _claim_all(self) -> None:
        store, host, calls, owner = self._store, self._host, self._calls, self._owner
        closing, reports = self._closing, self._reports
        while not closing.closing:
            self._wakeup = anyio.Event()
            # The claim first: the workers that just went idle woke this task
            # together with the committer (their outcomes), so a store that
            # commits writes asked for together in one transaction (SQLite's
            # group commit) pays one fsync for both.
            limit, executors = host.claim_capacity()
            claims: list[Claimed] = []
            looked_at = self._wall()
            if limit > 0 and executors:
                queue_room = host.queue_room(limit)
                # A stop waits for this claim's reply (claims_settled), so
                # that the jobs it brings are handed back, not left leased.
                settled = self._claim_settled = anyio.Event()
                try:
                    claims = await calls.call(
                        "claiming jobs",
                        functools.partial(self._claim, limit, executors, queue_room),
                    )
                    if claims:
                        host.claimed(claims)
                finally:
                    settled.set()
            # Schedules fire whether or not a worker is free: their jobs queue.
            # While the workers are busy or claims keep finding work, the
            # look waits SCHEDULES_EVERY; an idle member looks every pass.
            clock = time.monotonic()
            idle = limit > 0 and not claims
            if idle or clock - self._schedules_seen >= _timing.SCHEDULES_EVERY:
                self._schedules_seen = clock
                fires = await calls.call(
                    "claiming schedules",
                    lambda: store.claim_schedules(owner, self._wall(), store.lease),
                )
                # A fire releases its schedule: one still due (misfire="all"
                # catching up, one fire a step) is claimed again at once.
                while fires and await host.fire_schedules(fires) and not closing.closing:
                    fires = await calls.call(
                        "claiming schedules",
                        lambda: store.claim_schedules(owner, self._wall(), store.lease),
                    )
            if idle:
                await reports.look_when_idle(clock)
            # Not only when idle: a member kept busy by its own executors'
            # jobs still tells about those it never claims.
            if limit > 0:
                await reports.look_for_executors(executors, clock)
            if claims:
                continue
            wait = _timing.POLL_INTERVAL
            if limit > 0:
                # Also when a rate-limited job's next token is due (next_due).
                due = await calls.call("reading the next due time", store.next_due)
                # Due already when this pass claimed, yet nothing came: not
                # this member's to take now (a schedule leased by another
                # member, or signed by a key this one lacks). Waiting 0 for
                # it spun the claimer, thousands of round trips a second.
                if due is not None and due > looked_at:
                    wait = min(wait, max(0.0, due - self._wall()))
            with anyio.move_on_after(wait):
                await self._wakeup.wait()

    async def claims_settled(self, patience: float) -> bool:
        """Wait until no claim is on its way (its jobs handed to the host),
        for ``patience`` seconds at most; whether none is. The host claims
        nothing new once it is stopping, so after this every job this
        member claimed is in the host's hands: a stop hands them back."""
        settled = self._claim_settled
        if settled is None:
            return True
        with anyio.move_on_after(patience):
            await settled.wait()
        return settled.is_set()


def _watches_finished(store: JobStore) -> bool:
    """Whether ``store.watch`` takes the ``finished`` callback (see JobStore.watch)."""
    try:
        return "finished" in inspect.signature(store.watch).parameters
    except (TypeError, ValueError):
        return False
