"""What this member claims: set by the scheduler, read by each claim.

The scheduler sets these once it knows them (``JobScheduler``'s
``rate_limits``, a fair share, ``queues``, an app's names); the claimer
passes them to every ``JobStore.claim``, and the members list reports the
names.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..._ordering._ratelimit import RateLimit


class Terms:
    """The terms of this member's claims (written by the scheduler through
    the link's attributes of the same names)."""

    __slots__ = ("names", "producer", "queues", "rates", "tenants")

    def __init__(self) -> None:
        #: Passed to every claim: the scheduler's ``rate_limits`` (None:
        #: none), and a fair share's weights (None: key order).
        self.rates: Mapping[str, RateLimit] | None = None
        self.tenants: Mapping[str | None, int] | None = None
        #: The queues this member serves (None: every queue).
        self.queues: frozenset[str] | None = None
        #: A producer (``num_workers=0``) never claims jobs or schedule fires:
        #: its claimer only watches the store (for wait()).
        self.producer = False
        #: The registered job names this member runs (``js.App``): its
        #: claims take registered rows of these names only (``JobStore.claim``).
        self.names: frozenset[str] = frozenset()

    def member_names(self) -> tuple[str, ...]:
        """The names this member reports in the members list: a member that
        claims nothing (a producer) knows no name for the fleet."""
        return () if self.producer else tuple(sorted(self.names))

    def member_queues(self) -> tuple[str, ...] | None:
        """The queues this member reports serving (None: every queue; a
        producer claims none)."""
        if self.producer:
            return ()
        return None if self.queues is None else tuple(sorted(self.queues))
