"""Typing expectations, checked by mypy and pyright (``.ci/typecheck``), not run by pytest.

Each ``assert_type`` states what the checkers must infer. Each call that must
be rejected carries an ignore comment for each checker; both report an ignore
that suppresses nothing (mypy's ``warn_unused_ignores``, pyright's
``reportUnnecessaryTypeIgnoreComment``), so the file fails the moment a
rejected call is accepted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from typing_extensions import assert_type

import jobsched as js


async def fetch(url: str, retries: int = 3) -> bytes:
    return url.encode() * retries


def square(x: int) -> int:
    return x * x


def tick() -> None:
    pass


def function_job_result_types() -> None:
    # The result type is the function's, awaited for a coroutine function.
    assert_type(js.FunctionJob(square, (3,)), js.FunctionJob[int])
    assert_type(js.FunctionJob(fetch, ("u", 2)), js.FunctionJob[bytes])
    assert_type(js.FunctionJob(fetch, ("u",)), js.FunctionJob[bytes])
    assert_type(js.FunctionJob(tick), js.FunctionJob[None])
    assert_type(js.FunctionJob(square, (3,)).result, int | None)
    assert_type(js.FunctionJob(fetch, ("u",), executor="async").result, bytes | None)
    # Unchecked forms still carry the result type.
    assert_type(js.FunctionJob(square, [3]), js.FunctionJob[int])
    assert_type(js.FunctionJob(square, kwargs={"x": 3}), js.FunctionJob[int])
    assert_type(js.FunctionJob(fetch, ("u",), {"retries": 1}), js.FunctionJob[bytes])
    # A job from the scheduler is a plain Job: its result is not known.
    assert_type(js.JobScheduler().get("job-1").result, Any)


def function_job_rejected_arguments() -> None:
    # A wrong argument type, a missing and an extra argument, a missing tuple.
    js.FunctionJob(square, ("3",))  # type: ignore[arg-type]  # pyright: ignore[reportCallIssue, reportArgumentType]
    js.FunctionJob(fetch, ())  # type: ignore[arg-type]  # pyright: ignore[reportCallIssue, reportArgumentType]
    js.FunctionJob(square, (1, 2))  # type: ignore[arg-type]  # pyright: ignore[reportCallIssue, reportArgumentType]
    js.FunctionJob(square)  # type: ignore[arg-type]  # pyright: ignore[reportCallIssue, reportArgumentType]
    js.FunctionJob(square, 3)  # type: ignore[call-overload]  # pyright: ignore[reportCallIssue, reportArgumentType]
    js.FunctionJob(square, (3,), timeout="5")  # type: ignore[call-overload]  # pyright: ignore[reportCallIssue, reportArgumentType]


def background_scheduler_types() -> None:
    # Plain calls with the JobScheduler's answers; shutdown's options are keywords.
    with js.BackgroundScheduler(store="sqlite:///jobs.db", backend="trio") as s:
        assert_type(s, js.BackgroundScheduler)
        assert_type(s.submit(js.FunctionJob(square, (3,)), delay=1.0), str)
        assert_type(s.join(timeout=1.0), bool)
        assert_type(s.get("job-1"), js.Job)
        assert_type(s.cancel("job-1"), bool)
        assert_type(s.schedule_cron(lambda: js.FunctionJob(tick), "@daily", id="d"), str)
        assert_type(s.scheduler, js.JobScheduler)
        s.shutdown(False, cancel_running=True)
        s.shutdown(False, True)  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]
        s.submit(square)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]


app = js.App()


@app.job
async def send(to: str, times: int = 1) -> str:
    return to * times


@app.job(queue="emails", retry=js.RetryPolicy(max_retries=0))
def plain(x: int) -> int:
    return x


async def app_job_function_types() -> None:
    # enqueue and job take the function's own parameters (ParamSpec).
    assert_type(await send.enqueue("a"), str)
    assert_type(await send.enqueue("a", times=2), str)
    assert_type(send.enqueue_sync("a", 2), str)
    assert_type(send.job("a"), js.Job)
    assert_type(send.options(job_id="k", delay=1.0).enqueue_sync("a"), str)
    assert_type(await plain.options(queue="other").enqueue(3), str)
    assert_type(plain(3), int)
    assert_type(send.name, str)
    assert_type(app.jobs, Mapping[str, js.JobFunction[Any, Any]])
    assert_type(app.scheduler(num_workers=2), js.JobScheduler)


async def app_job_function_rejected_arguments() -> None:
    send.enqueue_sync(1)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    send.enqueue_sync()  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]
    await plain.enqueue("3")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    plain.options(priority=1).job(1, 2)  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]
    send.job(to=1)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
