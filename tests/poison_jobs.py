"""Jobs whose data a store may refuse: importable by reference, for the tests
of stores' error classes (tests/test_store_errors.py) and the chaos members."""

from __future__ import annotations

from typing import Any

import anyio

import jobsched as js


class Raises(js.AsyncJob):
    """Fails every attempt with ``ValueError(message)``."""

    def __init__(self, message: str, **kw: Any) -> None:
        super().__init__(kw.pop("name", "raises"), **kw)
        self.message = message

    async def run(self) -> None:
        await anyio.lowlevel.checkpoint()
        raise ValueError(self.message)


class Quick(js.AsyncJob):
    """Completes at once with ``value``."""

    def __init__(self, value: Any = None, **kw: Any) -> None:
        super().__init__(kw.pop("name", "quick"), **kw)
        self.value = value

    async def run(self) -> Any:
        await anyio.lowlevel.checkpoint()
        return self.value
