"""Submitting: every check before any change, the submit hooks, the stored row."""

from __future__ import annotations

import math
import time
from _thread import get_ident  # threading's, without importing threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._enums import JobStatus
from .._exceptions import (
    SchedulerError,
    SchedulerStoppedError,
)
from .._jobs import _markers
from .._jobs._ids import id_number
from .._jobs._job import Job
from .._jobs._options import delay_until as delay_until  # submit's, and _joined's
from .._jobs._text import check_text
from .._log import logger
from ._state import _describe

if TYPE_CHECKING:
    from .._workflows._edges import DependsOn

    # Imported where they are used, not here: asyncio, anyio.abc,
    # anyio.lowlevel, anyio.from_thread, logging, traceback and the cron
    # module (datetime) would triple the cost of `import jobsched`; and the
    # store seam (its dataclasses), which only a durable store needs.
    from ..store._rows import NewJob
    from ._backing import Backing
    from ._executors import ExecutorSet
    from ._link import StoreLink
    from ._state import JobTable, RunState, Settings, SubmitHook

_PENDING = JobStatus.PENDING


class Submission:
    """Accepts jobs: every check before any change; the submit hooks.

    ``JobScheduler.submit`` keeps the orchestration (a delegate would cost
    the hot path a frame) and calls :meth:`check` and the backing's ``add``,
    each bound once.
    """

    __slots__ = (
        "_backing",
        "_clock",
        "_elsewhere",
        "_executors",
        "_link",
        "_run",
        "_served_here",
        "_settings",
        "_table",
        "hooks",
    )

    def __init__(
        self,
        table: JobTable,
        run: RunState,
        settings: Settings,
        executors: ExecutorSet,
        backing: Backing,
        link: StoreLink | None,
    ) -> None:
        # link: a durable store's, for stored_row (None in memory).
        self._table = table
        self._run = run
        self._settings = settings
        self._clock = settings.clock
        self._executors = executors
        self._backing = backing
        self._link = link
        #: Whether a dependency unknown here may be in the store (the
        #: backing's flag, read once: submit tests it per dependency).
        self._elsewhere = backing.dependencies_elsewhere
        #: The queues check refuses others of (memory: ``queues``; durable:
        #: None, a job of another queue waits in the store for a member that
        #: serves it).
        self._served_here = backing.served(settings.queues)
        #: ``add_submit_hook``'s hooks, run by submit after its checks.
        self.hooks: list[SubmitHook] = []

    def run_hooks(self, job: Job) -> None:
        for hook in self.hooks:
            try:
                hook(job)
            except Exception:  # a bad hook must not refuse the job
                logger.exception("submit hook %r failed on %s", hook, _describe(job))

    def check(self, job: Job, delay: float, depends_on: DependsOn) -> list[int]:
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
        deps: list[int] = []
        if _markers.MARKERS_MADE:
            # Once a result marker exists in this process any job may hold one.
            deps = self.flow_edges(job, depends_on)
        elif depends_on or depends_on == "":
            # Tested here, not before: a job without dependencies pays little
            # ("" is an id, and unknown: its error, not "no dependency").
            if isinstance(depends_on, str):
                depends_on = (depends_on,)
            jobs = self._table.jobs
            unknown: list[Any] = []
            # On a durable store a dependency this process doesn't know may
            # be in the store (another process, or before a restart): the
            # store's add decides, and cancels the job if it holds no such job.
            shared = self._elsewhere
            try:
                for dep_id in dict.fromkeys(depends_on):  # type: ignore[arg-type]
                    number = id_number(dep_id)
                    if number in jobs or (shared and number):
                        deps.append(number)
                    else:
                        unknown.append(dep_id)
            except TypeError:  # one Job or After, not in a list
                unknown.append(depends_on)
            if unknown:
                # Jobs and After edges land here too (their id_number is 0);
                # what the loop took (depends_on may be a spent generator).
                deps = list(dict.fromkeys(deps + self.flow_edges(job, unknown)))
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

    def check_alone(self, job: Job, delay: float) -> None:
        """``check``'s checks but the dependencies, for a job of a workflow
        (whose upstreams may be jobs of it not yet numbered: the Workflows
        part checks those); cold, so it need not be ``check`` inlined."""
        if not isinstance(job, Job):
            raise TypeError(f"a workflow takes jobsched.Job objects, got {job!r}")
        if job.seq or job.status is not _PENDING:
            raise SchedulerError(_resubmit_message(job))
        _check_text_fields(job)
        if isinstance(delay, bool) or not isinstance(delay, (int, float)):
            raise TypeError(f"delay must be a number of seconds >= 0, got {delay!r}")
        if not delay >= 0 or delay == math.inf:
            raise ValueError(f"delay must be a finite number of seconds >= 0, got {delay!r}")
        if self._served_here is not None and job.queue not in self._served_here:
            raise ValueError(
                f"{_describe(job)} is on queue {job.queue!r}, which this scheduler does not "
                f"serve (queues={sorted(self._served_here)}): add {job.queue!r} to queues="
            )
        name = job.executor
        if name not in self._executors and self._settings.num_workers:
            self._executors.ensure(name, self._backing.executor_loaded)

    def flow_edges(self, job: Job, depends_on: DependsOn) -> list[int]:
        """``check``'s dependencies when they are more than ids known here: Jobs,
        ``js.After`` edges, result markers (see ``_edging``)."""
        from ._edging import resolve

        return resolve(job, depends_on, self._table.jobs, self._elsewhere)

    def stored_row(
        self,
        job: Job,
        delay: float,
        deps: list[int],
        job_id: str | None = None,
        adopt: bool = True,
        workflow: int | None = None,
    ) -> NewJob:
        """The store's row for a checked job, which this process now knows
        (with ``adopt``; a workflow's jobs are adopted once the store took
        them all, see ``_storedflows``)."""
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
        if adopt:
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
            # Most jobs have no _flow: no call for them.
            run_on_failure=() if job._flow is None else _lenient(job, deps),
            workflow=workflow,
        )

    def threadsafe(self, job: Job, submit: Callable[[], str]) -> str:
        """``submit_threadsafe``: ``submit()`` (submit's call with its
        arguments) run on the event-loop thread, waited for here."""
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
            return anyio.from_thread.run_sync(submit, token=token)
        except anyio.RunFinishedError:
            raise SchedulerStoppedError(
                f"cannot submit {_describe(job)}: the scheduler's event loop has ended"
            ) from None


def _lenient(job: Job, deps: list[int]) -> tuple[int, ...]:
    """The upstreams among ``deps`` whose edge has the "run" policy (the
    job's ``_flow.lenient`` ids, as the store's numbers)."""
    flow = job._flow
    if flow is None or not flow.lenient:
        return ()
    return tuple(n for n in (id_number(i) for i in flow.lenient) if n in deps)


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


def _resubmit_message(job: Job) -> str:
    return (
        f"{_describe(job)} was already submitted (status {job.status.value}); "
        "a job runs once: create a new job object to run the work again"
    )
