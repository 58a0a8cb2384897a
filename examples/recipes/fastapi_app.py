"""FastAPI: a scheduler in the app's lifespan, a route that enqueues, one that awaits the result.

Run it with ``uvicorn fastapi_app:app`` (the store from ``JOBSCHED_STORE``,
``sqlite:///jobs.db`` by default). Each uvicorn worker process has its own
scheduler on the same SQLite file.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

from fastapi import FastAPI, HTTPException, Query, Request
from shopjobs import make_thumbnail

import jobsched as js


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
    async def thumbnail_result(
        job_id: str, request: Request, wait: Annotated[float, Query(ge=0, le=60)] = 10.0
    ) -> Any:
        scheduler: js.JobScheduler = request.app.state.scheduler
        try:
            # Returns once the job has finished, wherever it ran.
            return {"result": await scheduler.result(job_id, timeout=wait)}
        except js.JobFailedError as exc:
            job = exc.job  # the finished job, as the store has it
            raise HTTPException(409, f"job {job_id} {job.status.value}: {job.last_error}")
        except js.UnknownJobError:
            raise HTTPException(404, f"no job {job_id}")
        except TimeoutError:
            raise HTTPException(504, f"job {job_id} has not finished after {wait} s")

    return app


app = create_app()
