"""Job priorities, job statuses and the legal transitions between statuses."""

from __future__ import annotations

from enum import Enum, IntEnum


class JobPriority(IntEnum):
    """How urgent a job is; higher runs first under the priority strategies."""

    #: Background work that may wait.
    LOW = 0
    #: The default.
    MEDIUM = 1
    #: Ahead of ordinary work.
    HIGH = 2
    #: Ahead of everything else.
    CRITICAL = 3


class JobStatus(Enum):
    """Where a job is in its life. Only the scheduler changes it."""

    #: Submitted; waiting for its run time, its dependencies or a worker.
    PENDING = "pending"
    #: An attempt is in flight.
    RUNNING = "running"
    #: The last attempt failed or timed out; waiting out the retry backoff.
    RETRY_WAIT = "retry_wait"
    #: Finished with a result.
    COMPLETED = "completed"
    #: Retries exhausted, or a :class:`NonRetryableError` was raised.
    FAILED = "failed"
    #: The last attempt ran past the job's timeout.
    TIMED_OUT = "timed_out"
    #: Cancelled by the user, by shutdown, or because an upstream did not complete.
    CANCELLED = "cancelled"

    @property
    def is_terminal(self) -> bool:
        """True for the statuses a job never leaves."""
        return self._terminal  # type: ignore[attr-defined,no-any-return]


_TERMINAL = frozenset(
    {JobStatus.COMPLETED, JobStatus.FAILED, JobStatus.TIMED_OUT, JobStatus.CANCELLED}
)

#: Every legal edge; anything else raises InvalidTransitionError.
TRANSITIONS: dict[JobStatus, frozenset[JobStatus]] = {
    JobStatus.PENDING: frozenset({JobStatus.RUNNING, JobStatus.CANCELLED}),
    JobStatus.RUNNING: frozenset(
        {
            JobStatus.COMPLETED,
            JobStatus.FAILED,
            JobStatus.TIMED_OUT,
            JobStatus.CANCELLED,
            JobStatus.RETRY_WAIT,
        }
    ),
    JobStatus.RETRY_WAIT: frozenset({JobStatus.RUNNING, JobStatus.CANCELLED}),
}

# The hot path checks edges several times per job. Enum members hash through a
# Python-level __hash__, so set membership costs a function call per check;
# plain attributes holding a bit and a bitmask cost one attribute load each.
for _i, _status in enumerate(JobStatus):
    _status._bit = 1 << _i  # type: ignore[attr-defined]
    _status._terminal = _status in _TERMINAL  # type: ignore[attr-defined]
for _status in JobStatus:
    _mask = 0
    for _target in TRANSITIONS.get(_status, ()):
        _mask |= _target._bit  # type: ignore[attr-defined]
    _status._allowed = _mask  # type: ignore[attr-defined]
del _i, _status, _mask, _target
