"""The PostgreSQL store's claims: the plain claim in key order (one statement
that also promotes due waiting jobs), takeovers of attempts whose lease ran
out, and the locked candidates and taking of a rate-limited or fair-share
claim (``_limits`` chooses among them). Each claimed row is locked with
``FOR UPDATE SKIP LOCKED``: rows another member is claiming are not ours."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from jobsched.store import KEY_ID_SIZE, KEY_ID_START, KEYED, Claimed

from ._sql import DB_NOW, Conn

# A row a member may claim: signed with a key id it holds (%(keys)s), or
# without one (the legacy format, which every member tries). A member never
# claims a row signed by a key it lacks: the row waits for one that holds it.
KEY_FILTER = (
    f"(substring(payload from 1 for 1) <> '\\x{KEYED.hex()}'::bytea "
    f"OR substring(payload from {KEY_ID_START} for {KEY_ID_SIZE}) = ANY(%(keys)s::bytea[]))"
)

# Takes the picked rows: RUNNING under the owner, attempt counted, started.
# A running attempt is its job's row (ran_by, started_at); a row in
# jobsched_attempts is written when it ends, unless it completed (record).
# The lease is the server's clock (DB_NOW) plus the lease's seconds.
_TAKE = """
claimed AS (
    UPDATE jobsched_jobs AS t SET status = 'running', queue = NULL, owner = %(owner)s,
        ran_by = %(owner)s, lease_until = extract(epoch from now())::float8 + %(lease)s,
        attempts = t.attempts + 1, started_at = %(now)s, cancel_requested = false
    FROM picked WHERE t.id = picked.id AND t.queue = 0
    RETURNING t.id, t.attempts, t.payload, t.k0, t.k1, t.k2
)
"""

# Due waiting jobs to the ready queue: alone (promote) or in the claim.
_PROMOTE = (
    "UPDATE jobsched_jobs SET queue = 0 WHERE id IN (SELECT id FROM jobsched_jobs "
    "WHERE queue = 1 AND run_at <= %(now)s FOR UPDATE SKIP LOCKED)"
)

# The claim: per executor this member has, its best ready rows (the ready
# index serves each executor's order), at most its room; of those the best
# `limit`. SKIP LOCKED: rows another member is claiming right now are not
# waited for, they are simply not ours.
#
# The same statement promotes due waiting jobs to the ready queue (a round
# trip of its own cost a claim a tenth of its time). The picked rows come
# from the snapshot before it, so the jobs it promotes are not among them:
# the last row counts them, and the caller claims again when it may take
# more (claim_by_key).
CLAIM = (
    """
WITH promoted AS ("""
    + _PROMOTE
    + """ RETURNING 1),
picked AS (
    SELECT j.id FROM unnest(%(names)s::text[], %(rooms)s::int[]) AS e(name, room)
    CROSS JOIN LATERAL (
        SELECT id, k0, k1, k2 FROM jobsched_jobs
        WHERE queue = 0 AND executor = e.name AND """
    + KEY_FILTER
    + """
        ORDER BY k0, k1, k2, id
        LIMIT LEAST(e.room, %(limit)s)
        FOR UPDATE SKIP LOCKED
    ) AS j
    ORDER BY j.k0, j.k1, j.k2, j.id
    LIMIT %(limit)s
),"""
    + _TAKE
    + "SELECT id, attempts, payload, k0, k1, k2 FROM claimed "
    + "UNION ALL SELECT NULL, count(*), NULL, NULL, NULL, NULL FROM promoted"
)

# The same rows as CLAIM, with what a rate limit or fair share picks by,
# for the caller to choose from; rate keys with an empty bucket left out.
# {tenants} and {tenant}: fair share's per-tenant rows (each tenant's best).
_CANDIDATES = (
    """
