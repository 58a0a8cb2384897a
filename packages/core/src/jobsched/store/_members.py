"""Members of a durable store: a member's owner id, which owners were processes
on this machine that are gone, and how often a member looks for lost attempts.

Every store implements leases the same way; this is the part of it that is
plain Python, so the stores cannot drift apart on it.
"""

from __future__ import annotations

import math
import os
import secrets
import socket
from collections.abc import Iterable

#: Longest time (seconds) between two of a member's looks for lost attempts
#: (and at most a quarter of the lease): a look reads every running row, and
#: at every claim it cost a claim a tenth of its time for attempts that
#: expire seconds apart.
TAKEOVER_EVERY = 1.0


def new_owner() -> str:
    """A member's name in a store's ``owner`` column: ``host:pid:token``, unique per run."""
    return f"{local_prefix()}{os.getpid()}:{secrets.token_hex(4)}"


def local_prefix() -> str:
    """What the owner ids of this machine's members start with."""
    return f"{socket.gethostname()}:"


def dead_local(owners: Iterable[str]) -> list[str]:
    """Of ``owners``, those that were processes on this machine and no longer
    exist: a restart after a crash need not wait out their leases."""
    prefix = local_prefix()
    dead = []
    for owner in owners:
        parts = owner.removeprefix(prefix).split(":")
        if owner.startswith(prefix) and len(parts) == 2 and parts[0].isdigit():
            pid = int(parts[0])
            if pid != os.getpid() and not _alive(pid):
                dead.append(owner)
    return dead


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    return True


class TakeoverLooks:
    """When each member's claim should look for lost attempts: at its first
    claim, then at most every :data:`TAKEOVER_EVERY` and quarter of the lease."""

    __slots__ = ("_last",)

    def __init__(self) -> None:
        self._last: dict[str, float] = {}

    def due(self, owner: str, now: float, lease: float) -> bool:
        """True (and counted as a look) if ``owner``'s claim at ``now`` should look."""
        if now - self._last.get(owner, -math.inf) < min(TAKEOVER_EVERY, lease / 4):
            return False
        self._last[owner] = now
        return True
