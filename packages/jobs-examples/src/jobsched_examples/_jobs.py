"""The example jobs: I/O on the loop, blocking I/O in a thread, CPU in a process."""

from __future__ import annotations

import time
from typing import Any

import anyio

import jobsched as js


class EmailJob(js.AsyncJob):
    """I/O-bound: awaits the network, so it belongs on the event loop."""

    def __init__(self, to: str, subject: str, latency: float = 0.05, **kw: Any) -> None:
        super().__init__(f"email {to}: {subject}", **kw)
        self.to = to
        self.latency = latency

    async def run(self) -> str:
        await anyio.sleep(self.latency)
        return f"sent to {self.to}"


class FlakyUploadJob(js.AsyncJob):
    """Fails its first ``failures`` attempts, then succeeds: exercises retries."""

    def __init__(self, path: str, failures: int, **kw: Any) -> None:
        super().__init__(f"upload {path}", **kw)
        self.failures = failures

    async def run(self) -> str:
        await anyio.sleep(0.01)
        if self.attempts <= self.failures:
            raise ConnectionError(f"attempt {self.attempts}: connection reset")
        return "uploaded"


class SleepJob(js.AsyncJob):
    """Sleeps ``seconds`` on the loop and returns them: a stand-in for a slow call."""

    def __init__(self, name: str, seconds: float, **kw: Any) -> None:
        super().__init__(name, **kw)
        self.seconds = seconds

    async def run(self) -> float:
        await anyio.sleep(self.seconds)
        return self.seconds


class CsvExportJob(js.BlockingJob):
    """Blocking I/O (a sync database driver, say): runs in a thread."""

    def __init__(self, table: str, rows: int = 1_000, **kw: Any) -> None:
        super().__init__(f"export {table}", **kw)
        self.rows = rows

    def run_sync(self) -> int:
        time.sleep(0.02)  # releases the GIL while "waiting on the database"
        return self.rows


def count_primes(n: int) -> int:
    """The number of primes below ``n`` (a sieve of Eratosthenes)."""
    if n < 3:
        return 0
    sieve = bytearray([1]) * n
    sieve[:2] = b"\x00\x00"
    for i in range(2, int(n**0.5) + 1):
        if sieve[i]:
            sieve[i * i :: i] = bytes(len(range(i * i, n, i)))
    return sum(sieve)


class PrimeCountJob(js.CpuBoundJob):
    """CPU-bound: counts primes below ``n`` in a worker process."""

    def __init__(self, n: int, **kw: Any) -> None:
        super().__init__(f"count primes < {n}", **kw)
        self.n = n

    def run_sync(self) -> int:
        return count_primes(self.n)
