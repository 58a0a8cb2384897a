"""The SQLite store's claim: one transaction that hands ready jobs to a member.

Best first by key, or weighted round-robin across tenants (fair share); never
more on an executor than the member has room for; never a job of a rate key
whose token bucket is empty. The buckets and the round-robin's state are rows
in the file, so every member that opens it shares them (docs/stores.md says
the semantics precisely; a PostgreSQL store does the same).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from jobsched.store import (
    KEY_ID_SIZE,
    KEY_ID_START,
    KEYED,
    Claimed,
    RateLimit,
    dead_local,
    whole_tokens,
)

from . import _queues
from ._fair import round_robin
from ._picker import Picker
from ._sql import cancel_released

_ORDER = "ORDER BY k0, k1, k2"

#: Repeats jobs_status' condition next to ``status = 'running'``, so the planner
#: reads the running rows from that index (SQLite uses a partial index only
#: where the query's terms include its own).
RUNNING = "status != 'completed'"


def key_filter(
    keys: Sequence[bytes], names: Collection[str] = ()
) -> tuple[str, tuple[object, ...]]:
    """The claim's condition (``AND ...``) and its parameters: a row signed
    with a key id the member holds, or without one (unsigned, or the legacy
    format, which every member tries), never one signed by a key it lacks;
    and a registered job (``args`` set) only of a name in ``names``.

    Every path of the claim applies it (key order, the picker, fair share,
    takeovers), so a member never claims a job it cannot run.
    """
    unkeyed = f"substr(payload, 1, 1) != X'{KEYED.hex()}'"
    wanted = tuple(sorted(set(names)))
    known = (
        f" AND (args IS NULL OR name IN ({', '.join('?' * len(wanted))}))"
        if wanted
        else " AND args IS NULL"
    )
    if not keys:
        return f"AND {unkeyed}{known}", wanted
    marks = ", ".join("?" * len(keys))
    held = f"substr(payload, {KEY_ID_START}, {KEY_ID_SIZE}) IN ({marks})"
    return f"AND ({unkeyed} OR {held}){known}", (*keys, *wanted)


def claim(
    conn: sqlite3.Connection,
    owner: str,
    limit: int,
    rooms: Mapping[str, int],
    now: float,
    until: float,
    rates: Mapping[str, RateLimit] | None = None,
    tenants: Mapping[str | None, int] | None = None,
    take_over: bool = True,
    keys: Sequence[bytes] = (),
    queues: Collection[str] | None = None,
    queue_room: Mapping[str, int] | None = None,
    starting: int | None = None,
    known: Collection[str] = (),
) -> tuple[list[Claimed], float | None]:
    """The claimed jobs, best first; and when the next token is due in a
    bucket this claim left empty (None: none is).

    :param take_over: look for attempts whose owner is gone, and take them first.
    :param keys: the ids of the keys the member holds (see :func:`key_filter`).
    :param known: the registered job names the member runs (see :func:`key_filter`).
    :param queues: only jobs of these queues; ``queue_room``: the most of
        each queue's (see :func:`_queues.served`). Neither bounds a takeover:
        it only records the loss of an attempt another member started.
    :param starting: how many of the claimed jobs start now (None: all);
        the rest are claimed ahead of the workers (see :func:`_mark_started`).
    """
    keyed = key_filter(keys, known)
    # Due waiting jobs join the ready queue first, so the claim orders them
    # against everything else by key.
    conn.execute("UPDATE jobs SET queue = 0 WHERE queue = 1 AND run_at <= ?", (now,))
    if take_over:
        _hand_back(conn, owner, limit, now)
    claimed = _take_over_lost(conn, owner, limit, now, until, keyed) if take_over else []
    want = limit - len(claimed)
    open_rooms = {name: room for name, room in rooms.items() if room > 0}
    if want <= 0 or not open_rooms:
        return claimed, None
    picker = Picker(conn, open_rooms, rates or {}, now, keyed)
    _unpark(conn, picker, want)
    names, want = _queues.served(conn, queues, queue_room, want)
    if want <= 0 or (names is not None and not names):
        return claimed, None
    picker.queues = names
    due: float | None = None
    unbounded = names is None or min(names.values()) >= want
    if not rates and tenants is None and min(open_rooms.values()) >= want and unbounded:
        # Nothing to count per job: one statement over the ready index(es).
        started = _claim_in_key_order(
            conn, owner, want, tuple(open_rooms), now, until, keyed, names
        )
    else:
        if tenants is None:
            ids = picker.take("", (), want)
        else:
            ids = round_robin(conn, picker, tenants, want)
        started = _start(conn, ids, owner, now, until)
        due = picker.save()
    _mark_started(conn, started, now, len(started) if starting is None else starting)
    return claimed + started, due


def _mark_started(
    conn: sqlite3.Connection, claims: Sequence[Claimed], now: float, starting: int
) -> None:
    """Start the first ``starting`` claimed jobs (for idle workers).

    The claim's UPDATE starts only the jobs a takeover handed back (see
    :func:`_hand_back`); the rest were claimed ahead of the workers,
    ``started_at`` NULL until the member writes their start (``start()``),
    and a takeover hands them back uncounted if it never does.
    """
    first = [c for c in claims[: max(0, starting)] if not c.started]
    if first:
        conn.execute(
            f"UPDATE jobs SET started_at = ? WHERE id IN ({', '.join('?' * len(first))})",
            (now, *(c.id for c in first)),
        )
        for c in first:
            c.started = True


# Back to the queue: jobs claimed ahead whose owner is gone before they
# started (started_at NULL), the attempt the claim numbered not counted (a
# hand-back, as at a stop); those someone asked to cancel end CANCELLED.
# lease_until, NULL on every other waiting row, marks them: their next claim
# starts them at once (the claim's UPDATE), so a job that kills its member
# as it starts, before its start is written, is handed back uncounted at
# most once per attempt.
def _hand_back(conn: sqlite3.Connection, owner: str, limit: int, now: float) -> None:
    dead = dead_local(
        running
        for (running,) in conn.execute(
            f"SELECT DISTINCT owner FROM jobs WHERE status = 'running' AND {RUNNING}"
        )
    )
    marks = ", ".join("?" * len(dead))
    gone = [
        (job_id, owner_was)
        for job_id, owner_was in conn.execute(
            f"SELECT id, owner FROM jobs WHERE status = 'running' AND {RUNNING} "
            "AND started_at IS NULL "
            f"AND ((lease_until < ? AND owner IS NOT ?) OR owner IN ({marks})) LIMIT ?",
            (now, owner, *dead, limit),
        )
    ]
    for job_id, owner_was in gone:
        cancel_released(conn, owner_was, [job_id], now)
    if gone:
        conn.execute(
            "UPDATE jobs SET status = CASE WHEN attempts > 1 THEN 'retry_wait' "
            "ELSE 'pending' END, queue = 0, attempts = attempts - 1, owner = NULL, "
            f"lease_until = 0 WHERE status = 'running' AND id IN ({', '.join('?' * len(gone))})",
            [job_id for job_id, _ in gone],
        )


def _unpark(conn: sqlite3.Connection, picker: Picker, want: int) -> None:
    """Bring the best parked jobs of each key back to the ready queue: as
    many as the claim wants of a key this member does not limit, as many as
    its bucket has tokens of one it does."""
    after = ""
    while True:
        row = conn.execute(
            "SELECT rate_key FROM jobs WHERE queue = 3 AND rate_key > ? ORDER BY rate_key LIMIT 1",
            (after,),
        ).fetchone()
        if row is None:
            return
        after = row[0]
        tokens = picker.tokens.get(after)
        # The best of them, as many as this claim could take: the claim then
        # orders them against the other ready jobs.
        count = want if tokens is None else min(want, whole_tokens(tokens))
        if count > 0:
            conn.execute(
                "UPDATE jobs SET queue = 0 WHERE id IN (SELECT id FROM jobs WHERE queue = 3 "
                f"AND rate_key = ? {_ORDER} LIMIT ?)",
                (after, count),
            )


def _take_over_lost(
    conn: sqlite3.Connection,
    owner: str,
    limit: int,
    now: float,
    until: float,
    keyed: tuple[str, tuple[object, ...]] = ("", ()),
) -> list[Claimed]:
    # Attempts whose owner is gone: its lease ran out, or it was a process
    # on this machine that no longer exists (a restart after a crash need not
    # wait out the lease). Never ``owner``'s own: a member whose heartbeat
    # missed its lease (a stalled commit, an outage) still runs that attempt,
    # and taking it as lost settled it RETRY_WAIT under the running worker
    # (whose outcome then met ``retry_wait -> completed``). Its next
    # heartbeat renews the lease; another member takes it if it is gone.
    dead = dead_local(
        running
        for (running,) in conn.execute(
            f"SELECT DISTINCT owner FROM jobs WHERE status = 'running' AND {RUNNING}"
        )
    )
    marks = ", ".join("?" * len(dead))
    # Read first (the claim's transaction holds the write lock): RETURNING
    # gives only the new lease, and the old one says when the owner last
    # renewed it, the end of the time the attempt really ran.
    lease = until - now
    # Never before its start: a member with a longer lease than this one's.
    leases = {
        job_id: None if was is None else max(was - lease, started or was - lease)
        for job_id, was, started in conn.execute(
            f"SELECT id, lease_until, started_at FROM jobs WHERE status = 'running' "
            f"AND {RUNNING} AND started_at IS NOT NULL "
            f"AND ((lease_until < ? AND owner IS NOT ?) OR owner IN ({marks})) "
            f"{keyed[0]} LIMIT ?",
            (now, owner, *dead, *keyed[1], limit),
        )
    }
    if not leases:
        return []
    return [
        Claimed(
            job_id,
            attempt,
            payload,
            lost=True,
            cancelled=bool(cancel),
            renewed_at=leases[job_id],
            args=args,
            name=name if args is not None else None,
        )
        for job_id, attempt, payload, cancel, args, name in conn.execute(
            f"UPDATE jobs SET owner = ?, lease_until = ? WHERE id IN "
            f"({', '.join('?' * len(leases))}) "
            "RETURNING id, attempts, payload, cancel_requested, args, name",
            (owner, until, *leases),
        ).fetchall()
    ]


def _claim_in_key_order(
    conn: sqlite3.Connection,
    owner: str,
    want: int,
    executors: tuple[str, ...],
    now: float,
    until: float,
    keyed: tuple[str, tuple[object, ...]],
    names: Collection[str] | None = None,
) -> list[Claimed]:
    marks = ", ".join("?" * len(executors))
    source = "jobs" if names is None else _queues.SOURCE
    where = f"FROM {source} WHERE queue = 0 AND executor IN ({marks}) {keyed[0]}"
    params: tuple[object, ...] = (*executors, *keyed[1])
    if names is None:
        pick, args = f"SELECT id {where} {_ORDER} LIMIT ?", (*params, want)
    else:
        merged, args = _queues.arms(f"SELECT id, k0, k1, k2 {where}", params, names, want)
        pick = f"SELECT id FROM ({merged})"
    rows = conn.execute(
        "UPDATE jobs SET status = 'running', queue = NULL, owner = ?, ran_by = ?, "
        "lease_until = ?, attempts = attempts + 1, cancel_requested = 0, "
        # The old lease_until: set on a waiting row only by _hand_back.
        "started_at = CASE WHEN lease_until IS NOT NULL THEN ? END "
        f"WHERE id IN ({pick}) RETURNING k0, k1, k2, {_RETURNED}",
        (owner, owner, until, now, *args),
    ).fetchall()
    # RETURNING gives no order: restore the key's.
    rows.sort(key=lambda r: (r[0], r[1], r[2]))
    return [_claimed(r[3:]) for r in rows]


def _start(
    conn: sqlite3.Connection, ids: Sequence[int], owner: str, now: float, until: float
) -> list[Claimed]:
    """Set the picked jobs RUNNING under ``owner``, in the order picked."""
    if not ids:
        return []
    marks = ", ".join("?" * len(ids))
    rows = conn.execute(
        "UPDATE jobs SET status = 'running', queue = NULL, owner = ?, ran_by = ?, "
        "lease_until = ?, attempts = attempts + 1, cancel_requested = 0, "
        # The old lease_until: set on a waiting row only by _hand_back.
        "started_at = CASE WHEN lease_until IS NOT NULL THEN ? END "
        f"WHERE id IN ({marks}) RETURNING {_RETURNED}",
        (owner, owner, until, now, *ids),
    ).fetchall()
    by_id = {r[0]: _claimed(r) for r in rows}
    return [by_id[i] for i in ids]


#: What a claim's UPDATE returns of each job it takes, for :func:`_claimed`.
_RETURNED = "id, attempts, payload, started_at, args, name, run_at"


def _claimed(r: Sequence[Any]) -> Claimed:
    """A claimed row (``_RETURNED``): a registered job's name only (a pickled
    job carries its own), and its stored run_at for the member's queue wait."""
    args = r[4]
    name = r[5] if args is not None else None
    return Claimed(r[0], r[1], r[2], started=r[3] is not None, args=args, name=name, run_at=r[6])
