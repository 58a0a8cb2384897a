"""Claims under rate limits and fair share: which of the locked candidates to take.

The plain claim is one statement (``_claim.CLAIM``). With ``rates`` or
``tenants`` the choice depends on state shared by the fleet (token buckets,
tenants' turns), so the claim's transaction locks that state, reads
candidates (a few statements however many jobs it takes), chooses here in
Python, and takes the chosen rows; the rows it locked and did not take are
free again at commit. The semantics are docs/stores.md's "Limits and fair
share", the same as the SQLite store's (``jobsched_sqlite._claim``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from jobsched.store import Claimed, has_token, refill, take_turns, token_due

from . import _candidates, _claim, _gate, _sql

if TYPE_CHECKING:
    from jobsched import RateLimit

#: ``jobsched_tenants``' name for the None tenant (a job's tenant is never
#: ""). Its row is made with the schema and is the rotation's lock.
NO_TENANT = ""

Row = tuple[Any, ...]  # id, executor, rate_key, tenant, k0, k1, k2, stored queue


def claim(
    conn: _sql.Conn,
    owner: str,
    limit: int,
    rooms: dict[str, int],
    now: float,
    lease: float,
    rates: Mapping[str, RateLimit],
    tenants: Mapping[str | None, int] | None,
    keys: _gate.Gate = _gate.NO_GATE,
    queues: _candidates.QueueFilter | None = None,
    queue_rooms: Mapping[str | None, int] | None = None,
    guarded: bool = False,
    starting: int = _claim.ALL,
) -> tuple[list[Claimed], float | None]:
    """The claimed jobs in the order chosen; and when the next token is due
    in a bucket this claim left empty (None: none is).

    :param queues: the stored queues to read (see ``_candidates.candidates``).
    :param queue_rooms: stored queue -> the most jobs of it to take.
    :param guarded: as ``_candidates.candidates``'.
    :param starting: how many of the chosen jobs start now (see ``_claim._TAKE``).
    :raises _candidates.SawColumn: see ``guarded``.
    """
    buckets = _Buckets(conn, rates, now)
    picker = _Picker(conn, dict(rooms), buckets, keys, queues, dict(queue_rooms or {}), guarded)
    if tenants is None:
        picker.read(None, limit)
        chosen = picker.take(None, limit)
    else:
        chosen = _round_robin(conn, picker, tenants, limit)
    claims = _candidates.take_ids(conn, owner, chosen, now, lease, starting) if chosen else []
    # Best first is the order chosen: by key, or by turn under fair share.
    place = {job_id: i for i, job_id in enumerate(chosen)}
    claims.sort(key=lambda c: place[c.id])
    buckets.save()
    return claims, buckets.next_token()


class _Buckets:
    """The token buckets of ``rates``, locked for this transaction.

    A key without a row has a full bucket: its row is made full first, so
    that two members meeting a new key lock one row instead of both taking
    its burst.
    """

    def __init__(self, conn: _sql.Conn, rates: Mapping[str, RateLimit], now: float) -> None:
        self._conn = conn
        self._rates = rates
        self._now = now
        #: key -> tokens at ``now``.
        self.tokens: dict[str, float] = {}
        self._since: dict[str, float] = {}
        self.spent: dict[str, int] = {}
        if not rates:
            return
        keys = sorted(rates)
        conn.execute(
            "INSERT INTO jobsched_buckets (key, tokens, updated) "
            "SELECT * FROM unnest(%s::text[], %s::float8[], %s::float8[]) ON CONFLICT DO NOTHING",
            (keys, [float(rates[k].burst) for k in keys], [now] * len(keys)),
        )
        # Locked in key order: every claim that takes tokens waits its turn
        # here, so the fleet as a whole never takes more than a bucket holds.
        for key, tokens, since in conn.execute(
            "SELECT key, tokens, updated FROM jobsched_buckets WHERE key = ANY(%s) "
            "ORDER BY key FOR UPDATE",
            (keys,),
        ).fetchall():
            self.tokens[key] = refill(rates[key], tokens, since, now)
            self._since[key] = since

    def empty(self) -> list[str]:
        return [key for key, left in self.tokens.items() if not has_token(left)]

    def take(self, key: str | None) -> bool:
        """Take a token for a job of ``key``; False if its bucket is empty."""
        if key is None or key not in self.tokens:
            return True  # not limited for this member
        if not has_token(self.tokens[key]):
            return False
        self.tokens[key] = max(self.tokens[key] - 1.0, 0.0)
        self.spent[key] = self.spent.get(key, 0) + 1
        return True

    def save(self) -> None:
        """Write the buckets a token was taken from (the others are as they were)."""
        spent = sorted(self.spent)
        if not spent:
            return
        self._conn.execute(
            "UPDATE jobsched_buckets b SET tokens = t.tokens, updated = t.updated "
            "FROM unnest(%s::text[], %s::float8[], %s::float8[]) AS t(key, tokens, updated) "
            "WHERE b.key = t.key",
            (
                spent,
                [self.tokens[k] for k in spent],
                # A clock read that went back refilled nothing: keep the later time.
                [max(self._now, self._since[k]) for k in spent],
            ),
        )

    def next_token(self) -> float | None:
        due = [
            token_due(self._rates[key], left, self._now)
            for key, left in self.tokens.items()
            if not has_token(left)
        ]
        return min(due) if due else None


class _Picker:
    """Picks ready rows within the executors' rooms and the rate buckets.

    Candidates are read in batches (``_candidates.candidates``: per executor, and
    per tenant under fair share, its best rows up to its room) with full
    executors and empty buckets left out. A queue of candidates can run out
    while rows beyond it were held back by a bucket this claim emptied; only
    then is it read again, without them, so a claim reads past each limit at
    most once.
    """

    def __init__(
        self,
        conn: _sql.Conn,
        rooms: dict[str, int],
        buckets: _Buckets,
        keys: _gate.Gate = _gate.NO_GATE,
        queues: _candidates.QueueFilter | None = None,
        queue_rooms: dict[str | None, int] | None = None,
        guarded: bool = False,
    ) -> None:
        self._conn = conn
        self._keys = keys
        self._queues_read = queues
        self._queue_rooms = queue_rooms or {}
        self._guarded = guarded
        self._rooms = {name: room for name, room in rooms.items() if room > 0}
        self._buckets = buckets
        self._by_tenant = False
        #: tenant (key order: None for all) -> candidates not yet looked at, best first.
        self._queues: dict[str | None, deque[Row]] = {}
        #: tenant -> whether rows beyond those read may be there.
        self._more: dict[str | None, bool] = {}
        #: every row read: this transaction's own locks do not skip them.
        self._read: list[int] = []

    def read(self, tenants: list[str | None] | None, want: int) -> None:
        """Read up to ``want`` candidates per executor of each of ``tenants``
        (None: of every job, in one queue in key order)."""
        rooms = self._rooms
        if not rooms:
            return
        self._by_tenant = tenants is not None
        rows = _candidates.candidates(
            self._conn,
            want,
            rooms,
            self._buckets.empty(),
            self._read,
            tenants,
            self._keys,
            self._queues_read,
            self._guarded,
        )
        counts: dict[tuple[str | None, str], int] = {}
        for row in rows:
            tenant = row[3] if self._by_tenant else None
            self._queues.setdefault(tenant, deque()).append(row)
            counts[tenant, row[1]] = counts.get((tenant, row[1]), 0) + 1
            self._read.append(row[0])
        for tenant in [None] if tenants is None else tenants:
            # A read that came back full for an executor may have left rows there.
            self._more[tenant] = any(
                counts.get((tenant, name), 0) >= min(want, room) for name, room in rooms.items()
            )

    def ready(self) -> dict[str | None, tuple[float, float, float]]:
        """Each tenant with candidates -> its best key."""
        return {t: (q[0][4], q[0][5], q[0][6]) for t, q in self._queues.items() if q}

    def take(self, tenant: str | None, want: int) -> list[int]:
        """Up to ``want`` of ``tenant``'s candidates (key order: of all),
        best first, each with room on its executor and a token."""
        got: list[int] = []
        while len(got) < want:
            queue = self._queues.get(tenant)
            if not queue:
                if not self._more.get(tenant) or not self._rooms:
                    break
                self.read([tenant] if self._by_tenant else None, want - len(got))
                continue
            row = queue.popleft()
            executor, stored = row[1], row[7]
            if executor not in self._rooms or self._queue_rooms.get(stored, 1) <= 0:
                continue  # its executor or its queue filled in this claim
            if not self._buckets.take(row[2]):
                continue  # its bucket emptied in this claim
            if stored in self._queue_rooms:
                self._queue_rooms[stored] -= 1
                if self._queue_rooms[stored] <= 0 and self._queues_read is not None:
                    self._queues_read.full.add(stored)
            self._rooms[executor] -= 1
            if self._rooms[executor] <= 0:
                del self._rooms[executor]
            got.append(row[0])
        return got


def _round_robin(
    conn: _sql.Conn, picker: _Picker, weights: Mapping[str | None, int], want: int
) -> list[int]:
    """Fair share: tenants take turns of up to their weight of jobs (see
    :func:`jobsched._ordering._rotation.take_turns`); ``jobsched_tenants`` keeps each
    tenant's last turn and credit across claims and members."""
    # The None tenant's row is the lock: one fair-share claim at a time, so
    # the fleet keeps one rotation. The rows are read by the next statement,
    # whose snapshot sees what the claim before this one committed.
    conn.execute(
        "SELECT 1 FROM jobsched_tenants WHERE tenant = %s FOR UPDATE", (NO_TENANT,)
    ).fetchall()
    state: dict[str | None, tuple[int, int]] = {
        (None if name == NO_TENANT else name): (served, credit)
        for name, served, credit in conn.execute(
            "SELECT tenant, served, credit FROM jobsched_tenants"
        ).fetchall()
    }
    # Every tenant that ever queued a job has a row (add() makes it): one
    # index seek per tenant and executor finds its best ready rows.
    picker.read([None, *sorted(t for t in state if t is not None)], want)
    # Each statement has a snapshot of its own (READ COMMITTED): an add that
    # committed between the two above shows its jobs but not its new
    # tenants' rows. Those tenants are read now, so that a claim never hands
    # a turn to a tenant only because another's row was not seen yet.
    late = [
        (None if name == NO_TENANT else name, served, credit)
        for name, served, credit in conn.execute(
            "SELECT tenant, served, credit FROM jobsched_tenants WHERE tenant <> ALL(%s)",
            ([NO_TENANT if t is None else t for t in state],),
        ).fetchall()
    ]
    if late:
        for tenant, served, credit in late:
            state[tenant] = (served, credit)
        picker.read(sorted(t for t, _, _ in late if t is not None), want)
    got, changed = take_turns(state, picker.ready(), weights, want, picker.take)
    if changed:
        names = sorted(NO_TENANT if t is None else t for t in changed)
        conn.execute(
            "INSERT INTO jobsched_tenants (tenant, served, credit) "
            "SELECT * FROM unnest(%s::text[], %s::bigint[], %s::int[]) "
            "ON CONFLICT (tenant) DO UPDATE SET served = excluded.served, "
            "credit = excluded.credit",
            (
                names,
                [state[n or None][0] for n in names],
                [state[n or None][1] for n in names],
            ),
        )
    return got
