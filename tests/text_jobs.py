"""Jobs for the tests of text at the door (test_text_door.py, test_fuzz_text.py):
importable, so every store can keep them."""

from __future__ import annotations

from typing import Any

import jobsched as js


class Says(js.AsyncJob):
    """Returns ``value``, or raises ``ValueError(error)`` when ``error`` is set;
    ``args`` travel with the job and are never read."""

    def __init__(self, value: Any = None, error: str | None = None, *args: Any, **kw: Any) -> None:
        super().__init__(kw.pop("name", "says"), **kw)
        self.value = value
        self.error = error
        self.args = args

    async def run(self) -> Any:
        if self.error is not None:
            raise ValueError(self.error)
        return self.value


def says_hello() -> js.Job:
    """A schedule's factory."""
    return Says("hello", name="hello")
