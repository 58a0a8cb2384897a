"""What the committer does when the store refuses one job's data in a batch
(:class:`JobDataError`): the step is written again in halves until that job
is alone, which fails alone while the rest are written. The common batch
stays one call per step."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial

from ..._enums import JobStatus
from ..._log import logger
from ...store._base import JobStore
from ...store._errors import JobDataError
from ...store._rows import Change, NewJob, Outcome
from ._batch import Batch, Split
from ._retry import StoreCalls


class Refusals:
    """Writing a step in parts, and the end of a job the store refused."""

    __slots__ = ("_calls", "_owner", "_store")

    def __init__(self, store: JobStore, owner: str, calls: StoreCalls) -> None:
        self._store = store
        self._owner = owner
        self._calls = calls

    async def write_parts(
        self, batch: Batch, split: Split, give_up: Callable[[float], bool]
    ) -> None:
        """Write ``batch.parts`` in order, halving a part the store refuses
        until the job it refuses is alone (``split.refuse`` it). Kept on the
        batch: an outage given up on resumes at the first part not written."""
        parts = batch.parts
        assert parts is not None
        call = self._calls.call
        while parts:
            part = parts[0]
            try:
                batch.changes += await call(
                    "writing", partial(split.write, part), give_up=give_up, data=True
                )
            except JobDataError as exc:
                if len(part) > 1:
                    half = len(part) // 2
                    parts[:1] = [part[:half], part[half:]]
                    continue
                batch.changes += await call(
                    "writing", partial(split.refuse, part[0], exc), give_up=give_up
                )
            parts.pop(0)
        batch.parts = None

    async def record_part(self, outcomes: list[Outcome]) -> list[Change]:
        """Record some of a batch's outcomes (a part of the step)."""
        return (await self._store.record(self._owner, outcomes)).changes

    async def refuse_outcome(self, out: Outcome, exc: JobDataError) -> list[Change]:
        """The store cannot keep ``out`` (its error text, traceback or result):
        the same end of the attempt is written with the refusal as its error,
        and no traceback or result (a completion without its result ends
        FAILED), fenced as any outcome. A retry stays a retry: a job whose
        every attempt is refused ends FAILED after its retries."""
        error = f"the store refused this attempt's outcome (its error text or result): {exc}"
        status = JobStatus.FAILED if out.status is JobStatus.COMPLETED else out.status
        kept = replace(out, status=status, result=None, error=error, traceback=None)
        try:
            recorded = await self._store.record(self._owner, [kept])
        except JobDataError as again:
            # Not even the refusal fits (a store that refuses every text?):
            # the lease lapses and the job runs again, rather than a scheduler ending.
            logger.error("job-%d: the store refused its outcome and its failure: %s", out.id, again)
            return []
        if out.id not in recorded.refused:
            logger.warning("job-%d: %s; stored %s with that error", out.id, error, status.value)
        return recorded.changes

    @staticmethod
    async def refuse_add(batch: Batch, job: NewJob, exc: JobDataError) -> list[Change]:
        """The store cannot keep ``job`` of ``batch``: it is cancelled here,
        and the flushes that waited for it raise ``ValueError`` naming it."""
        said = f"the store refused job-{job.id} ({job.name!r}): {exc}"
        logger.warning("%s; it is cancelled", said)
        batch.refused.append(said)
        return [Change(job.id, JobStatus.CANCELLED, f"the store refused this job: {exc}")]
