"""The PostgreSQL store's adds and counts, and what its other
modules share (the connection type, the server's clock, NOTIFY). Claims are
in ``_claim``, outcomes in ``_outcomes``, the cascade and cancels in
``_cancels``: each a function of a connection, run on one of the store's
threads (see ``PostgresStore._tx``). READ COMMITTED throughout: claims lock
the rows they take with ``FOR UPDATE SKIP LOCKED``, and every write that
depends on a row's state says that state in its ``WHERE``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from jobsched import JobStatus
from jobsched.store import (
    DEFAULT_QUEUE,
    EDGE_FAILED,
    EDGE_MET,
    EDGE_WAITING,
    KEY_WIDTH,
    ON_FAILURE_CANCEL,
    ON_FAILURE_RUN,
    Change,
    NewJob,
)

from ._schema import CHANNEL

Conn = psycopg.Connection[Any]

_READY, _WAITING, _BLOCKED = 0, 1, 2

#: The server's clock, in the seconds since the epoch that leases are stored
#: in. Leases are set and compared on it alone: members' clocks may disagree
#: (a member running ahead would take every other member's running jobs as
#: lost), the server's is one. ``now()`` is the transaction's start, so every
#: row of a statement gets the same lease.
DB_NOW = "extract(epoch from now())::float8"
_CANCELLED = JobStatus.CANCELLED


#: The payload of a notification that only says jobs ended (for wait()):
#: the members' claimers ignore it.
FINISHED = "finished"


def notify(conn: Conn, payload: str = "") -> None:
    """Wake every LISTENing member when this transaction commits."""
    # Identical notifications of one transaction are folded into one.
    conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, payload))


def _add_new(conn: Conn, rows: list[tuple[Any, ...]], named: bool) -> set[int]:
    """Insert jobs with ids of the submitters' own, each unless a job has its id
    (a concurrent insert of the same id waits for the other transaction, then
    adds nothing); the ids inserted."""
    if len(rows) >= COPY_FROM:
        return _add_new_staged(conn, rows, named)
    columns, types = (_NAMED_COLUMNS, _NAMED_TYPES) if named else (_ADD_COLUMNS, _ADD_TYPES)
    # One statement of one array per column: a VALUES row per job cost four
    # times a plain add in parsing and binding. In id order, as below.
    arrays = ", ".join(f"%s::{kind}[]" for kind in types)
    return {
        job_id
        for (job_id,) in conn.execute(
            f"INSERT INTO jobsched_jobs ({columns}) SELECT * FROM unnest({arrays}) "
            "ORDER BY 1 ON CONFLICT (id) DO NOTHING RETURNING id",
            [list(column) for column in zip(*rows, strict=True)],
        )
    }


def _add_new_staged(conn: Conn, rows: list[tuple[Any, ...]], named: bool) -> set[int]:
    """:func:`_add_new` for a big batch: a binary COPY into a temporary table,
    then one ``INSERT ... SELECT ... ON CONFLICT (id) DO NOTHING`` from it.

    As 18 arrays through unnest, 3,000 jobs took 2-2.8x a plain batch's COPY
    (W17); staged, the rows travel as a plain batch's do, and the conflict
    check is the same statement's. In id
    order: two members adding overlapping batches take the ids' locks in
    one order, so neither waits on the other in a cycle (a deadlock, which
    the server would end by failing one of the adds)."""
    # ON COMMIT DROP: nothing outlives the transaction, so a rolled-back or
    # retried one, a new connection or a pooler's session change finds no
    # stale table. Its creation is a round trip and a catalog row, small
    # against a batch of COPY_FROM jobs or more.
    columns, types = (_NAMED_COLUMNS, _NAMED_TYPES) if named else (_ADD_COLUMNS, _ADD_TYPES)
    conn.execute(
        f"CREATE TEMP TABLE jobsched_add_stage ON COMMIT DROP AS "
        f"SELECT {columns} FROM jobsched_jobs WITH NO DATA"
    )
    with conn.cursor() as cur:
        with cur.copy(f"COPY jobsched_add_stage ({columns}) FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types(types)
            for row in rows:
                copy.write_row(row)
        return {
            job_id
            for (job_id,) in cur.execute(
                f"INSERT INTO jobsched_jobs ({columns}) "
                f"SELECT {columns} FROM jobsched_add_stage ORDER BY id "
                "ON CONFLICT (id) DO NOTHING RETURNING id"
            )
        }


def int_array(values: Iterable[int]) -> str:
    """``values`` (ints) as an array's text, for a ``%s::bigint[]`` (or
    ``smallint[]``) parameter: psycopg dumps a list item by item in Python
    (a regular expression's look at each), which cost W23's 10,000 edges and
    fan-in ids tens of milliseconds; one join of their digits costs one."""
    return "{" + ",".join(map(str, map(int, values))) + "}"


def padded(key: tuple[float, ...]) -> tuple[float, ...]:
    if len(key) > KEY_WIDTH:
        raise ValueError(f"a stored sort key has at most {KEY_WIDTH} fields, got {key!r}")
    return tuple(key) + (0.0,) * (KEY_WIDTH - len(key))


# ── add ──────────────────────────────────────────────────────────────────

_ADD_COLUMNS = (
    "id, name, executor, status, queue, k0, k1, k2, run_at, submitted_at, unmet, tenant, "
    "rate_key, payload, schedule, fire_time, finished_at, last_error, args"
)
#: The columns' types, for a binary COPY.
_ADD_TYPES = (
    "int8", "text", "text", "text", "int2", "float8", "float8", "float8", "float8", "float8",
    "int4", "text", "text", "bytea", "text", "float8", "float8", "text", "jsonb",
)  # fmt: skip


def _as_is(text: str) -> str:
    return text


def jsonb(text: str | None) -> Jsonb | None:
    """A registered job's arguments (JSON text) as a jsonb parameter, sent
    as the text it is: the server parses it once, nothing is decoded here."""
    return None if text is None else Jsonb(text, dumps=_as_is)


#: A batch with a job of a named queue writes its queue too (the column is
#: there: ``_queues.add_column`` ran first); one without leaves it NULL, the
#: default queue, and is the statement of a store without the column.
_NAMED_COLUMNS = _ADD_COLUMNS + ", queue_name"
_NAMED_TYPES = (*_ADD_TYPES, "text")


def add_columns(named: bool) -> tuple[str, tuple[str, ...]]:
    """The columns of a job's row as :func:`plan` makes it, and their types
    (a binary COPY's); ``named``: with the queue's."""
    return (_NAMED_COLUMNS, _NAMED_TYPES) if named else (_ADD_COLUMNS, _ADD_TYPES)


#: A batch this large goes in by a binary COPY (20k no-op jobs: 80 ms,
#: against 110 for a text COPY and 340 for INSERTs); a smaller one by
#: INSERT, one round trip less.
COPY_FROM = 64


class Planned:
    """A batch's rows as :func:`plan` makes them: the jobs' rows (those with
    ids of their own apart), their edges ``(upstream, downstream, policy,
    state)``, the jobs cancelled at once, and the tenants named."""

    __slots__ = ("changes", "edges", "own_rows", "rows", "tenants")

    def __init__(self) -> None:
        self.rows: list[tuple[Any, ...]] = []
        self.own_rows: list[tuple[Any, ...]] = []
        self.edges: list[tuple[int, int, int, int]] = []
        self.changes: list[Change] = []
        self.tenants: set[str] = set()


def plan(jobs: Sequence[NewJob], status_of: dict[int, str], now: float, named: bool) -> Planned:
    """The rows of ``jobs`` (``_ADD_COLUMNS``, and the queue's with ``named``),
    given the status of each upstream the store holds (read FOR SHARE);
    ``status_of`` gains the jobs', as a later job of the batch may depend on
    one. A job with an id of its own among ``status_of``'s is held already:
    it is flagged ``existed`` and gets no row."""
    planned = Planned()
    # A job with an id of its own that a later job of this batch depends on,
    # and that the store holds already, was read: nothing is added for it,
    # and the dependent sees its status. Any other such id is left to the
    # insert's ON CONFLICT.
    held = set(status_of)
    for job in jobs:
        job.existed = job.own_id and job.id in held  # set anew on a retried transaction
        if job.existed:
            continue
        unmet = 0
        failed: tuple[int, str] | None = None
        # Every edge, kept until the job goes: (upstream, policy, state).
        kept: list[tuple[int, int, int]] = []
        lenient = set(job.run_on_failure)
        for upstream in dict.fromkeys(job.depends_on):  # an upstream named twice counts once
            status = status_of.get(upstream, "is not in the store")
            policy = ON_FAILURE_RUN if upstream in lenient else ON_FAILURE_CANCEL
            if status == "completed":
                kept.append((upstream, policy, EDGE_MET))
            elif status == "pending":  # most often (a workflow's): no enum's call
                unmet += 1
                kept.append((upstream, policy, EDGE_WAITING))
            elif upstream not in status_of or (
                JobStatus(status).is_terminal and policy == ON_FAILURE_CANCEL
            ):
                # Not in the store: no one can tell how it ended, whatever the policy.
                failed = (upstream, status)
                break
            elif JobStatus(status).is_terminal:
                kept.append((upstream, policy, EDGE_FAILED))
            else:
                unmet += 1
                kept.append((upstream, policy, EDGE_WAITING))
        error = finished = None
        if failed is not None:
            queue, status = None, _CANCELLED.value
            error, finished = f"upstream job-{failed[0]} {failed[1]}", now
            planned.changes.append(Change(job.id, _CANCELLED, error))
        else:
            planned.edges.extend((u, job.id, policy, state) for u, policy, state in kept)
            if unmet:
                queue, status = _BLOCKED, "pending"
            else:
                queue, status = (_READY if job.run_at <= now else _WAITING), "pending"
        k0, k1, k2 = padded(job.key)
        row: tuple[Any, ...] = (
            job.id, job.name, job.executor, status, queue, k0, k1, k2, job.run_at,
            job.submitted_at, unmet, job.tenant, job.rate_key, job.payload,
            job.schedule, job.fire_time, finished, error, jsonb(job.args),
        )  # fmt: skip
        if named:
            row += (None if job.queue == DEFAULT_QUEUE else job.queue,)
        status_of[job.id] = status  # a later job of this batch may depend on it
        if job.tenant is not None:
            planned.tenants.add(job.tenant)
        (planned.own_rows if job.own_id else planned.rows).append(row)
    return planned


def add(conn: Conn, jobs: Sequence[NewJob], now: float) -> list[Change]:
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
    named = any(job.queue != DEFAULT_QUEUE for job in jobs)
    planned = plan(jobs, status_of, now, named)
    rows, own_rows, edges = planned.rows, planned.own_rows, planned.edges
    changes, tenants = planned.changes, planned.tenants
    if own_rows:
        inserted = _add_new(conn, own_rows, named)
        if len(inserted) < len(own_rows):
            # The store holds these ids (committed by another member, maybe
            # just now: the insert waited for it): those jobs stand.
            lost = {row[0] for row in own_rows} - inserted
            for job in jobs:
                if job.id in lost:
                    job.existed = True
            changes = [c for c in changes if c.id not in lost]
            edges = [e for e in edges if e[1] not in lost]
    columns, types = (_NAMED_COLUMNS, _NAMED_TYPES) if named else (_ADD_COLUMNS, _ADD_TYPES)
    with conn.cursor() as cur:
        if len(rows) >= COPY_FROM:
            with cur.copy(f"COPY jobsched_jobs ({columns}) FROM STDIN (FORMAT BINARY)") as copy:
                copy.set_types(types)
                for row in rows:
                    copy.write_row(row)
        else:
            cur.executemany(
                f"INSERT INTO jobsched_jobs ({columns}) VALUES ({', '.join(['%s'] * len(types))})",
                rows,
            )
        if edges:
            cur.executemany(
                "INSERT INTO jobsched_deps (upstream, downstream, on_failure, settled) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                edges,
            )
    add_tenants(conn, tenants)
    if len(changes) < len(jobs):
        notify(conn)
    return changes


def add_tenants(conn: Conn, tenants: set[str]) -> None:
    """A row for each tenant, never served yet: a fair-share claim looks for
    ready jobs of every tenant that has one, and serves a new one first."""
    if tenants:
        conn.execute(
            "INSERT INTO jobsched_tenants (tenant) SELECT unnest(%s::text[]) "
            "ON CONFLICT DO NOTHING",
            (sorted(tenants),),
        )


# ── counts ───────────────────────────────────────────────────────────────

#: counts() folds the deltas (see _schema._COUNTS) when it reads more rows
#: than this: a read costs at most about this many rows plus those the
#: fleet appends between two folds.
FOLD_AT = 256
# One folder at a time; the others read the sums as they are (a second
# DELETE would wait for the first's row locks).
_FOLD_LOCK = 0x6A6F6273636E74  # "jobscnt"

# The rows the folder sees, deleted and put back as one row per (status,
# executor); rows appended by transactions it cannot see stay as they are.
_FOLD = """
WITH gone AS (DELETE FROM jobsched_counts RETURNING status, executor, n)
INSERT INTO jobsched_counts (status, executor, n)
SELECT status, executor, sum(n) FROM gone GROUP BY 1, 2 HAVING sum(n) <> 0
"""


def counts(conn: Conn) -> list[tuple[str, str, int]]:
    """(status, executor, jobs) of every status some job has; folds the deltas
    when they pile up.

    The read is one statement, run on its own (outside a transaction) or in
    the caller's; the fold is a transaction of its own (its lock held for
    its DELETE), or a savepoint in the caller's.
    """
    rows = conn.execute(
        "SELECT status, executor, sum(n), count(*) FROM jobsched_counts GROUP BY 1, 2"
    ).fetchall()
    if sum(r[3] for r in rows) > FOLD_AT:
        with conn.transaction():
            fold_counts(conn)
    return [(s, e, int(n)) for s, e, n, _ in rows if n]


def fold_counts(conn: Conn) -> None:
    """Fold the counts' deltas into one row per (status, executor), unless
    another session is folding them now."""
    locked = conn.execute("SELECT pg_try_advisory_xact_lock(%s)", (_FOLD_LOCK,)).fetchone()
    if locked is not None and locked[0]:
        conn.execute(_FOLD)
