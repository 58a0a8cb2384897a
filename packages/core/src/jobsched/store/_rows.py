"""The rows a store takes and returns: what its methods' arguments and
results hold (public through :mod:`jobsched.store`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .._enums import JobStatus
from .._jobs._options import DEFAULT_QUEUE

#: Width of the stored sort key: the longest built-in strategy key (EDF:
#: deadline, priority, seq). Shorter keys are padded with zeros.
KEY_WIDTH = 3

_COMPLETED = JobStatus.COMPLETED

#: A member reports itself this often (seconds), idle or busy; the dashboard
#: marks one stale after three missed reports.
MEMBER_EVERY = 5.0
#: A member silent this long (seconds) leaves the members list.
MEMBERS_KEEP = 86_400.0


@dataclass(slots=True)
class NewJob:
    """A job to add: what the store needs to order, gate and hand it out."""

    id: int
    name: str
    executor: str
    key: tuple[float, ...]
    run_at: float
    submitted_at: float
    payload: bytes
    tenant: str | None = None
    rate_key: str | None = None
    depends_on: tuple[int, ...] = ()
    #: With a stored schedule's fire: the store keeps one job per
    #: (schedule, fire time), whichever member fires it.
    schedule: str | None = None
    fire_time: float | None = None
    #: An id of the submitter's own (``submit(job_id=...)``, a negative
    #: ``id``): the store adds the job only if it holds no job with that id
    #: (a unique key decides, also between members), and else sets
    #: ``existed`` and writes nothing for it.
    own_id: bool = False
    existed: bool = False
    #: The named queue (``Job.queue``): a claim with ``queues`` takes only
    #: jobs of those queues.
    queue: str = DEFAULT_QUEUE
    #: A registered job's arguments, JSON text (an object: parameter name ->
    #: value), with ``payload`` ``b"J"``; None for a pickled job. A claim
    #: hands out a row with ``args`` only to a member whose ``names`` has
    #: its ``name`` (see :meth:`JobStore.claim`).
    args: str | None = None
    #: The workflow the job belongs to (``Job.workflow_id``'s number), or None:
    #: what :meth:`JobStore.add_workflow` writes for its jobs (``add`` may
    #: leave it unwritten: a workflow's jobs are added by ``add_workflow``).
    workflow: int | None = None
    #: The upstreams of ``depends_on`` whose edge has the "run" policy
    #: (``js.After(job, on_failure="run")``): an end of theirs other than
    #: COMPLETED counts them off as a completion does instead of cancelling
    #: this job. Every other edge has the "cancel" policy.
    run_on_failure: tuple[int, ...] = ()


#: An edge's policy (``StoredJob.deps``): an upstream that ends other than
#: COMPLETED cancels the dependent, or the dependent runs anyway.
ON_FAILURE_CANCEL = 0
ON_FAILURE_RUN = 1
#: An edge's state: its upstream has not ended, it completed, or it ended
#: otherwise (FAILED, TIMED_OUT, CANCELLED; or was not in the store).
EDGE_WAITING = 0
EDGE_MET = 1
EDGE_FAILED = 2


@dataclass(slots=True)
class DueSchedule:
    """A stored schedule whose fire time came, claimed by one member to fire."""

    id: str
    payload: bytes
    fire_time: float
    #: The status of the job its last fire made, or None (none, or pruned).
    last_status: JobStatus | None


@dataclass(slots=True)
class Claimed:
    """A job handed to one owner: run its attempt ``attempt``, then record it."""

    id: int
    attempt: int
    payload: bytes
    #: "worker lost" when this claim takes over an attempt whose owner died;
    #: the scheduler then records that attempt's failure instead of running it.
    lost: bool = False
    #: With ``lost``: someone asked to cancel the job while that attempt ran;
    #: the scheduler ends it CANCELLED instead of retrying it.
    cancelled: bool = False
    #: With ``lost``: when that attempt's owner last renewed its lease (the
    #: lease's end less the store's lease), so its outcome records the time
    #: it really ran, not until the takeover; None if the store cannot tell.
    renewed_at: float | None = None
    #: False for a job claimed ahead of the workers (``claim(starting=...)``):
    #: its start is the member's to report (``JobStore.start``), and until
    #: then a takeover hands it back uncounted.
    started: bool = True
    #: A registered job's arguments (JSON text, see ``NewJob.args``); None
    #: for a pickled job.
    args: str | None = None
    #: A registered job's name (the member finds its function by it).
    name: str | None = None
    #: When the job could start, as stored (wall-clock seconds: ``NewJob.run_at``,
    #: or a retry's), so the member measures its queue wait wherever it was
    #: submitted; None if the store does not say (the wait goes unmeasured).
    run_at: float | None = None


@dataclass(slots=True)
class Outcome:
    """How an attempt ended, as the scheduler decided it."""

    id: int
    attempt: int
    status: JobStatus
    finished_at: float
    #: With RETRY_WAIT: when the next attempt may start.
    run_at: float | None = None
    result: bytes | None = None
    error: str | None = None
    traceback: str | None = None
    #: When the attempt started, for a job claimed ahead whose start was not
    #: written before (``JobStore.start``): the store writes it with the
    #: outcome, one write instead of two. None: the start is the row's.
    started_at: float | None = None
    #: The attempt's last progress (``js.current_job().progress``), written
    #: with the outcome; None leaves the row's value (see JobStore.progress).
    #: A RETRY_WAIT outcome clears the row's instead, whatever these hold.
    progress: float | None = None
    progress_message: str | None = None

    @property
    def plain(self) -> bool:
        """A completion with nothing to write but its time and result: the
        usual outcome, which a store may write by a shorter statement."""
        return (
            self.status is _COMPLETED
            and self.error is None
            and self.traceback is None
            and self.progress is None
            and self.progress_message is None
        )


@dataclass(slots=True)
class Completion:
    """An attempt's completion, written in the caller's own transaction
    (``js.current_job().complete_in``): fenced on (owner, attempt) as an
    :class:`Outcome` is, and with the same effects as a completed one."""

    id: int
    owner: str
    attempt: int
    finished_at: float
    #: The stored result (``b"J"`` + JSON, or a signed pickle); None: NULL.
    result: bytes | None = None
    #: When the attempt started: the row's start for a job claimed ahead
    #: whose start the member has not written yet (None: unknown).
    started_at: float | None = None


@dataclass(slots=True)
class Change:
    """A status the store set on its own: a dependent cancelled by a cascade,
    released by its last upstream, or a job cancelled while queued."""

    id: int
    status: JobStatus
    error: str | None = None


@dataclass(slots=True)
class StoredJob:
    """A job as the store has it (``fetch``), whichever member ran it."""

    id: int
    name: str
    executor: str
    status: JobStatus
    attempts: int
    run_at: float
    submitted_at: float
    started_at: float | None
    finished_at: float | None
    result: bytes | None
    last_error: str | None
    last_traceback: str | None
    owner: str | None
    payload: bytes
    tenant: str | None = None
    depends_on: tuple[int, ...] = field(default_factory=tuple)
    queue: str = DEFAULT_QUEUE
    #: A registered job's arguments (JSON text, see ``NewJob.args``); None
    #: for a pickled job. The operator's reads (``jobs``, ``job_page``) return it too.
    args: str | None = None
    #: The stored schedule whose fire made the job (``NewJob.schedule``),
    #: None for any other job (a store that does not say leaves it None).
    schedule: str | None = None
    #: Every edge the store keeps to the job's upstreams, ``(upstream,
    #: on_failure, settled)`` (``ON_FAILURE_*``, ``EDGE_*``), by upstream, in
    #: ``fetch`` (a store may give it in its lists too); ``depends_on`` is
    #: the upstreams still waited for. A store that keeps no settled edges
    #: leaves it empty.
    deps: tuple[tuple[int, int, int], ...] = ()
    #: The workflow the job belongs to (``NewJob.workflow``), or None.
    workflow: int | None = None
    #: The last progress its running attempt wrote (:meth:`JobStore.progress`).
    progress: float | None = None
    progress_message: str | None = None


@dataclass(slots=True)
class JobPage:
    """One page of :meth:`JobStore.job_page`: the matching jobs, newest first,
    and where the next (older) page starts."""

    jobs: list[StoredJob]
    #: Pass as ``before`` for the next page; None: no older job is left to look at.
    next_before: int | None
    #: How many jobs the page looked at (its ``scan`` at most).
    scanned: int = 0


@dataclass(slots=True)
class Member:
    """A member (one scheduler on the store) as it last reported itself."""

    #: Its owner id, ``host:pid:token`` (see :attr:`host` and :attr:`pid`).
    owner: str
    #: Its ``num_workers``: the most attempts it runs at once.
    workers: int
    #: Jobs it held (claimed or running) at its report.
    busy: int
    #: Wall-clock seconds: when it started, and its last report.
    started_at: float
    seen_at: float
    #: The registered job names it runs (its app's), sorted: what
    #: ``jobsched stats`` reads to tell which waiting jobs no member knows.
    names: tuple[str, ...] = ()
    #: The queues it serves, sorted (its ``queues=``); None: every queue
    #: (also what a member of a version that did not report them reads as).
    queues: tuple[str, ...] | None = None
    #: The executors it runs jobs on, sorted (its ``--executor``\s, or those
    #: its app's jobs named); empty when it did not report them.
    executors: tuple[str, ...] = ()
    #: The schema its code writes (see ``JobStore.workflow_level``); None: a
    #: member of code that did not report it (older than workflows).
    level: int | None = None

    def serves(self, queue: str) -> bool:
        """Whether it claims jobs of ``queue`` (a producer, 0 workers, claims none)."""
        return self.workers > 0 and (self.queues is None or queue in self.queues)

    @property
    def host(self) -> str:
        """The machine it runs on, from its owner id."""
        return self.owner.rsplit(":", 2)[0] if self.owner.count(":") >= 2 else self.owner

    @property
    def pid(self) -> int | None:
        """Its process id, from its owner id (None when the id is not ``host:pid:token``)."""
        parts = self.owner.rsplit(":", 2)
        return int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else None


@dataclass(slots=True)
class Attempt:
    """One attempt of a job as the store recorded it: what a timeline draws."""

    job_id: int
    attempt: int
    name: str
    executor: str
    #: The member that ran it.
    owner: str | None
    started_at: float
    #: None while it runs.
    finished_at: float | None
    #: RUNNING while it runs, then how it ended (RETRY_WAIT: failed, retried,
    #: or handed back).
    status: JobStatus
    error: str | None = None
    #: True for an attempt a stopping member cut short past its grace and
    #: handed back (``error`` "handed back at stop"): it did not use up a
    #: retry, so the job's next attempt has the same number.
    handed_back: bool = False


@dataclass(slots=True)
class StoredSchedule:
    """A stored schedule: its id and when it fires next (``inf``: paused)."""

    id: str
    next_fire: float
    #: The member firing it now, if one holds its lease.
    owner: str | None = None
    #: Its signed payload (factory and trigger), as :meth:`JobStore.put_schedules` got it.
    payload: bytes = b""
    #: The number of the last job it made (a fire or a trigger), if any.
    last_job: int | None = None


@dataclass(slots=True)
class Recorded:
    """What :meth:`JobStore.record` did: outcomes refused by the fence, and
    the statuses it set on other jobs (dependents) in the same transaction."""

    refused: list[int] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)