SELECT j.id, e.name, j.rate_key, j.tenant, j.k0, j.k1, j.k2
FROM unnest(%(names)s::text[], %(rooms)s::int[]) AS e(name, room) {tenants}
CROSS JOIN LATERAL (
    SELECT id, rate_key, tenant, k0, k1, k2 FROM jobsched_jobs
    WHERE queue = 0 AND executor = e.name {tenant}
        AND (rate_key IS NULL OR NOT (rate_key = ANY(%(empty)s::text[])))
        AND NOT (id = ANY(%(skip)s::bigint[])) AND """
    + KEY_FILTER.replace("{", "{{").replace("}", "}}")
    + """
    ORDER BY k0, k1, k2, id
    LIMIT LEAST(e.room, %(limit)s)
    FOR UPDATE SKIP LOCKED
) AS j
"""
)

TAKE_IDS = (
    "WITH picked AS (SELECT unnest(%(ids)s::bigint[]) AS id),"
    + _TAKE
    + "SELECT id, attempts, payload FROM claimed ORDER BY k0, k1, k2, id"
)


def promote(conn: Conn, now: float) -> None:
    """Due waiting jobs join the ready queue, so a claim orders them by key."""
    conn.execute(_PROMOTE, {"now": now})


def take_over(
    conn: Conn,
    owner: str,
    limit: int,
    names: list[str],
    dead: list[str],
    lease: float,
    keys: Sequence[bytes] = (),
) -> list[Claimed]:
    """Attempts whose lease ran out on the server's clock (or whose owner is a
    dead local process), now ``owner``'s (ran_by still names the member that
    ran them).

    Never ``owner``'s own: a member whose heartbeat could not reach a row for
    a while (a lock held on it) still runs that attempt, and taking it as
    lost settled it as failed under the running worker (whose outcome then
    met a RETRY_WAIT job: ``retry_wait -> completed``). Its next heartbeat
    renews the lease; another member takes it if the member is gone.
    """
    # The old lease (from the locked rows) says when the owner last renewed
    # it: the end of the time the attempt really ran.
    rows = conn.execute(
        f"UPDATE jobsched_jobs j SET owner = %s, lease_until = {DB_NOW} + %s FROM ("
        "SELECT id, lease_until, started_at FROM jobsched_jobs WHERE status = 'running' "
        f"AND executor = ANY(%s) AND ((lease_until < {DB_NOW} AND owner <> %s) "
        "OR owner = ANY(%s)) AND "
        + KEY_FILTER.replace("%(keys)s", "%s")
        + " ORDER BY lease_until LIMIT %s FOR UPDATE SKIP LOCKED) old WHERE j.id = old.id "
        "RETURNING j.id, j.attempts, j.payload, j.cancel_requested, "
        # Never before its start: a member with a longer lease than this one's.
        "GREATEST(old.lease_until - %s, old.started_at)",
        (owner, lease, names, owner, dead, list(keys), limit, lease),
    ).fetchall()
    return [
        Claimed(job_id, attempt, payload, lost=True, cancelled=bool(cancel), renewed_at=renewed)
        for job_id, attempt, payload, cancel, renewed in rows
    ]


def claim_by_key(
    conn: Conn,
    owner: str,
    limit: int,
    rooms: dict[str, int],
    now: float,
    lease: float,
    keys: Sequence[bytes] = (),
) -> list[Claimed]:
    """Up to ``limit`` ready jobs in key order (due waiting ones included),
    each statement committed on its own."""
    claimed: list[tuple[Any, ...]] = []
    while True:
        rows = conn.execute(
            CLAIM,
            {
                "names": list(rooms),
                "rooms": [max(0, room - len(claimed)) for room in rooms.values()],
                "limit": limit - len(claimed),
                "owner": owner,
                "lease": lease,
                "now": now,
                "keys": list(keys),
            },
        ).fetchall()
        *taken, (_, promoted, *_) = rows
        claimed += taken
        # Jobs it promoted are ready now: claim again if there is room.
        if not promoted or len(claimed) >= limit:
            break
    # RETURNING gives no order: the key's is restored here.
    claimed.sort(key=lambda r: (r[3], r[4], r[5], r[0]))
    return [Claimed(job_id, attempt, payload) for job_id, attempt, payload, *_ in claimed]


def take_ids(conn: Conn, owner: str, ids: list[int], now: float, lease: float) -> list[Claimed]:
    rows = conn.execute(
        TAKE_IDS, {"ids": ids, "owner": owner, "lease": lease, "now": now}
    ).fetchall()
    return [Claimed(job_id, attempt, payload) for job_id, attempt, payload in rows]


def candidates(
    conn: Conn,
    limit: int,
    rooms: dict[str, int],
    empty: list[str],
    skip: list[int],
    tenants: Sequence[str | None] | None = None,
    keys: Sequence[bytes] = (),
) -> list[tuple[Any, ...]]:
    """Ready rows a rate-limited or fair-share claim chooses from, locked, best first.

    :param skip: rows this transaction read already (its own locks do not
        skip them).
    :param tenants: fair share: the best rows of each of these tenants (the
        tenant index serves each one's order; None: the jobs without one).
        Without it, the best rows of every job.
    """
    params: dict[str, Any] = {
        "names": list(rooms),
        "rooms": list(rooms.values()),
        "limit": limit,
        "empty": empty,
        "skip": skip,
        "keys": list(keys),
    }
    if tenants is None:
        rows = conn.execute(_CANDIDATES.format(tenants="", tenant=""), params).fetchall()
    else:
        rows = []
        named = [t for t in tenants if t is not None]
        if named:
            params["tenants"] = named
            rows += conn.execute(
                _CANDIDATES.format(
                    tenants="CROSS JOIN unnest(%(tenants)s::text[]) AS tn(name)",
                    tenant="AND tenant = tn.name",
                ),
                params,
            ).fetchall()
        if None in tenants:
            rows += conn.execute(
                _CANDIDATES.format(tenants="", tenant="AND tenant IS NULL"), params
            ).fetchall()
    rows.sort(key=lambda r: (r[4], r[5], r[6], r[0]))
    return rows
