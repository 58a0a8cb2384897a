"""Jobs in the schema-3 fixtures (tests/data/): their rows pickle these by
reference, so the names here are part of those files and must stay."""

from __future__ import annotations

import jobsched as js


def add(a: int, b: int) -> int:
    """Returns ``a + b``."""
    return a + b


def fail(message: str) -> None:
    """Fails with ``message``."""
    raise ValueError(message)


def hourly_job() -> js.FunctionJob[int]:
    """The stored schedule's factory."""
    return js.FunctionJob(add, (20, 22), name="hourly add")
