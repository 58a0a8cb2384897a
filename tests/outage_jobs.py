"""Jobs for tests/test_store_outages.py (importable, so a durable store can hold them)."""

from __future__ import annotations

from typing import Any

import anyio

import jobsched as js

#: Set by the test on its own loop: Held jobs wait for it.
GATE: anyio.Event | None = None
#: Set once STARTED reaches WANT.
ALL_STARTED: anyio.Event | None = None
STARTED = 0
WANT = 0


def reset(want: int) -> None:
    """A new gate for ``want`` Held jobs (call on the test's loop)."""
    global GATE, ALL_STARTED, STARTED, WANT
    GATE, ALL_STARTED, STARTED, WANT = anyio.Event(), anyio.Event(), 0, want


class Held(js.AsyncJob):
    """Counts its start, then waits for :data:`GATE`; returns ``value``."""

    def __init__(self, value: Any, **kw: Any) -> None:
        super().__init__(f"held {value!r}", **kw)
        self.value = value

    async def run(self) -> Any:
        global STARTED
        assert GATE is not None and ALL_STARTED is not None
        STARTED += 1
        if STARTED >= WANT:
            ALL_STARTED.set()
        await GATE.wait()
        return self.value
