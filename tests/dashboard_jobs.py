"""Jobs for the dashboard's browser tests and screenshot: importable by reference
(a durable store pickles jobs by name), with durations and failures as told."""

from __future__ import annotations

import time
from typing import Any

import anyio

import jobsched as js


class Work(js.AsyncJob):
    """Sleeps ``seconds``, then fails its first ``failures`` attempts with ``error``
    (every attempt when ``failures`` is -1)."""

    def __init__(
        self, name: str, seconds: float = 0.0, failures: int = 0, error: str = "boom", **kw: Any
    ) -> None:
        super().__init__(name, **kw)
        self.seconds = seconds
        self.failures = failures
        self.error = error

    async def run(self) -> str:
        await anyio.sleep(self.seconds)
        if self.failures < 0 or self.attempts <= self.failures:
            raise ConnectionError(f"{self.error} (attempt {self.attempts})")
        return "ok"


class Hold(js.AsyncJob):
    """Runs until cancelled: keeps a worker busy so the jobs behind it stay queued."""

    async def run(self) -> None:
        await anyio.sleep_forever()


class BlockingWork(js.BlockingJob):
    """:class:`Work` in a thread (the ``thread`` executor): sleeps, then fails as told."""

    def __init__(
        self, name: str, seconds: float = 0.0, failures: int = 0, error: str = "boom", **kw: Any
    ) -> None:
        super().__init__(name, **kw)
        self.seconds = seconds
        self.failures = failures
        self.error = error

    def run_sync(self) -> str:
        time.sleep(self.seconds)
        if self.failures < 0 or self.attempts <= self.failures:
            raise ConnectionError(f"{self.error} (attempt {self.attempts})")
        return "ok"
