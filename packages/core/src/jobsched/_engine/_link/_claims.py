"""Claims: the claimer task that feeds the idle workers, and the store's wake-ups.

The *claimer* claims as many runnable jobs as there are idle workers, best
first, and hands them to the scheduler; it claims the fires of stored
schedules that are due, and tells once about jobs this member never claims
(signed by a key it lacks, or for an executor it has not installed). The
store's ``watch`` wakes it between polls. :class:`StoreLink` is the whole
link: this layer on the ones below.

Claimed jobs are not attempts until they start (issue 32). A member claims
more than its idle workers take (the claims ahead), and a member killed
holding them must not cost them an attempt they never ran. Of the ways to
tell the store which held jobs started, this one keeps the schema and the
fence: the claim numbers the attempt as before (so an outcome is fenced on
the same (owner, attempt), and ``release`` hands back as before) but
leaves ``started_at`` empty (``claim(starting=0)``); the member writes each
start in its group commit when a worker takes the job (``_take_claimed``),
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
from collections.abc import Collection, Mapping

import anyio

from ..._exceptions import StoreUnavailableError
from ..._jobs import _plugins
from ..._log import logger
from ...store._base import JobStore
from ...store._codec import key_name
from ...store._rows import Claimed, NewJob
from . import _timing
from ._base import _takes
from ._leases import Leasing
from ._retry import LinkClosed


class StoreLink(Leasing):
    """Batches a scheduler's writes to ``store`` and feeds it claimed work."""

    #: The registered job names this member runs (an app's, set by it): its
    #: claims take registered rows of these names only (``JobStore.claim``).
    names: frozenset[str] = frozenset()
    #: Whether the store's claim takes ``names``; found at the first claim.
    _claims_names: bool | None = None

    def _member_names(self) -> tuple[str, ...]:
        # A member that claims nothing (a producer) knows no name for the fleet.
        return () if self.producer else tuple(sorted(self.names))

    async def claimer(self) -> None:
        """Claim as many jobs as workers are idle, best first, until closed."""
        try:
            async with anyio.create_task_group() as tg:
                # The store's notifications wake the claimer between polls.
                tg.start_soon(self._watch, name="jobsched-store-watch")
                if self.producer:
                    # Claims nothing: the watch alone runs, for wait() and join().
                    while not self.closing:
                        await self._claim_wakeup.wait()
                        self._claim_wakeup = anyio.Event()
                else:
                    with contextlib.suppress(LinkClosed):
                        await self._claim_all()
                tg.cancel_scope.cancel()
        finally:
            self._task_done()

    async def _watch(self) -> None:
        """The store's ``watch``, subscribed again after a transient failure."""
        failures = 0
        while True:
            started = time.monotonic()
            try:
                if _watches_finished(self.store):
                    await self.store.watch(self._store_woke, finished=self._store_finished)
                else:  # a store written before the finished callback
                    await self.store.watch(self._store_woke)
                return
            except StoreUnavailableError as exc:
                if time.monotonic() - started > 10 * _timing.STORE_BACKOFF.max_delay:
                    failures = 0  # it ran well for a while: a new outage
                failures += 1
                self._failed("watching for changes", exc)
            await self._backoff(failures)
            if self.closing:
                return
            # Whether the new subscription holds is not known until it
            # fails: the next call that succeeds may end the outage.
            self._outage.drop("watching for changes")
            self._store_woke()  # what it missed meanwhile

    async def fire(
        self, schedule: str, fire_time: float, next_fire: float, job: NewJob | None
    ) -> bool:
        """The store's ``fire`` for this member, retried while the store is unavailable."""
        return await self._call(
            "firing a schedule",
            lambda: self.store.fire(self.owner, schedule, fire_time, next_fire, job),
        )

    async def _claim(
        self, limit: int, executors: Mapping[str, int], queue_room: Mapping[str, int] | None
    ) -> list[Claimed]:
        store = self.store
        if self._renew_first:
            # After an outage: leases first, so this claim does not take over
            # this member's own jobs whose leases ran out meanwhile.
            await self._extend()
            self._renew_first = False
        # Without queues the call is the one a store written before named
        # queues takes.
        named: dict[str, object] = (
            {}
            if self.queues is None and queue_room is None
            else {"queues": self.queues, "queue_room": queue_room}
        )
        if self.claims_ahead:
            # None starts at the claim, not even for the workers idle now:
            # a member killed between the claim's commit and their start
            # would cost those jobs an attempt they never ran. Each start is
            # written when a worker takes the job (_take_claimed).
            named["starting"] = 0
        if self._claims_names is None:
            self._claims_names = _takes(store.claim, "names")
        if self._claims_names:
            # Always, even empty: a member without an app claims no registered job.
            named["names"] = self.names
        return await store.claim(
            self.owner,
            limit,
            executors,
            self._wall(),
            store.lease,
            rates=self.rates,
            tenants=self.tenants,
            **named,  # type: ignore[arg-type]
        )

    async def _claim_all(self) -> None:
        store, host = self.store, self._host
        while not self.closing:
            self._claim_wakeup = anyio.Event()
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
                    claims = await self._call(
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
                fires = await self._call(
                    "claiming schedules",
                    lambda: store.claim_schedules(self.owner, self._wall(), store.lease),
                )
                # A fire releases its schedule: one still due (misfire="all"
                # catching up, one fire a step) is claimed again at once.
                while fires and await host.fire_schedules(fires) and not self.closing:
                    fires = await self._call(
                        "claiming schedules",
                        lambda: store.claim_schedules(self.owner, self._wall(), store.lease),
                    )
            if idle and clock - self._keys_seen >= _timing.KEYS_EVERY:
                self._keys_seen = clock
                await self._report_unknown_keys()
                await self._report_unknown_names()
            # Not only when idle: a member kept busy by its own executors'
            # jobs still tells about those it never claims.
            if limit > 0 and clock - self._executors_seen >= _timing.EXECUTORS_EVERY:
                self._executors_seen = clock
                await self._report_missing_executors(executors, clock)
            if claims:
                continue
            wait = _timing.POLL_INTERVAL
            if limit > 0:
                # Also when a rate-limited job's next token is due (next_due).
                due = await self._call("reading the next due time", store.next_due)
                # Due already when this pass claimed, yet nothing came: not
                # this member's to take now (a schedule leased by another
                # member, or signed by a key this one lacks). Waiting 0 for
                # it spun the claimer, thousands of round trips a second.
                if due is not None and due > looked_at:
                    wait = min(wait, max(0.0, due - self._wall()))
            with anyio.move_on_after(wait):
                await self._claim_wakeup.wait()

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

    async def _report_unknown_keys(self) -> None:
        """Log an ERROR, once per key id, for jobs this member never claims
        because a key it does not hold signed them."""
        # Retried as every store call is: an outage must not end the claimer.
        waiting = await self._call(
            "looking for jobs signed by unknown keys", self.store.waiting_for_keys
        )
        for kid, count in waiting.items():
            if kid not in self._keys_reported:
                self._keys_reported.add(kid)
                held = ", ".join(key_name(k) for k in self.codec.key_ids) or "none"
                logger.error(
                    "%d job(s) in the store %s are signed with key id %s, which this member "
                    "does not hold (its key ids: %s): they wait for a member that holds it; "
                    "add that key to secret=[...] or JOBSCHED_SECRET (the first key signs, "
                    "every one verifies)",
                    count,
                    self.store.url,
                    key_name(kid),
                    held,
                )

    async def _report_unknown_names(self) -> None:
        """Log an ERROR, once per name, for registered jobs this member never
        claims because its app does not register their name."""
        waiting_for_names = getattr(self.store, "waiting_for_names", None)
        if waiting_for_names is None:  # a store written before registered jobs
            return
        names = self.names
        waiting = await self._call(
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
                    self.store.url,
                    name,
                    len(names),
                )

    async def _report_missing_executors(self, installed: Collection[str], clock: float) -> None:
        """Log a WARNING, once per executor name (again after
        EXECUTORS_REPEAT, or when it comes back after none waited), for
        jobs this member never claims because it lacks their executor."""
        # Retried as every store call is: an outage must not end the claimer.
        waiting = await self._call(
            "looking for jobs on executors this member lacks",
            lambda: self.store.waiting_for_executors(installed),
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
                self.store.url,
                name,
                ", ".join(sorted(installed)) or "none",
                _plugins.install_hint(name),
            )


def _watches_finished(store: JobStore) -> bool:
    """Whether ``store.watch`` takes the ``finished`` callback (see JobStore.watch)."""
    try:
        return "finished" in inspect.signature(store.watch).parameters
    except (TypeError, ValueError):
        return False
