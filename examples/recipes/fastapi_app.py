"""FastAPI: a scheduler in the app's lifespan, a route that enqueues, one that awaits the result.

Run it with ``uvicorn fastapi_app:app`` (the store from ``JOBSCHED_STORE``,
``sqlite:///jobs.db`` by default). Each uvicorn worker process has its own
scheduler on the same SQLite file.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from fastapi import FastAPI, HTTPException, Request
from shopjobs import make_thumbnail

import jobsched as js


async def wait_finished(s: js.JobScheduler, job_id: str) -> js.Job:
    """The job once it has finished, as the store has it, wherever it ran.

    Polls the store: once ``s.wait(job_id, timeout=...)`` is released
    (API.md "Producers, results and deploys"), that call replaces this function.
    """
    while True:
        job = await s.fetch(job_id)
        if job.status.is_terminal:
            return job
        await anyio.sleep(0.05)


def create_app(store: str | None = None) -> FastAPI:
    """The app, its jobs in ``store`` (a store URL; "memory" in tests)."""
    store = store or os.environ.get("JOBSCHED_STORE", "sqlite:///jobs.db")

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # Started with the app and stopped with it, on the app's event loop.
        async with js.JobScheduler(store=store, num_workers=4) as scheduler:
            app.state.scheduler = scheduler
            yield

    app = FastAPI(lifespan=lifespan)

    @app.post("/thumbnails/{image}", status_code=202)
    async def request_thumbnail(image: str, request: Request) -> dict[str, str]:
        scheduler: js.JobScheduler = request.app.state.scheduler
        # Returns once the job is committed: a crash after this loses nothing.
        job_id = await scheduler.enqueue(js.FunctionJob(make_thumbnail, (image,)))
        return {"job_id": job_id}

    @app.get("/thumbnails/jobs/{job_id}")
    async def thumbnail_result(job_id: str, request: Request, wait: float = 10.0) -> Any:
        scheduler: js.JobScheduler = request.app.state.scheduler
        try:
            with anyio.fail_after(wait):
                job = await wait_finished(scheduler, job_id)
        except js.UnknownJobError:
            raise HTTPException(404, f"no job {job_id}")
        except TimeoutError:
            raise HTTPException(504, f"job {job_id} has not finished after {wait} s")
        if job.status is not js.JobStatus.COMPLETED:
            raise HTTPException(409, f"job {job_id} {job.status.value}: {job.last_error}")
        return {"result": job.result}

    return app


app = create_app()
