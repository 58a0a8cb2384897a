"""Fair share's rotation on a durable store: whose turn it is, as plain data.

Both stores keep each tenant's ``(served, credit)`` in a table and read its
ready jobs their own way; the order of turns is this one function, so the
stores cannot drift apart (docs/stores.md, "Limits and fair share").
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence


def take_turns(
    state: dict[str | None, tuple[int, int]],
    ready: Mapping[str | None, Sequence[float]],
    weights: Mapping[str | None, int],
    want: int,
    take: Callable[[str | None, int], list[int]],
) -> tuple[list[int], set[str | None]]:
    """Serve tenants weighted round-robin until ``want`` jobs are taken.

    The turn goes first to a tenant with credit left in its turn (the last
    claim ended mid-turn), then to the tenant served least recently (never
    served: first), ties broken by the tenants' best keys. A turn ends when
    its credit is spent or the tenant has nothing it may claim now; the
    tenant then waits for every other one's turn.

    :param state: tenant -> (served, credit) as stored; updated in place.
    :param ready: the tenants with ready jobs -> their best ready key.
    :param take: ``take(tenant, n)`` claims up to ``n`` of the tenant's jobs,
        best first, and returns their ids.
    :returns: the ids taken, in order, and the tenants whose state changed.
    """
    turn = max((served for served, _ in state.values()), default=0)

    def rank(tenant: str | None) -> tuple[object, ...]:
        served, credit = state.get(tenant, (0, 0))
        return (credit <= 0, served, tuple(ready[tenant]), tenant or "")

    ring = deque(sorted(ready, key=rank))
    got: list[int] = []
    changed: set[str | None] = set()
    while ring and len(got) < want:
        tenant = ring.popleft()
        served, credit = state.get(tenant, (0, 0))
        fresh = credit <= 0
        if fresh:
            credit = weights.get(tenant, 1)
        asked = min(credit, want - len(got))
        picked = take(tenant, asked)
        if not picked:
            continue  # nothing it may claim now: its place and credit stay
        got += picked
        if fresh:
            turn += 1
            served = turn
        credit -= len(picked)
        if len(picked) < asked:
            credit = 0  # nothing more it may claim now: its turn is over
        elif credit == 0:
            ring.append(tenant)  # another turn after everyone else's
        state[tenant] = (served, credit)
        changed.add(tenant)
    return got, changed
