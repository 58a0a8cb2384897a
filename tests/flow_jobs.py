"""Jobs for tests/test_workflows.py, importable by name in process workers
(pytest puts ``tests/`` on the path the executor hands them): no pytest here."""

from __future__ import annotations

from typing import Any

import anyio

import jobsched as js

# Async jobs, so that the tests on trio's virtual clock wait for no thread
# (the clock would jump over it, to the job's timeout).


async def add(a: Any, b: Any = 0) -> Any:
    return a + b


async def same(value: Any) -> Any:
    return value


def collect_sync(*values: Any, **named: Any) -> list[Any]:
    """Whatever it was given, for the test to look at (thread and process jobs)."""
    return [*values, *sorted(named.items())]


async def collect(*values: Any, **named: Any) -> list[Any]:
    return collect_sync(*values, **named)


async def fail(message: str = "it broke") -> None:
    raise ValueError(message)


async def describe(values: list[Any]) -> list[str]:
    """Each received value as text: a failed upstream's slot by its error's
    type and upstream (the error does not compare equal to another)."""
    return [
        f"failed {v.job_id} {v.status.value}" if isinstance(v, js.UpstreamFailedError) else repr(v)
        for v in values
    ]


async def wait_for(event: anyio.Event, value: Any = None) -> Any:
    """Returns ``value`` once the test sets ``event``."""
    await event.wait()
    return value


async def run_until_cancelled(started: anyio.Event) -> None:
    started.set()
    await anyio.sleep_forever()


async def sleep_long() -> None:
    await anyio.sleep(3600)


class Sum(js.AsyncJob):
    """A subclass job whose attributes hold markers: the results arrive there."""

    def __init__(self, first: Any, rest: Any) -> None:
        super().__init__("sum")
        self.first = first
        self.rest = rest

    async def run(self) -> Any:
        return self.first + sum(self.rest)


app = js.App()


@app.job
async def total(values: list[Any], start: Any = 0) -> Any:
    """A registered job: its markers are tags in its JSON arguments."""
    return start + sum(v for v in values if not isinstance(v, js.UpstreamFailedError))
