"""The candidates a rate-limited or fair-share claim chooses from, and taking the chosen.

``_limits`` decides which of the locked candidates to take (rate buckets,
tenants' turns); this module reads them, per executor and queue, and takes
the chosen ids with the claim's own update (``_claim._TAKE``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from jobsched.store import Claimed

from . import _queues
from ._claim import _KEYS, _TAKE, ALL
from ._gate import NO_GATE, Gate
from ._sql import Conn

# The same rows as CLAIM, with what a rate limit or fair share picks by,
# for the caller to choose from; rate keys with an empty bucket left out.
# {tenants} and {tenant}: fair share's per-tenant rows (each tenant's best);
# <queues> and <queue>: the queues served (as in QUEUES_CLAIM), or those
# full left out; <qn>: the stored queue (a constant NULL without the column).
_QUEUED_CANDIDATES = (
    """
SELECT j.id, e.name, j.rate_key, j.tenant, j.k0, j.k1, j.k2, j.qn
FROM unnest(%(names)s::text[], %(rooms)s::int[]) AS e(name, room) {tenants} <queues>
CROSS JOIN LATERAL (
    SELECT id, rate_key, tenant, k0, k1, k2, <qn> AS qn FROM jobsched_jobs
    WHERE queue = 0 AND executor = e.name {tenant} <queue>
        AND (rate_key IS NULL OR NOT (rate_key = ANY(%(empty)s::text[])))
        AND NOT (id = ANY(%(skip)s::bigint[])) AND """
    + _KEYS
    + """
    ORDER BY k0, k1, k2, id
    LIMIT LEAST(e.room, %(limit)s)
    FOR UPDATE SKIP LOCKED
) AS j
"""
)


def _candidates_sql(queues: str = "", queue: str = "", qn: str = "NULL::text") -> str:
    return (
        _QUEUED_CANDIDATES.replace("<queues>", queues).replace("<queue>", queue).replace("<qn>", qn)
    )


#: The candidates of every queue, by tenant ({tenants} and {tenant}).
_CANDIDATES = _candidates_sql()

TAKE_IDS = (
    "WITH picked AS (SELECT id, n FROM unnest(%(ids)s::bigint[]) WITH ORDINALITY AS p(id, n)),"
    + _TAKE
    + "SELECT id, attempts, payload, started, args, name, run_at FROM claimed "
    "ORDER BY k0, k1, k2, id"
)


def take_ids(
    conn: Conn, owner: str, ids: list[int], now: float, lease: float, starting: int = ALL
) -> list[Claimed]:
    """Take the chosen rows (see _TAKE): the first ``starting`` start now."""
    rows = conn.execute(
        TAKE_IDS, {"ids": ids, "owner": owner, "lease": lease, "now": now, "starting": starting}
    ).fetchall()
    return [
        Claimed(job_id, attempt, payload, started=started, args=args, name=name, run_at=run_at)
        for job_id, attempt, payload, started, args, name, run_at in rows
    ]


HAS = _queues.HAS_COLUMN


def candidates(
    conn: Conn,
    limit: int,
    rooms: dict[str, int],
    empty: list[str],
    skip: list[int],
    tenants: Sequence[str | None] | None = None,
    gate: Gate = NO_GATE,
    queues: QueueFilter | None = None,
    guarded: bool = False,
) -> list[tuple[Any, ...]]:
    """Ready rows a rate-limited or fair-share claim chooses from, locked, best first.

    :param skip: rows this transaction read already (its own locks do not
        skip them).
    :param tenants: fair share: the best rows of each of these tenants (the
        tenant index serves each one's order; None: the jobs without one).
        Without it, the best rows of every job.
    :param queues: which stored queues (None: of a store without the
        column, every job's the default queue).
    :param guarded: the caller has not seen the named queues' column:
        :class:`SawColumn` if it is there in the statements' snapshot.
    :raises SawColumn: see ``guarded``.
    """
    params: dict[str, Any] = {
        "names": list(rooms),
        "rooms": list(rooms.values()),
        "limit": limit,
        "empty": empty,
        "skip": skip,
        **gate.params(),
    }
    tenant_arms = [("", "")]
    if tenants is not None:
        tenant_arms = []
        named = [t for t in tenants if t is not None]
        if named:
            params["tenants"] = named
            tenant_arms.append(
                ("CROSS JOIN unnest(%(tenants)s::text[]) AS tn(name)", "AND tenant = tn.name")
            )
        if None in tenants:
            tenant_arms.append(("", "AND tenant IS NULL"))
    queue_arms = [("", "")] if queues is None else queues.arms(params)
    rows: list[tuple[Any, ...]] = []
    for join, cond in tenant_arms:
        for queue_join, queue_cond in queue_arms:
            qn = "NULL::text" if queues is None else "queue_name"
            sql = _candidates_sql(queue_join, queue_cond, qn).format(tenants=join, tenant=cond)
            if guarded:
                sql += f"UNION ALL SELECT NULL, NULL, NULL, NULL, 0, 0, 0, NULL WHERE {HAS}"
            rows += conn.execute(sql, params).fetchall()
            if rows and rows[-1][0] is None:
                raise SawColumn()
    rows.sort(key=lambda r: (r[4], r[5], r[6], r[0]))
    return rows


class SawColumn(Exception):
    """A guarded read found the named queues' column: read again knowing it."""


class QueueFilter:
    """The stored queues (None: the default) a claim under limits reads:
    ``served`` (None: every queue but those in ``full``)."""

    def __init__(self, served: set[str | None] | None, full: set[str | None]) -> None:
        self.served = served
        self.full = full

    def arms(self, params: dict[str, Any]) -> list[tuple[str, str]]:
        """The statements' FROM and WHERE parts, one pair per statement to run."""
        if self.served is None:
            params["full"] = sorted(q for q in self.full if q is not None)
            if None in self.full:
                # NULL <> ALL('{}') holds: the default queue's rows are left out by name.
                return [("", "AND queue_name IS NOT NULL AND queue_name <> ALL(%(full)s::text[])")]
            if not params["full"]:
                return [("", "")]
            return [("", "AND (queue_name IS NULL OR queue_name <> ALL(%(full)s::text[]))")]
        arms = []
        named = sorted(q for q in self.served - self.full if q is not None)
        if named:
            params["queues"] = named
            join = "CROSS JOIN unnest(%(queues)s::text[]) AS qu(name)"
            arms.append((join, "AND queue_name = qu.name"))
        if None in self.served and None not in self.full:
            arms.append(("", "AND queue_name IS NULL"))
        return arms
