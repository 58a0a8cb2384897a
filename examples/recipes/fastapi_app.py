"""FastAPI: a producer in the app's lifespan, a route that enqueues, one that awaits the result.

Run it with ``uvicorn fastapi_app:app`` next to ``jobsched worker --app
shopjobs:jobs``, which runs the jobs; both take the store from
``shopjobs.jobs`` (``JOBSCHED_STORE``, ``sqlite:///jobs.db`` by default).
Each uvicorn worker process has its own producer on the same store.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

from fastapi import FastAPI, Header, HTTPException, Query, Request
from shopjobs import jobs, make_thumbnail

import jobsched as js


def create_app(store: str | None = None) -> FastAPI:
    """The web app; ``store`` replaces the jobs' store ("memory" in tests)."""
    store = store or jobs.settings().get("store", "memory")

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # Started with the app and stopped with it, on the app's event loop;
        # `await f.enqueue(...)` in a route goes to it. On a durable store a
        # producer (num_workers=0): `jobsched worker` runs the jobs, so a
        # deploy of the web servers never cuts one short. The memory store
        # (the app's tests) has no other process, so there the app runs its
        # jobs itself.
        workers = 4 if store == "memory" else 0
        async with jobs.scheduler(store=store, num_workers=workers) as scheduler:
            app.state.scheduler = scheduler
            yield

    app = FastAPI(lifespan=lifespan)

    @app.post("/thumbnails/{image}", status_code=202)
    async def request_thumbnail(
        image: str,
        # A UUID, say: a few URL-safe characters, as the id goes in the result's URL.
        idempotency_key: Annotated[str | None, Header(pattern=r"^[\w.-]{1,100}$")] = None,
    ) -> dict[str, str]:
        if idempotency_key is None:
            # Returns once the job is committed: a crash after this loses nothing.
            return {"job_id": await make_thumbnail.enqueue(image)}
        # The same key again (a client's retry, or the same request sent to
        # two servers) makes no second job: the store keeps the first, and
        # its id is the answer. The prefix keeps the id clear of the store's
        # own "job-<n>" (refused as an id of yours) and of other routes' keys.
        sender = make_thumbnail.options(job_id=f"thumbnail-{idempotency_key}")
        return {"job_id": await sender.enqueue(image)}

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
