"""``jobsched worker``'s settings: its option types, ``--app``, and the
scheduler they make.

Every ``JobScheduler`` setting a fleet shares (rate limits, the strategy,
the lease, history) has an option, so a worker need not be a script of the
team's own. With ``--app MODULE:NAME`` the worker starts from the app's
settings (``app.settings()``) and builds its scheduler with
``app.scheduler(**overrides)``: each option given on the command line
overrides the app's; the limits (``--rate-limit``, ``--executor-limit``,
``--queue-limit``) override it key by key.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any

import click

from .._engine._scheduler import JobScheduler
from .._ordering._ratelimit import RateLimit
from ._keepopts import retention_over
from ._main import PairParam, Seconds, UserError, make_store, need_store

if TYPE_CHECKING:
    from ..store._base import JobStore

    RateParam = click.ParamType[tuple[str, RateLimit]]
else:
    RateParam = click.ParamType

#: ``--strategy`` names -> the strategy classes' names in ``jobsched``.
STRATEGIES = {
    "priority": "PriorityStrategy",
    "fifo": "FIFOStrategy",
    "fair-share": "FairShareStrategy",
    "aging": "AgingPriorityStrategy",
    "edf": "EarliestDeadlineFirstStrategy",
}


class LimitType(PairParam):
    """``NAME=N``: a name and a whole number >= 1."""

    name = "NAME=N"

    def __init__(self, example: str = "thread=2") -> None:
        self.example = example

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> tuple[str, int]:
        if isinstance(value, tuple):
            return value
        name, sep, count = str(value).partition("=")
        name = name.strip()
        if not sep or not name or not count.strip().isdigit() or int(count) < 1:
            self.fail(
                f"{value!r} is not NAME=N with N a whole number >= 1 (e.g. {self.example})",
                param,
                ctx,
            )
        return name, int(count)


class RateType(RateParam):
    """``KEY=N/SECONDS[:BURST]``: at most N starts per SECONDS for jobs with
    ``rate_key=KEY``, in bursts of at most BURST (default max(N, 1))."""

    name = "KEY=N/SECONDS[:BURST]"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> tuple[str, RateLimit]:
        if isinstance(value, tuple):
            return value
        text = str(value)
        key, sep, rest = text.partition("=")
        rate, slash, per_burst = rest.partition("/")
        per, colon, burst = per_burst.partition(":")
        shape = (
            f"{text!r} is not KEY=N/SECONDS[:BURST] (e.g. smtp=1/1 for one start a "
            "second, smtp=100/60:10 for 100 a minute in bursts of at most 10)"
        )
        if not sep or not key.strip() or not slash:
            self.fail(shape, param, ctx)
        try:
            numbers = float(rate), float(per), float(burst) if colon else None
        except ValueError:
            self.fail(shape, param, ctx)
        try:
            return key.strip(), RateLimit(*numbers)
        except ValueError as exc:
            self.fail(f"{text!r}: {exc}", param, ctx)


class PositiveSeconds(Seconds):
    """A finite number of seconds > 0 (a lease of 0 would lapse at once)."""

    def __init__(self) -> None:
        click.FloatRange.__init__(self, min=0, min_open=True)


@dataclass
class Options:
    """What the command line said; None or empty: not given."""

    store_url: str | None
    workers: int
    limits: dict[str, int] = field(default_factory=dict)
    queues: tuple[str, ...] = ()
    queue_limits: dict[str, int] = field(default_factory=dict)
    rate_limits: dict[str, RateLimit] = field(default_factory=dict)
    strategy: str | None = None
    weights: dict[str, int] = field(default_factory=dict)
    lease: float | None = None
    history_limit: int | None = None
    load_grace: float | None = None
    keep: dict[str, float] = field(default_factory=dict)
    max_finished: int | None = None

    def overrides(self, app_settings: Mapping[str, Any]) -> dict[str, Any]:
        """The scheduler's keyword arguments the command line sets, over
        ``app_settings`` (the limits merged key by key)."""
        out: dict[str, Any] = {"num_workers": self.workers}
        if self.store_url:
            out["store"] = need_store(self.store_url)
        for name, given in (
            ("executor_limits", self.limits),
            ("queue_limits", self.queue_limits),
            ("rate_limits", self.rate_limits),
        ):
            if given:
                out[name] = {**(app_settings.get(name) or {}), **given}
        if self.queues:
            out["queues"] = list(self.queues)
        strategy = self.strategy_object()
        if strategy is not None:
            out["strategy"] = strategy
        for name in ("lease", "history_limit", "load_grace"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        retention = retention_over(app_settings.get("retention"), self.keep, self.max_finished)
        if retention is not None:
            out["retention"] = retention
        return out

    def strategy_object(self) -> Any:
        """The ``--strategy`` (with its ``--weight``s), or None."""
        if self.weights and self.strategy != "fair-share":
            raise UserError(
                "--weight TENANT=N weighs the tenants of a fair share: add --strategy fair-share"
            )
        if self.strategy is None:
            return None
        import jobsched

        cls = getattr(jobsched, STRATEGIES[self.strategy])
        return cls(weights=self.weights) if self.strategy == "fair-share" else cls()


def plain_store(options: Options) -> JobStore:
    """The store of a worker without ``--app`` (``--store``, ``--lease``), not
    yet opened; the options checked first."""
    options.strategy_object()
    url = options.store_url or ""
    if options.lease is None:
        return make_store(url)
    from ..store._registry import open_store

    try:
        return open_store(need_store(url), lease=options.lease)
    except (ValueError, TypeError) as exc:
        raise UserError(str(exc)) from None


def plain_scheduler(options: Options, store: JobStore) -> JobScheduler:
    """The scheduler of a worker without ``--app``: the options alone."""
    settings = options.overrides({})
    settings.pop("store", None)
    settings.pop("lease", None)  # the store's (plain_store)
    try:
        return JobScheduler(store=store, **settings)
    except (ValueError, TypeError) as exc:
        raise UserError(str(exc)) from None


def app_scheduler(app: Any, spec: str, options: Options) -> JobScheduler:
    """The scheduler of ``jobsched worker --app``: the app's, the options over it."""
    try:
        settings = dict(app.settings())
        scheduler = app.scheduler(**options.overrides(settings))
    except (ValueError, TypeError) as exc:
        raise UserError(f"--app {spec}: {exc}") from None
    if not isinstance(scheduler, JobScheduler):
        raise UserError(
            f"--app {spec}: its scheduler() returned {type(scheduler).__name__}, "
            "not a jobsched.JobScheduler"
        )
    if scheduler._link is None:
        raise UserError(
            f"--app {spec} keeps its jobs in the 'memory' store, inside one process, where "
            "a worker cannot reach them: give the app a durable store (js.App(store="
            "'sqlite:///jobs.db')), or pass --store URL"
        )
    return scheduler


