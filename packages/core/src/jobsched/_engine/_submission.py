"""Submitting: every check before any change, dependencies, schedules."""

from __future__ import annotations

import math
import time
from _thread import get_ident  # threading's, without importing threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .._enums import JobStatus
from .._exceptions import (
    SchedulerError,
    SchedulerStoppedError,
    UnknownJobError,
)
from .._jobs._executor import Executor
from .._jobs._ids import check_own_id, id_number, own_number
from .._jobs._job import Job
from .._jobs._text import check_text
from .._log import logger
from .._ordering._admission import Admission, executor_capacity
from ._outcomes import Outcomes
from ._state import _describe

if TYPE_CHECKING:
    # Imported where they are used, not here: asyncio, anyio.abc,
    # anyio.lowlevel, anyio.from_thread, logging, traceback and the cron
    # module (datetime) would triple the cost of `import jobsched`; and the
    # store seam (its dataclasses), which only a durable store needs.
    from datetime import datetime

    from ..store._rows import NewJob

_PENDING = JobStatus.PENDING
_COMPLETED = JobStatus.COMPLETED
_CANCELLED = JobStatus.CANCELLED


class Submission(Outcomes):
    """Accepts jobs and schedules; refuses bad ones before changing anything."""

    def submit(
        self,
        job: Job,
        *,
        delay: float = 0.0,
        depends_on: Iterable[str] = (),
        at: datetime | None = None,
        job_id: str | None = None,
        connection: object = None,
    ) -> str:
        """Queue ``job`` and return its id. Works before and after :meth:`start`.

        :param delay: seconds before the job may start.
        :param at: an aware datetime before which the job may not start,
            instead of ``delay`` (a time in the past runs now).
        :param job_id: an id of your own instead of a numbered ``job-<n>``:
            a non-empty str of at most 200 characters not starting with
            ``job-``. Idempotent: if the store already holds a job with this
            id (unfinished, or finished and kept under ``history_limit``),
            nothing is added and that job stands; the id is returned either
            way. On a durable store the store decides, so exactly one job
            has the id whichever members submit it at once.
        :param depends_on: ids of jobs that must complete first. They must
            already be submitted, which makes cycles impossible.
        :param connection: a synchronous database connection with a
            transaction open (on a durable store): the job is written in
            that transaction, and exists if and only if it commits
            (docs/stores.md, "Enqueue in your own transaction").
        :raises SchedulerStoppedError: :meth:`stop` has begun.
        :raises SchedulerError: the job was already submitted.
        :raises UnknownJobError: a dependency is unknown.
        :raises ExecutorNotFoundError: the job's executor is not installed.
        :raises ValueError: ``at`` is naive, or given with a non-zero ``delay``.
        """
        if connection is not None:
            from ._joined import submit_joined

            return submit_joined(self, job, connection, delay, depends_on, at, job_id)  # type: ignore[arg-type]
        if at is not None:
            delay = delay_until(at, delay)
        if job_id is not None:
            check_own_id(job_id)
        if self._run.stopping:
            raise SchedulerStoppedError(
                f"cannot submit {_describe(job)}: the scheduler is stopping or stopped; "
                "submit before stop(), or create a new JobScheduler"
            )
        deps = self._check_submit(job, delay, depends_on)
        if job_id is not None and own_number(job_id) in self._table.jobs:
            return job_id  # held here already: that job stands
        if self._submit_hooks:
            self._run_submit_hooks(job)
        return self._add(job, delay, deps, job_id)

    def _run_submit_hooks(self, job: Job) -> None:
        for hook in self._submit_hooks:
            try:
                hook(job)
            except Exception:  # a bad hook must not refuse the job
                logger.exception("submit hook %r failed on %s", hook, _describe(job))

    def _stored_row(
        self, job: Job, delay: float, deps: list[int], job_id: str | None = None
    ) -> NewJob:
        """The store's row for a checked job, which this process now knows."""
        from .._jobs._form import stored_form
        from ..store._rows import NewJob

        link = self._link
        assert link is not None
        if job_id is None:
            number = job._jobsched_id = link.next_id()
        else:
            job._set_own_id(job_id)  # before the pickle: the payload carries the id
            number = job._jobsched_id
        # A registered job (@app.job) is its name and JSON arguments: nothing to pickle.
        args = job.args_json if getattr(type(job), "_jobsched_json", False) else None  # type: ignore[attr-defined]
        what = lambda: _describe(job)  # noqa: E731 - made only on an error
        try:
            payload = b"J" if args is not None else link.codec.dumps(stored_form(job), what)
            # A cheap look first: the name is in the pickle of anything from
            # __main__ (and rarely otherwise).
            if b"__main__" in payload and link.store.fleet:
                _refuse_main(job, link.store.url)
        except TypeError:
            job._jobsched_id = 0
            raise
        now = self._clock()
        wall = time.time()
        job.seq = link.next_seq()
        job.run_at = now + delay if delay > 0 else now
        # The stored key must compare across processes: wall-clock submit time
        # (aging reads it), not this process's monotonic clock.
        job.submitted_at = wall
        strategy = self._settings.strategy
        try:
            key = tuple(map(float, strategy.key(job)))
        except Exception as exc:
            job._jobsched_id = job.seq = 0
            raise TypeError(
                f"{_describe(job)} cannot be stored: the strategy "
                f"{type(strategy).__name__} must give a key of numbers for a durable "
                f"store ({type(exc).__name__}: {exc})"
            ) from exc
        finally:
            job.submitted_at = now
        self._table.jobs[number] = job
        self._table.unfinished += 1
        return NewJob(
            number,
            job.name,
            job.executor,
            key,
            run_at=wall + delay,
            submitted_at=wall,
            payload=payload,
            tenant=job.tenant,
            rate_key=job.rate_key,
            depends_on=tuple(deps),
            own_id=job_id is not None,
            queue=job.queue,
            args=args,
        )

    def submit_threadsafe(
        self,
        job: Job,
        *,
        delay: float = 0.0,
        depends_on: Iterable[str] = (),
        at: datetime | None = None,
        job_id: str | None = None,
    ) -> str:
        """Submit from another thread once the scheduler has started; returns the job id.

        It runs :meth:`submit` on the event-loop thread and waits for it, so
        when it returns :meth:`get` knows the id, and it raises in the calling
        thread whatever :meth:`submit` raises.

        :raises SchedulerError: not started yet, or called on the event-loop
            thread itself (where it would wait for itself: call :meth:`submit`).
        """
        token = self._run.loop_token
        if token is None:
            raise SchedulerError(
                "submit_threadsafe() needs a started scheduler: start() it first, "
                "or call submit() from the event-loop thread"
            )
        if self._run.stopping:
            raise SchedulerStoppedError(
                f"cannot submit {_describe(job)}: the scheduler is stopping or stopped"
            )
        if get_ident() == self._run.loop_thread:
            raise SchedulerError(
                "submit_threadsafe() was called on the scheduler's event-loop thread, where "
                "it would wait for the loop it blocks: call submit() there instead"
            )
        import anyio.from_thread

        try:
            return anyio.from_thread.run_sync(
                lambda: self.submit(job, delay=delay, depends_on=depends_on, at=at, job_id=job_id),
                token=token,
            )
        except anyio.RunFinishedError:
            raise SchedulerStoppedError(
                f"cannot submit {_describe(job)}: the scheduler's event loop has ended"
            ) from None

    def _check_submit(self, job: Job, delay: float, depends_on: Iterable[str]) -> list[int]:
        """Every check submit() makes, before it changes any state."""
        # Job is an ABC, whose isinstance() runs Python code; a look along the
        # MRO answers for every real subclass at a fraction of the cost.
        if Job not in type(job).__mro__ and not isinstance(job, Job):
            raise TypeError(f"submit() takes a jobsched.Job, got {job!r}")
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
            if not delay >= 0 or delay == math.inf:
                raise ValueError(f"delay must be a finite number of seconds >= 0, got {delay!r}")
        except TypeError:
            raise TypeError(f"delay must be a number of seconds >= 0, got {delay!r}") from None
        if isinstance(depends_on, str):
            depends_on = (depends_on,)
        deps: list[int] = []
        if depends_on:
            jobs = self._table.jobs
            unknown = []
            # On a durable store a dependency this process doesn't know may
            # be in the store (another process, or before a restart): the
            # store's add decides, and cancels the job if it holds no such job.
            shared = self._link is not None
            for dep_id in dict.fromkeys(depends_on):
                number = id_number(dep_id)
                if number in jobs or (shared and number):
                    deps.append(number)
                else:
                    unknown.append(dep_id)
            if unknown:
                raise UnknownJobError(
                    f"{_describe(job)} depends on unknown job(s) {unknown}: submit "
                    "dependencies first (finished jobs are forgotten after history_limit)"
                )
        if self._served_here is not None and job.queue not in self._served_here:
            raise ValueError(
                f"{_describe(job)} is on queue {job.queue!r}, which this scheduler does not "
                f"serve (queues={sorted(self._served_here)}), and on the memory store nothing "
                f"else would run it: add {job.queue!r} to queues=, or submit it elsewhere"
            )
        name = job.executor
        # A producer runs nothing, so it needs no executor: the workers load theirs.
        if name not in self._executors and self._settings.num_workers:
            self._executors.ensure(name, self._backing.executor_loaded)
        return deps

    def _executor_loaded(self, name: str, executor: Executor) -> None:
        """In memory, an executor plugin was loaded on first use: hold jobs to
        its capacity (see MemoryBacking.executor_loaded)."""
        capacity = executor_capacity(name, executor)
        if capacity is None:
            return
        if self._admission is None:
            # Workers read take_next before each job, so they use it at once.
            self._admission = Admission(
                self._queue, self._settings.strategy.key, self._backing.release, self._clock, {}, {}
            )
            self._backing.take_next = self._admission.take
            self._cancelling.admission = self._admission
        self._admission.limit(name, capacity)

    def _block_on(self, job: Job, deps: list[int]) -> None:
        jobs = self._table.jobs
        # One loop, not a set comprehension after a check (3.10 and 3.11 give
        # a comprehension a frame of its own): the first upstream that ended
        # other than COMPLETED cancels the job, before anything is changed.
        unmet = set()
        for dep in deps:
            status = jobs[dep].status
            if status is not _COMPLETED:
                if status._terminal:  # type: ignore[attr-defined]
                    self._finish(job, _CANCELLED, f"upstream job-{dep} {status.value}")
                    return
                unmet.add(dep)
        if not unmet:
            self._backing.release(job, self._clock())
            return
        number = job._jobsched_id
        self._blocked[number] = unmet
        for dep in unmet:
            self._dependents.setdefault(dep, []).append(number)


