"""The ``dask`` executor: each attempt is one task on a Dask distributed cluster."""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import itertools
import logging
import threading
import uuid
from typing import TYPE_CHECKING, Any, cast

import anyio
import anyio.to_thread
import distributed

import jobsched

from . import _spawn
from ._bridge import ClientLoopState, waker
from ._task import EscapedBaseException, as_attempt

if TYPE_CHECKING:
    from tornado.platform.asyncio import BaseAsyncIOLoop

__all__ = ["DaskExecutor", "TaskLostError"]

logger = logging.getLogger("jobsched.dask")


class TaskLostError(ConnectionError):
    """An attempt's Dask task was cancelled or lost outside jobsched: the
    scheduler restarted or dropped the connection, another client cancelled
    it, or the executor was shut down under it. Retryable."""


class DaskExecutor(jobsched.Executor):
    """Runs ``job.run_sync()`` (a ``BlockingJob``, ``CpuBoundJob`` or a
    ``FunctionJob`` of a plain function) as one task on a Dask cluster.

    **Where.** With ``address`` (``"tcp://scheduler:8786"``, or a Dask
    ``Cluster`` object) it connects to that scheduler; without, it starts a
    :class:`distributed.LocalCluster`, configured by ``client_options`` (such
    as ``n_workers=2, processes=False``). Nothing starts until the first
    attempt. Each attempt is one task under a key unique to the job and the
    attempt (two jobs with equal arguments are two runs). The job and its
    result travel with Dask's own serialisation (cloudpickle), so the workers
    need ``jobsched-core[dask]`` and the job's own modules installed. The
    worker processes of a ``LocalCluster`` it starts never import the
    application's ``__main__`` (as the process executor's workers): a script
    without an ``if __name__ == "__main__":`` guard runs once.

    **Bridge.** The Dask client runs its own event loop in a thread of its
    own; each attempt is a coroutine on that loop, and its end wakes the
    scheduler's loop (asyncio or trio) without blocking either. Attempts that
    start together are submitted in one message, and results that come in
    together are fetched in one gather.

    **Cancel and timeout.** The attempt ends at once with the scheduler's
    status and the task's future is cancelled. Dask cannot interrupt a
    running task, so the executor also sets the attempt's cancel flag (a
    :class:`distributed.Event` on the scheduler), and
    :func:`jobsched.cancel_requested` turns True inside the job: poll it in
    long loops. Whatever the job then returns or raises is dropped.

    **The attempt's handle.** :func:`jobsched.current_job` in the job names
    its ``job_id`` and ``attempt``; its ``progress()`` is taken without
    error and goes nowhere (a running task has no way back but its
    result), and ``complete_in()`` raises :class:`jobsched.SchedulerError`.

    **Failures.** An exception raised in the job reaches the scheduler with
    its type and message. A worker that dies mid-task fails the attempt with
    :class:`distributed.KilledWorker` once the Dask scheduler gives up on the
    task (at once on a cluster this executor starts; after
    ``distributed.scheduler.allowed-failures`` deaths on a cluster you
    give it); jobsched's retry policy applies.

    :param address: the scheduler's address or a ``Cluster``; ``None`` starts
        a ``LocalCluster``.
    :param client_options: passed to :class:`distributed.Client` (and, with
        no address, on to the ``LocalCluster``).
    """

    name = "dask"

    def __init__(self, address: Any = None, **client_options: Any) -> None:
        if not (
            address is None or isinstance(address, str) or hasattr(address, "scheduler_address")
        ):
            raise TypeError(
                f"address must be a scheduler address such as 'tcp://scheduler:8786', a Dask "
                f"Cluster object, or None to start a LocalCluster; got {address!r}"
            )
        if "asynchronous" in client_options:
            raise ValueError(
                "the dask executor runs its client on a loop thread of its own; "
                "drop the 'asynchronous' option"
            )
        self._address = address
        self._options = client_options
        self._client: distributed.Client | None = None
        self._state: ClientLoopState | None = None
        self._connect_lock = threading.Lock()
        # Keys must be unique across executors and processes sharing a
        # cluster: a random prefix per executor, a counter per attempt.
        self._prefix = uuid.uuid4().hex[:12]
        self._count = itertools.count(1)
        self._running: set[concurrent.futures.Future[Any]] = set()

    @property
    def client(self) -> distributed.Client | None:
        """The Dask client, once the first attempt has connected (else None)."""
        return self._client

    async def run(self, job: jobsched.Job) -> Any:
        """Run ``job.run_sync()`` as a Dask task; on cancellation, cancel the task."""
        func = getattr(job, "run_sync", None)
        if not callable(func):
            raise TypeError(
                f"{type(job).__qualname__} has no `def run_sync(self)`; the dask executor "
                "runs BlockingJob / CpuBoundJob subclasses and FunctionJobs of plain functions"
            )
        # js.current_job() works in the task; its progress goes nowhere (_task).
        what = f"{job.job_id} ({job.name!r})"
        func = functools.partial(as_attempt, job.job_id, job.attempts, what, func)
        state = self._state
        if state is None:
            state = await anyio.to_thread.run_sync(self._connect, abandon_on_cancel=True)
        key = f"jobsched-{job.job_id}-{job.attempts}-{self._prefix}-{next(self._count)}"
        done = anyio.Event()
        io_loop = state.client.loop
        assert io_loop is not None  # a connected client has its loop
        # Tornado's IOLoop runs on asyncio (since Tornado 6); its type does not say so.
        client_loop = cast("BaseAsyncIOLoop", io_loop).asyncio_loop
        call = asyncio.run_coroutine_threadsafe(state.attempt(key, func, what), client_loop)
        self._running.add(call)
        call.add_done_callback(waker(done))
        try:
            await done.wait()
        except BaseException:
            # Returns at once: the task's cancellation runs on the client's loop.
            call.cancel()
            raise
        finally:
            self._running.discard(call)
        return _outcome(call, job)

    def _connect(self) -> ClientLoopState:
        """Connect, or start the LocalCluster; in a worker thread (it blocks)."""
        with self._connect_lock:
            if self._state is not None:
                return self._state
            options = {"set_as_default": False, **self._options}
            if self._address is None:
                # A free port for the dashboard (client.dashboard_link): the
                # fixed default warns, and fails under -W error, when taken.
                options.setdefault("dashboard_address", ":0")
                # Its workers are this machine's: results come straight from
                # them, not relayed through the scheduler (one round trip less).
                options.setdefault("direct_to_workers", True)
                # On the cluster we start, jobsched's retry policy is the only
                # one: a worker's death fails the attempt at once instead of
                # Dask quietly rerunning the task elsewhere.
                options["scheduler_kwargs"] = {
                    "allowed_failures": 0,
                    **options.get("scheduler_kwargs", {}),
                }
                if options.get("processes", True):
                    # Its worker processes must not re-run the user's script
                    # (one without a main guard would run again in each).
                    _spawn.install()
            self._client = distributed.Client(self._address, **options)
            self._state = ClientLoopState(self._client)
            return self._state

    async def shutdown(self, *, cancel_running: bool = False) -> None:
        """Wait for running attempts (or cancel them), then close the client.

        Closing the client closes the ``LocalCluster`` it started; a cluster
        given by address or object is left running. The executor connects
        again if used afterwards.
        """
        running = list(self._running)
        if cancel_running:
            for call in running:
                call.cancel()
        with self._connect_lock:
            state, self._state, self._client = self._state, None, None
        if state is None:
            return

        def close() -> None:
            concurrent.futures.wait(running)
            state.client.sync(state.settle)
            state.client.close()

        await anyio.to_thread.run_sync(close)


def _outcome(call: concurrent.futures.Future[Any], job: jobsched.Job) -> Any:
    """The finished attempt's result, or its error as the scheduler should see it."""
    try:
        return call.result()
    except EscapedBaseException as exc:
        raise exc.original from None
    except concurrent.futures.CancelledError as exc:
        raise TaskLostError(
            f"the Dask task of {job.job_id} ({job.name!r}) was cancelled outside jobsched "
            f"or lost: {exc or 'the client was closed'}"
        ) from None
