"""The dependency graph's cold side, in memory: per-edge failure policies,
upstreams' results bound into a job as it is queued, and the history's guard.

``Outcomes`` keeps the graph (``blocked``, ``dependents``) and its hot
path; it comes here for an end other than COMPLETED of a job with
dependents, and when the history's oldest job is a pinned upstream. The memory
backing's ``put`` comes here for a job with a ``_flow`` (``bind_inputs``).
The rule (plan section 6.1): an edge is settled once, when its upstream
ends; COMPLETED counts it off; any other end counts it off on a ``"run"``
edge and cancels the dependent on a ``"cancel"`` edge.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._enums import JobStatus
from .._jobs._ids import id_number

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from .._jobs._job import Job
    from ._backing import Backing
    from ._outcomes import Outcomes
    from ._state import JobTable

_COMPLETED = JobStatus.COMPLETED
_FAILED = JobStatus.FAILED
_CANCELLED = JobStatus.CANCELLED

#: How many pinned jobs one eviction sends back to the young end, at most: a
#: long-pinned upstream is looked at about once per turn of the history, and a
#: finish costs a few looks. Unpinned ones it meets are dropped uncounted (each
#: was filed by one finish, which pays for it), so once fewer than LOOKS are
#: pinned the history is over its bound by pinned jobs only.
LOOKS = 8


class FlowGraph:
    """What ``Outcomes`` asks about edges with policies, results and pins."""

    __slots__ = ("_backing", "_clock", "_outcomes", "_table")

    def __init__(
        self, outcomes: Outcomes, table: JobTable, backing: Backing, clock: Callable[[], float]
    ) -> None:
        self._outcomes = outcomes
        self._table = table
        self._backing = backing
        self._clock = clock

    def ended_otherwise(
        self, upstream: Job, number: int, status: JobStatus, dependents: list[int]
    ) -> list[tuple[Job, str]] | None:
        """``upstream`` (``number``) ended ``status``, not COMPLETED: each waiting
        dependent's edge is counted off ("run") or cancels it; the ones to cancel."""
        jobs = self._table.jobs
        cascade = None
        for dep in dependents:
            dependent = jobs.get(dep)
            if dependent is None or dependent.status._terminal:  # type: ignore[attr-defined]
                continue
            if not self.settled(dependent, upstream, number):
                if cascade is None:
                    cascade = []
                cascade.append((dependent, f"upstream job-{number} {status.value}"))
        return cascade

    def settled(self, dependent: Job, upstream: Job, number: int) -> bool:
        """``upstream`` (``number``) ended other than COMPLETED: True if
        ``dependent``'s edge to it is a ``"run"`` edge, now counted off (the
        dependent released if it was the last); False: the dependent is cancelled."""
        flow = dependent._flow
        if flow is None or upstream.job_id not in flow.lenient:
            return False
        outcomes = self._outcomes
        waiting = dependent._jobsched_id
        unmet = outcomes.blocked.get(waiting)
        if unmet is not None:
            unmet.discard(number)
            if not unmet:
                del outcomes.blocked[waiting]
                try:
                    self._backing.release(dependent, self._clock())
                except Exception as exc:
                    outcomes.recording_failed(dependent, exc)
        return True

    def pinned(self, number: int) -> bool:
        """Whether a job that depends on job ``number`` is unfinished."""
        jobs = self._table.jobs
        for dep in self._outcomes.dependents.get(number, ()):
            dependent = jobs.get(dep)
            if dependent is not None and not dependent.status._terminal:  # type: ignore[attr-defined]
                return True
        return False

    def evict(self, old: int) -> None:
        """Drop the history's oldest job ``old`` (taken off its old end), unless
        it is pinned: then it goes back to the young end, and the next oldest
        is looked at, so the history exceeds its bound by pinned jobs only.

        It stops within the bound, or once LOOKS pinned ones went back and the
        oldest is pinned: a finish drops the oldest job itself unless it has
        dependents (``Outcomes._finish_here``, ``Workflows._file``), so a
        history left over its bound must start with a pinned job, or the end
        that unpins the jobs behind it would drop that one only."""
        table = self._table
        finished = table.finished
        dependents = self._outcomes.dependents
        looks = LOOKS
        while True:
            if self.pinned(old):
                finished.append(old)
                looks -= 1
            else:
                dependents.pop(old, None)
                table.jobs.pop(old, None)
            if len(finished) <= table.history_limit:
                return
            if not looks and self.pinned(finished[0]):
                return
            old = finished.popleft()

    def keep(self, number: int) -> bool:
        """A retention by age would drop job ``number``: True to keep it
        (pinned); else its edges' record goes with it."""
        if self.pinned(number):
            return True
        self._outcomes.dependents.pop(number, None)
        return False


def bind_inputs(job: Job, jobs: Mapping[int, Job]) -> None:
    """Put the upstreams' results in place of ``job``'s markers (if it has
    any) as it is queued to run: every upstream has ended, and the history
    still holds it (the guard). A retried job is bound again, the same way."""
    inputs = job._flow.inputs  # type: ignore[union-attr]
    if inputs is None:
        return
    from .._workflows._bind import Upstream, bind

    ends = {}
    for upstream_id in inputs.upstreams:
        number = id_number(upstream_id)
        upstream = jobs.get(number)
        ends[number] = (
            Upstream(upstream.status, upstream.result, upstream.last_error)
            if upstream is not None
            # Unreachable while the guard holds; a failure, never a hang.
            else Upstream(_FAILED, None, "no longer held by this scheduler")
        )
    bind(job, inputs, ends)