def _check_text_fields(job: Job) -> None:
    """ValueError if ``job``'s name, tenant or rate key holds a character no
    store can keep. Checked here, not only when the job is made: the name
    and the labels can be set afterwards."""
    # On every submit: plain ASCII without NUL (most text) costs two scans
    # in C and no call; check_text looks closer at the rest.
    name = job.name
    if type(name) is str and ("\x00" in name or not name.isascii()):
        check_text("name", name)
    options = job._options
    if type(options) is tuple:  # a job with labels (see Job._options)
        tenant = options[1]
        if type(tenant) is str and ("\x00" in tenant or not tenant.isascii()):
            check_text("tenant", tenant)
        rate_key = options[2]
        if type(rate_key) is str and ("\x00" in rate_key or not rate_key.isascii()):
            check_text("rate_key", rate_key)


def _refuse_main(job: Job, url: str) -> None:
    """TypeError if what ``job`` pickles refers to a class or function of ``__main__``."""
    import io
    import pickle

    from .._jobs._form import stored_form

    found: list[str] = []

    class Finder(pickle.Pickler):
        def reducer_override(self, obj: object) -> Any:
            # Called for classes and functions too (saved by reference).
            if getattr(obj, "__module__", None) == "__main__" and (
                isinstance(obj, type) or callable(obj)
            ):
                found.append(getattr(obj, "__qualname__", repr(obj)))
            return NotImplemented

    Finder(io.BytesIO(), protocol=pickle.HIGHEST_PROTOCOL).dump(stored_form(job))
    if found:
        names = ", ".join(dict.fromkeys(found))
        raise TypeError(
            f"{_describe(job)} cannot be stored in {url}: it refers to {names} defined in "
            "__main__ (the script that submits it), which the other members cannot import "
            "(their __main__ is another program): move it into a module (e.g. tasks.py) "
            "and import it from there"
        )


def delay_until(at: object, delay: float) -> float:
    """The delay in seconds that ``at=`` (an aware datetime) stands for; 0 if it is past."""
    from datetime import datetime

    if not isinstance(at, datetime):
        raise TypeError(f"at must be an aware datetime.datetime, got {at!r}")
    if at.tzinfo is None or at.utcoffset() is None:
        raise ValueError(
            f"at must be an aware datetime, got the naive {at!r}: give it a timezone, "
            "e.g. datetime.now(timezone.utc) + timedelta(minutes=5)"
        )
    if delay != 0:
        raise ValueError(f"pass at= or delay=, not both (got at={at!r} and delay={delay!r})")
    # Both sides on the wall clock: a scheduler's own clock may be virtual.
    return max(0.0, at.timestamp() - time.time())


def _resubmit_message(job: Job) -> str:
    return (
        f"{_describe(job)} was already submitted (status {job.status.value}); "
        "a job runs once: create a new job object to run the work again"
    )
