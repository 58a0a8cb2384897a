"""Claimed jobs that take their upstreams' results: read, bound, then queued.

``LinkHost.claimed`` hands over the claimed jobs that hold result markers
(and only those: a claim of jobs without markers takes the path it always
did). Their upstreams' results are read in one store call for all the jobs
handed over meanwhile (``StoreLink.read_inputs``), bound into each job
(``_workflows._bind``), and the job queued for the workers; a job that
cannot receive a result ends FAILED, never retried, never hanging, with a
``last_error`` naming the upstream and why (``LinkHost._refuse``).

While they wait, the jobs are held (in ``Held.fences``: leases renewed,
cancellable) and counted as claimed (``waiting``: the claims ahead and the
stop's hand-back read it). Their attempt's time, and so their timeout,
starts when a worker takes them: reading inputs is the member's time.

Loaded with the first claimed job that holds result markers (plan 7.3).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, NamedTuple

from ._link._retry import LinkClosed

if TYPE_CHECKING:
    from collections.abc import Callable

    from anyio.abc import TaskGroup

    from .._jobs._job import Job
    from .._workflows._inputs import Inputs
    from ..store._rows import Claimed
    from ._held import ClaimedQueue

#: How many bytes of stored results one job may receive, all its upstreams
#: together (plan 7.3): a fan-in of 10,000 results of 1 KB is 10 MB.
MAX_INPUT_BYTES = 256 << 20


class Waiting(NamedTuple):
    """A claimed job waiting for its inputs."""

    job: Job
    inputs: Inputs
    attempt: int
    started: bool


class ClaimInputs:
    """The claimed jobs waiting for their upstreams' results, and the task reading them."""

    __slots__ = ("_fail", "_group", "_pending", "_queued", "_reading", "_wake", "waiting")

    def __init__(
        self,
        claims: ClaimedQueue,
        group: TaskGroup,
        refuse: Callable[[int, int, str], None],
        wake: Callable[[], None],
    ) -> None:
        # refuse: LinkHost._refuse (FAILED in the store, unread);
        # wake: wakes an idle worker for the jobs queued.
        self._queued = claims
        self._group = group
        self._fail = refuse
        self._wake = wake
        #: The jobs waiting, by number (held and counted as claimed).
        self.waiting: dict[int, Waiting] = {}
        self._pending: list[int] = []
        self._reading = False

    def found(self, job: Job, claim: Claimed) -> bool:
        """A job loaded from the store that may hold result markers: True if
        it does (it waits for its inputs, or was refused: they cannot be found)."""
        from .._jobs._flow import flow_of
        from .._workflows._inputs import find_inputs

        try:
            inputs = find_inputs(job)
        except TypeError as exc:  # a registered job's marker too deep to be found
            self._fail(claim.id, claim.attempt, str(exc))
            return True
        if inputs is None:
            return False
        flow_of(job).inputs = inputs  # a retry claimed here binds from it again
        self.wait(job, inputs, claim)
        return True

    def keep(self, job: Job) -> None:
        """A job loaded from the store whose lost attempt is retried here:
        its retry is claimed as this process's job, which binds from the
        inputs on its flow, so they are found now (without them it ran with
        the markers in place of the results)."""
        from .._jobs._flow import flow_of
        from .._workflows._inputs import find_inputs

        try:
            inputs = find_inputs(job)
        except TypeError:  # a marker too deep: refused at submit, so in no stored row
            return
        if inputs is not None:
            flow_of(job).inputs = inputs

    def wait(self, job: Job, inputs: Inputs, claim: Claimed) -> None:
        """A claimed job whose inputs are to be read before it is queued."""
        number = job._jobsched_id
        self.waiting[number] = Waiting(job, inputs, claim.attempt, claim.started)
        self._pending.append(number)
        if not self._reading:
            # One task at a time, ending when nothing waits: no task is left
            # behind by a member that never claims such a job again.
            self._reading = True
            self._group.start_soon(self._read, name="jobsched-claim-inputs")

    def let_go(self) -> list[int]:
        """Stop waiting for all of them (the stop hands them back): their numbers."""
        numbers = list(self.waiting)
        self.waiting.clear()
        self._pending.clear()
        return numbers

    async def _read(self) -> None:
        try:
            while self._pending:
                batch, self._pending = self._pending, []
                wanted = {n: self.waiting[n].inputs.upstreams for n in batch if n in self.waiting}
                if not wanted:
                    continue
                try:
                    received = await self._queued.link.read_inputs(wanted, MAX_INPUT_BYTES)
                except LinkClosed:
                    return  # stopping: the stop hands the waiting jobs back
                self._bind_all(received)
        finally:
            self._reading = False

    def _bind_all(self, received: dict[int, Any]) -> None:
        from .._workflows._bind import bind

        queued = False
        for number, ends in received.items():
            # Gone meanwhile: handed back at the stop.
            entry = self.waiting.pop(number, None)
            if entry is None:
                continue
            job = entry.job
            if job.status._terminal:  # type: ignore[attr-defined]
                continue  # cancelled while it waited: the cancel wrote its end
            if type(ends) is str:
                self._fail(number, entry.attempt, ends)
                continue
            try:
                bind(job, entry.inputs, ends)
            except Exception as exc:  # one job's binding must cost that job only
                self._fail(
                    number,
                    entry.attempt,
                    f"cannot bind its upstreams' results ({type(exc).__name__}: {exc})",
                )
                continue
            # Claimed now, as the queue sees it: the read's time is not
            # counted towards handing it back as stale.
            self._queued.add(job, time.monotonic(), entry.started)
            queued = True
        if queued:
            self._wake()
