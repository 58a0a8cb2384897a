"""Jobs for tests/test_workflow_inputs.py: importable by name, as stored jobs' are."""

from __future__ import annotations

import os
from typing import Any

import jobsched as js
from jobsched._exceptions import UpstreamFailedError

app = js.App()


def collect(*values: Any, **named: Any) -> list[Any]:
    """What the job received, as its result (pickled: errors are kept as they are)."""
    return [list(values), named, os.getpid()]


def describe(values: list[Any]) -> list[str]:
    """Each received value, or the error in its place, as text."""
    return [
        f"failed {v.job_id} {v.status.value}" if isinstance(v, UpstreamFailedError) else repr(v)
        for v in values
    ]


def value(x: Any) -> Any:
    return x


class Unpicklable:
    """A result whose module attribute is gone by the time it is loaded."""


@app.job
def total(values: list[int], start: int = 0) -> int:
    return sum(values, start)


@app.job
def echo(first: Any) -> Any:
    return first
