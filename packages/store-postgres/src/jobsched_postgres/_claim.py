"""The PostgreSQL store's claims: the plain claim in key order (one statement
that also promotes due waiting jobs), and the locked candidates and taking
of a rate-limited or fair-share claim (``_limits`` chooses among them).
Takeovers are in ``_takeover``. Each claimed row is locked with ``FOR UPDATE
SKIP LOCKED``: rows another member is claiming are not ours."""

from __future__ import annotations

import contextlib
import re
import weakref
from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg.pq import TransactionStatus
from psycopg.types.numeric import Int4

from jobsched import JobStatus
from jobsched.store import DEFAULT_QUEUE, Claimed

from . import _frontier, _queues
from ._gate import KEY_FILTER, NO_GATE, Gate
from ._sql import Conn

_CANCELLED = JobStatus.CANCELLED

# Takes the picked rows: RUNNING under the owner, attempt counted. The first
# %(starting)s of them in key order (picked's n) start now, for idle workers;
# the rest are claimed ahead of the workers, started_at NULL until the member
# writes their start (start()): a takeover hands those back uncounted. A row
# a takeover handed back so (lease_until set while it waits, see
# _takeover.HAND_BACK) starts at once: a job that kills its member as it starts, before
# its start is written, is handed back once, then counts its attempts.
# A running attempt is its job's row (ran_by, started_at); a row in
# jobsched_attempts is written when it ends, unless it completed (record).
# The lease is the server's clock (DB_NOW) plus the lease's seconds;
# entered_xid the claim's transaction (a look for lost attempts reads the
# rows made running since its last, see _running).
# The rows are locked (this statement's pick, or the candidates this
# transaction read), ready when they were: `queue + 0 = 0` says it again
# in a form no partial index of the ready rows matches, so the planner
# finds them by their primary key. With `queue = 0` it hashed every ready
# row read through such an index (under a held xmin, every entry since the
# hold began) when its statistics said the queue was short.
# The picked ids are an array, unnested in key order (`n`): a join to
# `picked` itself was costed from the pick's estimate, and a prepared
# statement's generic plan, which knows no limit (a tenth of the ready
# rows, 1,200 of 100,000), hashed a scan of every ready row to join them;
# an unnested array is costed as 10 rows, so each is a primary key probe.
_TAKE = """
claimed AS (
    UPDATE jobsched_jobs AS t SET status = 'running', queue = NULL, owner = %(owner)s,
        ran_by = %(owner)s, lease_until = extract(epoch from now())::float8 + %(lease)s,
        entered_xid = pg_current_xact_id(),
        attempts = t.attempts + 1, cancel_requested = false,
        started_at = CASE WHEN p.n <= %(starting)s OR t.lease_until IS NOT NULL
            THEN %(now)s END
    FROM unnest(ARRAY(SELECT id FROM picked ORDER BY n)) WITH ORDINALITY AS p(id, n)
    WHERE t.id = p.id AND t.queue + 0 = 0
    RETURNING t.id, t.attempts, t.payload, t.k0, t.k1, t.k2, t.started_at IS NOT NULL AS started,
        t.args::text AS args, CASE WHEN t.args IS NOT NULL THEN t.name END AS name, t.run_at,
        t.executor
)
"""

# Due waiting jobs to the ready queue: alone (promote) or in the claim.
# The moment is read by an InitPlan, as the plain claim's other parameters
# (see PREPARE_CLAIM).
_PROMOTE = (
    "UPDATE jobsched_jobs SET queue = 0 WHERE id IN (SELECT id FROM jobsched_jobs "
    "WHERE queue = 1 AND run_at <= (SELECT %(now)s::float8) FOR UPDATE SKIP LOCKED)"
)

# The claim: per executor this member has, its best ready rows from where
# its last claim left them (see _frontier), at most its room; of those the
# best `limit`; then each executor's new bound.
#
# The same statement promotes due waiting jobs to the ready queue (a round
# trip of its own cost a claim a tenth of its time). The picked rows come
# from the snapshot before it, so the jobs it promotes are not among them:
# the last row counts them, and the caller claims again when it may take
# more (claim_by_key); they are made ready by this statement, after its
# snapshot, so the next claim reads them as new.
_KEYS = KEY_FILTER.replace("{", "{{").replace("}", "}}")  # for str.format

#: The columns of a claim's rows: a claimed job's, or (id NULL) a count of
#: promoted jobs, the named queues' column seen, or an executor's new bound
#: (``_frontier.BOUND_ROW``, with its key's id tenth); a claimed job's
#: stored run_at last.
_NULLS = ", NULL" * 9


