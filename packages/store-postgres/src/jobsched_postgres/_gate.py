"""What a member may claim beyond its executors and queues: the condition
every claim statement and takeover adds, and its parameters."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from jobsched.store import KEY_ID_SIZE, KEY_ID_START, KEYED

# A row a member may claim: signed with a key id it holds (%(keys)s), or
# without one (the legacy format, which every member tries). A member never
# claims a row signed by a key it lacks: the row waits for one that holds it.
# Likewise a registered job (args set) only of a name it knows (%(known)s):
# the row waits for a member whose app registers it. Both are filters on
# the rows an index scan reads, in every claim's plan; neither changes it.
KEY_FILTER = (
    f"(substring(payload from 1 for 1) <> '\\x{KEYED.hex()}'::bytea "
    f"OR substring(payload from {KEY_ID_START} for {KEY_ID_SIZE}) = ANY(%(keys)s::bytea[])) "
    "AND (args IS NULL OR name = ANY(%(known)s::text[]))"
)

#: KEY_FILTER with each array read once a statement (an InitPlan): a custom
#: plan then knows their lengths no better than a generic one does (see
#: _claim.PREPARE_CLAIM).
OPAQUE_KEY_FILTER = KEY_FILTER.replace(
    "ANY(%(keys)s::bytea[])", "ANY(ARRAY(SELECT unnest(%(keys)s::bytea[])))"
).replace("ANY(%(known)s::text[])", "ANY(ARRAY(SELECT unnest(%(known)s::text[])))")


class Gate(NamedTuple):
    """What a member may claim beyond its executors and queues: rows signed
    by ``keys`` it holds (or unsigned), registered jobs of ``known`` names."""

    keys: Sequence[bytes] = ()
    known: Sequence[str] = ()

    def params(self) -> dict[str, list[Any]]:
        """KEY_FILTER's parameters."""
        return {"keys": list(self.keys), "known": list(self.known)}


NO_GATE = Gate()
