"""A member's own running rows that it does not hold: a claim whose commit
landed but whose reply was lost (the connection broke under it) is run
again on the next connection (``_pool``), and the first claim's rows stay
running under this live member, which never got them. A takeover skips a
member's own rows (it may still run one whose heartbeat a lock held off),
so with a single member they were stuck until it restarted.

The member's heartbeat names every row it holds (``extend``, renewing
leases, even those it could not renew). After a claim was run again (its
first run's reply may be lost), for ten leases, a row of its own whose
lease ran out on the server's clock and that no heartbeat named for two
leases is one it never got: its look hands it back to the queue,
uncounted (it never ran), as a gone member's claims ahead are
(``_takeover``). Only then: a member whose event loop stalled past its
lease still runs the rows its heartbeat could not name meanwhile, and
handed back, each would run twice (the reason takeovers skip a member's
own rows, issue 20).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Collection, Iterable

from ._running import Row


class Held:
    """The rows this member's heartbeats named lately, and when (monotonic)."""

    def __init__(self) -> None:
        self._named: dict[int, float] = {}
        self._lock = threading.Lock()
        self._again = -float("inf")

    def claimed_again(self) -> None:
        """A claim ran again: its first run may have taken rows this member never got."""
        self._again = time.monotonic()

    def named(self, ids: Collection[int], lease: float) -> None:
        """A heartbeat names ``ids``; those no heartbeat named for two leases go."""
        now = time.monotonic()
        with self._lock:
            named = {i: t for i, t in self._named.items() if now - t <= 2 * lease}
            named.update(dict.fromkeys(ids, now))
            self._named = named

    def orphans(self, rows: Iterable[Row], owner: str, lease: float) -> list[int]:
        """``owner``'s rows of ``rows`` (a look's) whose lease ran out and that
        no heartbeat named for two leases (``lease``: the longest in use)."""
        now = time.monotonic()
        if now - self._again > 10 * lease:
            return []
        named = self._named
        return sorted(
            r.id
            for r in rows
            if r.owner == owner and r.lapsed and now - named.get(r.id, -2 * lease - 1) > 2 * lease
        )
