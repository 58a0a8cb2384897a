"""Claims under rate limits and fair share: which of the locked candidates to take.

The plain claim is one statement (``_sql.CLAIM``). With ``rates`` or
``tenants`` the choice depends on state shared by the fleet (token buckets,
tenants' turns), so the claim's transaction locks that state, reads
candidates, chooses here in Python, and takes the chosen rows; the rows it
locked and did not take are free again at commit.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from jobsched._store import Claimed

from . import _sql

if TYPE_CHECKING:
    from jobsched import RateLimit

# A token due now can come out a hair short after float arithmetic.
_EPSILON = 1e-9


def claim(
    conn: _sql.Conn,
    owner: str,
    limit: int,
    rooms: dict[str, int],
    now: float,
    until: float,
    rates: Mapping[str, RateLimit],
    tenants: Mapping[str | None, int] | None,
) -> list[Claimed]:
    allowance = _fill_buckets(conn, rates, now) if rates else {}
    empty = [key for key, n in allowance.items() if n < 1]
    if tenants is None:
        chosen = _by_key(conn, limit, rooms, allowance, empty)
    else:
        chosen = _fair_share(conn, limit, rooms, allowance, empty, tenants)
    if not chosen:
        return []
    claims = _sql.take_ids(conn, owner, chosen, now, until)
    # Best first is the order chosen: by key, or by turn under fair share.
    place = {job_id: i for i, job_id in enumerate(chosen)}
    claims.sort(key=lambda c: place[c.id])
    taken: dict[str, int] = {}
    keys = _keys_of(conn, [c.id for c in claims]) if allowance else {}
    for job_id in keys:
        key = keys[job_id]
        if key in allowance:
            taken[key] = taken.get(key, 0) + 1
    if taken:
        conn.execute(
            "UPDATE jobsched_buckets b SET tokens = GREATEST(b.tokens - t.n, 0) "
            "FROM unnest(%s::text[], %s::int[]) AS t(key, n) WHERE b.key = t.key",
            (list(taken), list(taken.values())),
        )
    return claims


def _fill_buckets(conn: _sql.Conn, rates: Mapping[str, RateLimit], now: float) -> dict[str, int]:
    """Refill the buckets of ``rates`` up to ``now``, locked; whole tokens each holds."""
    keys = sorted(rates)
    conn.execute(
        "INSERT INTO jobsched_buckets (key, tokens, updated) "
        "SELECT * FROM unnest(%s::text[], %s::float8[], %s::float8[]) ON CONFLICT DO NOTHING",
        (keys, [float(rates[k].burst) for k in keys], [now] * len(keys)),
    )
    # Locked in key order: every claim that takes tokens waits its turn here,
    # so the fleet as a whole never takes more than the bucket holds.
    rows = conn.execute(
        "SELECT key, tokens, updated FROM jobsched_buckets WHERE key = ANY(%s) "
        "ORDER BY key FOR UPDATE",
        (keys,),
    ).fetchall()
    allowance: dict[str, int] = {}
    refilled = []
    for key, tokens, updated in rows:
        limit = rates[key]
        if now > updated:
            tokens = min(limit.burst, tokens + (now - updated) * limit.rate / limit.per)
            updated = now
        refilled.append((key, tokens, updated))
        allowance[key] = math.floor(tokens + _EPSILON)
    conn.execute(
        "UPDATE jobsched_buckets b SET tokens = t.tokens, updated = t.updated "
        "FROM unnest(%s::text[], %s::float8[], %s::float8[]) AS t(key, tokens, updated) "
        "WHERE b.key = t.key",
        ([r[0] for r in refilled], [r[1] for r in refilled], [r[2] for r in refilled]),
    )
    return allowance


def _keys_of(conn: _sql.Conn, ids: list[int]) -> dict[int, str]:
    rows = conn.execute(
        "SELECT id, rate_key FROM jobsched_jobs WHERE id = ANY(%s) AND rate_key IS NOT NULL",
        (ids,),
    ).fetchall()
    return dict(rows)


def _fits(row: tuple[Any, ...], rooms: dict[str, int], allowance: dict[str, int]) -> bool:
    """Take ``row`` if its executor has room and its bucket a token (counted down)."""
    executor, key = row[1], row[2]
    if rooms.get(executor, 0) < 1:
        return False
    if key in allowance:
        if allowance[key] < 1:
            return False
        allowance[key] -= 1
    rooms[executor] -= 1
    return True


def _by_key(
    conn: _sql.Conn,
    limit: int,
    rooms: dict[str, int],
    allowance: dict[str, int],
    empty: list[str],
) -> list[int]:
    """The best rows by key that have room and tokens.

    Rows whose bucket ran dry while choosing can fill the window read, so
    read again without their keys: each round empties a bucket or ends.
    """
    rooms, allowance, empty = dict(rooms), dict(allowance), list(empty)
    chosen: list[int] = []
    while len(chosen) < limit:
        free = {name: room for name, room in rooms.items() if room > 0}
        rows = _sql.candidates(conn, limit - len(chosen), free, empty, skip=chosen)
        for row in rows:
            if len(chosen) < limit and _fits(row, rooms, allowance):
                chosen.append(row[0])
        dry = [key for key, n in allowance.items() if n < 1 and key not in empty]
        if not rows or not dry:
            return chosen
        empty += dry
    return chosen


def _turn(served: float, head: tuple[Any, ...]) -> tuple[float, ...]:
    """Who goes next: the lowest round, then the one partway through its
    turn, then the best head job."""
    round_ = math.floor(served + _EPSILON)
    return (round_, -max(0.0, served - round_), *head[4:7])


def _fair_share(
    conn: _sql.Conn,
    limit: int,
    rooms: dict[str, int],
    allowance: dict[str, int],
    empty: list[str],
    weights: Mapping[str | None, int],
) -> list[int]:
    """Weighted round-robin over tenants, whose turns the fleet shares.

    Each tenant has a *pass*: rounds served, counted in ``1 / weight`` steps
    per job. The tenant in the lowest round goes next, one that is partway
    through its turn first (so a turn of ``weight`` jobs runs together), and
    a tenant that comes back after idling starts at the current round.
    """
    # The None tenant is stored as '' (tenant names are non-empty).
    passes: dict[str | None, float] = {
        (t or None): p
        for t, p in conn.execute(
            "SELECT tenant, pass FROM jobsched_tenants ORDER BY tenant FOR UPDATE"
        ).fetchall()
    }
    stored = dict(passes)
    # Jobs without a tenant are a tenant too; it joins when first seen queued.
    passes.setdefault(None, min(passes.values(), default=0.0))
    queues: dict[str | None, list[tuple[Any, ...]]] = {}
    named = [t for t in passes if t is not None]
    for row in _sql.candidates(conn, limit, rooms, empty, named):
        queues.setdefault(row[3], []).append(row)
    if not queues:
        return []
    current = min(passes[t] for t in queues)
    live = {t: max(passes[t], current) for t in queues}
    rooms, allowance = dict(rooms), dict(allowance)
    chosen: list[int] = []
    while queues and len(chosen) < limit:
        tenant = min(queues, key=lambda t: _turn(live[t], queues[t][0]))
        row = queues[tenant].pop(0)
        if not queues[tenant]:
            del queues[tenant]
        if _fits(row, rooms, allowance):
            chosen.append(row[0])
            live[tenant] += 1.0 / max(1, weights.get(tenant, 1))
    moved = [(t or "", p) for t, p in live.items() if stored.get(t) != p]
    if moved:
        conn.execute(
            "INSERT INTO jobsched_tenants (tenant, pass) "
            "SELECT * FROM unnest(%s::text[], %s::float8[]) "
            "ON CONFLICT (tenant) DO UPDATE SET pass = excluded.pass",
            ([t for t, _ in moved], [p for _, p in moved]),
        )
    return chosen
