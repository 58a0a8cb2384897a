"""The PostgreSQL store's transactions: each a function of a connection, run
inside ``conn.transaction()`` on one of the store's threads (see
``PostgresStore._tx``). READ COMMITTED throughout: claims lock the rows they
take with ``FOR UPDATE SKIP LOCKED``, and every write that depends on a row's
state says that state in its ``WHERE``."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import psycopg

from jobsched._enums import JobStatus
from jobsched._store import KEY_WIDTH, Change, Claimed, NewJob, Outcome, Recorded

from ._schema import CHANNEL

Conn = psycopg.Connection[Any]

_READY, _WAITING, _BLOCKED = 0, 1, 2
_CANCELLED = JobStatus.CANCELLED
_COMPLETED = JobStatus.COMPLETED
_RETRY_WAIT = JobStatus.RETRY_WAIT


class AlreadyFired(Exception):
    """Rolls a fire's transaction back: its job exists already."""


def notify(conn: Conn) -> None:
    """Wake every LISTENing member when this transaction commits."""
    # Identical notifications of one transaction are folded into one.
    conn.execute("SELECT pg_notify(%s, '')", (CHANNEL,))


def padded(key: tuple[float, ...]) -> tuple[float, ...]:
    if len(key) > KEY_WIDTH:
        raise ValueError(f"a stored sort key has at most {KEY_WIDTH} fields, got {key!r}")
    return tuple(key) + (0.0,) * (KEY_WIDTH - len(key))


# ── add ──────────────────────────────────────────────────────────────────


def add(conn: Conn, jobs: Sequence[NewJob], now: float) -> list[Change]:
    changes: list[Change] = []
    upstreams = sorted({u for job in jobs for u in job.depends_on})
    status_of: dict[int, str] = {}
    if upstreams:
        # FOR SHARE: an upstream that completes concurrently waits for this
        # transaction, so its release sees the edges written here (and one
        # that completed first is read as completed, not counted as unmet).
        status_of = dict(
            conn.execute(
                "SELECT id, status FROM jobsched_jobs WHERE id = ANY(%s) ORDER BY id FOR SHARE",
                (upstreams,),
            ).fetchall()
        )
    rows = []
    edges: list[tuple[int, int]] = []
    tenants: set[str] = set()
    for job in jobs:
        unmet = 0
        failed: tuple[int, str] | None = None
        for upstream in job.depends_on:
            status = status_of.get(upstream, "unknown")
            if status == "completed":
                continue
            if status == "unknown" or JobStatus(status).is_terminal:
                failed = (upstream, status)
                break
            unmet += 1
        error = finished = None
        if failed is not None:
            queue, status = None, _CANCELLED.value
            error, finished = f"upstream job-{failed[0]} {failed[1]}", now
            changes.append(Change(job.id, _CANCELLED, error))
        elif unmet:
            queue, status = _BLOCKED, "pending"
            edges.extend((u, job.id) for u in job.depends_on if status_of.get(u) != "completed")
        else:
            queue, status = (_READY if job.run_at <= now else _WAITING), "pending"
        status_of[job.id] = status  # a later job of this batch may depend on it
        if job.tenant is not None:
            tenants.add(job.tenant)
        k0, k1, k2 = padded(job.key)
        rows.append((
            job.id, job.name, job.executor, status, queue, k0, k1, k2, job.run_at,
            job.submitted_at, unmet, job.tenant, job.rate_key, job.payload,
            job.schedule, job.fire_time, finished, error,
        ))  # fmt: skip
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO jobsched_jobs (id, name, executor, status, queue, k0, k1, k2, run_at, "
            "submitted_at, unmet, tenant, rate_key, payload, schedule, fire_time, finished_at, "
            "last_error) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, "
            "%s, %s, %s)",
            rows,
        )
        if edges:
            cur.executemany(
                "INSERT INTO jobsched_deps (upstream, downstream) VALUES (%s, %s) "
                "ON CONFLICT DO NOTHING",
                edges,
            )
    if tenants:
        # A tenant new to fair share starts at the current round, not at 0
        # (which would let it take every turn until it caught up).
        conn.execute(
            "INSERT INTO jobsched_tenants (tenant, pass) SELECT t, "
            "(SELECT COALESCE(MIN(pass), 0) FROM jobsched_tenants) FROM unnest(%s::text[]) t "
            "ON CONFLICT DO NOTHING",
            (sorted(tenants),),
        )
    if len(changes) < len(jobs):
        notify(conn)
    return changes


