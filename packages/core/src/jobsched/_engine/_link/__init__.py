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

:class:`StoreLink` is assembled from layers, one module each, stacked so that
a layer may call the ones below it::

    _claims.StoreLink         the claimer: claims, schedule fires, the store's wake-ups
      _leases.Leasing         the heartbeat: leases, cancels from elsewhere, the members list
        _commit.Committing    group commit: appended writes, flush, the committer, pruning
          _retry.Retrying     store calls retried through an outage
            _base.LinkBase    the state (set here), ids, wakeups, closing

with ``_outage`` (how an outage is logged) and ``_timing`` (every interval
and wait, in one place) beside them. The scheduler's side of the link, what
the link calls back (:class:`Host`), is ``jobsched._engine._linkhost``.

Loaded with the first durable store, never by ``import jobsched``. May import
what the engine may, and ``_engine._state``; nothing else of the engine.
"""

from ._base import Host as Host
from ._claims import StoreLink as StoreLink

__all__ = ["Host", "StoreLink"]
