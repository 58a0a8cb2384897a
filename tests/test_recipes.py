"""The framework recipes (docs/recipes.md, examples/recipes/) do what the docs say.

FastAPI and Flask run in this process through their test clients, on the
memory store and on a SQLite file; the Django site runs as a real
``manage.py runserver`` next to a real ``jobsched worker``, both on one
SQLite file. The example tests of docs/testing.md ("Testing your app") run
as their own pytest session.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from flask import Flask

import jobsched as js

ROOT = Path(__file__).resolve().parents[1]
RECIPES = ROOT / "examples" / "recipes"
JOBSCHED = Path(sys.prefix) / "bin" / "jobsched"


@pytest.fixture(autouse=True)
def _recipes_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    # As `uvicorn fastapi_app:app` or `flask run` would, from the recipes' folder.
    monkeypatch.syspath_prepend(str(RECIPES))


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return "memory" if request.param == "memory" else f"sqlite:///{tmp_path / 'jobs.db'}"


# ── FastAPI ───────────────────────────────────────────────────────────────


@pytest.fixture(params=["asyncio", "trio"])
def fastapi_client(request: pytest.FixtureRequest, store: str) -> Iterator[TestClient]:
    import fastapi_app

    with TestClient(fastapi_app.create_app(store), backend=request.param) as client:
        yield client


def test_fastapi_enqueues_and_the_route_returns_the_result(fastapi_client: TestClient) -> None:
    response = fastapi_client.post("/thumbnails/cat.png")
    assert response.status_code == 202
    job_id = response.json()["job_id"]
    answer = fastapi_client.get(f"/thumbnails/jobs/{job_id}")
    assert (answer.status_code, answer.json()) == (200, {"result": "thumbnail of cat.png"})


def test_fastapi_a_failed_job_is_409_naming_its_error(fastapi_client: TestClient) -> None:
    job_id = fastapi_client.post("/thumbnails/cat.gif").json()["job_id"]
    answer = fastapi_client.get(f"/thumbnails/jobs/{job_id}")
    assert answer.status_code == 409
    assert answer.json() == {
        "detail": f"job {job_id} failed: NonRetryableError: not a PNG: 'cat.gif'"
    }


@pytest.mark.parametrize("job_id", ["job-999", "not-an-id"])
def test_fastapi_an_unknown_job_is_404(fastapi_client: TestClient, job_id: str) -> None:
    answer = fastapi_client.get(f"/thumbnails/jobs/{job_id}")
    assert (answer.status_code, answer.json()) == (404, {"detail": f"no job {job_id}"})


def test_fastapi_a_job_still_pending_after_the_wait_is_504(fastapi_client: TestClient) -> None:
    from shopjobs import make_thumbnail

    scheduler: js.JobScheduler = fastapi_client.app.state.scheduler  # type: ignore[attr-defined]
    late = js.FunctionJob(make_thumbnail, ("late.png",))
    assert fastapi_client.portal is not None
    job_id = fastapi_client.portal.call(partial(scheduler.enqueue, late, delay=3600))
    answer = fastapi_client.get(f"/thumbnails/jobs/{job_id}", params={"wait": 0.2})
    assert answer.status_code == 504
    assert answer.json() == {"detail": f"job {job_id} has not finished after 0.2 s"}


@pytest.mark.parametrize("wait", ["-1", "61", "soon"])
def test_fastapi_a_bad_wait_is_422(fastapi_client: TestClient, wait: str) -> None:
    answer = fastapi_client.get("/thumbnails/jobs/job-1", params={"wait": wait})
    assert answer.status_code == 422
    assert answer.json()["detail"][0]["loc"] == ["query", "wait"]


# ── Flask ─────────────────────────────────────────────────────────────────


@pytest.fixture
def flask_app(store: str) -> Iterator[Flask]:
    import flask_app

    app = flask_app.create_app(store)
    yield app
    app.extensions["jobsched"].shutdown()


def test_flask_submits_a_thread_job_and_reports_it(flask_app: Flask) -> None:
    client = flask_app.test_client()
    response = client.post("/signup/ann@example.com")
    assert response.status_code == 202
    assert flask_app.extensions["jobsched"].join(timeout=30)
    status = client.get(f"/jobs/{response.json['job_id']}")
    assert status.status_code == 200
    assert status.json == {
        "status": "completed",
        "result": "welcome sent to ann@example.com",
        "error": None,
    }


def test_flask_a_failed_job_reports_its_error(flask_app: Flask) -> None:
    client = flask_app.test_client()
    job_id = client.post("/signup/nobody").json["job_id"]
    assert flask_app.extensions["jobsched"].join(timeout=30)
    assert client.get(f"/jobs/{job_id}").json == {
        "status": "failed",
        "result": None,
        "error": "NonRetryableError: not an email address: 'nobody'",
    }


def test_flask_an_unknown_job_is_404(flask_app: Flask) -> None:
    answer = flask_app.test_client().get("/jobs/job-999")
    assert answer.status_code == 404
    assert b"no job job-999" in answer.data


def test_flask_the_result_route_returns_the_result(flask_app: Flask) -> None:
    client = flask_app.test_client()
    job_id = client.post("/signup/ann@example.com").json["job_id"]
    answer = client.get(f"/jobs/{job_id}/result")
    assert (answer.status_code, answer.json) == (200, {"result": "welcome sent to ann@example.com"})


@pytest.mark.parametrize(
    ("path", "code", "says"),
    [
        ("/jobs/job-999/result", 404, "no job job-999"),
        (
            "/jobs/job-1/result?wait=-1",
            400,
            "wait must be a number of seconds from 0 to 60, got &#39;-1&#39;",
        ),
        ("/jobs/job-1/result?wait=61", 400, "got &#39;61&#39;"),
        ("/jobs/job-1/result?wait=nan", 400, "got &#39;nan&#39;"),
        ("/jobs/job-1/result?wait=soon", 400, "got &#39;soon&#39;"),
    ],
)
def test_flask_the_result_route_refuses(flask_app: Flask, path: str, code: int, says: str) -> None:
    answer = flask_app.test_client().get(path)
    assert answer.status_code == code
    assert says in answer.text


def test_flask_the_result_route_of_a_failed_job_is_409(flask_app: Flask) -> None:
    client = flask_app.test_client()
    job_id = client.post("/signup/nobody").json["job_id"]
    answer = client.get(f"/jobs/{job_id}/result")
    assert answer.status_code == 409
    assert f"job {job_id} failed: NonRetryableError: not an email address" in answer.text


def test_flask_the_result_route_of_a_pending_job_is_504(flask_app: Flask) -> None:
    from shopjobs import send_welcome

    scheduler: js.BackgroundScheduler = flask_app.extensions["jobsched"]
    job_id = scheduler.submit(js.FunctionJob(send_welcome, ("late@example.com",)), delay=3600)
    answer = flask_app.test_client().get(f"/jobs/{job_id}/result?wait=0.2")
    assert answer.status_code == 504
    assert f"job {job_id} has not finished after 0.2 s" in answer.text


# ── Django ────────────────────────────────────────────────────────────────


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _request(url: str, method: str = "GET") -> tuple[int, Any]:
    request = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        body = error.read()
        return error.code, json.loads(body) if body.startswith(b"{") else body


@pytest.fixture
def django_site(tmp_path: Path) -> Iterator[str]:
    """runserver and `jobsched worker` on one SQLite file; yields the site's base URL."""
    # As docs/recipes.md runs them: from the recipes' folder, the store in
    # JOBSCHED_STORE, nothing on PYTHONPATH (the worker imports from its
    # working directory, manage.py from its own).
    env = {**os.environ, "JOBSCHED_STORE": f"sqlite:///{tmp_path / 'jobs.db'}"}
    env.pop("PYTHONPATH", None)
    env.pop("DJANGO_SETTINGS_MODULE", None)
    port = _free_port()
    worker_log, server_log = tmp_path / "worker.log", tmp_path / "server.log"
    # Logs go to files: runserver logs every request, and a full pipe that
    # nobody reads would block it.
    with worker_log.open("w") as worker_err, server_log.open("w") as server_err:
        worker = subprocess.Popen(
            [str(JOBSCHED), "worker", "--import", "shopjobs", "--workers", "2"],
            cwd=RECIPES,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=worker_err,
        )
        server = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
            cwd=RECIPES,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=server_err,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 60
            while True:  # until the server answers (a slow start on a loaded machine)
                assert server.poll() is None, server_log.read_text()
                try:
                    _request(f"{base}/jobs/job-0")
                    break
                except (ConnectionError, urllib.error.URLError):
                    assert time.monotonic() < deadline, "runserver did not answer within 60 s"
                    time.sleep(0.1)
            yield base
            assert worker.poll() is None, worker_log.read_text()
            worker.send_signal(signal.SIGTERM)  # drains and exits 0
            assert worker.wait(timeout=60) == 0, worker_log.read_text()
        finally:
            for process in (server, worker):
                if process.poll() is None:
                    process.kill()
                process.wait()