# ── claim ────────────────────────────────────────────────────────────────

# Takes the picked rows: RUNNING under the owner, attempt counted, and an
# attempt row, in one statement. RETURNING gives no order: the key's is
# restored by the outer SELECT.
_TAKE = """
claimed AS (
    UPDATE jobsched_jobs AS t SET status = 'running', queue = NULL, owner = %(owner)s,
        lease_until = %(until)s, attempts = t.attempts + 1, started_at = %(now)s,
        cancel_requested = false
    FROM picked WHERE t.id = picked.id AND t.queue = 0
    RETURNING t.id, t.attempts, t.payload, t.k0, t.k1, t.k2
),
logged AS (
    INSERT INTO jobsched_attempts (job_id, attempt, owner, started_at, status)
    SELECT id, attempts, %(owner)s, %(now)s, 'running' FROM claimed
    ON CONFLICT (job_id, attempt) DO UPDATE SET owner = excluded.owner,
        started_at = excluded.started_at, finished_at = NULL, status = 'running', error = NULL
)
SELECT id, attempts, payload FROM claimed ORDER BY k0, k1, k2, id
"""

# The claim: per executor this member has, its best ready rows (the ready
# index serves each executor's order), at most its room; of those the best
# `limit`. SKIP LOCKED: rows another member is claiming right now are not
# waited for, they are simply not ours.
CLAIM = (
    """
WITH picked AS (
    SELECT j.id FROM unnest(%(names)s::text[], %(rooms)s::int[]) AS e(name, room)
    CROSS JOIN LATERAL (
        SELECT id, k0, k1, k2 FROM jobsched_jobs
        WHERE queue = 0 AND executor = e.name
        ORDER BY k0, k1, k2, id
        LIMIT LEAST(e.room, %(limit)s)
        FOR UPDATE SKIP LOCKED
    ) AS j
    ORDER BY j.k0, j.k1, j.k2, j.id
    LIMIT %(limit)s
),"""
    + _TAKE
)

# The same rows as CLAIM, with what a rate limit or fair share picks by,
# for the caller to choose from; rate keys with an empty bucket left out.
# {tenants} and {tenant}: fair share's per-tenant rows (each tenant's best).
_CANDIDATES = """
SELECT j.id, e.name, j.rate_key, j.tenant, j.k0, j.k1, j.k2
FROM unnest(%(names)s::text[], %(rooms)s::int[]) AS e(name, room) {tenants}
CROSS JOIN LATERAL (
    SELECT id, rate_key, tenant, k0, k1, k2 FROM jobsched_jobs
    WHERE queue = 0 AND executor = e.name {tenant}
        AND (rate_key IS NULL OR NOT (rate_key = ANY(%(empty)s::text[])))
        AND NOT (id = ANY(%(skip)s::bigint[]))
    ORDER BY k0, k1, k2, id
    LIMIT LEAST(e.room, %(limit)s)
    FOR UPDATE SKIP LOCKED
) AS j
"""

TAKE_IDS = "WITH picked AS (SELECT unnest(%(ids)s::bigint[]) AS id)," + _TAKE


def promote(conn: Conn, now: float) -> None:
    """Due waiting jobs join the ready queue, so a claim orders them by key."""
    conn.execute(
        "UPDATE jobsched_jobs SET queue = 0 WHERE id IN (SELECT id FROM jobsched_jobs "
        "WHERE queue = 1 AND run_at <= %s FOR UPDATE SKIP LOCKED)",
        (now,),
    )


