"""Testing an app that submits jobs: the memory store, join, the mock clock.

Run with ``pytest test_shop.py`` next to the recipes' modules.
"""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import fastapi_app
import flask_app
import pytest
from fastapi.testclient import TestClient
from flask import Flask
from shopjobs import jobs, make_thumbnail
from trio.testing import MockClock

import jobsched as js


@pytest.fixture
def app() -> Iterator[Flask]:
    # The memory store: jobs run in the test process, nothing is left on disk.
    app = flask_app.create_app(store="memory")
    yield app
    app.extensions["jobsched"].shutdown()


def test_signup_sends_the_welcome(app: Flask) -> None:
    response = app.test_client().post("/signup/ann@example.com")
    assert response.status_code == 202
    scheduler: js.BackgroundScheduler = app.extensions["jobsched"]
    assert scheduler.join(timeout=10)  # every job submitted has ended
    job = scheduler.get(response.json["job_id"])
    assert job.status is js.JobStatus.COMPLETED
    assert job.result == "welcome sent to ann@example.com"


def test_signup_with_a_bad_address_fails_the_job(app: Flask) -> None:
    job_id = app.test_client().post("/signup/nobody").json["job_id"]
    assert app.extensions["jobsched"].join(timeout=10)
    status = app.test_client().get(f"/jobs/{job_id}").json
    assert status["status"] == "failed"
    assert status["error"] == "NonRetryableError: not an email address: 'nobody'"


def test_the_thumbnail_route_returns_the_result() -> None:
    with TestClient(fastapi_app.create_app(store="memory")) as client:  # runs the lifespan
        job_id = client.post("/thumbnails/cat.png").json()["job_id"]
        response = client.get(f"/thumbnails/jobs/{job_id}")
    assert response.json() == {"result": "thumbnail of cat.png"}


# The mock clock: trio's MockClock jumps ahead whenever every task waits, and
# the scheduler reads it through clock=anyio.current_time, so a job due
# tomorrow runs at once. Memory store only: a durable store works in threads,
# which the mock clock would jump over.
@pytest.fixture
def anyio_backend() -> tuple[str, dict[str, object]]:
    return ("trio", {"clock": MockClock(autojump_threshold=0)})


@pytest.mark.anyio
async def test_a_thumbnail_due_tomorrow_runs_tomorrow() -> None:
    async with jobs.scheduler(store="memory", clock=anyio.current_time) as s:
        job_id = await make_thumbnail.options(delay=24 * 3600).enqueue("cat.png")
        await s.join()
    job = s.get(job_id)
    assert job.result == "thumbnail of cat.png"
    assert job.started_at == pytest.approx(job.submitted_at + 24 * 3600)
