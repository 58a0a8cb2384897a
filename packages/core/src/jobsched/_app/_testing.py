"""``app.testing()``: record what is enqueued instead of storing it, then
assert on it or run it here."""

from __future__ import annotations

import threading
from types import TracebackType
from typing import TYPE_CHECKING, Any

from .._jobs import _json
from .._jobs._job import Job
from .._jobs._registered import RegisteredJob
from ._function import JobFunction, encode_arguments

if TYPE_CHECKING:
    from ._app import App


class Testing:
    """What ``with app.testing() as t:`` gives: every ``enqueue`` and
    ``enqueue_sync`` of the app inside the block is recorded here (nothing is
    stored, no producer starts), and returns the job's id as usual."""

    def __init__(self, app: App) -> None:
        self._app = app
        self._previous: Testing | None = None
        self._lock = threading.Lock()
        #: Recorded, in order: (job, its submit options), not yet run.
        self._pending: list[tuple[Job, dict[str, Any]]] = []
        self._all: list[Job] = []
        self._ids: set[str] = set()

    def __enter__(self) -> Testing:
        self._previous, self._app._testing = self._app._testing, self
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._app._testing = self._previous

    def record(self, job: Job, submit: dict[str, Any]) -> str:
        """Record an enqueue; its id (an own ``job_id`` recorded already adds nothing).

        An enqueue in the caller's transaction (``connection=``) is recorded
        as any other: nothing is written, so there is nothing to roll back."""
        submit = {k: v for k, v in submit.items() if k != "connection"}
        own = submit.get("job_id")
        if own is not None:
            from .._jobs._ids import check_own_id

            check_own_id(own)
            job._set_own_id(own)
        job_id = job.job_id
        deps = submit.get("depends_on") or ()
        # Ids, and After edges (their policy kept) over ids.
        deps = [d if isinstance(d, str) else _edge(d) for d in deps]
        submit = {**submit, "depends_on": deps}
        with self._lock:
            if job_id in self._ids:
                return job_id  # as a store does: the job with that id stands
            unknown = [d for d in map(_id, submit["depends_on"]) if d not in self._ids]
            if unknown:
                from .._exceptions import UnknownJobError

                raise UnknownJobError(
                    f"{job.name} depends on job(s) {unknown}, which were not enqueued in "
                    "this app.testing() block: enqueue dependencies first"
                )
            self._ids.add(job_id)
            self._pending.append((job, submit))
            self._all.append(job)
        return job_id

    def enqueued(self, f: JobFunction[Any, Any] | str | None = None) -> list[Job]:
        """The jobs enqueued in the block, in order (of ``f`` only, a
        JobFunction or a registered name, if given)."""
        name = f.name if isinstance(f, JobFunction) else f
        with self._lock:
            return [job for job in self._all if name is None or job.name == name]

    def assert_enqueued(self, f: JobFunction[Any, Any], *args: Any, **kwargs: Any) -> Job:
        """The job of a call of ``f`` with these arguments (compared as stored:
        after JSON); with no arguments, any call of ``f``.

        :raises AssertionError: no such call, listing what was enqueued.
        """
        if not isinstance(f, JobFunction):
            raise TypeError(f"assert_enqueued() takes a JobFunction (from @app.job), got {f!r}")
        jobs = self.enqueued(f)
        if not args and not kwargs:
            if jobs:
                return jobs[0]
        else:
            wanted = _as_stored(f, f._bind(args, kwargs))
            for job in jobs:
                if _arguments(job) == wanted:
                    return job
        listing = "\n".join(f"  {_describe(job)}" for job in self.enqueued()) or "  (nothing)"
        raise AssertionError(
            f"no call {f.name}({_call(args, kwargs)}) was enqueued; enqueued:\n{listing}"
        )

    async def run(self) -> list[Job]:
        """Run the recorded jobs (and what they enqueue, and their dependents)
        in this process until none is left; return them, finished, in order.
        Delays are not waited for."""
        from .._engine._scheduler import JobScheduler

        settings = self._app.settings()
        scheduler = JobScheduler(executors=settings.get("executors"))
        scheduler._use_registry(self._app._jobs)
        ran: list[Job] = []
        async with scheduler:
            while True:
                with self._lock:
                    batch, self._pending = self._pending, []
                if not batch:
                    break
                for job, submit in batch:
                    deps = [d for d in submit.get("depends_on", ()) if _held(scheduler, _id(d))]
                    scheduler.submit(job, depends_on=deps, job_id=submit.get("job_id"))
                    ran.append(job)
                await scheduler.join()
        return ran

    def run_sync(self) -> list[Job]:
        """:meth:`run` from synchronous code (not inside a running event loop)."""
        import anyio

        return anyio.run(self.run)


def _held(scheduler: Any, job_id: str) -> bool:
    from .._exceptions import UnknownJobError

    try:
        scheduler.get(job_id)
    except UnknownJobError:
        return False  # ran in an earlier run(): done with
    return True


def _arguments(job: Job) -> Any:
    """A recorded job's arguments by parameter name, as the run will see them."""
    if isinstance(job, RegisteredJob):
        return job.arguments
    function = getattr(job, "func", None)
    if isinstance(function, JobFunction):  # serializer="pickle"
        return _as_stored(function, function._bind(job.args, job.kwargs))  # type: ignore[attr-defined]
    return None


def _as_stored(function: JobFunction[Any, Any], arguments: dict[str, Any]) -> Any:
    if function._spec.serializer == "pickle":
        return dict(arguments)
    return _json.loads(encode_arguments(function, dict(arguments)))


def _call(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    return ", ".join([*map(repr, args), *(f"{k}={v!r}" for k, v in kwargs.items())])


def _describe(job: Job) -> str:
    arguments = _arguments(job)
    shown = "" if arguments is None else ", ".join(f"{k}={v!r}" for k, v in arguments.items())
    return f"{job.job_id}: {job.name}({shown})"


def _edge(dep: Any) -> Any:
    """A Job as its id; an After over a Job as an After over its id."""
    from .._workflows._edges import After

    if isinstance(dep, After):
        return dep if isinstance(dep.job, str) else After(dep.job.job_id, dep.on_failure)
    return dep.job_id


def _id(dep: Any) -> str:
    return dep if isinstance(dep, str) else dep.job_id
