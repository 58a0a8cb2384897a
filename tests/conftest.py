"""Runs every ``@pytest.mark.anyio`` test on asyncio and on trio.

Trio runs on a ``MockClock`` that jumps ahead whenever every task is blocked,
so timeouts, delays and backoffs are exact and cost no real time; schedulers
in those tests read the loop's clock (the ``clock`` fixture). Asyncio runs on
the real clock, with generous bounds.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from trio.testing import MockClock

import jobsched as js


@pytest.fixture(
    params=[
        pytest.param(("asyncio", {}), id="asyncio"),
        pytest.param(("trio", {"clock": MockClock(autojump_threshold=0)}), id="trio"),
    ]
)
def anyio_backend(request: pytest.FixtureRequest) -> tuple[str, dict[str, Any]]:
    name, options = request.param
    if name == "trio":
        # A fresh clock per test: a shared one would carry time over.
        options = {"clock": MockClock(autojump_threshold=0)}
    return name, options


@pytest.fixture
def virtual_time(anyio_backend: tuple[str, dict[str, Any]]) -> bool:
    """True when the test runs on the mock clock."""
    return anyio_backend[0] == "trio"


@pytest.fixture
def clock(virtual_time: bool) -> Callable[[], float]:
    """The clock a scheduler should read in this test."""
    return anyio.current_time if virtual_time else time.monotonic


@pytest.fixture
def make_scheduler(clock: Callable[[], float]) -> Callable[..., js.JobScheduler]:
    """A JobScheduler factory that reads the test's clock."""

    def make(*args: Any, **kwargs: Any) -> js.JobScheduler:
        kwargs.setdefault("clock", clock)
        return js.JobScheduler(*args, **kwargs)

    return make
