"""Targets for fake entry points in the plugin tests."""

from __future__ import annotations

from typing import Any

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
