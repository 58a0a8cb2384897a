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
from .._ordering._ratelimit import RateLimit
from ._format import printable
from ._keepopts import keep_options
from ._main import Count, Seconds, UserError, store_option
from ._workermetrics import need_prometheus, serve_metrics
from ._workeropts import (
    STRATEGIES,
    LimitType,
    Options,
    PositiveSeconds,
    RateType,
    app_scheduler,
    described,
    load_app,
    plain_scheduler,
    plain_store,
)

#: The function an imported module may define to set the worker up.
HOOK = "jobsched_setup"

log = logging.getLogger("jobsched.worker")


@click.command()
@store_option
@click.option(
    "--app",
    "app_spec",
    metavar="MODULE:NAME",
    help="Start from the js.App named NAME in MODULE (e.g. shop.jobs:app): its store, "
    "secret, queues, limits, strategy, lease, retention, jobs and periodic jobs. Options "
    "given here override the app's.",
)
@click.option(
    "--import",
    "modules",
    multiple=True,
    metavar="MODULE",
    help="Import MODULE (dotted, from the current directory or the environment) so its "
    f"jobs load, and call its {HOOK}(scheduler) if it has one; repeat for several. "
    "Needed without --app.",
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
    type=LimitType("video=2"),
    multiple=True,
    help="At most N jobs of queue NAME at once in this worker (e.g. video=2); repeat for several.",
)
@click.option(
    "--rate-limit",
    "rate_limits",
    type=RateType(),
    multiple=True,
    help="At most N starts per SECONDS of the jobs with rate_key KEY, across every worker "
    "on the store, in bursts of at most BURST (default N): smtp=1/1, smtp=100/60:10; "
    "repeat for several keys.",
)
@click.option(
    "--strategy",
    type=click.Choice(list(STRATEGIES)),
    help="The order jobs are claimed in (default: the app's, else priority).",
)
@click.option(
    "--weight",
    "weights",
    type=LimitType("acme=3"),
    multiple=True,
    metavar="TENANT=N",
    help="With --strategy fair-share: TENANT starts up to N jobs per turn (default 1); "
    "repeat for several.",
)
@click.option(
    "--lease",
    type=PositiveSeconds(),
    metavar="SECONDS",
    help="How long a job this worker claimed stays its own without a heartbeat; after "
    "that (the worker died) another member takes it over. Default 30.",
)
@click.option(
    "--history-limit",
    type=click.IntRange(min=0),
    metavar="N",
    help="How many finished jobs the store keeps. Default 10000.",
)
@keep_options
@click.option(
    "--load-grace",
    type=Seconds(),
    metavar="SECONDS",
    help="How long a job whose code this worker lacks (a deploy under way) is handed back "
    "for a worker that has it before it fails. Default 600.",
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
@click.option(
    "--metrics-port",
    type=click.IntRange(min=0, max=65535),
    metavar="PORT",
    help="Serve Prometheus text at http://HOST:PORT/metrics: this worker's attempts and the "
    "store's counts (needs jobsched-core[prometheus]; 0 picks a free port, named in the "
    "start line).",
)
@click.option(
    "--metrics-host",
    default="127.0.0.1",
    show_default=True,
    metavar="HOST",
    help="The address --metrics-port listens on (0.0.0.0: every interface).",
)
def worker(
    store_url: str | None,
    app_spec: str | None,
    modules: tuple[str, ...],
    workers: int,
    limits: tuple[tuple[str, int], ...],
    queues: tuple[str, ...],
    queue_limits: tuple[tuple[str, int], ...],
    rate_limits: tuple[tuple[str, RateLimit], ...],
    strategy: str | None,
    weights: tuple[tuple[str, int], ...],
    lease: float | None,
    history_limit: int | None,
    keep: tuple[tuple[str, float], ...],
    max_finished: int | None,
    load_grace: float | None,
    grace: float,
    metrics_port: int | None,
    metrics_host: str,
) -> None:
    """Run jobs from the store until SIGTERM or SIGINT."""
    if app_spec is None and not modules:
        raise click.UsageError(
            "Missing option '--import' (or --app MODULE:NAME): the worker must load the jobs' code"
        )
    if metrics_port is not None:
        need_prometheus()
    handler = logging.StreamHandler()
    handler.setFormatter(_Printable("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.INFO, handlers=[handler])
    options = Options(
        store_url=store_url,
        workers=workers,
        limits=dict(limits),
        queues=queues,
        queue_limits=dict(queue_limits),
        rate_limits=dict(rate_limits),
        strategy=strategy,
        weights=dict(weights),
        lease=lease,
        history_limit=history_limit,
        load_grace=load_grace,
        keep=dict(keep),
        max_finished=max_finished,
    )
    # Made before the imports: a bad store or option costs no import.
    store = None if app_spec is not None else plain_store(options)
    # As `python -m` and uvicorn do: the jobs of a project run from its directory load.
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    sources = list(modules)
    if app_spec is not None:
        app = load_app(app_spec, _import)
        scheduler = app_scheduler(app, app_spec, options)
        registered = len(getattr(app, "jobs", {}) or {})
        sources.insert(0, f"app {app_spec.strip()} ({registered} registered)")
    hooks = [_hook(_import(name)) for name in modules]
    if store is not None:
        scheduler = plain_scheduler(options, store)
    anyio.run(
        _serve,
        scheduler,
        scheduler._link.store.url,  # type: ignore[union-attr]  # a worker's store is durable
        sources,
        [h for h in hooks if h is not None],
        grace,
        None if metrics_port is None else (metrics_host, metrics_port),
    )


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
    sources: list[str],
    hooks: list[Callable[[JobScheduler], Any]],
    grace: float,
    metrics_at: tuple[str, int] | None = None,
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
            metrics = None
            if failure is None and metrics_at is not None:
                metrics, failure = serve_metrics(scheduler, *metrics_at)
            if failure is None:
                log.info(
                    "started on %s: %d workers, pid %d, jobs from %s%s%s; stop with SIGTERM "
                    "or SIGINT (grace %ss)",
                    url,
                    scheduler._settings.num_workers,
                    os.getpid(),
                    ", ".join(sources),
                    described(scheduler),
                    "" if metrics is None else f"; metrics on {metrics.url}",
                    f"{grace:g}",
                )
                async for signum in signals:
                    why = signal.Signals(signum).name
                    break
            began = time.monotonic()
            try:
                cut = await _drain(scheduler, signals, 0.0 if failure is not None else grace)
            finally:
                if metrics is not None:
                    # Served until the drain ends: its last attempts are counted.
                    metrics.stop()
    finished = ", ".join(f"{n} {s.value}" for s, n in sorted(ended.items(), key=_by_name))
    unloaded = scheduler._load_handbacks
    log.info(
        "stopped (%s) in %s: jobs ended here: %s; %s%s",
        why,
        f"{time.monotonic() - began:.1f}s",
        finished or "none",
        f"{cut} cut short and handed back to the store" if cut else "none cut short",
        f"; {unloaded} could not be loaded here and went back to the store for other members"
        if unloaded
        else "",
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