def _finished(base: str, job_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while True:
        code, body = _request(f"{base}/jobs/{job_id}")
        assert code == 200, body
        if body["status"] in {"completed", "failed", "timed_out", "cancelled"}:
            return body  # type: ignore[no-any-return]
        assert time.monotonic() < deadline, f"job {job_id} still {body['status']} after 60 s"
        time.sleep(0.05)


@pytest.mark.timeout(240)  # two processes to start on a loaded machine
def test_django_a_view_submits_and_the_job_completes(django_site: str) -> None:
    code, body = _request(f"{django_site}/signup/ann@example.com", method="POST")
    assert code == 202, body
    assert _finished(django_site, body["job_id"]) == {
        "status": "completed",
        "result": "welcome sent to ann@example.com",
        "error": None,
    }
    code, body = _request(f"{django_site}/signup/nobody", method="POST")
    assert _finished(django_site, body["job_id"]) == {
        "status": "failed",
        "result": None,
        "error": "NonRetryableError: not an email address: 'nobody'",
    }
    assert _request(f"{django_site}/jobs/job-999") == (404, {"error": "no job job-999"})
    assert _request(f"{django_site}/signup/ann@example.com")[0] == 405  # GET: POST only


# ── Testing your app (docs/testing.md) ────────────────────────────────────


@pytest.mark.timeout(300)  # a pytest session of its own
def test_the_example_tests_pass() -> None:
    """examples/recipes/test_shop.py, shown in docs/testing.md, passes as its own session."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_shop.py"],
        cwd=RECIPES,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "4 passed" in done.stdout, done.stdout
