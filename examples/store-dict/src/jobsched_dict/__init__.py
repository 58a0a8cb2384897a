"""An example third-party jobsched store: the jobs live in a dict of this process.

``open_store("dict://NAME")`` (the entry point ``dict`` in the
``jobsched.stores`` group) opens the store ``NAME``; every store object of
that name in the process shares it, so schedulers of one process are members
of one store, each with its own owner id, and nothing outlives the process.

Each method runs without an ``await`` in the middle, so on one event loop it
is one transaction, as a database store's method is. It imports only public
names from ``jobsched`` and ``jobsched.store`` (docs/stores.md, "Writing a
store", walks through it), and passes the conformance suite:
``pytest -p jobsched.store.testing --store-url 'dict://{token}'``.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence

from jobsched import JobStatus
from jobsched.store import Change, NewJob, StoredJob, check_prune_args

from . import _deps
from ._leases import Leases
from ._reads import Reads
from ._rows import STATES, State
from ._schedules import Schedules
from ._workflows import Workflows

__all__ = ["DictStore"]

S = JobStatus


class DictStore(Leases, Schedules, Reads, Workflows):
    """The jobs of ``dict://NAME``, in this process's memory.

    Here: the store's name and the methods on its jobs as a whole. A member's
    claims and outcomes are in :class:`Leases` (``_leases.py``), the stored
    schedules in :class:`Schedules` (``_schedules.py``), the operator's reads,
    retry and the members list in :class:`Reads` (``_reads.py``), the
    workflows in :class:`Workflows` (``_workflows.py``).
    """

    def __init__(
        self,
        url: str,
        *,
        secret: str | bytes | Sequence[str | bytes] | None = None,
        lease: float = 30.0,
    ) -> None:
        scheme, sep, name = url.partition("://")
        if scheme != "dict" or not sep or not name:
            raise ValueError(f"a dict store's URL is dict://NAME, got {url!r}")
        super().__init__(url, secret=secret, lease=lease)
        self.name = name
        self._token_due = None  # set by each claim (Leases), read by next_due

    @property
    def _state(self) -> State:
        return STATES.setdefault(self.name, State())

    # ── the abstract methods ───────────────────────────────────────────────

    async def open(self) -> None:
        self._state  # noqa: B018 - creates the store of this name

    async def close(self) -> None:
        pass  # nothing to release; the store lives on for the process

    async def exists(self) -> bool | None:
        return self.name in STATES

    def reserve_ids(self, count: int) -> int:
        state = self._state
        first, state.next_id = state.next_id, state.next_id + count
        return first

    async def add(self, jobs: Sequence[NewJob], now: float) -> list[Change]:
        return _deps.add(self._state, jobs, now)

    async def cancel(self, ids: Collection[int], now: float) -> list[Change]:
        state, changes = self._state, []
        for job_id in ids:
            row = state.jobs.get(job_id)
            if row is None:
                continue
            if row.status is S.RUNNING:
                row.cancel_requested = True  # its owner sees it at its next extend()
            elif row.waiting:
                _deps.finish(row, S.CANCELLED, now, "cancelled")
                changes.append(Change(row.id, S.CANCELLED, "cancelled"))
                changes += _deps.cascade(state, row.id, S.CANCELLED, now)
        return changes

    async def next_due(self) -> float | None:
        state = self._state
        due = [r.run_at for r in state.jobs.values() if r.delayed and r.waiting and not r.unmet]
        due += [s.next_fire for s in state.schedules.values() if s.next_fire < math.inf]
        if self._token_due is not None:
            due.append(self._token_due)
        return min(due, default=None)

    async def fetch(self, job_id: int) -> StoredJob | None:
        row = self._state.jobs.get(job_id)
        return None if row is None else row.stored()

    async def unfinished(self) -> int:
        return sum(not r.status.is_terminal for r in self._state.jobs.values())

    async def prune(self, keep: int | None, before: Mapping[JobStatus, float] | None = None) -> int:
        cutoffs = check_prune_args(keep, before)
        state = self._state
        ended = sorted(
            (r for r in state.jobs.values() if r.finished_at is not None),
            key=lambda r: r.finished_at or 0.0,
            reverse=True,
        )
        # A dict has no index: sorting every finished row is fine at its scale.
        # The retention guard: an upstream of an unfinished job stays (it
        # waits for it, or reads its result when claimed), whatever its age.
        held = {u for r in state.jobs.values() if r.finished_at is None for u in r.depends_on}
        aged = [
            r for r in ended if r.status in cutoffs and (r.finished_at or 0.0) < cutoffs[r.status]
        ]
        gone = {r.id for r in aged}
        if keep is not None:
            gone.update(r.id for r in [r for r in ended if r.id not in gone][keep:])
        gone -= held
        flows: set[int] = set()
        for job_id in gone:
            row = state.jobs.pop(job_id)
            if row.workflow is not None:
                flows.add(row.workflow)
            state.dependents.pop(job_id, None)
            for upstream in row.depends_on:  # its edges go with it (an own id may come back)
                state.dependents.get(upstream, set()).discard(job_id)
            for attempt in range(1, row.attempts + 1):
                state.attempts.pop((job_id, attempt), None)
        # A workflow goes with its last job.
        flows.difference_update(r.workflow for r in state.jobs.values())
        for workflow_id in flows:
            state.workflows.pop(workflow_id, None)
        return len(gone)
