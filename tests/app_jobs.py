"""Registered jobs for the app tests: importable by name, as a worker's are."""

from __future__ import annotations

import datetime as dt
import threading
from typing import Any

import jobsched as js

app = js.App()

#: Calls of `record`, in order (a thread job: appended from threads).
calls: list[Any] = []
calls_lock = threading.Lock()


@app.job
async def add(a: int, b: int = 2) -> int:
    return a + b


@app.job(queue="emails", retry=js.RetryPolicy(max_retries=0))
async def send_email(to: str, when: dt.datetime, tags: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"to": to, "when": when, "tags": tags}


@app.job
def record(*items: Any, **extra: Any) -> list[Any]:
    with calls_lock:
        calls.append((items, extra))
    return [items, extra]


@app.job(retry=js.RetryPolicy(max_retries=3, base_delay=0.01))
async def bad_result() -> object:
    return object()


@app.job(retry=js.RetryPolicy(max_retries=3, base_delay=0.01))
async def decoded_badly() -> str:
    return b"caf\xe9".decode("utf-8", errors="surrogateescape")  # 'caf\udce9'


@app.job(serializer="pickle")
async def pickled(value: Any) -> Any:
    return value


@app.job(name="custom.name")
async def named() -> str:
    return "named"


@app.job
async def fan_out(n: int) -> int:
    # A job that enqueues more: inside a worker, enqueue uses that worker's scheduler.
    for i in range(n):
        await add.enqueue(i, b=0)
    return n


@app.job
def fan_out_sync(n: int) -> int:
    # From a thread job: enqueue_sync reaches the scheduler's loop.
    for i in range(n):
        add.enqueue_sync(i, b=100)
    return n


#: An app with periodic jobs (kept apart: every scheduler of it registers them).
timed = js.App()


@timed.periodic(every=60)
@timed.job(name="timed.tick")
async def tick() -> str:
    return "tick"


@timed.periodic(cron="0 3 * * *", timezone="UTC", id="nightly")
def nightly(day: str = "today") -> str:
    return day
