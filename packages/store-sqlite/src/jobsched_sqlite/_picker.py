"""The SQLite store's picker: ready jobs in key order within the executors'
rooms and the rate buckets, for a rate-limited or fair-share claim."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping

from jobsched.store import (
    RateLimit,
    has_token,
    refill,
    token_due,
)

from . import _queues

_ORDER = "ORDER BY k0, k1, k2"

#: The most ready jobs of one empty bucket's key a claim parks (about 0.15 s
#: of writing on the development machine).
PARK_BATCH = 5000


class Picker:
    """Picks ready jobs within the executors' rooms and the rate buckets.

    A query reads candidates in key order with the full executors and empty
    buckets already excluded; a candidate skipped because this claim filled
    its executor or emptied its bucket means the query is asked again with
    that exclusion, so a claim reads past each limit at most once.
    """

    def __init__(
        self,
        conn: sqlite3.Connection,
        rooms: dict[str, int],
        rates: Mapping[str, RateLimit],
        now: float,
        keyed: tuple[str, tuple[object, ...]] = ("", ()),
    ) -> None:
        self._conn = conn
        self._keyed = keyed
        self._rooms = rooms
        self._rates = rates
        self._now = now
        self._taken: list[int] = []
        #: queue -> the most more jobs of it this claim may take; None: any
        #: queue, unbounded (no queue term: jobs_ready).
        self.queues: dict[str, int] | None = None
        #: key -> tokens at ``now``; a key without a row has a full bucket.
        self.tokens = {key: float(limit.burst) for key, limit in rates.items()}
        self._since: dict[str, float] = {}
        self._spent: set[str] = set()
        if rates:
            marks = ", ".join("?" * len(rates))
            for key, tokens, since in conn.execute(
                f"SELECT key, tokens, updated_at FROM rate_buckets WHERE key IN ({marks})",
                tuple(rates),
            ):
                self.tokens[key] = refill(rates[key], tokens, since, now)
                self._since[key] = since

    def take(self, where: str, params: tuple[object, ...], want: int) -> list[int]:
        """Up to ``want`` ready jobs matching ``where`` (``AND ...``), best first."""
        got: list[int] = []
        rooms, tokens, queues = self._rooms, self.tokens, self.queues
        column, source = ("NULL", "jobs") if queues is None else ("queue_name", _queues.SOURCE)
        while len(got) < want and rooms and (queues is None or queues):
            executors = tuple(rooms)
            empty = tuple(key for key, left in tokens.items() if not has_token(left))
            sql = (
                f"SELECT id, executor, rate_key, {column} AS q, k0, k1, k2 FROM {source} "
                f"WHERE queue = 0 {where} AND executor IN ({', '.join('?' * len(executors))})"
            )
            args: list[object] = [*params, *executors]
            if self._keyed[0]:
                sql += f" {self._keyed[0]}"
                args += self._keyed[1]
            if empty:
                sql += f" AND (rate_key IS NULL OR rate_key NOT IN ({', '.join('?' * len(empty))}))"
                args += empty
            if self._taken:
                sql += f" AND id NOT IN ({', '.join('?' * len(self._taken))})"
                args += self._taken
            page = want - len(got)
            if queues is None:
                query, bound = f"{sql} {_ORDER} LIMIT ?", (*args, page)
            else:  # a range per queue: a full one is no longer read
                query, bound = _queues.arms(sql, tuple(args), tuple(queues), page)
            rows = self._conn.execute(query, bound).fetchall()
            for job_id, executor, rate_key, queue, *_ in rows:
                if len(got) == want:
                    break
                if executor not in rooms:
                    continue  # filled by an earlier row of this page
                name = _queues.read(queue)
                if queues is not None and name not in queues:
                    continue  # likewise
                if rate_key in tokens:
                    if not has_token(tokens[rate_key]):
                        continue
                    tokens[rate_key] = max(tokens[rate_key] - 1.0, 0.0)
                    self._spent.add(rate_key)
                rooms[executor] -= 1
                if rooms[executor] <= 0:
                    del rooms[executor]
                if queues is not None:
                    queues[name] -= 1
                    if queues[name] <= 0:
                        del queues[name]
                got.append(job_id)
                self._taken.append(job_id)
            if len(rows) < page:
                break  # no more candidates
        return got

    def save(self) -> float | None:
        """Write the buckets this claim took tokens from and park the ready
        jobs of the empty ones; when the next token is due in an empty one
        (None: every bucket has a token)."""
        now = self._now
        # Parked, a key's backlog is out of the ready index, so the claims
        # made while it waits for tokens do not read through it.
        # A batch at a time, so a claim that meets a large backlog for the
        # first time stays short; the next claims park the rest.
        conn = self._conn
        for key, left in self.tokens.items():
            if not has_token(left):
                conn.execute(
                    "UPDATE jobs SET queue = 3 WHERE id IN (SELECT id FROM jobs "
                    "WHERE queue = 0 AND rate_key = ? LIMIT ?)",
                    (key, PARK_BATCH),
                )
        if self._spent:
            conn.executemany(
                "INSERT INTO rate_buckets (key, tokens, updated_at) VALUES (?, ?, ?) "
                "ON CONFLICT (key) DO UPDATE SET tokens = excluded.tokens, "
                "updated_at = excluded.updated_at",
                # A clock read that went back refilled nothing: keep the later time.
                [(k, self.tokens[k], max(now, self._since.get(k, now))) for k in self._spent],
            )
        due = [
            token_due(self._rates[key], left, now)
            for key, left in self.tokens.items()
            if not has_token(left)
        ]
        return min(due) if due else None
