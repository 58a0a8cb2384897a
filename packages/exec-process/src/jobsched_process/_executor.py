"""The ``process`` executor: runs ``run_sync()`` in a pool of killable worker processes."""

from __future__ import annotations

import logging
import math
import multiprocessing.util
import os
import pickle
import signal
from collections.abc import Callable
from typing import Any

import anyio
import anyio.to_thread

import jobsched

from . import _transfer, _wire, _worker
from ._errors import WorkerDiedError, describe_exit, rebuild_exception
from ._pool import WorkerProcess

__all__ = ["ProcessExecutor"]

logger = logging.getLogger("jobsched.process")


class ProcessExecutor(jobsched.Executor):
    """Runs each attempt in a worker process of a small pool of its own.

    **Why not** :class:`concurrent.futures.ProcessPoolExecutor`: it cannot
    stop one task (a timed-out job would keep its process busy and burning
    CPU), and when one worker dies the whole pool turns broken and fails
    every queued job. Here each worker runs one job at a time over its own
    pipe, so ending one job is ending its process, and a death costs only
    the attempt that was running there.

    **Shipping work**: the job is pickled with cloudpickle (a job class
    defined inside a function, or a ``FunctionJob`` around a lambda or a
    closure, travels by value) and only the return value comes back, so
    changes the job makes to its own fields are lost. A job or a result that
    cannot be pickled fails its attempt with :class:`jobsched.NonRetryableError`.
    An exception raised in the worker comes back with its type and message
    (and the worker's traceback as its ``__cause__``). The attempt's handle
    (:func:`jobsched.current_job`) goes with the job, pickled on its own,
    and a completion its ``complete_in`` wrote comes back with the reply;
    its ``progress`` comes back while it runs, at most once a second (and
    its last values before the reply).

    **Starting**: each worker is a fresh interpreter running this package's
    own entry point, so it never imports the application's ``__main__``
    (a script needs no ``if __name__ == "__main__":`` guard for this
    executor's sake). Workers get the parent's ``sys.path`` (also when it
    changes later), so job classes in the application's own modules import
    there. POSIX only: workers are ended by process group.

    **Big payloads** are pickled, sent, received and loaded in a thread, so
    the event loop does not stall on them; small ones stay on the loop.

    **Cancel and timeout**: the worker running the attempt and every process
    its job started (its process group) get SIGTERM, then SIGKILL after
    ``grace_period`` seconds; the attempt ends once the worker is gone, and
    the next job gets a fresh worker. **Death** of a worker
    mid-job (``os._exit``, a signal, a segfault) shows up as end-of-file on
    its pipe and fails that attempt with :class:`WorkerDiedError`, which says
    how it died; retries apply.

    Workers start lazily, one per concurrent attempt up to ``max_processes``
    (in parallel), and are reused across jobs. A start is not counted in
    the attempt: the job's timeout and its ``started_at`` count from the
    moment its worker is ready (see :func:`jobsched.setting_up`), on a cold
    pool and for the replacement of a killed worker alike. :meth:`shutdown` stops them all; the
    executor starts afresh if used again.

    :param max_processes: the most worker processes (and attempts running at
        once); ``os.cpu_count()`` by default.
    :param grace_period: seconds between SIGTERM and SIGKILL when a job is
        cancelled, times out or is shut down.
    """

    name = "process"

    def __init__(
        self,
        max_processes: int | None = None,
        grace_period: float = 0.5,
    ) -> None:
        if os.name != "posix":
            raise RuntimeError(
                "the process executor needs a POSIX system (Linux, macOS): it ends a "
                "job's processes by process group; use the thread executor here"
            )
        if max_processes is None:
            max_processes = os.cpu_count() or 1
        elif (
            not isinstance(max_processes, int)
            or isinstance(max_processes, bool)
            or max_processes < 1
        ):
            raise ValueError(
                f"max_processes must be an integer >= 1 (or None for os.cpu_count()), "
                f"got {max_processes!r}"
            )
        if not (isinstance(grace_period, (int, float)) and 0 <= grace_period < math.inf):
            raise ValueError(
                f"grace_period must be a finite number of seconds >= 0, got {grace_period!r}"
            )
        self._max_processes = max_processes
        # The scheduler holds jobs beyond it off its workers: a job's timeout
        # never counts a wait for a free process.
        self.capacity: int | None = max_processes
        self._grace = float(grace_period)
        # Made on first use (it belongs to an event loop), dropped by shutdown().
        self._slots: anyio.Semaphore | None = None
        self._idle: list[WorkerProcess] = []
        self._workers: set[WorkerProcess] = set()  # idle and busy
        self._in_flight = 0  # run() calls not finished yet
        self._drained: anyio.Event | None = None
        self._closing = False
        self._cancelling = False
        # Workers left running at interpreter exit (no shutdown()) would run
        # on with nobody to take their results: end them at exit (with
        # multiprocessing's exit hooks), and when the executor is
        # garbage-collected without a shutdown().
        multiprocessing.util.Finalize(self, _abandon_all, args=(self._workers,), exitpriority=10)

    @property
    def max_processes(self) -> int:
        """The most worker processes this executor runs at once."""
        return self._max_processes

    async def run(self, job: jobsched.Job) -> Any:
        """Run one attempt of ``job`` in a worker process; return its result."""
        if not callable(getattr(job, "run_sync", None)):
            raise TypeError(
                f"{type(job).__qualname__} has no `def run_sync(self)`; the process executor "
                "runs CpuBoundJob subclasses and FunctionJobs of plain functions"
            )
        current = _current_job()
        payload = await _pickle_job(job, current)
        if self._closing:
            raise jobsched.NonRetryableError(
                f"cannot run {_describe(job)}: the process executor is shutting down"
            )
        slots = self._slots
        if slots is None:
            slots = self._slots = anyio.Semaphore(self._max_processes)
        # Counted from the start, waiting for a slot included: shutdown()
        # waits for every run that began before it, so no worker they start
        # can outlive the pool.
        self._in_flight += 1
        try:
            async with slots:
                self._check_not_cancelled(job)
                worker = await self._checkout(job)
                if self._cancelling:
                    self._idle.append(worker)  # shutdown() stops it
                    self._check_not_cancelled(job)
                try:
                    reply = await worker.request(payload, _progress_of(current))
                except BaseException as exc:
                    died = isinstance(exc, (EOFError, OSError))
                    # Shielded: the process must be gone before the slot is
                    # reused, also when the attempt is being cancelled.
                    with anyio.CancelScope(shield=True):
                        self._workers.discard(worker)
                        exitcode = await worker.end(self._grace, polite=died)
                    if not died:
                        raise
                    if worker.stopped_by_shutdown:
                        self._check_not_cancelled(job)
                    raise WorkerDiedError(
                        f"the worker process (pid {worker.pid}) running {_describe(job)} "
                        f"died: {describe_exit(exitcode)}"
                    ) from None
                self._idle.append(worker)
        finally:
            self._in_flight -= 1
            if not self._in_flight and self._drained is not None:
                self._drained.set()
        return _unpickle_reply(reply, job, worker.pid, current)

    def _check_not_cancelled(self, job: jobsched.Job) -> None:
        if self._cancelling:
            raise jobsched.NonRetryableError(
                f"{_describe(job)} was stopped: the process executor was shut down with "
                "cancel_running=True"
            ) from None

    async def _checkout(self, job: jobsched.Job) -> WorkerProcess:
        """An idle worker, or a new one: the caller holds a slot, so there is room."""
        while self._idle:
            worker = self._idle.pop()
            if worker.alive():
                return worker
            # Died while idle (killed from outside): reap it, take another.
            self._workers.discard(worker)
            with anyio.CancelScope(shield=True):
                await worker.end(self._grace, polite=True)
        # A start is not the job's work: its timeout and its started_at count
        # from the moment the worker is ready, on a cold pool as for a
        # replacement of a killed worker.
        with jobsched.setting_up(job):
            return await self._start_worker(job)

    async def _start_worker(self, job: jobsched.Job) -> WorkerProcess:
        """Start a worker and wait until it is ready for a job."""
        # A job class unpickles from jobsched: the worker imports it as part of
        # its start. A plain FunctionJob's call needs no jobsched.
        preload = () if type(job) is jobsched.FunctionJob else ("jobsched",)
        # In a thread: forking a big parent takes a while.
        worker = await anyio.to_thread.run_sync(WorkerProcess.start, preload)
        self._workers.add(worker)
        try:
            await worker.wait_ready()
        except BaseException as exc:
            died = isinstance(exc, (EOFError, OSError))
            with anyio.CancelScope(shield=True):
                self._workers.discard(worker)
                exitcode = await worker.end(self._grace, polite=died)
            if not died:
                raise  # cancelled meanwhile: the half-started worker is gone
            if worker.stopped_by_shutdown:
                self._check_not_cancelled(job)
            raise WorkerDiedError(
                f"the worker process (pid {worker.pid}) started for {_describe(job)} died "
                f"before it was ready: {describe_exit(exitcode)}; the job did not start"
            ) from None
        return worker

    async def _wait_drained(self) -> None:
        while self._in_flight:
            self._drained = anyio.Event()
            try:
                await self._drained.wait()
            finally:
                self._drained = None

    async def shutdown(self, *, cancel_running: bool = False) -> None:
        """Stop every worker process; with ``cancel_running``, kill running jobs first.

        Without it, every :meth:`run` that began before the call is waited for;
        with it, running jobs are killed (their :meth:`run` raises
        :class:`jobsched.NonRetryableError`) and waiting ones refused. New
        calls are refused meanwhile. Returns once every worker process is
        gone; the executor starts new workers if used again.
        """
        if self._closing:
            return
        self._closing = True
        self._cancelling = cancel_running
        try:
            with anyio.CancelScope(shield=True):
                if cancel_running:
                    # The tasks running those jobs see their workers die and
                    # reap them; a job that traps SIGTERM gets SIGKILL.
                    busy = self._workers.difference(self._idle)
                    for worker in busy:
                        worker.stopped_by_shutdown = True
                        worker.signal_group(signal.SIGTERM)
                    with anyio.move_on_after(self._grace):
                        await self._wait_drained()
                    for worker in busy:
                        if worker.alive():
                            worker.signal_group(signal.SIGKILL)
                await self._wait_drained()
                idle_workers, self._idle = self._idle, []
                for worker in idle_workers:
                    worker.sock.close()  # end-of-file: the worker exits by itself
                for worker in idle_workers:
                    self._workers.discard(worker)
                    await worker.end(self._grace, polite=True)
        finally:
            self._slots = None
            self._closing = self._cancelling = False


