"""Jobs written in the caller's own transaction: what a store implements for
``connection=`` (``s.enqueue(job, connection=conn)``), and the registered
functions it keeps for SQL's own enqueue.

The scheduler builds the row as for any submit (checks, payload, key) and
hands it to :meth:`JobStore.joined`'s object, which writes it through the
caller's connection, in the transaction the caller has open: the job exists
if and only if the caller commits. The store never commits, rolls back or
aborts that transaction: a duplicate id of the caller's own adds nothing
and raises nothing, and every check that can refuse the job runs before
any write.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._rows import NewJob


class Joined:
    """The caller's connection, as a store writes jobs into its open transaction.

    Made by :meth:`JobStore.joined`, which has checked the connection (its
    kind, its database, the store's schema there). A synchronous driver's
    connection is used through :meth:`add`, on the caller's thread (its
    connection must not move threads: sqlite3's may not); an async one
    through :meth:`add_async`, on the caller's event loop.
    """

    #: Whether the connection's calls are awaited (:meth:`add_async`).
    asynchronous: bool = False

    def add(self, job: NewJob, now: float) -> int | None:
        """Write ``job`` in the caller's transaction; the number of its row,
        or None if ``job.own_id`` and the store holds a job with that id
        already (then nothing is written).

        ``job.id`` is 0 for a job the store numbers, its own id's number
        (negative) otherwise.

        :raises UnknownJobError: a job of ``depends_on`` is not in the store
            (as the caller's transaction sees it); nothing is written.
        """
        raise NotImplementedError(f"{type(self).__name__} is asynchronous: use add_async()")

    async def add_async(self, job: NewJob, now: float) -> int | None:
        """:meth:`add` through an async driver's connection."""
        raise NotImplementedError(f"{type(self).__name__} is synchronous: use add()")


@dataclass(frozen=True, slots=True)
class Registered:
    """A registered function (``@app.job``) as a store keeps it for enqueues
    that come from SQL (PostgreSQL's ``jobsched_enqueue``), which know only
    its name: how to make its row.

    The sort key is linear in the job's ``seq`` and ``submitted_at`` for
    every built-in strategy: field ``i`` is ``key_base[i] + key_seq[i] * seq
    + key_submitted[i] * submitted_at``. A strategy whose key is not (a
    custom one) leaves the three None, and SQL refuses such a job.
    """

    name: str
    executor: str
    queue: str
    tenant: str | None
    rate_key: str | None
    key_base: tuple[float, ...] | None
    key_seq: tuple[float, ...] | None
    key_submitted: tuple[float, ...] | None
