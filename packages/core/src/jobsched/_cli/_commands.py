"""Which commands ``jobsched`` has: the core's own, and those other
distributions add through the ``jobsched.commands`` entry-point group.

Nothing is imported before it is asked for. ``jobsched jobs`` imports the
module that defines ``jobs`` and no other command's, nor reads the entry
points; ``jobsched --help`` imports each command's module (its one-line help
is there), not what a command imports once it runs. A plugin that cannot
load is a one-line warning in the help and an error only when it is run, so
it never breaks another command.

The core's commands are built in, not entry points of the core: they work
from a source tree or a broken install with no metadata, and no plugin can
replace one (a plugin that claims a core name is ignored, with a warning).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, NamedTuple

import click

from .._exceptions import SchedulerError
from .._jobs._plugins import dist_name, load_unique, registered_in

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

GROUP = "jobsched.commands"

#: The core's commands, and the module (in this package) that defines each.
BUILT_IN = {
    "worker": "_worker",
    "jobs": "_read",
    "show": "_show",
    "stats": "_stats",
    "cancel": "_act",
    "retry": "_act",
    "schedules": "_schedules",
    "schedule": "_schedules",
    "queues": "_queues",
    "queue": "_queues",
    "members": "_members",
    "workflows": "_workflows",
    "workflow": "_workflows",
}


class FirstParty(NamedTuple):
    """A command this project publishes in a distribution of its own."""

    extra: str
    what: str
    help: str

    @property
    def install(self) -> str:
        return f'pip install "jobsched-core[{self.extra}]"'


#: Listed, and named with what installs them, even when not installed.
FIRST_PARTY = {
    "dashboard": FirstParty("dashboard", "the dashboard", "Serve the web dashboard"),
}


def plugins() -> dict[str, list[EntryPoint]]:
    """The plugins' commands by name, the core's names left out."""
    return {n: eps for n, eps in registered_in(GROUP).items() if n not in BUILT_IN}


def names() -> list[str]:
    """Every command's name, sorted: the core's, the plugins' and the first
    party's (installed or not)."""
    return sorted(set(BUILT_IN) | set(FIRST_PARTY) | set(plugins()))


def shadowing() -> list[str]:
    """A warning for each plugin that claims a core command's name."""
    return [
        f"the command {name!r} from the distribution {dist_name(ep)} is ignored: "
        f"jobsched has its own {name!r}"
        for name, eps in sorted(registered_in(GROUP).items())
        if name in BUILT_IN
        for ep in eps
    ]


def load(name: str) -> click.Command | None:
    """The command called ``name``, None for no such command.

    :raises SchedulerError: a plugin's command failed to import, is not a
        click command, or several distributions register ``name``; the
        message names the distributions.
    """
    module = BUILT_IN.get(name)
    if module is not None:
        found = getattr(importlib.import_module(f"{__package__}.{module}"), name)
        assert isinstance(found, click.Command)
        return found
    eps = plugins().get(name)
    first = FIRST_PARTY.get(name)
    if not eps:
        return None if first is None else not_installed(name, first)
    try:
        command, ep = load_unique(eps, f"the command {name!r}", "uninstall all but one")
    except SchedulerError as exc:
        if first is None or len(eps) > 1:
            raise
        raise SchedulerError(f"{exc}; to fix: {first.install}") from exc
    if not isinstance(command, click.Command):
        raise SchedulerError(
            f"the command {name!r} ({ep.value}, from the distribution {dist_name(ep)}) is "
            f"{type(command).__name__}, not a click command: the entry point must name a "
            "click.Command or click.Group"
        )
    return command


def not_installed(name: str, first: FirstParty) -> click.Command:
    """A stand-in for a first-party command that is not installed: any
    arguments, and it says what to install."""

    def fail() -> None:
        from ._main import UserError

        raise UserError(f"{first.what} is not installed; to fix: {first.install}")

    return click.Command(
        name,
        callback=fail,
        help=f"{first.help} (not installed: {first.install}).",
        short_help=f"{first.help} (not installed: the [{first.extra}] extra).",
        add_help_option=False,
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
    )
