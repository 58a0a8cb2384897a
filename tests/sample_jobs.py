"""Small async jobs the core tests drive the scheduler with."""

from __future__ import annotations

from typing import Any

import anyio

import jobsched as js


class Ok(js.AsyncJob):
    """Returns ``value`` after ``seconds`` (0 means it never suspends)."""

    def __init__(self, value: Any = None, seconds: float = 0.0, **kw: Any) -> None:
        super().__init__(kw.pop("name", f"ok {value!r}"), **kw)
        self.value = value
        self.seconds = seconds

    async def run(self) -> Any:
        if self.seconds:
            await anyio.sleep(self.seconds)
        return self.value


class FailTimes(js.AsyncJob):
    """Raises ``exc`` on its first ``failures`` attempts, then returns "ok"."""

    def __init__(self, failures: int, exc: type[BaseException] = ConnectionError, **kw: Any):
        super().__init__(kw.pop("name", f"fail x{failures}"), **kw)
        self.failures = failures
        self.exc = exc

    async def run(self) -> str:
        await anyio.lowlevel.checkpoint()
        if self.attempts <= self.failures:
            raise self.exc(f"attempt {self.attempts}")
        return "ok"


class Gate(js.AsyncJob):
    """Signals ``started``, then waits for ``release`` (or forever)."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(kw.pop("name", "gate"), **kw)
        self.started = anyio.Event()
        self.release = anyio.Event()
        self.cancelled_seen = False

    async def run(self) -> str:
        self.started.set()
        try:
            await self.release.wait()
        except anyio.get_cancelled_exc_class():
            self.cancelled_seen = True
            raise
        return "released"


class Recorder:
    """A listener that keeps every transition, in order."""

    def __init__(self) -> None:
        self.events: list[tuple[str, js.JobStatus, js.JobStatus]] = []

    def __call__(self, job: js.Job, old: js.JobStatus, new: js.JobStatus) -> None:
        self.events.append((job.job_id, old, new))

    def of(self, job_id: str) -> list[tuple[js.JobStatus, js.JobStatus]]:
        return [(old, new) for jid, old, new in self.events if jid == job_id]

    def started_order(self) -> list[str]:
        return [jid for jid, _, new in self.events if new is js.JobStatus.RUNNING]


class Stubborn(js.AsyncJob):
    """Swallows its cancellation and returns as if it had succeeded."""

    def __init__(self, name: str = "stubborn", **kw: Any) -> None:
        super().__init__(name, **kw)
        self.started = anyio.Event()

    async def run(self) -> str:
        self.started.set()
        try:
            await anyio.sleep(3600)
        except anyio.get_cancelled_exc_class():
            return "pretend success"
        return "slept"


class InFlight:
    """Counts the ``Track`` attempts running at once, and the most ever."""

    def __init__(self) -> None:
        self.now = 0
        self.most = 0


class Track(js.AsyncJob):
    """Runs for ``seconds``, counted in ``counter`` meanwhile."""

    def __init__(self, name: str, counter: InFlight, seconds: float = 0.01) -> None:
        super().__init__(name)
        self.counter = counter
        self.seconds = seconds

    async def run(self) -> None:
        counter = self.counter
        counter.now += 1
        counter.most = max(counter.most, counter.now)
        await anyio.sleep(self.seconds)
        counter.now -= 1


class FailAfterGate(js.AsyncJob):
    """Sets ``gate.started``, waits for ``gate.release``, then fails."""

    def __init__(self, name: str, gate: Gate, **kw: Any) -> None:
        super().__init__(name, **kw)
        self.gate = gate

    async def run(self) -> None:
        self.gate.started.set()
        await self.gate.release.wait()
        raise ConnectionError("late failure")


class FailNow(js.AsyncJob):
    """Fails at once, for good, without suspending."""

    async def run(self) -> None:
        raise js.NonRetryableError("no")