#: The last row of a claim that found a queue paused (see _pauses): it
#: took nothing, and the member claims again knowing the paused queues.
_SAW_PAUSES = -3
#: Every claim statement's pick reads rows only while no queue is paused,
#: in the statement's snapshot: an InitPlan over a table of a few rows
#: (empty, mostly), evaluated once, that gates the reads (a pause is then
#: honoured by a member that has not heard of it, without a round trip).
_HELD = "held AS (SELECT EXISTS (SELECT 1 FROM jobsched_queue_pauses) AS yes), "
_NOT_HELD = "NOT (SELECT yes FROM held) AND "


class SawPauses(Exception):
    """A claim statement found a queue paused: it took nothing more than
    ``claimed`` (what its earlier rounds took, committed)."""

    def __init__(self, claimed: list[Claimed]) -> None:
        super().__init__("a queue is paused")
        self.claimed = claimed


def _claim_sql(pick: str, tail: str = "", first: str = "") -> str:
    return (
        "\nWITH "
        + _HELD
        + first
        + "promoted AS ("
        + _PROMOTE
        + " RETURNING 1),\npicked AS ("
        + pick
        + "),"
        + _TAKE
        + "SELECT id, attempts, payload, k0, k1, k2, started, args, name, NULL::bigint, run_at "
        + "FROM claimed UNION ALL SELECT NULL, count(*)"
        + _NULLS
        + " FROM promoted"
        + tail
        + f"\nUNION ALL SELECT NULL, {_SAW_PAUSES}{_NULLS} FROM held WHERE yes"
    )


def _bounded_sql(guard: str, tail: str = "", first: str = "") -> str:
    return _claim_sql(_frontier.pick(guard), _frontier.bound_rows(guard) + tail,
                      first + _frontier.bounds(guard) + ", ")  # fmt: skip


CLAIM = _bounded_sql(_NOT_HELD)

#: The last row of a guarded claim that found the named queues' column.
_SAW_COLUMN = -1
# The claim of a member that has not seen the named queues' column, for the
# default queue: CLAIM, unless the column is there in the statement's
# snapshot; then it takes nothing and its last row says so (see _queues).
# The catalog is read once (`seen`), for the pick and the last row.
GUARDED_CLAIM = _bounded_sql(
    _NOT_HELD + "NOT (SELECT yes FROM seen) AND ",
    f"\nUNION ALL SELECT NULL, {_SAW_COLUMN}{_NULLS} FROM seen WHERE yes",
    f"seen AS (SELECT {_queues.HAS_COLUMN} AS yes), ",
)

# A claim of some queues: per queue and executor its best ready rows, at
# most the executor's room (the queues' index serves each range); of those,
# per executor the best within its room, and of all the best `limit`.
# {arms}: the named queues' arm, the default queue's (NULL), or both.
_ARM = (
    """
        SELECT j.id, e.name AS executor, e.room, j.k0, j.k1, j.k2
        FROM unnest(%(names)s::text[], %(rooms)s::int[]) AS e(name, room) {join}
        CROSS JOIN LATERAL (
            SELECT id, k0, k1, k2 FROM jobsched_jobs
            WHERE queue = 0 AND {cond} AND executor = e.name AND """
    + _KEYS
    + """
            ORDER BY k0, k1, k2, id
            LIMIT LEAST(e.room, %(limit)s)
            FOR UPDATE SKIP LOCKED
        ) AS j"""
)
NAMED_ARM = _ARM.format(
    join="CROSS JOIN unnest(%(queues)s::text[]) AS q(name)",
    cond=_NOT_HELD + "queue_name = q.name",
)
DEFAULT_ARM = _ARM.format(join="", cond=_NOT_HELD + "queue_name IS NULL")
_QUEUES_PICK = """
    SELECT id, row_number() OVER (ORDER BY k0, k1, k2, id) AS n FROM (
        SELECT c.id, c.k0, c.k1, c.k2, c.room,
            row_number() OVER (PARTITION BY c.executor ORDER BY c.k0, c.k1, c.k2, c.id) AS n
        FROM ({arms}) AS c
    ) AS r WHERE r.n <= r.room
    ORDER BY k0, k1, k2, id
    LIMIT %(limit)s
"""
#: By (named queues, the default queue) served.
QUEUES_CLAIM = {
    (True, False): _claim_sql(_QUEUES_PICK.format(arms=NAMED_ARM)),
    (False, True): _claim_sql(_QUEUES_PICK.format(arms=DEFAULT_ARM)),
    (True, True): _claim_sql(_QUEUES_PICK.format(arms=NAMED_ARM + "\nUNION ALL" + DEFAULT_ARM)),
}

