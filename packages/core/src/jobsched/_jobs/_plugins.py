"""Finding executor plugins through the ``jobsched.executors`` entry-point group.

The group is read once per process and a plugin is imported only when a job
first needs it, so an app that runs async jobs never imports the process
executor (nor starts a process). Every error about a plugin names the
distribution that published it, which is what the user uninstalls or upgrades.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING

from .._exceptions import ExecutorNotFoundError, SchedulerError
from ._executor import Executor

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

GROUP = "jobsched.executors"

# The executors this project publishes, and the extra that installs each.
_FIRST_PARTY = {
    "async": "jobsched-exec-async",
    "thread": "jobsched-exec-thread",
    "process": "jobsched-exec-process",
    "dask": "jobsched-exec-dask",
}


def install_hint(name: str) -> str:
    """What installs the executor ``name``: its extra for this project's
    executors, or how to provide any other."""
    dist = _FIRST_PARTY.get(name)
    if dist is not None:
        return f'pip install "jobsched-core[{name}]" (the {dist} distribution)'
    return (
        f"install the distribution that publishes the {name!r} executor in the "
        f"{GROUP!r} entry-point group, or pass executors={{{name!r}: ...}} "
        "to JobScheduler"
    )


def entry_points(group: str) -> list[EntryPoint]:
    """The installed entry points of ``group``."""
    # importlib.metadata costs more to import than the rest of jobsched: it is
    # imported when the first job needs a plugin, not at `import jobsched`.
    from importlib.metadata import entry_points

    return list(entry_points(group=group))


@functools.cache
def registered_in(group: str) -> dict[str, list[EntryPoint]]:
    """Every entry point in ``group``, by name (cached for the process).

    Shared by the executor and the store registries.
    """
    found: dict[str, list[EntryPoint]] = {}
    for ep in entry_points(group):
        # The same distribution can be seen twice (a path listed twice on
        # sys.path); only distinct distributions are a real conflict.
        same = [e for e in found.get(ep.name, ()) if e.value == ep.value]
        if not same:
            found.setdefault(ep.name, []).append(ep)
    return found


def registered() -> dict[str, list[EntryPoint]]:
    """Every executor entry point, by name."""
    return registered_in(GROUP)


def dist_name(ep: EntryPoint) -> str:
    """The distribution that published ``ep``, for error messages."""
    dist = getattr(ep, "dist", None)
    return dist.name if dist is not None else "an unknown distribution"


def load_unique(eps: list[EntryPoint], what: str, fix: str) -> tuple[object, EntryPoint]:
    """Load the one entry point registered under a name.

    :param what: names the plugin in errors (``"executor name 'x'"``).
    :param fix: what to do when several distributions register it.
    :raises SchedulerError: several distributions register it, or it failed
        to import.
    """
    if len(eps) > 1:
        owners = ", ".join(sorted(dist_name(ep) for ep in eps))
        raise SchedulerError(f"{what} is registered by several distributions ({owners}); {fix}")
    ep = eps[0]
    try:
        return ep.load(), ep
    except Exception as exc:
        raise SchedulerError(
            f"{what} ({ep.value}, from the distribution {dist_name(ep)}) failed to load: "
            f"{type(exc).__name__}: {exc}"
        ) from exc


def _origin(name: str, ep: EntryPoint) -> str:
    return f"executor plugin {name!r} ({ep.value}, from the distribution {dist_name(ep)})"


def load_factory(name: str) -> tuple[Callable[[], Executor], EntryPoint]:
    """The factory registered as ``name``, and its entry point.

    :raises ExecutorNotFoundError: nothing is registered under ``name``.
    :raises SchedulerError: two distributions register ``name``, or the plugin
        failed to import.
    """
    eps = registered().get(name)
    if not eps:
        installed = sorted(registered()) or ["none"]
        raise ExecutorNotFoundError(
            f"no executor named {name!r} is installed (installed: {', '.join(installed)}); "
            f"to fix: {install_hint(name)}"
        )
    factory, ep = load_unique(
        eps,
        f"executor plugin {name!r}",
        f"uninstall all but one, or choose with JobScheduler(executors={{{name!r}: ...}})",
    )
    if not callable(factory):
        raise SchedulerError(
            f"{_origin(name, ep)} is not callable; the entry point must name a class or "
            "factory that returns a jobsched.Executor"
        )
    return factory, ep


def create(name: str) -> Executor:
    """A new executor from the plugin registered as ``name``.

    :raises SchedulerError: the plugin failed to start, returned something
        that is not an :class:`Executor`, or declares another ``name``.
    """
    factory, ep = load_factory(name)
    try:
        executor = factory()
    except Exception as exc:
        raise SchedulerError(
            f"{_origin(name, ep)} failed to start: {type(exc).__name__}: {exc}"
        ) from exc
    if not isinstance(executor, Executor):
        raise SchedulerError(
            f"{_origin(name, ep)} returned {executor!r}, which is not a jobsched.Executor"
        )
    # `name` is optional; an executor that sets it promises the name jobs use,
    # so a plugin registered under another name is a packaging mistake.
    declared = getattr(executor, "name", name)
    if declared != name:
        raise SchedulerError(
            f"{_origin(name, ep)} declares name={declared!r}, but its entry point is named "
            f"{name!r}; the distribution must register it under {declared!r} in the "
            f"{GROUP!r} group, or set name = {name!r}"
        )
    return executor