def take_over(
    conn: Conn, owner: str, limit: int, names: list[str], dead: list[str], now: float, until: float
) -> list[Claimed]:
    """Attempts whose lease ran out (or whose owner is a dead local process), now ``owner``'s."""
    rows = conn.execute(
        "UPDATE jobsched_jobs SET owner = %s, lease_until = %s WHERE id IN ("
        "SELECT id FROM jobsched_jobs WHERE status = 'running' AND executor = ANY(%s) "
        "AND (lease_until < %s OR owner = ANY(%s)) ORDER BY lease_until LIMIT %s "
        "FOR UPDATE SKIP LOCKED) RETURNING id, attempts, payload",
        (owner, until, names, now, dead, limit),
    ).fetchall()
    return [Claimed(job_id, attempt, payload, lost=True) for job_id, attempt, payload in rows]


def claim_by_key(
    conn: Conn, owner: str, limit: int, rooms: dict[str, int], now: float, until: float
) -> list[Claimed]:
    rows = conn.execute(
        CLAIM,
        {
            "names": list(rooms),
            "rooms": list(rooms.values()),
            "limit": limit,
            "owner": owner,
            "until": until,
            "now": now,
        },
    ).fetchall()
    return [Claimed(job_id, attempt, payload) for job_id, attempt, payload in rows]


def take_ids(conn: Conn, owner: str, ids: list[int], now: float, until: float) -> list[Claimed]:
    rows = conn.execute(
        TAKE_IDS, {"ids": ids, "owner": owner, "until": until, "now": now}
    ).fetchall()
    return [Claimed(job_id, attempt, payload) for job_id, attempt, payload in rows]


def candidates(
    conn: Conn,
    limit: int,
    rooms: dict[str, int],
    empty: list[str],
    tenants: list[str] | None = None,
    skip: list[int] | None = None,
) -> list[tuple[Any, ...]]:
    """Ready rows a rate-limited or fair-share claim chooses from, locked, best first.

    :param tenants: fair share: the best rows of each of these tenants (the
        tenant index serves each one's order) and of the jobs without one.
    :param skip: rows this transaction chose already (its own locks do not
        skip them).
    """
    params: dict[str, Any] = {
        "names": list(rooms),
        "rooms": list(rooms.values()),
        "limit": limit,
        "empty": empty,
        "skip": skip or [],
    }
    if tenants is None:
        rows = conn.execute(_CANDIDATES.format(tenants="", tenant=""), params).fetchall()
    else:
        params["tenants"] = tenants
        rows = conn.execute(
            _CANDIDATES.format(
                tenants="CROSS JOIN unnest(%(tenants)s::text[]) AS tn(name)",
                tenant="AND tenant = tn.name",
            ),
            params,
        ).fetchall()
        rows += conn.execute(
            _CANDIDATES.format(tenants="", tenant="AND tenant IS NULL"), params
        ).fetchall()
    rows.sort(key=lambda r: (r[4], r[5], r[6], r[0]))
    return rows


# ── outcomes ─────────────────────────────────────────────────────────────


def record(conn: Conn, owner: str, outcomes: Sequence[Outcome]) -> Recorded:
    recorded = Recorded()
    wake = False
    # In id order: two members' batches lock their rows in one order.
    for out in sorted(outcomes, key=lambda o: o.id):
        if out.status is _RETRY_WAIT:
            assert out.run_at is not None
            cursor = conn.execute(
                "UPDATE jobsched_jobs SET status = 'retry_wait', queue = 1, run_at = %s, "
                "owner = NULL, lease_until = NULL, last_error = %s, last_traceback = %s "
                "WHERE id = %s AND owner = %s AND attempts = %s AND status = 'running'",
                (out.run_at, out.error, out.traceback, out.id, owner, out.attempt),
            )
            wake = True
        else:
            cursor = conn.execute(
                "UPDATE jobsched_jobs SET status = %s, queue = NULL, finished_at = %s, "
                "owner = NULL, lease_until = NULL, result = %s, "
                "last_error = COALESCE(%s, last_error), "
                "last_traceback = COALESCE(%s, last_traceback) "
                "WHERE id = %s AND owner = %s AND attempts = %s AND status = 'running'",
                (
                    out.status.value, out.finished_at, out.result, out.error, out.traceback,
                    out.id, owner, out.attempt,
                ),
            )  # fmt: skip
        if cursor.rowcount != 1:
            recorded.refused.append(out.id)
            continue
        conn.execute(
            "UPDATE jobsched_attempts SET finished_at = %s, status = %s, error = %s "
            "WHERE job_id = %s AND attempt = %s",
            (out.finished_at, out.status.value, out.error, out.id, out.attempt),
        )
        if out.status is _COMPLETED:
            wake = _release(conn, out.id, out.finished_at) or wake
        elif out.status.is_terminal:
            recorded.changes.extend(_cascade(conn, out.id, out.status, out.finished_at))
    if wake:
        notify(conn)
    return recorded