#: A sure "every row starts" for %(starting)s (a claim's limit is far below).
ALL = 2**31 - 1

#: Whether a claim statement is prepared at its first run on a connection.
#: psycopg prepares a statement at its fifth, so each pooled connection
#: parsed and planned the claim five times, then planned it five more
#: times (the server's custom plans) before it settled on the generic
#: plan. The frontier's claim is a large statement: parsed and planned,
#: 1.6-2.3 ms of the server's CPU, then 4.1-4.5 ms to run a claim of 180
#: where 100,000 are ready (the claim before the frontier: 0.4-0.9 and
#: 3.9-4.1 ms). Prepared at once, it is parsed once per connection and
#: planned five times: a W10c8 run planned it 24 times, not 47.
#:
#: After those five the server keeps its generic plan only if that plan's
#: estimated cost is below the custom plans' (plus a charge for planning
#: them). A custom plan knows the parameters: how many executors the arrays
#: hold (the generic plan guesses 10 of each), the limit (a tenth of the
#: rows read), the keys and names a gate allows, the moment due jobs are
#: promoted at. So at 100,000 ready the generic plan was costed at four
#: times the custom ones, and 80% of the claims were planned anew (2.2 ms
#: of a ~7 ms claim of 256). The plain claim (CLAIM, GUARDED_CLAIM) reads
#: every one of those through an InitPlan or a subquery the planner does not
#: pull up (`OFFSET 0`): a custom plan then knows what the generic plan
#: knows, the plans and costs are the same, and the generic one is run
#: from the sixth run on (the claim's plan is chosen by its indexes, not by
#: those values).
#:
#: An ANALYZE that raises the plan's estimate (a queue that grew) makes the
#: server build the generic plan again and compare it with the average of
#: every custom plan since the statement was prepared: the five made when
#: the queue was short were cheap, each made since costs about what the new
#: generic plan does, so the average catches up slowly (160 claims from 0
#: to 100,000 ready; more the more the queue grew) and the connection plans
#: every claim anew meanwhile. Those counts last as long as the statement
#: (an ANALYZE or DISCARD PLANS keeps them), so a connection deallocates
#: its statements every REPREPARE_EVERY claims (_reprepare).
PREPARE_CLAIM = True

#: Claims on a connection between two deallocations of its prepared
#: statements. Each costs the server a parse and five custom plans of the
#: claim, 5-8 ms, and the next preparations of the connection's other
#: statements (within the noise): under 1% of the server's time for the
#: claims between, 0.3 ms each at 0 ready, 1.2-1.6 ms at 100,000
#: (docs/performance.md, "A claim planned once"). After an ANALYZE, a
#: connection runs the generic plan again at most this many claims (and
#: five) later.
REPREPARE_EVERY = 2500

# psycopg forgets its prepared statements when it sees DEALLOCATE ALL run
# from 3.3.6 on; an earlier one would run them by the names the server no
# longer has (every claim failing), so it keeps them (and the drift).
_FORGETS = tuple(int(n) for n in re.findall(r"\d+", psycopg.__version__)[:3]) >= (3, 3, 6)

# Claims run on each connection since its statements were deallocated.
_runs: weakref.WeakKeyDictionary[Conn, int] = weakref.WeakKeyDictionary()


def _reprepare(conn: Conn) -> None:
    """Count the claim ``conn`` just ran; at REPREPARE_EVERY, deallocate
    its prepared statements: its next claim is prepared with no history."""
    # Every statement, not the claim's alone: psycopg names its statements
    # privately, and one deallocated behind its back fails at its next run.
    # A claim under another text each time (a generation in a comment) left
    # the old ones on the server, 0.5 MB each, until psycopg's cache of 100
    # evicted them. Run right after the claim, prepared: psycopg notices the
    # command only when it has statements (else it counts the text as a
    # query, and would not notice it the next time).
    runs = _runs.get(conn, 0) + 1
    # Not inside a transaction (a caller's, connection=): a failed command
    # there would abort it. The next claim in autocommit deallocates.
    if runs >= REPREPARE_EVERY and conn.info.transaction_status == TransactionStatus.IDLE:
        runs = 0
        # The claim has committed and its rows are read: a connection lost
        # now must not turn them into a lost reply (left leased until their
        # lease ends). The pool finds it broken at its next use.
        with contextlib.suppress(psycopg.Error):
            conn.execute("DEALLOCATE ALL", prepare=False)
    _runs[conn] = runs


