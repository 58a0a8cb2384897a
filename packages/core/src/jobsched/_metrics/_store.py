"""The store's figures: what every member and the dashboard report alike."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .._enums import JobStatus
from .._jobs._options import DEFAULT_QUEUE
from ..store._rows import MEMBER_EVERY

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric

    from ..store._base import JobStore

#: The statuses a queue's count covers (``JobStore.queue_counts``): finished
#: jobs are counted by executor only, so their count follows the history.
UNFINISHED = (JobStatus.PENDING, JobStatus.RETRY_WAIT, JobStatus.RUNNING)
#: A member silent longer than this is not live: three missed reports, as
#: the dashboard's members page marks it stale.
LIVE_WITHIN = 3 * MEMBER_EVERY


@dataclass(frozen=True, slots=True)
class StoreFigures:
    """One read of a store's counts, for one scrape."""

    #: Unfinished jobs by (queue, status).
    queues: dict[tuple[str, JobStatus], int]
    #: Every job the store holds by (status, executor), finished ones until pruned.
    jobs: dict[tuple[JobStatus, str], int]
    #: Members that reported within :data:`LIVE_WITHIN`, and their worker slots.
    members: int
    workers: int


async def read_store(store: JobStore, now: float | None = None) -> StoreFigures:
    """The store's figures, from its incremental counts, its unfinished
    jobs' index and its members list: three short reads.

    :param now: wall-clock seconds the members' reports are judged against
        (``time.time()`` by default).
    """
    jobs = await store.counts()
    try:
        queues = await store.queue_counts()
    except NotImplementedError:
        queues = {}
    try:
        members = await store.members()
    except NotImplementedError:
        members = []
    now = time.time() if now is None else now
    live = [m for m in members if now - m.seen_at <= LIVE_WITHIN]
    return StoreFigures(queues, jobs, len(live), sum(m.workers for m in live))


def store_families(figures: StoreFigures) -> list[Metric]:
    """The figures as Prometheus metric families."""
    from prometheus_client.core import GaugeMetricFamily

    queued = GaugeMetricFamily(
        "jobsched_jobs",
        "Unfinished jobs in the store, by queue and status (pending, retry_wait, running).",
        labels=["queue", "status"],
    )
    # Every unfinished status of every queue seen, zeros too: a series that
    # vanished when its queue drained would read as "no data", not 0.
    names = {DEFAULT_QUEUE, *(queue for queue, _ in figures.queues)}
    for queue in sorted(names):
        for status in UNFINISHED:
            queued.add_metric([queue, status.value], figures.queues.get((queue, status), 0))
    stored = GaugeMetricFamily(
        "jobsched_jobs_stored",
        "Every job the store holds, finished ones until they are pruned, by status and "
        "executor (the store's incremental counts).",
        labels=["status", "executor"],
    )
    for (status, executor), n in sorted(figures.jobs.items(), key=_by_text):
        stored.add_metric([status.value, executor], n)
    members = GaugeMetricFamily(
        "jobsched_members",
        f"Members (schedulers on the store) that reported in the last {LIVE_WITHIN:g} s.",
        value=figures.members,
    )
    workers = GaugeMetricFamily(
        "jobsched_member_workers",
        "Worker slots of the live members: the most attempts they run at once.",
        value=figures.workers,
    )
    return [queued, stored, members, workers]


def figures_text(figures: StoreFigures) -> bytes:
    """The store's figures as Prometheus text (what the dashboard's ``/metrics`` serves)."""
    from prometheus_client import CollectorRegistry, generate_latest

    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Fixed(store_families(figures)))
    return generate_latest(registry)


class _Fixed:
    """A collector of families read before the scrape."""

    def __init__(self, families: list[Metric]) -> None:
        self._families = families

    def collect(self) -> list[Metric]:
        return self._families


def _by_text(item: tuple[tuple[JobStatus, str], int]) -> tuple[str, str]:
    (status, executor), _ = item
    return status.value, executor
