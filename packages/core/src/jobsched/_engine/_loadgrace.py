"""``load_grace``: a claimed job whose code this member lacks goes back to the store.

During a rolling deploy a new producer may enqueue a job whose module or
function only the new members have. An old member that claims it must not
fail it: it hands it back uncounted (``JobStore.defer``), claimable again
after ``LOAD_RETRY`` seconds (not straight back to itself), for a member
that can load it. Only once the member's ``load_grace`` is over does the
job end FAILED with the load error.

The grace runs from when *this member* first could not load the job, kept
in the member, not in the store (whose rows have no column for it): each
member lacking the code gives the job its own grace, and the first whose
grace is over fails it.

Loaded with the first durable store, with the link.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from .._jobs._text import storable
from .._log import logger
from ._link import _timing

if TYPE_CHECKING:
    from ._held import Held
    from ._link import StoreLink

#: Jobs whose first failure to load here is remembered before old ones go.
UNLOADABLE_KEPT = 1024


def hand_back_or_fail(
    held: Held,
    grace: float,
    link: StoreLink,
    number: int,
    attempt: int,
    reason: str,
    refuse: Callable[[int, int, str], None],
) -> None:
    """A claimed job that does not load here (``reason``): queue its hand-back
    for the heartbeat (``held.deferred``), or ``refuse`` it (FAILED) once its
    ``grace`` here (``load_grace``) is over, or at once with 0."""
    now = time.time()
    first = held.unloaded_since.get(number)
    if first is None:
        if not grace:
            refuse(number, attempt, reason)
            return
        first = held.unloaded_since[number] = now
        held.load_handbacks += 1
        _forget_old(held, grace, now)
        logger.warning(
            "%s is handed back, its attempts unchanged, for a member that can load "
            "it (FAILED if none has within load_grace, %ss): %s",
            _named(number),
            f"{grace:g}",
            reason,
        )
    elif now - first >= grace:
        del held.unloaded_since[number]
        logger.error(
            "%s FAILED: no member loaded it within load_grace (%ss): %s",
            _named(number),
            f"{grace:g}",
            reason,
        )
        refuse(number, attempt, f"{reason} (no member loaded it within load_grace, {grace:g}s)")
        return
    held.fences.pop(number, None)  # held on in deferred (leases renewed) until written
    run_at = now + min(_timing.LOAD_RETRY, first + grace - now)
    why = storable(f"{reason} (waiting for a member that can load it)")
    held.deferred.append((number, run_at, why))
    link.wake_heartbeat()


def _forget_old(held: Held, grace: float, now: float) -> None:
    """Jobs another member ran or failed never come back here: forget those
    whose grace is long over, so that the map stays small."""
    if len(held.unloaded_since) > UNLOADABLE_KEPT:
        old = now - grace - 60.0
        held.unloaded_since = {n: t for n, t in held.unloaded_since.items() if t > old}


def _named(number: int) -> str:
    """A job's id for a log line: an id of its own is known here only by its
    hash (negative), which the line names as such."""
    return f"job-{number}" if number > 0 else f"the job with an id of its own numbered {number}"
