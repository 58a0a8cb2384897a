"""A claimed job's times on this member's clock (``LinkHost.claimed``).

A row's times are wall-clock seconds written by whichever member wrote
them; this member's view keeps its own clock, never ahead of now.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ..store._rows import Claimed


def on_clock(clock: Callable[[], float], stored_run_at: float) -> float:
    """A stored run_at (wall-clock seconds) on this member's clock: as long
    ago as it was by this machine's wall clock, never ahead (a claimed job
    is due; another machine's clock may run ahead of this one's)."""
    return clock() - max(0.0, time.time() - stored_run_at)


def lost_end(claim: Claimed) -> float:
    """When a lost attempt stopped running, as far as the store knows: its
    owner's last lease renewal (never later than now)."""
    now = time.time()
    renewed = claim.renewed_at
    return now if renewed is None else min(renewed, now)
