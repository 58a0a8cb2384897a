"""Targets for fake entry points in the plugin tests."""

from __future__ import annotations

from importlib.metadata import EntryPoint
from typing import Any

import click

import jobsched as js

raise_on_import = False


class EchoExecutor(js.Executor):
    """Returns the job's name without running it."""

    name = "echo"

    async def run(self, job: js.Job) -> Any:
        return job.name


class OtherEchoExecutor(EchoExecutor):
    """A second distribution's executor under the same name."""


class NamelessExecutor(js.Executor):
    """Sets no `name`: it is known by its entry-point name."""

    async def run(self, job: js.Job) -> Any:
        return job.name


def failing_factory() -> js.Executor:
    raise RuntimeError("cannot start")


def not_an_executor() -> object:
    return object()


NOT_CALLABLE = 42


class _Dist:
    def __init__(self, name: str) -> None:
        self.name = name


def entry_point(group: str, name: str, value: str, dist: str) -> EntryPoint:
    """A fake entry point of ``group``, published by the distribution ``dist``."""
    ep = EntryPoint(name, value, group)
    # EntryPoint is immutable; real ones get their distribution the same way.
    vars(ep)["dist"] = _Dist(dist)
    return ep


# ── commands (the jobsched.commands group) ─────────────────────────────────


@click.command()
@click.option("--times", type=int, default=1, help="How many times.")
def echo_command(times: int) -> None:
    """Say echo (a fake plugin's command)."""
    for _ in range(times):
        click.echo("echo")


@click.command()
def other_echo_command() -> None:
    """A second distribution's command under the same name."""
    click.echo("other echo")


@click.group()
def tools() -> None:
    """A fake plugin's group of commands."""


@tools.command()
def ping() -> None:
    """Answer pong."""
    click.echo("pong")
