"""``jobsched worker``: a scheduler on a durable store until SIGTERM or SIGINT.

Stopping drains: the worker claims no more jobs and lets the running ones
finish for up to ``--grace`` seconds. Those still running then are cut short
and handed back to the store (released, their interrupted attempt not
counted), so another worker runs them again, as a crashed worker's would be,
only at once and without waiting out the lease. Jobs claimed but not started
are released too. A second signal ends the grace at once.

Each ``--import``ed module may define ``jobsched_setup(scheduler)`` (plain or
``async``): it is called once the scheduler runs, to register stored
schedules (``schedule_cron(..., id=...)``) or submit work.
"""

from __future__ import annotations

import importlib
import inspect
import logging
import math
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable
from types import ModuleType
from typing import Any

import anyio
import click

from .._engine._scheduler import JobScheduler
from .._enums import JobStatus
from .._jobs._job import Job
from ._format import printable
from ._main import Count, PairParam, Seconds, UserError, make_store, store_option

#: The function an imported module may define to set the worker up.
HOOK = "jobsched_setup"

log = logging.getLogger("jobsched.worker")


class LimitType(PairParam):
    """``NAME=N``: at most N attempts at once on executor NAME."""

    name = "NAME=N"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> tuple[str, int]:
        if isinstance(value, tuple):
            return value
        name, sep, count = str(value).partition("=")
        name = name.strip()
        if not sep or not name or not count.strip().isdigit() or int(count) < 1:
            self.fail(
                f"{value!r} is not NAME=N with N a whole number >= 1 (e.g. thread=2)", param, ctx
            )
        return name, int(count)