def _describe(job: jobsched.Job) -> str:
    return f"{job.job_id} ({job.name!r})"


def _progress_of(current: jobsched.CurrentJob | None) -> Callable[[Any], None] | None:
    """What shows a job's progress sent from its worker: its handle here."""
    if current is None:
        return None

    def show(values: Any) -> None:
        try:
            current.progress(*values)
        except Exception:  # checked in the worker already: a bug, not the job's
            logger.exception("the progress %r of %s was not kept", values, current.job_id)

    return show


def _current_job() -> jobsched.CurrentJob | None:
    """The attempt this run() is for (None: run outside a scheduler's worker)."""
    try:
        return jobsched.current_job()
    except RuntimeError:
        return None


async def _pickle_job(job: jobsched.Job, current: jobsched.CurrentJob | None) -> _wire.Chunks:
    # A plain FunctionJob travels as its call, which the worker loads without
    # importing jobsched (a subclass may run something else: it goes whole).
    sent: Any = (
        _worker.Call(job.func, job.args, job.kwargs) if type(job) is jobsched.FunctionJob else job
    )
    # The attempt's handle (js.current_job() there) goes pickled on its own:
    # the worker loads it only if the job brought jobsched in, so a worker
    # that runs plain functions still never imports it.
    handle = None if current is None else pickle.dumps(current, protocol=pickle.HIGHEST_PROTOCOL)
    try:
        return await _transfer.dumps((sent, handle))
    except Exception as exc:
        raise jobsched.NonRetryableError(
            f"{_describe(job)} cannot be sent to a worker process: "
            f"{type(exc).__name__}: {exc}. A {type(job).__qualname__} and everything it "
            "holds must be picklable (with cloudpickle): keep locks, open files and "
            "connections out of the job, or create them inside run_sync()"
        ) from exc


