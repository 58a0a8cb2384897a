"""``complete_in``: an attempt's completion written in the caller's own transaction.

The store writes it (:meth:`JobStore.completer`), fenced on this member and
the attempt as the group commit fences an outcome, in the caller's open
transaction: the caller's work and the job's completion commit together or
not at all. Two halves live here:

- :class:`Ticket`: what a write needs (the store's writer, the fence, how
  the job's result is encoded), made by the scheduler and picklable, so a
  process job writes through the copy shipped with it.
- :class:`Completions`: the scheduler's side. It checks that the attempt is
  still its own before a write, notes each completion written, and settles
  such an attempt once it ended: a completion is no outcome until the
  caller commits, which only the store can tell, so the attempt stays
  RUNNING here until a read of its row says. Committed: it is COMPLETED
  with the completion's result, whatever the function did after, and the
  scheduler writes nothing (the row is no longer its to write). Not
  committed (rolled back): the attempt ends as it would have without it.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

import anyio

from .._enums import JobStatus
from .._exceptions import LeaseLostError, SchedulerError, StoreUnavailableError
from .._jobs import _json
from .._jobs._current import DONE, CurrentJob
from .._log import logger
from ._state import _describe

if TYPE_CHECKING:
    from collections.abc import Callable

    from .._jobs._job import Job
    from ._attempts import Attempt
    from ._dispatch import Dispatcher
    from ._link import StoreLink
    from ._outcomes import Outcomes

_RUNNING = JobStatus.RUNNING
_COMPLETED = JobStatus.COMPLETED


class Ticket:
    """One attempt's completion, to write in a caller's transaction: picklable."""

    __slots__ = (
        "_codec",
        "attempt",
        "completer",
        "job_id",
        "json",
        "name",
        "number",
        "owner",
        "refusal",
        "secrets",
        "started_at",
    )

    def __init__(
        self,
        job: Job,
        attempt: int,
        *,
        completer: Any,
        refusal: str,
        owner: str = "",
        secrets: tuple[bytes, ...] = (),
        started_at: float | None = None,
    ) -> None:
        self.job_id = job.job_id
        self.name = job.name
        self.number = job._jobsched_id
        self.attempt = attempt
        #: The store's writer (``JobStore.completer()``), or None: then
        #: ``refusal`` says why complete_in cannot be used here.
        self.completer = completer
        self.refusal = refusal
        self.owner = owner
        #: A registered job's result is JSON; any other's is a signed pickle.
        self.json = bool(getattr(type(job), "_jobsched_json", False))
        self.secrets = secrets
        self.started_at = started_at
        self._codec: Any = None

    def __getstate__(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__ if name != "_codec"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            setattr(self, name, value)
        self._codec = None

    def portable(self, handle: CurrentJob) -> Ticket:
        """What a copy of the handle carries: this ticket."""
        return self

    def complete_in(self, handle: CurrentJob, conn: Any, result: Any) -> Awaitable[None]:
        """Write the completion in ``conn``'s transaction (see CurrentJob.complete_in)."""
        if self.completer is None:
            raise SchedulerError(self.refusal)
        from ..store._rows import Completion

        blob, value = self._encode(result)
        row = Completion(
            self.number,
            self.owner,
            self.attempt,
            time.time(),
            result=blob,
            started_at=self.started_at,
        )
        try:
            pending = self.completer.write(conn, row)
        except LeaseLostError as exc:
            raise self._lost(exc) from None
        if pending is None:
            handle._done(value)
            return DONE
        return self._written(pending, handle, value)

    async def _written(self, pending: Awaitable[None], handle: CurrentJob, value: Any) -> None:
        try:
            await pending
        except LeaseLostError as exc:
            raise self._lost(exc) from None
        handle._done(value)

    def _lost(self, exc: LeaseLostError) -> LeaseLostError:
        """The store's refusal, naming the job (the store knows its number only)."""
        return LeaseLostError(f"{self.job_id} ({self.name!r}): {exc}")

    def _encode(self, result: Any) -> tuple[bytes | None, Any]:
        """The stored result, and the value a reader of it gets back."""
        if result is None:
            return None, None  # stored as NULL, as the scheduler's own outcome does
        what = f"the result of {self.job_id} ({self.name!r})"
        if self.json:
            from .._jobs._registered import RESULT_TAG

            text = _json.dumps(result, what)  # TypeError: not JSON, said with the path
            return RESULT_TAG + text.encode(), _json.loads(text)
        codec = self._codec
        if codec is None:
            from ..store._codec import Codec

            codec = self._codec = Codec(self.secrets)
        return codec.dumps(result, lambda: what), result


