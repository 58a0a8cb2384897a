"""A group commit's batch, and what the committer does when the store
refuses one job's data in it (:class:`JobDataError`): the step is written
again in halves until that job is alone, which fails alone while the rest
are written. The common batch stays one call per step."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from ..._enums import JobStatus
from ..._log import logger
from ...store._errors import JobDataError
from ...store._rows import Change, NewJob, Outcome
from ._retry import Retrying


@dataclass
class Batch:
    """Writes taken off the lists for one group commit, and how far they got.

    A batch that a transient failure interrupted stays with the link (in
    order, before anything appended since) until every step is written.
    """

    adds: list[NewJob]
    outcomes: list[Outcome]
    cancels: list[int]
    schedules: list[tuple[str, bytes, float]]
    unscheduled: list[str]
    #: ``_appended`` when it was taken: committed once it is written.
    done: int
    now: float
    #: Steps written so far (add, start, record, cancel, put, remove: the
    #: non-empty ones).
    step: int = 0
    changes: list[Change] = field(default_factory=list)
    #: The current step's items still to write, in parts, once the store
    #: refused the step whole for one job's data (None: not split).
    parts: list[list[Any]] | None = None
    #: New jobs the store refused, each said in a line (for flush()).
    refused: list[str] = field(default_factory=list)
    #: Starts of jobs claimed ahead: written before the outcomes.
    starts: list[tuple[int, int, float]] = field(default_factory=list)


@dataclass
class Split:
    """How a step is written in parts: its items, a write of some of them,
    and what one item the store refuses alone becomes (the changes it makes)."""

    items: list[Any]
    write: Callable[[list[Any]], Awaitable[list[Change]]]
    refuse: Callable[[Any, JobDataError], Awaitable[list[Change]]]


class Refusals(Retrying):
    """Writing a step in parts, and the end of a job the store refused."""

    async def _write_parts(
        self, batch: Batch, split: Split, give_up: Callable[[float], bool]
    ) -> None:
        """Write ``batch.parts`` in order, halving a part the store refuses
        until the job it refuses is alone (``split.refuse`` it). Kept on the
        batch: an outage given up on resumes at the first part not written."""
        parts = batch.parts
        assert parts is not None
        while parts:
            part = parts[0]
            try:
                batch.changes += await self._call(
                    "writing", partial(split.write, part), give_up=give_up, data=True
                )
            except JobDataError as exc:
                if len(part) > 1:
                    half = len(part) // 2
                    parts[:1] = [part[:half], part[half:]]
                    continue
                batch.changes += await self._call(
                    "writing", partial(split.refuse, part[0], exc), give_up=give_up
                )
            parts.pop(0)
        batch.parts = None

    async def _record_part(self, outcomes: list[Outcome]) -> list[Change]:
        return (await self.store.record(self.owner, outcomes)).changes

    async def _refuse_outcome(self, out: Outcome, exc: JobDataError) -> list[Change]:
        """The store cannot keep ``out`` (its error text, traceback or result):
        the same end of the attempt is written with the refusal as its error,
        and no traceback or result (a completion without its result ends
        FAILED), fenced as any outcome. A retry stays a retry: a job whose
        every attempt is refused ends FAILED after its retries."""
        error = f"the store refused this attempt's outcome (its error text or result): {exc}"
        status = JobStatus.FAILED if out.status is JobStatus.COMPLETED else out.status
        kept = replace(out, status=status, result=None, error=error, traceback=None)
        try:
            recorded = await self.store.record(self.owner, [kept])
        except JobDataError as again:
            # Not even the refusal fits (a store that refuses every text?):
            # the lease lapses and the job runs again, rather than a scheduler ending.
            logger.error("job-%d: the store refused its outcome and its failure: %s", out.id, again)
            return []
        if out.id not in recorded.refused:
            logger.warning("job-%d: %s; stored %s with that error", out.id, error, status.value)
        return recorded.changes

    async def _refuse_add(self, job: NewJob, exc: JobDataError) -> list[Change]:
        """The store cannot keep ``job``: it is cancelled here, and the
        flushes that waited for it raise ``ValueError`` naming it."""
        said = f"the store refused job-{job.id} ({job.name!r}): {exc}"
        logger.warning("%s; it is cancelled", said)
        batch = self._batch
        assert batch is not None
        batch.refused.append(said)
        return [Change(job.id, JobStatus.CANCELLED, f"the store refused this job: {exc}")]
