"""What a member holds in its durable store: ``Held`` and ``ClaimedQueue``.

``Held`` is the jobs this member holds in the store, by the fence of their
attempt, and what it owes the store about them (ends of lost attempts,
hand-backs, loads it could not make). ``ClaimedQueue`` is the jobs claimed
and not yet taken by a worker, with ``take``, the workers' take-next on a
durable store. ``DurableBacking`` owns both; ``LinkHost`` fills them from
the link's claims, ``_loadgrace`` hands back what does not load.

Loaded with the first durable store, with the link.
"""

from __future__ import annotations

import math
import time
from collections import deque
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .._jobs._job import Job
    from ._link import StoreLink
    from ._state import JobTable


class Held:
    """The jobs this member holds in the store, and what it owes the store about them."""

    __slots__ = (
        "attempt_time",
        "cancelled_unknown",
        "deferred",
        "fences",
        "load_handbacks",
        "lost_ended",
        "released",
        "unloaded_since",
    )

    def __init__(self) -> None:
        #: Claimed jobs this member holds, by number: the attempt, the fence
        #: of every write of theirs.
        self.fences: dict[int, int] = {}
        #: Held jobs whose lost attempt ended (the owner's last renewal): their
        #: outcome's end time.
        self.lost_ended: dict[int, float] = {}
        #: Jobs let go of (cut short by a stopping worker, stale claims ahead),
        #: RUNNING under this member in the store until handed back: their
        #: leases are renewed meanwhile.
        self.released: list[int] = []
        #: When this member first could not load each job (see ``_loadgrace``).
        self.unloaded_since: dict[int, float] = {}
        #: Jobs to hand back, for members that can load them (see
        #: ``LinkHost.deferred``): ``(number, run_at, error)``.
        self.deferred: list[tuple[int, float, str]] = []
        #: How many jobs this member handed back because it could not load
        #: them (each counted once), for the worker's stop summary.
        self.load_handbacks = 0
        #: Jobs cancel() sent to the store because this process did not know
        #: them (oldest first, at most CANCELS_KEPT): a claim of one that the
        #: store made before the cancel arrived must not start it here.
        self.cancelled_unknown: dict[int, None] = {}
        #: The mean time (seconds) a held job's attempt ran, recent ones
        #: weighing most; ``math.inf`` until one ended. It sizes the claims
        #: ahead of the workers (see ``LinkHost.claim_capacity``).
        self.attempt_time = math.inf

    def ran(self, seconds: float) -> None:
        """A held job's attempt ran ``seconds``: into the mean."""
        mean = self.attempt_time
        self.attempt_time = seconds if mean == math.inf else mean + 0.1 * (seconds - mean)


class ClaimedQueue:
    """The jobs claimed for this member's workers and not yet taken, in order."""

    __slots__ = ("_fences", "ahead", "at", "jobs", "link", "refill_at")

    #: The link, set once it is made (it needs the host, which needs this).
    link: StoreLink

    def __init__(self, held: Held) -> None:
        #: The claimed jobs (the Dispatcher tests it for truth: ``waiting``).
        self.jobs: deque[Job] = deque()
        #: When each was claimed (``time.monotonic()``), in the same order: a
        #: job that waits too long goes back to the store.
        self.at: deque[float] = deque()
        #: Those the store holds as claimed ahead, not started: a worker that
        #: takes one has the link write its start.
        self.ahead: set[int] = set()
        #: Claimed jobs left when a worker's take wakes the claimer (0: the last).
        self.refill_at = 0
        self._fences = held.fences

    def take(self) -> Job | None:
        """The workers' take-next on a durable store: the next claimed job."""
        claimed, claimed_at = self.jobs, self.at
        link = self.link
        if claimed and link.outcomes_piled_up():
            # Short jobs outran a lagging commit: wait for it (committed()
            # wakes a worker), so that a crash re-runs only what had to wait.
            return None
        while claimed:
            job = claimed.popleft()
            claimed_at.popleft()
            ahead = self.ahead
            if ahead:
                number = job._jobsched_id
                if number in ahead:
                    ahead.discard(number)
                    attempt = self._fences.get(number)
                    if attempt is not None and not job.status._terminal:  # type: ignore[attr-defined]
                        # Claimed ahead: its attempt counts from now, in the
                        # next group commit (with outcomes, not a round trip).
                        link.start(number, attempt, time.time())
            if not job.status._terminal:  # type: ignore[attr-defined]
                if len(claimed) <= self.refill_at:
                    # The last one, or half of a prefetched batch: claim
                    # more now, so the claim is asked for before this
                    # round's outcomes commit, and shares their transaction
                    # (SQLite's group commit: one fsync per round instead of
                    # two), while the rest of the batch runs.
                    link.wake_claimer()
                return job
        link.wake_claimer()
        return None

    def add(self, job: Job, claimed_at: float, started: bool) -> None:
        """A claimed job for the workers; ``started`` false: claimed ahead."""
        if not started:
            self.ahead.add(job._jobsched_id)  # its start is written when a worker takes it
        self.jobs.append(job)
        self.at.append(claimed_at)

    def stale(self, held: Held, table: JobTable, patience: float) -> list[int]:
        """The claimed jobs, if the oldest waited past ``patience`` seconds
        (the workers are stuck on long attempts): no longer held here, kept
        in ``held.released`` (leases renewed) until the link hands them back."""
        claimed, claimed_at = self.jobs, self.at
        if not claimed_at or time.monotonic() - claimed_at[0] < patience:
            return []
        numbers = []
        fences = held.fences
        while claimed:
            job = claimed.popleft()
            claimed_at.popleft()
            number = job._jobsched_id
            self.ahead.discard(number)
            if job.status._terminal or fences.pop(number, None) is None:  # type: ignore[attr-defined]
                continue
            numbers.append(number)
            if not job.seq:
                # Loaded from the store at the claim (submitted elsewhere):
                # this process forgets it, as before the claim. One submitted
                # here stays PENDING, as a job of its own run elsewhere.
                del table.jobs[number]
                table.unfinished -= 1
        held.released += numbers
        if not table.unfinished and table.join_waiters:
            table.wake_joiners()
        return numbers

    def clear(self) -> list[int]:
        """Empty the queue (the workers stopped); the numbers it held."""
        numbers = [job._jobsched_id for job in self.jobs]
        self.ahead.clear()
        self.jobs.clear()
        self.at.clear()
        return numbers
