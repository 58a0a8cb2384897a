"""Enqueueing in the caller's own transaction: ``connection=`` on ``submit``
and ``enqueue`` (and so on ``f.options(...)``).

The job is checked and its row made as for any submit on a durable store,
then the store writes it through the caller's connection
(:meth:`JobStore.joined`), in the transaction the caller has open: it
exists if and only if the caller commits, and the store's wake-up of the
workers commits with it. Nothing of it enters this scheduler's own view
(``get``, ``join``): a transaction this process cannot see the end of may
still roll back. ``fetch``, ``wait`` and ``result`` read it from the store
once it is committed, as they read another process's jobs.

Nothing here touches the scheduler's loop-owned state, so it runs on the
caller's thread, whichever it is (a Django view's, with the app's producer
on a thread of its own): the caller's connection is used where the caller
uses it, and a synchronous driver's (sqlite3's may not move threads) is
called synchronously even from ``await s.enqueue(...)``, as the caller's
own statements on it are.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

from .._enums import JobStatus
from .._exceptions import SchedulerError, SchedulerStoppedError, UnknownJobError
from .._jobs import _markers
from .._jobs._ids import check_own_id, id_number
from .._jobs._job import Job
from ._state import _describe
from ._submission import _check_text_fields, _refuse_main, _resubmit_message, delay_until

if TYPE_CHECKING:
    from datetime import datetime

    from .._workflows._edges import DependsOn
    from ..store._joined import Joined
    from ..store._rows import NewJob
    from ._scheduler import JobScheduler

_PENDING = JobStatus.PENDING

_seq_lock = threading.Lock()
_last_seq = 0


def _next_seq() -> int:
    """Submit order, as the link's ``next_seq``: wall-clock microseconds,
    strictly increasing in this process (from any thread)."""
    global _last_seq
    with _seq_lock:
        _last_seq = max(_last_seq + 1, time.time_ns() // 1000)
        return _last_seq


def submit_joined(
    scheduler: JobScheduler,
    job: Job,
    connection: object,
    delay: float = 0.0,
    depends_on: DependsOn = (),
    at: datetime | None = None,
    job_id: str | None = None,
) -> str:
    """``submit(..., connection=conn)``: write the job through a synchronous
    driver's connection, in its open transaction; the job's id.

    :raises TypeError: ``connection`` is an async driver's (``submit`` is
        synchronous: ``await s.enqueue(..., connection=conn)`` takes it), or
        of a kind the store takes none of.
    """
    joined, row = _prepare(scheduler, job, connection, delay, depends_on, at, job_id)
    if joined.asynchronous:
        _undo(job)
        raise TypeError(
            f"{connection!r} is an async driver's connection, which the synchronous "
            "submit() and enqueue_sync() cannot use: `await s.enqueue(job, connection=conn)` "
            "(or `await f.options(connection=conn).enqueue(...)`) takes it"
        )
    try:
        number = joined.add(row, time.time())
    except BaseException:
        _undo(job)
        raise
    return _written(job, number, job_id)


async def enqueue_joined(
    scheduler: JobScheduler,
    job: Job,
    connection: object,
    delay: float = 0.0,
    depends_on: DependsOn = (),
    at: datetime | None = None,
    job_id: str | None = None,
) -> str:
    """``await s.enqueue(..., connection=conn)``: as :func:`submit_joined`,
    an async driver's connection awaited, a synchronous one called here."""
    link = scheduler._link
    if link is not None and (depends_on or _markers.MARKERS_MADE):
        # This path can read: the level check then has a fresh answer.
        await link.levels.refresh(retried=True)
    joined, row = _prepare(scheduler, job, connection, delay, depends_on, at, job_id)
    try:
        if joined.asynchronous:
            number = await joined.add_async(row, time.time())
        else:
            # The caller's thread, as the caller's own statements: see the module.
            number = joined.add(row, time.time())
    except BaseException:
        _undo(job)
        raise
    return _written(job, number, job_id)


def _prepare(
    scheduler: JobScheduler,
    job: Job,
    connection: object,
    delay: float,
    depends_on: DependsOn,
    at: datetime | None,
    job_id: str | None,
) -> tuple[Joined, NewJob]:
    """Every check and the row, before anything is written."""
    link = scheduler._link
    if link is None:
        raise ValueError(
            f"connection={connection!r}: the memory store keeps its jobs in this process, "
            "so there is no database transaction for them to join; give the scheduler (or "
            "the App) a durable store (sqlite:///... or postgresql://...), or enqueue "
            "without connection="
        )
    if at is not None:
        delay = delay_until(at, delay)
    if job_id is not None:
        check_own_id(job_id)
    if scheduler._run.stopping:
        raise SchedulerStoppedError(
            f"cannot enqueue {_describe(job)}: the scheduler is stopping or stopped (its "
            "store is closing); enqueue through a running one"
        )
    _check_job(job, delay)
    deps, run_on_failure, markers = _dependencies(job, depends_on)
    if markers or run_on_failure:  # workflow features: no worker may be older
        link.levels.check_cached(f"{_describe(job)} (a result marker or a 'run' edge)")
    joined = link.store.joined(connection)
    submission = scheduler._submission
    if submission.hooks:
        submission.run_hooks(job)
    return joined, _row(scheduler, job, delay, deps, run_on_failure, job_id)


