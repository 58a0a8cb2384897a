"""Fair share: one queue per tenant, served weighted round-robin."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from heapq import heappop, heappush

from .._jobs._job import Job
from ._queue import ReadyQueue
from ._strategies import PriorityStrategy, SchedulingStrategy, SortKey


class FairShareStrategy(SchedulingStrategy):
    """One queue per ``job.tenant`` (``None`` is a tenant too), served round-robin.

    Each turn a tenant starts up to its weight (default 1) of its jobs, in the
    order of ``inner``; then the next tenant with queued jobs has its turn. A
    tenant that starts queueing joins the end of the round, so however many
    jobs another tenant has queued, a newcomer waits at most one turn of every
    tenant already active (one dispatch each with equal weights).

    Why this cannot be one heap key: where a job stands depends on the other
    jobs queued when it is dispatched, not on the job alone. Tenant A's
    10,000th job must run after tenant B's 1st even if B's arrived last, and a
    HIGH job pushed for A takes A's next turn, moving every queued A job back
    one round. A key is computed once, at push, from the job alone; encoding
    "turn number" in it would mean rewriting thousands of keys on one push.
    So the strategy supplies its own ready side (:meth:`ready_queue`): a heap
    per tenant, ordered by ``inner.key``, and a ring of active tenants.

    :param inner: orders each tenant's own jobs; :class:`PriorityStrategy` by
        default. It must order by key alone (not another fair share).
    :param weights: tenant -> positive int, the turns' sizes; absent tenants
        weigh 1.
    :raises ValueError: a weight is not a positive integer, or a tenant name
        is an empty string.
    :raises TypeError: ``inner`` is not a key-ordered strategy.
    """

    __slots__ = ("inner", "weights")

    def __init__(
        self,
        inner: SchedulingStrategy | None = None,
        weights: Mapping[str | None, int] | None = None,
    ) -> None:
        if inner is None:
            inner = PriorityStrategy()
        elif not isinstance(inner, SchedulingStrategy):
            raise TypeError(f"inner must be a jobsched.SchedulingStrategy, got {inner!r}")
        elif inner.ready_queue() is not None:
            raise TypeError(
                f"inner must order jobs by key alone, got {inner!r}, which has its own "
                "ready queue; nest fair shares by giving a tenant a larger weight instead"
            )
        checked: dict[str | None, int] = {}
        for tenant, weight in (weights or {}).items():
            if tenant is not None and (not isinstance(tenant, str) or not tenant):
                raise ValueError(
                    f"weights keys must be tenant names (non-empty strings) or None, got {tenant!r}"
                )
            if isinstance(weight, bool) or not isinstance(weight, int) or weight < 1:
                raise ValueError(
                    f"weights[{tenant!r}] must be a positive integer (turns per round), "
                    f"got {weight!r}"
                )
            checked[tenant] = weight
        self.inner: SchedulingStrategy = inner
        self.weights: dict[str | None, int] = checked

    def __repr__(self) -> str:
        return f"FairShareStrategy(inner={self.inner!r}, weights={self.weights!r})"

    def key(self, job: Job) -> SortKey:
        """The job's place within its tenant's queue."""
        return self.inner.key(job)

    def ready_queue(self) -> ReadyQueue:
        return _FairShareQueue(self.inner, self.weights)


class _FairShareQueue(ReadyQueue):
    """Per-tenant heaps and a ring of the tenants that have queued jobs.

    ``_ring[0]`` has the turn and ``_credit`` dispatches left in it. A tenant
    is in the ring exactly when it has a heap in ``_heaps``.
    """

    __slots__ = ("_credit", "_heaps", "_key", "_ring", "_size", "_weights")

    def __init__(self, inner: SchedulingStrategy, weights: Mapping[str | None, int]) -> None:
        self._key = inner.key
        self._weights = weights
        self._heaps: dict[str | None, list[tuple[SortKey, Job]]] = {}
        self._ring: deque[str | None] = deque()
        self._credit = 0
        self._size = 0

    def push(self, job: Job) -> None:
        tenant = job.tenant
        entry = (self._key(job), job)
        self._size += 1
        heap = self._heaps.get(tenant)
        if heap is not None:
            heappush(heap, entry)
            return
        self._heaps[tenant] = [entry]
        self._ring.append(tenant)
        if len(self._ring) == 1:
            self._credit = self._weights.get(tenant, 1)

    def pop(self) -> Job | None:
        ring, heaps = self._ring, self._heaps
        while ring:
            tenant = ring[0]
            heap = heaps[tenant]
            job = None
            while heap:
                self._size -= 1
                candidate = heappop(heap)[1]
                if not candidate.status._terminal:  # type: ignore[attr-defined]
                    job = candidate
                    break
            if job is not None:
                self._credit -= 1
                if self._credit > 0 and heap:
                    return job
            # The turn is over (credit spent) or the tenant has nothing left.
            ring.popleft()
            if heap:
                ring.append(tenant)
            else:
                del heaps[tenant]
            if ring:
                self._credit = self._weights.get(ring[0], 1)
            if job is not None:
                return job
        return None

    def __len__(self) -> int:
        return self._size
