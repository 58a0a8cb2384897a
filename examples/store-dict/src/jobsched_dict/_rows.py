"""What a dict store holds: its rows, and the state every member of one name shares."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from jobsched import JobStatus
from jobsched.store import (
    DEFAULT_QUEUE,
    KEY_ID_SIZE,
    KEY_ID_START,
    KEY_WIDTH,
    KEYED,
    Attempt,
    Member,
    NewJob,
    StoredJob,
)


@dataclass
class Row:
    """One job, as a database store would keep it in a row."""

    id: int
    name: str
    executor: str
    key: tuple[float, ...]
    run_at: float
    submitted_at: float
    payload: bytes
    tenant: str | None
    rate_key: str | None
    #: The upstreams named at submit (what ``fetch`` shows).
    depends_on: tuple[int, ...]
    status: JobStatus = JobStatus.PENDING
    #: Upstreams not completed yet: the job is runnable only when it is empty.
    unmet: set[int] = field(default_factory=set)
    attempts: int = 0
    #: The fencing token is (owner, attempts); the lease ends at lease_until.
    owner: str | None = None
    lease_until: float | None = None
    #: The member that started the attempt (kept when another takes it over).
    ran_by: str | None = None
    started_at: float | None = None
    finished_at: float | None = None
    result: bytes | None = None
    last_error: str | None = None
    last_traceback: str | None = None
    cancel_requested: bool = False
    #: Waiting for its run_at, as of the last claim (or its add): what
    #: next_due() reads. A claim whose ``now`` reached run_at clears it.
    delayed: bool = False
    queue: str = DEFAULT_QUEUE
    #: Handed back by a takeover before it started (its member died holding
    #: it claimed ahead): its next claim starts it at once, so a job that
    #: kills its member as it starts still uses up its attempts.
    handed_back: bool = False
    #: A registered job's arguments (JSON text); None for a pickled job.
    args: str | None = None
    #: The upstreams whose end other than COMPLETED counts them off as a
    #: completion does (their edge's "run" policy) instead of cancelling this job.
    lenient: frozenset[int] = frozenset()
    #: The workflow it was added with (``add_workflow``), or None.
    workflow: int | None = None

    @classmethod
    def of(cls, job: NewJob) -> Row:
        if len(job.key) > KEY_WIDTH:
            raise ValueError(f"a stored sort key has at most {KEY_WIDTH} fields, got {job.key!r}")
        key = tuple(job.key) + (0.0,) * (KEY_WIDTH - len(job.key))
        return cls(
            job.id,
            job.name,
            job.executor,
            key,
            job.run_at,
            job.submitted_at,
            job.payload,
            job.tenant,
            job.rate_key,
            tuple(dict.fromkeys(job.depends_on)),
            queue=job.queue,
            args=job.args,
            lenient=frozenset(job.run_on_failure),
        )

    @property
    def waiting(self) -> bool:
        """Pending or retry-waiting: a claim may hand it out once it is due."""
        return self.status in (JobStatus.PENDING, JobStatus.RETRY_WAIT)

    @property
    def ready(self) -> bool:
        """A claim may hand it out: waiting, no upstream left, its run_at reached."""
        return self.waiting and not self.unmet and not self.delayed

    @property
    def key_id(self) -> bytes:
        """The id of the key that signed the payload (one that starts with ``KEYED``)."""
        # KEY_ID_START counts from 1, as SQL's substr() does.
        return self.payload[KEY_ID_START - 1 : KEY_ID_START - 1 + KEY_ID_SIZE]

    def key_held(self, key_ids: Collection[bytes]) -> bool:
        """Unsigned, or signed by one of ``key_ids`` (the keys a member holds)."""
        return not self.payload.startswith(KEYED) or self.key_id in key_ids

    def known(self, names: Collection[str]) -> bool:
        """A pickled job, or a registered one of a name in ``names`` (those the
        member runs): a claim hands out no other."""
        return self.args is None or self.name in names

    def stored(self) -> StoredJob:
        return StoredJob(
            id=self.id,
            name=self.name,
            executor=self.executor,
            status=self.status,
            attempts=self.attempts,
            run_at=self.run_at,
            submitted_at=self.submitted_at,
            started_at=self.started_at,
            finished_at=self.finished_at,
            result=self.result,
            last_error=self.last_error,
            last_traceback=self.last_traceback,
            owner=self.owner,
            payload=self.payload,
            tenant=self.tenant,
            depends_on=self.depends_on,
            queue=self.queue,
            args=self.args,
            workflow=self.workflow,
        )


@dataclass
class Schedule:
    payload: bytes
    next_fire: float
    owner: str | None = None
    lease_until: float | None = None
    last_job: int | None = None


@dataclass
class State:
    """One named store: what every ``DictStore("dict://NAME")`` of the process shares."""

    next_id: int = 1
    jobs: dict[int, Row] = field(default_factory=dict)
    #: upstream -> the jobs still waiting for it.
    dependents: dict[int, set[int]] = field(default_factory=dict)
    #: The attempts that did not complete, by (job, attempt); a running or
    #: completed attempt is the job's own row.
    attempts: dict[tuple[int, int], Attempt] = field(default_factory=dict)
    schedules: dict[str, Schedule] = field(default_factory=dict)
    #: (schedule, fire time): one job per fire, whichever member makes it.
    fired: set[tuple[str, float]] = field(default_factory=set)
    #: rate key -> (tokens, when): one bucket per key for every member.
    buckets: dict[str, tuple[float, float]] = field(default_factory=dict)
    #: tenant -> (served, credit): the fair-share rotation, shared too.
    turns: dict[str | None, tuple[int, int]] = field(default_factory=dict)
    members: dict[str, Member] = field(default_factory=dict)
    #: The paused queues: no claim takes their jobs.
    paused: set[str] = field(default_factory=set)
    #: Workflows by number: (name, created_at, size); one goes with its last job.
    workflows: dict[int, tuple[str, float, int]] = field(default_factory=dict)


#: The stores of this process, by name.
STATES: dict[str, State] = {}