def _check_job(job: Job, delay: float) -> None:
    """What ``Submission.check`` checks of the job itself (none of the
    scheduler's state: the caller's thread may not be the loop's)."""
    if Job not in type(job).__mro__ and not isinstance(job, Job):
        raise TypeError(f"enqueue() takes a jobsched.Job, got {job!r}")
    try:
        if job.seq or job.status is not _PENDING:
            raise SchedulerError(_resubmit_message(job))
    except AttributeError:
        raise TypeError(
            f"{type(job).__qualname__} was never initialised as a job: its __init__ must "
            "call super().__init__(name, ...), which gives the job its id and status"
        ) from None
    _check_text_fields(job)
    try:
        if not delay >= 0 or delay == float("inf"):
            raise ValueError(f"delay must be a finite number of seconds >= 0, got {delay!r}")
    except TypeError:
        raise TypeError(f"delay must be a number of seconds >= 0, got {delay!r}") from None


def _dependencies(job: Job, depends_on: DependsOn) -> tuple[tuple[int, ...], tuple[int, ...], bool]:
    """The upstream numbers (``depends_on``'s and the result markers'), and
    those whose edge has the ``"run"`` policy, and whether the job holds
    result markers: the store's add writes each
    edge with its policy, as a plain durable submit's does (its markers
    travel in the payload, or as tags in a registered job's JSON, and are
    bound when a member claims the job)."""
    if isinstance(depends_on, str):
        depends_on = (depends_on,)
    from ._edging import edges_of

    afters, inputs = edges_of(job, depends_on)  # marks the markers seen: they may be pickled
    numbers: dict[int, None] = {}
    lenient: list[int] = []
    unknown: list[str] = []
    for edge in afters:
        upstream = edge.job
        if type(upstream) is not str and not upstream.seq:  # type: ignore[union-attr]
            raise UnknownJobError(
                f"{_describe(job)} depends on {upstream!r}, which was never enqueued: "
                "enqueue it first (in this transaction too, with connection=)"
            )
        number = id_number(edge.job_id)
        if not number:
            unknown.append(edge.job_id)
            continue
        numbers[number] = None
        if edge.on_failure == "run":
            lenient.append(number)
    if unknown:
        raise UnknownJobError(
            f"{_describe(job)} depends on {unknown}, which are no job ids: pass the ids "
            "enqueue returned (or the jobs)"
        )
    return tuple(numbers), tuple(lenient), inputs is not None


def _row(
    scheduler: JobScheduler,
    job: Job,
    delay: float,
    deps: tuple[int, ...],
    run_on_failure: tuple[int, ...],
    job_id: str | None,
) -> NewJob:
    """The store's row for a checked job (as ``Submission.stored_row``,
    without this scheduler's view or id blocks: the store numbers it)."""
    from .._jobs._form import stored_form
    from ..store._rows import NewJob

    link = scheduler._link
    assert link is not None
    if job_id is not None:
        job._set_own_id(job_id)  # before the pickle: the payload carries the id
    args = job.args_json if getattr(type(job), "_jobsched_json", False) else None  # type: ignore[attr-defined]
    what = lambda: _describe(job)  # noqa: E731 - made only on an error
    try:
        payload = b"J" if args is not None else link.codec.dumps(stored_form(job), what)
        if b"__main__" in payload and link.store.fleet:
            _refuse_main(job, link.store.url)
    except TypeError:
        job._jobsched_id = 0
        raise
    wall = time.time()
    job.seq = _next_seq()
    job.submitted_at = wall  # the stored key compares across processes (see Submission.stored_row)
    strategy = scheduler._settings.strategy
    try:
        key = tuple(map(float, strategy.key(job)))
    except Exception as exc:
        _undo(job)
        raise TypeError(
            f"{_describe(job)} cannot be stored: the strategy "
            f"{type(strategy).__name__} must give a key of numbers for a durable "
            f"store ({type(exc).__name__}: {exc})"
        ) from exc
    now = scheduler._clock()
    job.submitted_at = now
    job.run_at = now + delay if delay > 0 else now
    return NewJob(
        job._jobsched_id if job_id is not None else 0,
        job.name,
        job.executor,
        key,
        run_at=wall + delay,
        submitted_at=wall,
        payload=payload,
        tenant=job.tenant,
        rate_key=job.rate_key,
        depends_on=deps,
        own_id=job_id is not None,
        queue=job.queue,
        args=args,
        run_on_failure=run_on_failure,
    )


def _undo(job: Job) -> None:
    """The job as it was before: it may be enqueued again."""
    job.seq = 0
    job._jobsched_id = 0


def _written(job: Job, number: int | None, job_id: str | None) -> str:
    if number is None:
        # An id of the caller's own that the store holds: that job stands,
        # as with any enqueue of an id held already.
        assert job_id is not None
        return job_id
    job._jobsched_id = number
    return f"job-{number}" if job_id is None else job_id