def _unpickle_reply(
    message: Any, job: jobsched.Job, pid: int, current: jobsched.CurrentJob | None
) -> Any:
    kind = message[0]
    if current is not None and kind in (_worker.OK, _worker.RAISED, _worker.BAD_RESULT):
        # The job's complete_in() there, if it made one: before its outcome here.
        current.note_completed(message[-1])
    if kind == _transfer.UNLOADABLE:
        exc = message[1]
        raise jobsched.NonRetryableError(
            f"the result of {_describe(job)} cannot be loaded in this process: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    if kind == _worker.OK:
        return message[1]
    if kind == _worker.RAISED:
        error = rebuild_exception(*message[1:7])
        logger.debug("%s raised in worker process %d:\n%s", _describe(job), pid, message[5])
        raise error
    if kind == _worker.BAD_RESULT:
        raise jobsched.NonRetryableError(
            f"{_describe(job)} returned a {message[1]}, which cannot be sent back from the "
            f"worker process: {message[2]}; return plain data (numbers, strings, lists, "
            "dicts, dataclasses)"
        )
    # _worker.BAD_JOB
    logger.debug("worker process %d could not load %s:\n%s", pid, _describe(job), message[2])
    raise jobsched.NonRetryableError(
        f"the worker process could not load {_describe(job)}: {message[1]}; the job's "
        "class and what it holds must be importable in a fresh interpreter"
    )


def _abandon_all(workers: set[WorkerProcess]) -> None:
    for worker in list(workers):
        worker.abandon()
    workers.clear()
