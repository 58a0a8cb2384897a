"""The dict store's claim: ready jobs best first, or by fair-share turns,
within each executor's and each queue's room and each rate key's token bucket."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from jobsched.store import RateLimit, has_token, refill, take_turns, token_due

from ._rows import Row, State


class Picker:
    """Picks from ``ready`` (best first) for one claim; :meth:`save` writes the buckets."""

    def __init__(
        self,
        state: State,
        ready: Sequence[Row],
        rooms: dict[str, int],
        rates: Mapping[str, RateLimit],
        now: float,
        queue_room: Mapping[str, int] | None = None,
    ) -> None:
        self._state, self._rooms, self._rates, self._now = state, rooms, rates, now
        #: queue -> how many more of its jobs this claim may take.
        self._queue_room = dict(queue_room or {})
        # A key without a bucket yet has a full one.
        self.tokens = {key: float(limit.burst) for key, limit in rates.items()}
        self._since: dict[str, float] = {}
        for key in rates:
            if key in state.buckets:
                tokens, since = state.buckets[key]
                self.tokens[key] = refill(rates[key], tokens, since, now)
                self._since[key] = since
        # The jobs of an empty bucket are not ready (they wait for tokens).
        self._ready = [
            r for r in ready if r.rate_key not in self.tokens or has_token(self.tokens[r.rate_key])
        ]
        self._taken: set[int] = set()
        self._spent: set[str] = set()

    def take(self, want: int, tenant: str | None = None, *, by_tenant: bool = False) -> list[int]:
        """Up to ``want`` ready jobs (``by_tenant``: of ``tenant`` only), best first."""
        got: list[int] = []
        rooms, tokens = self._rooms, self.tokens
        for row in self._ready:
            if len(got) == want or not rooms:
                break
            if row.id in self._taken or (by_tenant and row.tenant != tenant):
                continue
            if row.executor not in rooms:
                continue
            queue_room = self._queue_room
            if queue_room.get(row.queue, 1) <= 0:
                continue
            if row.rate_key in tokens:
                if not has_token(tokens[row.rate_key]):
                    continue
                tokens[row.rate_key] = max(tokens[row.rate_key] - 1.0, 0.0)
                self._spent.add(row.rate_key)
            rooms[row.executor] -= 1
            if rooms[row.executor] <= 0:
                del rooms[row.executor]
            if row.queue in queue_room:
                queue_room[row.queue] -= 1
            got.append(row.id)
            self._taken.add(row.id)
        return got

    def round_robin(self, weights: Mapping[str | None, int], want: int) -> list[int]:
        """Fair share: tenants take turns of up to their weight of jobs; the
        rotation's state is the store's, shared by every member."""
        best: dict[str | None, tuple[float, ...]] = {}
        for row in self._ready:  # best first: a tenant's first row is its best
            best.setdefault(row.tenant, row.key)
        got, _ = take_turns(
            self._state.turns, best, weights, want, lambda t, n: self.take(n, t, by_tenant=True)
        )
        return got

    def save(self) -> float | None:
        """Write the buckets this claim took tokens from; when the next token
        is due in a bucket left empty (None: every bucket has one)."""
        now = self._now
        for key in self._spent:
            # A clock read that went back refilled nothing: keep the later time.
            self._state.buckets[key] = (self.tokens[key], max(now, self._since.get(key, now)))
        due = [
            token_due(self._rates[key], left, now)
            for key, left in self.tokens.items()
            if not has_token(left)
        ]
        return min(due) if due else None