class Completions:
    """The scheduler's side of ``complete_in``, and of ``progress``."""

    __slots__ = ("_clock", "_completed_in", "_dispatcher", "_held", "_link", "_outcomes", "_tasks")

    def __init__(
        self,
        outcomes: Outcomes,
        dispatcher: Dispatcher,
        link: StoreLink | None,
        held: dict[int, int],
        completed_in: dict[int, tuple[int, Any]],
        tasks: tuple[Callable[[], None], Callable[[], None]],
    ) -> None:
        # held: the attempt each held job's writes are fenced by (Held.fences;
        # empty in memory). tasks: the lifecycle's count of live tasks, which
        # a settle waiting for the store's word joins.
        self._outcomes = outcomes
        self._clock = outcomes._clock
        self._dispatcher = dispatcher
        self._link = link
        self._held = held
        self._completed_in = completed_in
        self._tasks = tasks

    def portable(self, handle: CurrentJob) -> Ticket:
        """The ticket for ``handle``'s attempt: for a write here, or shipped."""
        job = handle._job
        assert job is not None
        link = self._link
        if link is None:
            return Ticket(
                job,
                handle.attempt,
                completer=None,
                refusal=(
                    f"{_describe(job)} cannot complete_in(): its scheduler keeps jobs in "
                    "memory, where no transaction of yours can hold their completion; "
                    "complete_in() needs the PostgreSQL store"
                ),
            )
        store = link.store
        completer = store.completer()
        started = job.started_at
        return Ticket(
            job,
            handle.attempt,
            completer=completer,
            refusal=(
                f"{_describe(job)} cannot complete_in(): its store {store.url} "
                f"({type(store).__name__}) cannot write a completion in your transaction "
                "(its completer() is None); complete_in() needs the PostgreSQL store"
            ),
            owner=link.owner,
            secrets=store.secrets,
            started_at=None if started is None else time.time() - (self._clock() - started),
        )

    def complete_in(self, handle: CurrentJob, conn: Any, result: Any) -> Awaitable[None]:
        """In this process: the write, if the attempt is still this member's."""
        ticket = self.portable(handle)
        if ticket.completer is not None:
            self._check_held(handle)
        return ticket.complete_in(handle, conn, result)

    def progressed(self, job: Job, attempt: int) -> None:
        """``job``'s attempt reported progress (``CurrentJob.progress``, from
        any thread): in memory its fields are all there is (nothing is held
        there); a held job's values go to the store's writer, while this
        member still holds the attempt."""
        number = job._jobsched_id
        flow = job._flow
        if flow is not None and self._held.get(number) == attempt:
            link = self._link
            assert link is not None  # only a durable store holds jobs
            link.note_progress(number, attempt, flow.progress, flow.message)

    def _check_held(self, handle: CurrentJob) -> None:
        # Read from a thread job's thread too: a dict lookup and two reads,
        # each atomic; the fence in the store decides anyway.
        job = handle._job
        assert job is not None
        number = job._jobsched_id
        if (
            job.status is _RUNNING
            and job.attempts == handle.attempt
            and self._held.get(number) == handle.attempt
        ):
            return
        raise LeaseLostError(
            f"{_describe(job)}: attempt {handle.attempt} is no longer this member's (it "
            "ended here already: timed out, cancelled, or handed back): nothing was "
            "written; roll your transaction back"
        )

    def completed(self, job: Job, attempt: int, result: Any) -> None:
        """A completion of ``job``'s ``attempt`` was written (in this process,
        or reported by an executor from another)."""
        number = job._jobsched_id
        self._completed_in[number] = (attempt, result)
        if job.status is not _RUNNING or job.attempts != attempt:
            # The attempt ended here meanwhile (a thread job past its
            # timeout): its outcome is made, so the note would only linger.
            self._completed_in.pop(number, None)

    def settle_later(
        self,
        job: Job,
        attempt: Attempt | None,
        result: Any,
        error: BaseException | None,
        completed: Any,
    ) -> bool:
        """Settle an attempt that wrote a completion once the store says
        whether it committed; False if that cannot be (no durable store, no
        task group): the caller settles it at once."""
        group = self._dispatcher.workers_group
        link = self._link
        if link is None or group is None:
            return False
        started, exited = self._tasks
        started()
        try:
            group.start_soon(
                self._settle, job, attempt, result, error, completed, name="jobsched-complete-in"
            )
        except RuntimeError:  # the group is closing
            exited()
            return False
        return True

    async def _settle(
        self,
        job: Job,
        attempt: Attempt | None,
        result: Any,
        error: BaseException | None,
        completed: Any,
    ) -> None:
        outcomes = self._outcomes
        try:
            # Shielded: the attempt's outcome waits on this read, also at stop.
            with anyio.CancelScope(shield=True):
                committed = await self._committed(job)
            if committed:
                number = job._jobsched_id
                # The row is COMPLETED already: nothing of ours to write.
                self._held.pop(number, None)
                self._dispatcher.early_cancels.discard(number)
                job.result = completed
                job.last_error = job.last_traceback = None
                outcomes.finish(job, _COMPLETED, None)
            else:
                outcomes.settle(job, attempt, result, error)
        except Exception as exc:  # as in settle: never leave the job RUNNING
            outcomes.recording_failed(job, exc)
        finally:
            self._tasks[1]()

    async def _committed(self, job: Job) -> bool:
        """Whether the store holds ``job`` COMPLETED by this attempt."""
        link = self._link
        assert link is not None
        number = job._jobsched_id
        try:
            stored = await link.read(
                "reading a job completed in its own transaction",
                lambda: link.store.fetch(number),
                patience=None,
            )
        except StoreUnavailableError as exc:
            logger.warning(
                "%s wrote its completion in a transaction of its own, and whether that "
                "committed cannot be read (%s): its outcome here follows what the function "
                "did; the store keeps whichever committed first",
                _describe(job),
                exc,
            )
            return False
        if stored is None:
            return False
        return stored.status is _COMPLETED and stored.attempts == job.attempts
