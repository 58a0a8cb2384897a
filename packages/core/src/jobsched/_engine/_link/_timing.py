"""The link's timings: how often it looks, how long it waits, how it backs off.

In one place, and read by the other modules as ``_timing.NAME`` when they run,
so that a test (or an operator's patch) that changes one changes it for the
whole link.
"""

from __future__ import annotations

from ..._jobs._retry import RetryPolicy
from .._state import POLL_INTERVAL as POLL_INTERVAL  # there: `import jobsched` skips the link

#: Ids reserved per round trip at first; the next block is reserved when
#: half is used, twice as large while submits keep coming (up to
#: MAX_ID_BLOCK), so a burst of submits rarely waits on the store.
ID_BLOCK = 1024
MAX_ID_BLOCK = 65536
#: Finished jobs between two prunes of the store's history, at most: a
#: smaller ``history_limit`` prunes every ``history_limit`` (see prune_every).
PRUNE_EVERY = 1000
#: Seconds between looks for due schedules while every claim finds work: a
#: look is a round trip, and one per claim cost W10 a third of its speed.
SCHEDULES_EVERY = 0.05
#: Claims ahead of the workers (prefetch): a member holds claimed jobs
#: beyond its idle workers, so that a round's claim does not leave them
#: waiting, as many as its workers run in PREFETCH_AHEAD seconds at the
#: recent mean attempt time, at most PREFETCH_MAX. Short jobs get a deep
#: buffer (no-op jobs: PREFETCH_MAX), jobs of PREFETCH_AHEAD or more none,
#: so a prefetched job waits about PREFETCH_AHEAD at most, and another
#: member's idle workers miss at most that much of this member's work.
PREFETCH_AHEAD = 0.02
PREFETCH_MAX = 256
#: Outcomes waiting for the next group commit, at most, before the workers
#: start another job claimed ahead. A member killed (kill -9) runs again
#: every job whose outcome it had not committed: short jobs outran a commit
#: that lagged (the slower the database, the bigger the next batch, and the
#: longer its commit) and piled up. With this bound at most twice as many
#: (the batch being written and the next), plus the attempts in flight,
#: wait for a commit, however slow the database. It is a cap on a commit
#: that falls behind, not on the usual pile: no-op jobs on PostgreSQL (8
#: workers, 15-18k a second) keep 300-500 outcomes waiting, and a bound of
#: 256 cost them 10-25 % of their throughput, 512 5-8 %, 1024 nothing
#: measurable (counting the batch being written too cost a third).
OUTCOMES_WAITING_MAX = 1024
#: Seconds a job may wait claimed ahead of the workers: past that (every
#: worker stuck on a long attempt), the member hands its claimed-ahead jobs
#: back to the store, where another member's idle workers may take them.
PREFETCH_STALE = 1.0
#: Seconds ``flush()`` and ``enqueue()`` wait while the store is unavailable
#: before they raise StoreUnavailableError. What they waited for is not lost:
#: it stays in the batch and is written when the store is back.
UNAVAILABLE_WAIT = 30.0
#: Waits between retries of a store call that failed for a transient reason:
#: capped exponential backoff with full jitter, so members that lost their
#: database together do not come back as a herd. A small cap: an outage
#: ends for this member at most this long after the store is back.
STORE_BACKOFF = RetryPolicy(max_retries=0, base_delay=0.05, max_delay=2.0)
#: Seconds between an idle member's looks for jobs signed by a key it lacks
#: (a scan of the waiting rows' first bytes), which its claims never see.
KEYS_EVERY = 10.0
#: Seconds between a member's looks for jobs waiting on an executor it has
#: not installed (a count of the waiting rows), which its claims never see.
EXECUTORS_EVERY = 30.0
#: The share of the claimer's time each kind of these looks may take, at
#: most: the claimer waits for them, and a look that took c seconds puts
#: the next of its kind at least c / LOOKS_SHARE seconds off (KEYS_EVERY or
#: EXECUTORS_EVERY when that is longer: a keys look under 5 ms, an
#: executors look under 15 ms). Well under 1%: the jobs submitted during a
#: stall wait for it, and at 1% a kind's stalls alone reach a claim's p99;
#: at 0.2% the three kinds and the prune's reads from the oldest end
#: (_prune.FRONT_SHARE) still put a second's stall every minute or so into
#: a ten-minute hold (W20, issue 34), the largest part of its p99.
#: On PostgreSQL a session that holds an xid (idle in transaction) keeps
#: the waiting rows' dead index entries alive, and each look steps over
#: them all: 25,000 buffers and 0.5-0.9 s at 500,000 jobs into the hold,
#: growing with it. Without the backoff the claimer stalled on them every
#: 10 s, and a ten-minute hold (some 2,000,000 jobs) would make each stall
#: seconds long.
LOOKS_SHARE = 0.0005
#: Seconds before a member repeats its WARNING about jobs still waiting on an
#: executor it lacks (one that was resolved and comes back is told at once).
EXECUTORS_REPEAT = 600.0


def prune_every(history_limit: int) -> int:
    """Finished jobs between two prunes: the store keeps at most
    ``history_limit + prune_every(history_limit)`` finished jobs, which is
    ``min(2 x limit, limit + PRUNE_EVERY)`` (and one batch's for a limit of 0)."""
    return max(1, min(history_limit, PRUNE_EVERY))


#: Seconds a job that a member cannot load (its module missing there: a
#: deploy under way) waits in the store before it is claimable again, so
#: that the member does not claim it straight back while another, which
#: has the code, may take it (capped by what is left of ``load_grace``).
LOAD_RETRY = 5.0
