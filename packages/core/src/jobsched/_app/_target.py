"""Where an enqueue goes: the test recorder, the app's scheduler running on
the caller's loop, or the app's producer (a BackgroundScheduler with no
workers on its own thread).

An enqueue in the caller's own transaction (``connection=``) is written on
the caller's thread whichever scheduler's store it uses: the connection is
the caller's, used where the caller uses it (see ``_engine._joined``)."""

from __future__ import annotations

from _thread import get_ident
from functools import partial
from typing import TYPE_CHECKING, Any

from .._engine._state import STARTED
from .._exceptions import SchedulerError
from .._jobs._job import Job
from .._workflows._edges import After

if TYPE_CHECKING:
    from .._engine._scheduler import JobScheduler
    from ._app import App


def _running(app: App) -> list[JobScheduler]:
    return [s for s in list(app._built) if s._run.phase == STARTED and not s._run.stopping]


def _submit_options(submit: dict[str, Any]) -> dict[str, Any]:
    deps = submit.get("depends_on")
    if deps:
        # Jobs stand for their ids; a job must have been submitted first.
        submit = {**submit, "depends_on": [_dep_id(d) for d in deps]}
    return submit


def _dep_id(dep: Job | str | After) -> str | After:
    if isinstance(dep, str):
        return dep
    if isinstance(dep, After):
        # An edge keeps its policy; a Job it names must have been enqueued.
        return dep if isinstance(dep.job, str) else After(_dep_id(dep.job), dep.on_failure)  # type: ignore[arg-type]
    if not dep.seq:
        raise ValueError(
            f"depends_on={dep!r}: that job was never enqueued, so nothing could complete "
            "it: enqueue it first (or pass its id)"
        )
    return dep.job_id


async def enqueue_async(app: App, job: Job, submit: dict[str, Any]) -> str:
    """``await f.enqueue(...)``: the job's id once it is committed."""
    testing = app._testing
    if testing is not None:
        return testing.record(job, submit)
    submit = _submit_options(submit)
    here = get_ident()
    for scheduler in _running(app):
        if scheduler._run.loop_thread == here:
            return await scheduler.enqueue(job, **submit)
    producer = app._producer_for("enqueue()")
    if "connection" in submit:
        from .._engine._joined import enqueue_joined

        connection = submit.pop("connection")
        return await enqueue_joined(producer.scheduler, job, connection, **submit)
    import anyio.to_thread

    # The producer's submit blocks until the commit: off this loop.
    return await anyio.to_thread.run_sync(partial(producer.submit, job, **submit))


def enqueue_sync(app: App, job: Job, submit: dict[str, Any]) -> str:
    """``f.enqueue_sync(...)``: the job's id once it is committed, from any thread."""
    testing = app._testing
    if testing is not None:
        return testing.record(job, submit)
    submit = _submit_options(submit)
    here = get_ident()
    running = _running(app)
    if "connection" in submit:
        # Written here, waiting for no commit of the scheduler's: on its
        # loop's thread too.
        from .._engine._joined import submit_joined

        connection = submit.pop("connection")
        scheduler = running[0] if running else app._producer_for("enqueue_sync()").scheduler
        return submit_joined(scheduler, job, connection, **submit)
    for scheduler in running:
        if scheduler._run.loop_thread == here:
            raise SchedulerError(
                "enqueue_sync() was called on the event-loop thread of the app's scheduler, "
                "where waiting for the commit would block the loop that makes it: use "
                "`await f.enqueue(...)` there"
            )
    for scheduler in running:
        token = scheduler._run.loop_token
        if token is not None:
            import anyio.from_thread

            try:
                return anyio.from_thread.run(partial(scheduler.enqueue, job, **submit), token=token)
            except anyio.RunFinishedError:
                continue  # stopped meanwhile: the next one, or the producer
    return app._producer_for("enqueue_sync()").submit(job, **submit)
