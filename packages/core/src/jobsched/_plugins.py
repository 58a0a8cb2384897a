"""Finding executor plugins through the ``jobsched.executors`` entry-point group.

The group is read once per process and a plugin is imported only when a job
first needs it, so an app that runs async jobs never imports the process
executor (nor starts a process).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points

from ._exceptions import ExecutorNotFoundError, SchedulerError
from ._executor import Executor

GROUP = "jobsched.executors"

# The executors this project publishes, and the extra that installs each.
_FIRST_PARTY = {
    "async": "jobsched-exec-async",
    "thread": "jobsched-exec-thread",
    "process": "jobsched-exec-process",
}


@functools.cache
def registered() -> dict[str, list[EntryPoint]]:
    """Every entry point in the group, by name (cached for the process)."""
    found: dict[str, list[EntryPoint]] = {}
    for ep in entry_points(group=GROUP):
        # The same distribution can be seen twice (a path listed twice on
        # sys.path); only distinct distributions are a real conflict.
        same = [e for e in found.get(ep.name, ()) if e.value == ep.value]
        if not same:
            found.setdefault(ep.name, []).append(ep)
    return found


def _dist_name(ep: EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    return dist.name if dist is not None else ep.value


def load_factory(name: str) -> Callable[[], Executor]:
    """The factory registered as ``name``.

    :raises ExecutorNotFoundError: nothing is registered under ``name``.
    :raises SchedulerError: two distributions register ``name``, or the plugin
        failed to import.
    """
    eps = registered().get(name)
    if not eps:
        installed = sorted(registered()) or ["none"]
        dist = _FIRST_PARTY.get(name)
        if dist is not None:
            fix = f'pip install "jobsched-core[{name}]" (the {dist} distribution)'
        else:
            fix = (
                f"install the distribution that publishes the {name!r} executor in the "
                f"{GROUP!r} entry-point group, or pass executors={{{name!r}: ...}} "
                "to JobScheduler"
            )
        raise ExecutorNotFoundError(
            f"no executor named {name!r} is installed (installed: {', '.join(installed)}); "
            f"to fix: {fix}"
        )
    if len(eps) > 1:
        owners = ", ".join(sorted(_dist_name(ep) for ep in eps))
        raise SchedulerError(
            f"executor name {name!r} is registered by several distributions ({owners}); "
            f"uninstall all but one, or choose with JobScheduler(executors={{{name!r}: ...}})"
        )
    try:
        factory = eps[0].load()
    except Exception as exc:
        raise SchedulerError(
            f"executor plugin {name!r} ({eps[0].value}, from {_dist_name(eps[0])}) "
            f"failed to load: {type(exc).__name__}: {exc}"
        ) from exc
    if not callable(factory):
        raise SchedulerError(
            f"executor plugin {name!r} ({eps[0].value}) is not callable; the entry point "
            "must name a class or factory that returns an Executor"
        )
    return factory  # type: ignore[no-any-return]


def create(name: str) -> Executor:
    """A new executor from the plugin registered as ``name``."""
    factory = load_factory(name)
    try:
        executor = factory()
    except Exception as exc:
        raise SchedulerError(
            f"executor plugin {name!r} failed to start: {type(exc).__name__}: {exc}"
        ) from exc
    if not isinstance(executor, Executor):
        raise SchedulerError(
            f"executor plugin {name!r} returned {executor!r}, which is not a jobsched.Executor"
        )
    return executor