def promote(conn: Conn, now: float) -> set[str | None]:
    """Due waiting jobs join the ready queue, so a claim orders them by key;
    the paused queues as stored (None: the default), read by the same
    statement (a claim under limits pays no round trip for them)."""
    rows = conn.execute(
        f"WITH promoted AS ({_PROMOTE}) SELECT queue FROM jobsched_queue_pauses", {"now": now}
    ).fetchall()
    return {None if q == DEFAULT_QUEUE else q for (q,) in rows}


def claim_by_key(
    conn: Conn,
    owner: str,
    limit: int,
    rooms: dict[str, int],
    now: float,
    lease: float,
    gate: Gate = NO_GATE,
    *,
    queues: Sequence[str | None] | None = None,
    guarded: bool = False,
    starting: int = ALL,
    frontier: _frontier.Frontier | None = None,
) -> tuple[list[Claimed], bool]:
    """Up to ``limit`` ready jobs in key order (due waiting ones included),
    each statement committed on its own; and whether a guarded claim found
    the named queues' column (then it took nothing: claim again with ``queues``).

    :param queues: only the jobs of these stored queues (``queue_name``,
        None for the default one: the column must be there); None: of every queue.
    :param guarded: the caller has not seen the column (see GUARDED_CLAIM).
    :param starting: how many of the claimed jobs start now (see _TAKE).
    :param frontier: where this member's claims of every queue start
        reading, kept up to date here (None: each from the front, as a
        member's first claim); only by a statement that committed on its
        own (on a connection in a transaction, the bounds stay as they were).
    """
    if queues is None:
        sql = GUARDED_CLAIM if guarded else CLAIM
    else:
        names = [q for q in queues if q is not None]
        sql = QUEUES_CLAIM[bool(names), None in queues]
    claimed: list[tuple[Any, ...]] = []
    saw = paused = False
    bounded = queues is None
    while not (saw or paused):
        generation = frontier.generation() if frontier is not None else 0
        # Prepared at its first run on each connection (PREPARE_CLAIM), not
        # psycopg's fifth. Its integers typed alike on every run (Int4, and
        # the bounds' Int8): psycopg types an int by its value (smallint up
        # to 32,767), and each set of types is a statement of its own,
        # planned five times before its generic plan runs.
        rows = conn.execute(
            sql,
            {
                "names": list(rooms),
                "rooms": [Int4(max(0, room - len(claimed))) for room in rooms.values()],
                "limit": Int4(limit - len(claimed)),
                "owner": owner,
                "lease": lease,
                "now": now,
                **gate.params(),
                "starting": Int4(max(0, starting - len(claimed))),
                **({} if queues is None else {"queues": names}),
                **((frontier or _frontier.Frontier()).params(gate, list(rooms)) if bounded else {}),
            },
            prepare=PREPARE_CLAIM,
        ).fetchall()
        if PREPARE_CLAIM and _FORGETS:
            _reprepare(conn)
        promoted = 0
        bounds = []
        for row in rows:
            if row[0] is not None:
                claimed.append(row)
            elif row[1] == _SAW_COLUMN:
                saw = True  # what earlier rounds claimed stands
            elif row[1] == _SAW_PAUSES:
                paused = True  # as the column: its bounds say nothing
            elif row[1] == _frontier.BOUND_ROW:
                bounds.append(row)
            else:
                promoted = row[1]
        # A guarded claim that saw the column read nothing: its bounds say
        # nothing. Nor do those of a claim in a transaction, which may roll
        # back: its rows would be ready again below the new bound, made
        # ready by a transaction its snapshot saw (starved). The store
        # claims in autocommit; the state before stays valid.
        idle = conn.info.transaction_status == TransactionStatus.IDLE
        if frontier is not None and bounded and not (saw or paused) and idle:
            frontier.update(gate, bounds, generation)
        # Jobs it promoted are ready now: claim again if there is room.
        if not promoted or len(claimed) >= limit:
            break
    # RETURNING gives no order: the key's is restored here.
    claimed.sort(key=lambda r: (r[3], r[4], r[5], r[0]))
    claims = [
        Claimed(job_id, attempt, payload, started=started, args=args, name=name, run_at=run_at)
        for job_id, attempt, payload, _, _, _, started, args, name, _, run_at in claimed
    ]
    if paused:
        raise SawPauses(claims)
    return claims, saw
