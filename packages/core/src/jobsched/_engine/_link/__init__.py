"""The link between a scheduler and a durable store: the tasks that talk to it.

The workers never wait on the store. ``submit`` and every outcome only append
to a batch; one *committer* task writes whatever has piled up while its last
transaction ran (a group commit: one round trip for many jobs, with no fixed
delay). One *claimer* task claims as many runnable jobs as there are idle
workers, best first, and hands them over; a *heartbeat* task extends the
leases of the jobs this member holds and learns which of them someone
cancelled. The in-memory store needs none of this: the scheduler works on its
heaps directly.

A store call that fails with :class:`~jobsched.StoreUnavailableError` (the
store's mark for a transient failure: a dropped connection, a locked or full
database) is retried with capped, jittered backoff, and never ends the
scheduler: running jobs go on, their outcomes wait in order in the batch and
are written, fenced as ever, when the store is back. The outage is logged
once when it starts and once when it ends. Any other exception is a bug, and
ends the scheduler as it always did.

:class:`StoreLink` (``_storelink``) builds the link's parts once and hands
each what it needs; no part holds the link or another part's state::

    Writes     (_writes)    the writes appended for the next group commit
    Committer  (_commit)    the committer task and flush(); a Batch (_batch),
                            written in parts around a job the store refuses
                            (Refusals, _refusals)
    Heartbeat  (_leases)    the heartbeat: leases, cancels from elsewhere,
                            hand-backs; this member's line (Members, _members)
    Claimer    (_claims)    the claimer: claims on the Terms (_terms), schedule
                            fires, the store's wake-ups; Reports (_reports) of
                            jobs it never claims
    StoreCalls (_retry)     store calls retried through an Outage (_outage)
    Ids (_ids), Settled (_settled), Closing (_closing)

``_timing`` holds every interval and wait, read when used. What the link
calls back (:class:`Host`, ``_host``) is ``jobsched._engine._linkhost``.
A write's walk: ``StoreLink.add`` (``Writes.add``) appends and wakes the
committer, which takes a Batch and writes it through StoreCalls; then the
host, the flushes, the waiters (Settled) and the claimer hear of it.

Loaded with the first durable store, never by ``import jobsched``. May import
what the engine may, and ``_engine._state``; nothing else of the engine.
"""

from ._host import Host as Host
from ._storelink import StoreLink as StoreLink

__all__ = ["Host", "StoreLink"]
