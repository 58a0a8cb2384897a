"""Jobs for the durable-store tests: importable by reference, with side effects
in files, so a test (or a restarted process) can see what ran."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import anyio

import jobsched as js


def log_line(path: str, line: str) -> None:
    """Append one line atomically (O_APPEND), even across processes."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


class Note(js.AsyncJob):
    """Logs ``start``/``end`` lines with its id and attempt; returns ``value``."""

    def __init__(self, log: str, value: Any = None, seconds: float = 0.0, **kw: Any) -> None:
        super().__init__(kw.pop("name", f"note {value!r}"), **kw)
        self.log = log
        self.value = value
        self.seconds = seconds

    async def run(self) -> Any:
        log_line(self.log, f"start {self.job_id} {self.attempts}")
        if self.seconds:
            await anyio.sleep(self.seconds)
        log_line(self.log, f"end {self.job_id} {self.attempts}")
        return self.value


class Fails(js.AsyncJob):
    """Fails its first ``failures`` attempts."""

    def __init__(self, failures: int, **kw: Any) -> None:
        super().__init__(kw.pop("name", f"fails x{failures}"), **kw)
        self.failures = failures

    async def run(self) -> str:
        await anyio.lowlevel.checkpoint()
        if self.attempts <= self.failures:
            raise ConnectionError(f"attempt {self.attempts}")
        return "ok"


class Sleeper(js.BlockingJob):
    """Sleeps in a thread, logging start and end."""

    def __init__(self, log: str, seconds: float, **kw: Any) -> None:
        super().__init__(kw.pop("name", "sleeper"), **kw)
        self.log = log
        self.seconds = seconds

    def run_sync(self) -> str:
        log_line(self.log, f"start {self.job_id} {self.attempts}")
        deadline = time.monotonic() + self.seconds
        while time.monotonic() < deadline and not js.cancel_requested():
            time.sleep(0.01)
        log_line(self.log, f"end {self.job_id} {self.attempts}")
        return "slept"


def square(x: int) -> int:
    """A process job's function: importable, so it pickles by reference."""
    return x * x


def runs(log: str | Path) -> dict[str, list[tuple[str, int]]]:
    """job id -> [(start|end, attempt), ...] from a log."""
    seen: dict[str, list[tuple[str, int]]] = {}
    path = Path(log)
    if not path.exists():
        return seen
    for line in path.read_text().splitlines():
        what, job_id, attempt = line.split()
        seen.setdefault(job_id, []).append((what, int(attempt)))
    return seen


class StallFirst(js.BlockingJob):
    """Logs its start; the first attempt then blocks (until its process dies)."""

    def __init__(self, log: str, **kw: Any) -> None:
        super().__init__(kw.pop("name", "stall-first"), **kw)
        self.log = log

    def run_sync(self) -> str:
        log_line(self.log, f"start {self.job_id} {self.attempts}")
        if self.attempts == 1:
            while not js.cancel_requested():
                time.sleep(0.01)
        log_line(self.log, f"end {self.job_id} {self.attempts}")
        return "recovered"


def make_note(log: str, value: Any = "beat", seconds: float = 0.0) -> Note:
    """A schedule's factory (with functools.partial: importable, so storable)."""
    return Note(log, value, seconds=seconds, name=f"scheduled {value}")


def received(value: Any) -> Any:
    """A received input as JSON: a result as is, an ``UpstreamFailedError`` as
    ``{"failed": upstream id, "status": how it ended}``, a list item by item."""
    if isinstance(value, js.UpstreamFailedError):
        return {"failed": value.job_id, "status": getattr(value.status, "value", value.status)}
    if isinstance(value, list):
        return [received(v) for v in value]
    return value


def _start_line(job: js.Job, takes: list[Any]) -> str:
    # One line (one atomic append) with the inputs: what a start received is
    # never torn from it, whichever process dies when.
    line = f"start {job.job_id} {job.attempts} {time.time():.6f}"
    if takes:
        line += " " + json.dumps(received(takes), separators=(",", ":"))
    return line


class Step(js.AsyncJob):
    """The durable model's job: logs ``start``/``fail``/``end`` lines with the
    wall time, fails its first ``failures`` attempts, else returns ``value``.

    ``takes`` holds result markers (``js.result_of``/``js.results_of``) one
    level down, where they are found; the start line logs what they became."""

    def __init__(
        self, log: str, value: int, failures: int, seconds: float, takes: Any = (), **kw: Any
    ) -> None:
        super().__init__(f"step {value}", **kw)
        self.log = log
        self.value = value
        self.failures = failures
        self.seconds = seconds
        self.takes = list(takes)

    async def run(self) -> int:
        log_line(self.log, _start_line(self, self.takes))
        await anyio.sleep(self.seconds)
        if self.attempts <= self.failures:
            log_line(self.log, f"fail {self.job_id} {self.attempts} {time.time():.6f}")
            raise ConnectionError(f"planned failure {self.attempts}")
        log_line(self.log, f"end {self.job_id} {self.attempts} {time.time():.6f}")
        return self.value


class SlowStep(js.BlockingJob):
    """:class:`Step` on the thread executor (checks ``cancel_requested``)."""

    def __init__(
        self, log: str, value: int, failures: int, seconds: float, takes: Any = (), **kw: Any
    ) -> None:
        super().__init__(f"slow step {value}", **kw)
        self.log = log
        self.value = value
        self.failures = failures
        self.seconds = seconds
        self.takes = list(takes)

    def run_sync(self) -> int:
        log_line(self.log, _start_line(self, self.takes))
        deadline = time.monotonic() + self.seconds
        while time.monotonic() < deadline and not js.cancel_requested():
            time.sleep(0.005)
        if self.attempts <= self.failures:
            log_line(self.log, f"fail {self.job_id} {self.attempts} {time.time():.6f}")
            raise ConnectionError(f"planned failure {self.attempts}")
        log_line(self.log, f"end {self.job_id} {self.attempts} {time.time():.6f}")
        return self.value


class Stubborn(js.BlockingJob):
    """Logs its start, then sleeps ``seconds`` in a thread, deaf to cancels."""

    def __init__(self, log: str, seconds: float, **kw: Any) -> None:
        super().__init__(kw.pop("name", "stubborn"), **kw)
        self.log = log
        self.seconds = seconds

    def run_sync(self) -> str:
        log_line(self.log, f"start {self.job_id} {self.attempts}")
        time.sleep(self.seconds)
        log_line(self.log, f"end {self.job_id} {self.attempts}")
        return "done"


#: Set by a test (in its event loop) before it submits a Gated job.
GATE: anyio.Event | None = None


class Gated(js.AsyncJob):
    """Waits for :data:`GATE`."""

    async def run(self) -> None:
        assert GATE is not None
        await GATE.wait()


class Noop(js.AsyncJob):
    """Does nothing: the store's round trips are all there is to a run."""

    async def run(self) -> None:
        return None


class FailsAtGate(js.AsyncJob):
    """Its first attempt waits for :data:`GATE`, then fails; later ones return."""

    async def run(self) -> str:
        if self.attempts == 1:
            assert GATE is not None
            await GATE.wait()
            raise ConnectionError("failed at the gate")
        return "ok"