def load_app(spec: str, import_module: Any) -> Any:
    """The ``js.App`` that ``--app MODULE:NAME`` names (imported with
    ``import_module``, which turns a failed import into a user error)."""
    module_name, sep, attr = spec.partition(":")
    module_name, attr = module_name.strip(), attr.strip()
    if not sep or not module_name or not attr:
        raise UserError(
            f"--app {spec!r} is not MODULE:NAME: give the module and the js.App in it "
            "(e.g. --app shop.jobs:app)"
        )
    try:
        obj = import_module(module_name)
    except UserError as exc:
        raise UserError(
            f"--app {spec!r}: {exc.message}; run the worker from the project's folder (it is "
            "put on the import path) or install the project"
        ) from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise UserError(
                f"--app {spec!r}: module {module_name!r} has no attribute {attr!r}; name "
                f"the js.App it defines (e.g. --app {module_name}:app)"
            ) from None
    # Looked up now, after the import: jobsched.App loads on first use.
    app_class = getattr(importlib.import_module("jobsched"), "App", None)
    if app_class is None or not isinstance(obj, app_class):
        raise UserError(
            f"--app {spec!r} is {_what(obj)}, not a js.App: name the object made by "
            "js.App(...) (e.g. app = js.App(store=...))"
        )
    return obj


def _what(obj: object) -> str:
    if isinstance(obj, type):
        return f"the class {obj.__module__}.{obj.__qualname__}"
    if isinstance(obj, ModuleType):
        return f"the module {obj.__name__}"
    return f"a {type(obj).__module__}.{type(obj).__qualname__} object"


def described(scheduler: JobScheduler) -> str:
    """The settings a worker's start line names, so that an operator (and a
    test) sees that the fleet's rate limits and order took effect: ``""``
    or ``"; rate limits smtp=1/1s, strategy fifo, queues emails, queue limits emails=2"``."""
    parts = []
    link = scheduler._link
    rates = link.rates if link is not None else None
    if rates:
        shown = ", ".join(
            f"{key}={limit.rate:g}/{limit.per:g}s"
            + ("" if limit.burst == max(limit.rate, 1.0) else f":{limit.burst:g}")
            for key, limit in sorted(rates.items())
        )
        parts.append(f"rate limits {shown}")
    strategy = type(scheduler._settings.strategy).__name__
    name = next((k for k, v in STRATEGIES.items() if v == strategy), strategy)
    weights = getattr(scheduler._settings.strategy, "weights", None)
    if weights:
        name += " (" + ", ".join(f"{t}={w}" for t, w in weights.items()) + ")"
    parts.append(f"strategy {name}")
    if scheduler._settings.queues is not None:
        parts.append("queues " + ", ".join(sorted(scheduler._settings.queues)))
    if scheduler._settings.queue_limits:
        limits = sorted(scheduler._settings.queue_limits.items())
        parts.append("queue limits " + ", ".join(f"{q}={n}" for q, n in limits))
    if link is not None:
        parts.append(f"lease {link.store.lease:g}s")
    parts.append(f"load_grace {scheduler._settings.load_grace:g}s")
    keeping = scheduler._table.keeping
    if keeping.ages():
        ages = ", ".join(f"{s.value} {age:g}s" for s, age in keeping.ages().items())
        parts.append(f"keeping {ages}, at most {keeping.max_finished or 'all'}")
    return "; " + ", ".join(parts)
