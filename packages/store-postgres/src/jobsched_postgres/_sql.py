"""The PostgreSQL store's transactions: each a function of a connection, run
inside ``conn.transaction()`` on one of the store's threads (see
``PostgresStore._tx``). READ COMMITTED throughout: claims lock the rows they
take with ``FOR UPDATE SKIP LOCKED``, and every write that depends on a row's
state says that state in its ``WHERE``."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from contextlib import nullcontext
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

_ADD_COLUMNS = (
    "id, name, executor, status, queue, k0, k1, k2, run_at, submitted_at, unmet, tenant, "
    "rate_key, payload, schedule, fire_time, finished_at, last_error"
)
#: The columns' types, for a binary COPY.
_ADD_TYPES = (
    "int8", "text", "text", "text", "int2", "float8", "float8", "float8", "float8", "float8",
    "int4", "text", "text", "bytea", "text", "float8", "float8", "text",
)  # fmt: skip
#: A batch this large goes in by a binary COPY (20k no-op jobs: 80 ms,
#: against 110 for a text COPY and 340 for INSERTs); a smaller one by
#: INSERT, one round trip less.
COPY_FROM = 64


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
            status = status_of.get(upstream, "is not in the store")
            if status == "completed":
                continue
            if upstream not in status_of or JobStatus(status).is_terminal:
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
        if len(rows) >= COPY_FROM:
            with cur.copy(
                f"COPY jobsched_jobs ({_ADD_COLUMNS}) FROM STDIN (FORMAT BINARY)"
            ) as copy:
                copy.set_types(_ADD_TYPES)
                for row in rows:
                    copy.write_row(row)
        else:
            cur.executemany(
                f"INSERT INTO jobsched_jobs ({_ADD_COLUMNS}) VALUES ({', '.join(['%s'] * 18)})",
                rows,
            )
        if edges:
            cur.executemany(
                "INSERT INTO jobsched_deps (upstream, downstream) VALUES (%s, %s) "
                "ON CONFLICT DO NOTHING",
                edges,
            )
    if tenants:
        # A tenant's row, never served yet: a fair-share claim looks for
        # ready jobs of every tenant that has one, and serves this one first.
        conn.execute(
            "INSERT INTO jobsched_tenants (tenant) SELECT unnest(%s::text[]) "
            "ON CONFLICT DO NOTHING",
            (sorted(tenants),),
        )
    if len(changes) < len(jobs):
        notify(conn)
    return changes


# ── claim ────────────────────────────────────────────────────────────────

# Takes the picked rows: RUNNING under the owner, attempt counted, started.
# A running attempt is its job's row (ran_by, started_at); a row in
# jobsched_attempts is written when it ends, unless it completed (record).
_TAKE = """
claimed AS (
    UPDATE jobsched_jobs AS t SET status = 'running', queue = NULL, owner = %(owner)s,
        ran_by = %(owner)s, lease_until = %(until)s, attempts = t.attempts + 1,
        started_at = %(now)s, cancel_requested = false
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
        WHERE queue = 0 AND executor = e.name
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

TAKE_IDS = (
    "WITH picked AS (SELECT unnest(%(ids)s::bigint[]) AS id),"
    + _TAKE
    + "SELECT id, attempts, payload FROM claimed ORDER BY k0, k1, k2, id"
)


def promote(conn: Conn, now: float) -> None:
    """Due waiting jobs join the ready queue, so a claim orders them by key."""
    conn.execute(_PROMOTE, {"now": now})


def take_over(
    conn: Conn, owner: str, limit: int, names: list[str], dead: list[str], now: float, until: float
) -> list[Claimed]:
    """Attempts whose lease ran out (or whose owner is a dead local process),
    now ``owner``'s (ran_by still names the member that ran them)."""
    rows = conn.execute(
        "UPDATE jobsched_jobs SET owner = %s, lease_until = %s WHERE id IN ("
        "SELECT id FROM jobsched_jobs WHERE status = 'running' AND executor = ANY(%s) "
        "AND (lease_until < %s OR owner = ANY(%s)) ORDER BY lease_until LIMIT %s "
        "FOR UPDATE SKIP LOCKED) RETURNING id, attempts, payload, cancel_requested",
        (owner, until, names, now, dead, limit),
    ).fetchall()
    return [
        Claimed(job_id, attempt, payload, lost=True, cancelled=bool(cancel))
        for job_id, attempt, payload, cancel in rows
    ]


def claim_by_key(
    conn: Conn, owner: str, limit: int, rooms: dict[str, int], now: float, until: float
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
                "until": until,
                "now": now,
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
    skip: list[int],
    tenants: Sequence[str | None] | None = None,
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


# ── outcomes ─────────────────────────────────────────────────────────────


# Every outcome of a batch in one statement, each fenced on (owner,
# attempt): the rows it writes are the outcomes accepted; the rest were
# refused. A retry waits in queue 1 until its run_at; a terminal outcome ends
# the row. The same statement writes the rows of the accepted attempts that
# did not complete (a completed one is its job's row) and lets
# completed upstreams count off their dependents (the free ones queue), so
# a batch without failures is one round trip, committed on its own.
#
# The fence is the owner and the attempt: every write that ends a RUNNING
# attempt sets owner NULL, and only a claim (or a takeover, of a RUNNING row)
# sets it, so no other status matches. (Saying status = 'running' too made
# the planner walk the leases index, whose statistics a queue always
# outruns, and join every running row to every outcome: 3 ms for 64
# outcomes instead of 0.5.) An attempt's row is new (the upsert only
# guards against writing one twice; its conflict check probes the primary
# key, where an UPDATE ... FROM chose to scan the whole table).
# Dependents are never RUNNING, so the two updates of jobsched_jobs touch
# different rows. The completed ids go to the dependency index as one array
# (one scan), not joined (a probe each: three times as long).
_RECORD = """
WITH o AS (
    SELECT * FROM unnest(%(ids)s::bigint[], %(attempts)s::int[], %(statuses)s::text[],
        %(finished)s::float8[], %(run_at)s::float8[], %(results)s::bytea[],
        %(errors)s::text[], %(tracebacks)s::text[])
    AS o(id, attempt, status, finished_at, run_at, result, error, tb)
),
written AS (
    UPDATE jobsched_jobs AS j SET
        status = o.status,
        queue = CASE WHEN o.status = 'retry_wait' THEN 1 END,
        run_at = CASE WHEN o.status = 'retry_wait' THEN o.run_at ELSE j.run_at END,
        finished_at = CASE WHEN o.status = 'retry_wait' THEN NULL ELSE o.finished_at END,
        owner = NULL,
        lease_until = NULL,
        result = CASE WHEN o.status = 'retry_wait' THEN j.result ELSE o.result END,
        last_error = CASE WHEN o.status = 'retry_wait' THEN o.error
            ELSE COALESCE(o.error, j.last_error) END,
        last_traceback = CASE WHEN o.status = 'retry_wait' THEN o.tb
            ELSE COALESCE(o.tb, j.last_traceback) END
    FROM o
    WHERE j.id = o.id AND j.owner = %(owner)s AND j.attempts = o.attempt
    RETURNING j.id, o.attempt, o.status, o.finished_at, o.error, j.started_at, j.ran_by
),
closed AS (
    INSERT INTO jobsched_attempts AS a (job_id, attempt, owner, started_at, finished_at,
        status, error)
    SELECT id, attempt, COALESCE(ran_by, %(owner)s), COALESCE(started_at, finished_at),
        finished_at, status, error FROM written WHERE status <> 'completed'
    ON CONFLICT (job_id, attempt) DO UPDATE SET finished_at = excluded.finished_at,
        status = excluded.status, error = excluded.error
),
gone AS (
    DELETE FROM jobsched_deps WHERE upstream = ANY(ARRAY(
        SELECT id FROM written WHERE status = 'completed'))
    RETURNING downstream
),
met AS (SELECT downstream, COUNT(*) AS n FROM gone GROUP BY downstream),
freed AS (
    UPDATE jobsched_jobs AS j SET unmet = j.unmet - met.n,
        queue = CASE WHEN j.unmet > met.n THEN 2 WHEN j.run_at <= %(now)s THEN 0 ELSE 1 END
    FROM met WHERE j.id = met.downstream AND j.queue = 2
    RETURNING j.queue
)
SELECT id, NULL::smallint FROM written UNION ALL SELECT NULL, queue FROM freed
"""

# The usual outcome, a completion with nothing but its time and result:
# four arrays to send and an UPDATE of the columns it changes (the eight of
# _RECORD cost a batch of 64 no-op jobs about twice the server and client
# time). Its dependents count off as in _RECORD.
_COMPLETE = """
WITH o AS (
    SELECT * FROM unnest(%(ids)s::bigint[], %(attempts)s::int[], %(finished)s::float8[],
        %(results)s::bytea[]) AS o(id, attempt, finished_at, result)
),
written AS (
    UPDATE jobsched_jobs AS j SET status = 'completed', queue = NULL,
        finished_at = o.finished_at, owner = NULL, lease_until = NULL, result = o.result
    FROM o
    WHERE j.id = o.id AND j.owner = %(owner)s AND j.attempts = o.attempt
    RETURNING j.id, 'completed' AS status
),""" + _RECORD[_RECORD.index("gone AS (") :]


def _plain(out: Outcome) -> bool:
    return out.status is _COMPLETED and out.error is None and out.traceback is None


def record(conn: Conn, owner: str, outcomes: Sequence[Outcome]) -> Recorded:
    """Write a batch of outcomes; call it outside a transaction (it opens one
    when a failure has dependents to cancel)."""
    recorded = Recorded()
    if not outcomes:
        return recorded
    # One outcome per job: a second for the same job in one batch is refused.
    batch: dict[int, Outcome] = {}
    for out in outcomes:
        if out.id in batch:
            recorded.refused.append(out.id)
        else:
            batch[out.id] = out
    rows = list(batch.values())
    for out in rows:
        if out.status is _RETRY_WAIT and out.run_at is None:
            raise ValueError(f"a RETRY_WAIT outcome needs run_at (job {out.id})")
    plain = [o for o in rows if _plain(o)]
    rest = [o for o in rows if not _plain(o)] if len(plain) < len(rows) else []
    # A failure's cascade must commit with it, and a batch of both kinds is
    # written whole: then the batch is a transaction.
    ends = [o for o in rest if o.status.is_terminal and o.status is not _COMPLETED]
    now = max(o.finished_at for o in rows)
    result: list[tuple[Any, ...]] = []
    with conn.transaction() if ends or (plain and rest) else nullcontext():
        if plain:
            result += conn.execute(
                _COMPLETE,
                {
                    "ids": [o.id for o in plain],
                    "attempts": [o.attempt for o in plain],
                    "finished": [o.finished_at for o in plain],
                    "results": [o.result for o in plain],
                    "owner": owner,
                    "now": now,
                },
            ).fetchall()
        if rest:
            result += conn.execute(
                _RECORD,
                {
                    "ids": [o.id for o in rest],
                    "attempts": [o.attempt for o in rest],
                    "statuses": [o.status.value for o in rest],
                    "finished": [o.finished_at for o in rest],
                    "run_at": [o.run_at for o in rest],
                    "results": [o.result for o in rest],
                    "errors": [o.error for o in rest],
                    "tracebacks": [o.traceback for o in rest],
                    "owner": owner,
                    "now": now,
                },
            ).fetchall()
        written = {job_id for job_id, _ in result if job_id is not None}
        recorded.refused.extend(o.id for o in rows if o.id not in written)
        done = [o for o in rows if o.id in written]
        wake = any(o.status is _RETRY_WAIT for o in done) or any(
            queue != _BLOCKED for job_id, queue in result if job_id is None
        )
        for out in done:
            if out.status.is_terminal and out.status is not _COMPLETED:
                recorded.changes.extend(cascade(conn, out.id, out.status, out.finished_at))
        if wake:
            notify(conn)
    return recorded


# Everything downstream of a job that did not complete, transitively, through
# jobs still waiting (only they are cancelled, and only through them does the
# cascade go on), with the upstream each was reached from first.
_CASCADE = """
WITH RECURSIVE down(id, up, how) AS (
    SELECT d.downstream, d.upstream, %(how)s::text
    FROM jobsched_deps d JOIN jobsched_jobs j ON j.id = d.downstream
    WHERE d.upstream = %(root)s AND j.status IN ('pending', 'retry_wait')
  UNION
    SELECT d.downstream, d.upstream, 'cancelled'
    FROM down JOIN jobsched_deps d ON d.upstream = down.id
    JOIN jobsched_jobs j ON j.id = d.downstream
    WHERE j.status IN ('pending', 'retry_wait')
)
SELECT DISTINCT ON (id) id, up, how FROM down ORDER BY id, up
"""


def cascade(conn: Conn, root: int, status: JobStatus, now: float) -> list[Change]:
    """An upstream did not complete: cancel every job downstream of it, transitively.

    Three statements however long the chain (a recursive query, not a
    round trip per dependent); each dependent's reason names its own upstream.
    """
    # The planner, without statistics on a young table, may hash-join the
    # whole edge table at every step of the recursion (quadratic: a 5,000
    # chain took 44 s); an index probe per step is what a walk needs.
    conn.execute("SET LOCAL enable_hashjoin = off")
    conn.execute("SET LOCAL enable_mergejoin = off")
    reached = conn.execute(_CASCADE, {"root": root, "how": status.value}).fetchall()
    conn.execute("RESET enable_hashjoin")
    conn.execute("RESET enable_mergejoin")
    errors = {job_id: f"upstream job-{up} {how}" for job_id, up, how in reached}
    cancelled: set[int] = set()
    if errors:
        # Blocked rows (queue 2) no claim can take; the status check stands
        # against a concurrent cancel.
        cancelled = {
            job_id
            for (job_id,) in conn.execute(
                "UPDATE jobsched_jobs AS j SET status = 'cancelled', queue = NULL, "
                "finished_at = %s, owner = NULL, lease_until = NULL, last_error = c.error "
                "FROM unnest(%s::bigint[], %s::text[]) AS c(id, error) "
                "WHERE j.id = c.id AND j.status IN ('pending', 'retry_wait') RETURNING j.id",
                (now, list(errors), list(errors.values())),
            ).fetchall()
        }
    conn.execute(
        "DELETE FROM jobsched_deps WHERE upstream = ANY(%s)", ([root, *sorted(cancelled)],)
    )
    return [Change(i, _CANCELLED, errors[i]) for i in sorted(cancelled)]


def finish(conn: Conn, job_id: int, status: JobStatus, now: float, error: str | None) -> None:
    conn.execute(
        "UPDATE jobsched_jobs SET status = %s, queue = NULL, finished_at = %s, owner = NULL, "
        "lease_until = NULL, last_error = COALESCE(%s, last_error) WHERE id = %s",
        (status.value, now, error, job_id),
    )


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
            changes.extend(cascade(conn, job_id, _CANCELLED, now))
    if flagged or changes:
        notify(conn)
    return changes


# ── history ──────────────────────────────────────────────────────────────

# The oldest finished jobs beyond the newest `keep`, a batch of them, and
# their attempts. By id arrays, so each DELETE probes a primary key (joined,
# the planner hashed both tables whole: 20 ms a batch at 20k rows).
PRUNE = """
WITH old AS (
    SELECT id FROM jobsched_jobs WHERE finished_at IS NOT NULL
    ORDER BY finished_at DESC, id DESC LIMIT %(batch)s OFFSET %(keep)s
),
jobs AS (DELETE FROM jobsched_jobs WHERE id = ANY(ARRAY(SELECT id FROM old)) RETURNING id),
attempts AS (DELETE FROM jobsched_attempts WHERE job_id = ANY(ARRAY(SELECT id FROM jobs)))
SELECT COUNT(*) FROM jobs
"""