def _release(conn: Conn, upstream: int, now: float) -> bool:
    """An upstream completed: count it off its dependents; True if some are free."""
    freed = conn.execute(
        "WITH gone AS (DELETE FROM jobsched_deps WHERE upstream = %s RETURNING downstream) "
        "UPDATE jobsched_jobs SET unmet = unmet - 1, "
        "queue = CASE WHEN unmet > 1 THEN 2 WHEN run_at <= %s THEN 0 ELSE 1 END "
        "FROM gone WHERE id = gone.downstream AND queue = 2 RETURNING queue",
        (upstream, now),
    ).fetchall()
    return any(q != _BLOCKED for (q,) in freed)


def finish(conn: Conn, job_id: int, status: JobStatus, now: float, error: str | None) -> None:
    conn.execute(
        "UPDATE jobsched_jobs SET status = %s, queue = NULL, finished_at = %s, owner = NULL, "
        "lease_until = NULL, last_error = COALESCE(%s, last_error) WHERE id = %s",
        (status.value, now, error, job_id),
    )


def _cascade(conn: Conn, root: int, status: JobStatus, now: float) -> list[Change]:
    """An upstream did not complete: cancel every job downstream of it, transitively."""
    changes: list[Change] = []
    # A worklist, not a recursive CTE: each dependent's reason names its own
    # upstream, as the in-memory scheduler's does.
    todo: list[tuple[int, str]] = [(root, status.value)]
    while todo:
        upstream, how = todo.pop()
        rows = conn.execute(
            "WITH gone AS (DELETE FROM jobsched_deps WHERE upstream = %s RETURNING downstream) "
            "SELECT j.id FROM jobsched_jobs j JOIN gone ON j.id = gone.downstream "
            "WHERE j.status IN ('pending', 'retry_wait') ORDER BY j.id FOR UPDATE OF j",
            (upstream,),
        ).fetchall()
        for (job_id,) in rows:
            error = f"upstream job-{upstream} {how}"
            finish(conn, job_id, _CANCELLED, now, error)
            changes.append(Change(job_id, _CANCELLED, error))
            todo.append((job_id, _CANCELLED.value))
    return changes


def cancel(conn: Conn, ids: Collection[int], now: float) -> list[Change]:
    """Cancel queued jobs (and what depends on them); flag running ones for their owner."""
    changes: list[Change] = []
    rows = conn.execute(
        "SELECT id, status FROM jobsched_jobs WHERE id = ANY(%s) ORDER BY id FOR UPDATE",
        (sorted(set(ids)),),
    ).fetchall()
    flagged = False
    for job_id, status in rows:
        if status == "running":
            conn.execute(
                "UPDATE jobsched_jobs SET cancel_requested = true WHERE id = %s", (job_id,)
            )
            flagged = True
        elif status in ("pending", "retry_wait"):
            finish(conn, job_id, _CANCELLED, now, "cancelled")
            changes.append(Change(job_id, _CANCELLED, "cancelled"))
            changes.extend(_cascade(conn, job_id, _CANCELLED, now))
    if flagged or changes:
        notify(conn)
    return changes