@click.command()
@store_option
@click.option(
    "--import",
    "modules",
    multiple=True,
    required=True,
    metavar="MODULE",
    help="Import MODULE (dotted, from the current directory or the environment) so its "
    f"jobs load, and call its {HOOK}(scheduler) if it has one; repeat for several.",
)
@click.option(
    "--workers",
    type=Count(),
    default=4,
    show_default=True,
    metavar="N",
    help="The most jobs running at once in this worker.",
)
@click.option(
    "--executor-limit",
    "limits",
    type=LimitType(),
    multiple=True,
    help="At most N jobs at once on executor NAME (e.g. process=2); repeat for several.",
)
@click.option(
    "--queue",
    "queues",
    multiple=True,
    metavar="NAME",
    help="Run only the jobs of queue NAME (default: every queue); repeat for several.",
)
@click.option(
    "--queue-limit",
    "queue_limits",
    type=LimitType(),
    multiple=True,
    help="At most N jobs of queue NAME at once in this worker (e.g. video=2); repeat for several.",
)
@click.option(
    "--grace",
    type=Seconds(),
    default=30.0,
    show_default=True,
    metavar="SECONDS",
    help="On SIGTERM or SIGINT, how long running jobs may take to finish before they are "
    "cut short and handed back to the store.",
)
def worker(
    store_url: str | None,
    modules: tuple[str, ...],
    workers: int,
    limits: tuple[tuple[str, int], ...],
    queues: tuple[str, ...],
    queue_limits: tuple[tuple[str, int], ...],
    grace: float,
) -> None:
    """Run jobs from the store until SIGTERM or SIGINT."""
    handler = logging.StreamHandler()
    handler.setFormatter(_Printable("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.INFO, handlers=[handler])
    store = make_store(store_url or "")
    # As `python -m` does: the jobs of a project run from its directory load.
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    hooks = [_hook(_import(name)) for name in modules]
    try:
        scheduler = JobScheduler(
            num_workers=workers,
            executor_limits=dict(limits) or None,
            store=store,
            queues=queues or None,
            queue_limits=dict(queue_limits) or None,
        )
    except (ValueError, TypeError) as exc:
        raise UserError(str(exc)) from None
    anyio.run(_serve, scheduler, store.url, modules, [h for h in hooks if h is not None], grace)


class _Printable(logging.Formatter):
    """Log lines with control characters escaped: a job's name or error, in
    a failure's line or its traceback, must not drive the operator's terminal.
    Times in UTC, said so, as everywhere in the CLI and the dashboard."""

    converter = time.gmtime  # type: ignore[assignment]  # logging's own idiom; mypy picks an arity-0 form
    default_time_format = "%Y-%m-%d %H:%M:%S"
    default_msec_format = "%s,%03d UTC"

    def format(self, record: logging.LogRecord) -> str:
        return printable(super().format(record), keep="\n")


def _import(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except Exception as exc:
        raise UserError(f"cannot import {name!r}: {_where(exc)}") from None


def _hook(module: ModuleType) -> Callable[[JobScheduler], Any] | None:
    hook = getattr(module, HOOK, None)
    if hook is not None and not callable(hook):
        raise UserError(f"{module.__name__}.{HOOK} is not a function: {hook!r}")
    return hook


def _where(exc: BaseException) -> str:
    """``Type: message`` and the line that raised it, in one line."""
    # The user's line, not importlib's or ours.
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if not f.filename.startswith("<frozen") and f.filename != __file__
    ]
    at = f" (at {frames[-1].filename}:{frames[-1].lineno})" if frames else ""
    return f"{type(exc).__name__}: {exc}{at}"


async def _serve(
    scheduler: JobScheduler,
    url: str,
    modules: tuple[str, ...],
    hooks: list[Callable[[JobScheduler], Any]],
    grace: float,
) -> None:
    ended: dict[JobStatus, int] = {}

    def count(job: Job, old: JobStatus, new: JobStatus) -> None:
        if new.is_terminal:
            ended[new] = ended.get(new, 0) + 1

    scheduler.add_listener(count)
    failure: UserError | None = None
    why = "setup failed"
    # Open before the scheduler starts, so a signal during start-up drains too.
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async with scheduler:
            for hook in hooks:
                try:
                    result = hook(scheduler)
                    if inspect.isawaitable(result):
                        await result
                except Exception as exc:
                    name = f"{getattr(hook, '__module__', '?')}.{HOOK}"
                    failure = UserError(f"{name} failed: {_where(exc)}")
                    break
            if failure is None:
                log.info(
                    "started on %s: %d workers, pid %d, jobs from %s; stop with SIGTERM or "
                    "SIGINT (grace %ss)",
                    url,
                    scheduler._num_workers,
                    os.getpid(),
                    ", ".join(modules),
                    f"{grace:g}",
                )
                async for signum in signals:
                    why = signal.Signals(signum).name
                    break
            began = time.monotonic()
            cut = await _drain(scheduler, signals, 0.0 if failure is not None else grace)
    finished = ", ".join(f"{n} {s.value}" for s, n in sorted(ended.items(), key=_by_name))
    log.info(
        "stopped (%s) in %s: jobs ended here: %s; %s",
        why,
        f"{time.monotonic() - began:.1f}s",
        finished or "none",
        f"{cut} cut short and handed back to the store" if cut else "none cut short",
    )
    if failure is not None:
        raise failure


def _by_name(item: tuple[JobStatus, int]) -> str:
    return item[0].value


async def _drain(scheduler: JobScheduler, signals: Any, grace: float) -> int:
    """Stop: let running jobs finish for ``grace`` seconds (or until a second
    signal), then hand the rest back. How many were handed back."""
    stopped = anyio.Event()
    hurry = anyio.Event()

    async def stop() -> None:
        # The grace is kept here, to count what it cuts short.
        await scheduler.stop(grace=math.inf)
        stopped.set()

    async def second_signal() -> None:
        async for _ in signals:
            hurry.set()
            return

    async def first_of(*events: anyio.Event) -> None:
        async with anyio.create_task_group() as race:

            async def wait(event: anyio.Event) -> None:
                await event.wait()
                race.cancel_scope.cancel()

            for event in events:
                race.start_soon(wait, event)

    cut = 0
    async with anyio.create_task_group() as tg:
        tg.start_soon(stop)
        tg.start_soon(second_signal)
        with anyio.move_on_after(grace):
            await first_of(stopped, hurry)
        if not stopped.is_set():
            cut = scheduler._hand_back_running()
        await stopped.wait()
        tg.cancel_scope.cancel()
    return cut
