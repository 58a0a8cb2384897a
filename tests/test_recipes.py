"""The framework recipes (docs/recipes.md, examples/recipes/) do what the docs say.

FastAPI and Flask run in this process through their test clients, on the
memory store (where the app runs its jobs itself) and on a SQLite file, where
the app only enqueues and a real ``jobsched worker --app shopjobs:jobs``
process beside it must be the one that ran every job; the Django site runs
as a real ``manage.py runserver`` next to a real worker. The jobs are
registered on ``shopjobs.jobs`` (a ``js.App``): stored as their name and
JSON arguments. A deploy (the app stopped,
the worker sent SIGTERM mid-job) loses nothing. The example tests of
docs/testing.md ("Testing your app") run as their own pytest session.
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
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from fastapi.testclient import TestClient
from flask import Flask

import jobsched as js

ROOT = Path(__file__).resolve().parents[1]
RECIPES = ROOT / "examples" / "recipes"
JOBSCHED = Path(sys.prefix) / "bin" / "jobsched"
TESTS = Path(__file__).resolve().parent


@pytest.fixture(autouse=True)
def _recipes_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    # As `uvicorn fastapi_app:app` or `flask run` would, from the recipes' folder.
    monkeypatch.syspath_prepend(str(RECIPES))


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return "memory" if request.param == "memory" else f"sqlite:///{tmp_path / 'jobs.db'}"


class Worker:
    """A real `jobsched worker --app shopjobs:jobs` on ``url``, as docs/recipes.md runs it.

    From the recipes' folder, the store in JOBSCHED_STORE, nothing on
    PYTHONPATH (it imports from its working directory) but ``path``.
    """

    def __init__(
        self,
        url: str,
        log: Path,
        *,
        grace: float = 30.0,
        imports: Sequence[str] = (),
        path: Path | None = None,
    ) -> None:
        env = {**os.environ, "JOBSCHED_STORE": url}
        env.pop("PYTHONPATH", None)
        if path is not None:
            env["PYTHONPATH"] = str(path)
        args = [str(JOBSCHED), "worker", "--app", "shopjobs:jobs", "--workers", "2"]
        for module in imports:
            args += ["--import", module]
        self.log = log
        # The log goes to a file: a full pipe that nobody reads would block it.
        with log.open("w") as err:
            self.process = subprocess.Popen(
                [*args, "--grace", f"{grace:g}"],
                cwd=RECIPES,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=err,
            )

    @property
    def pid(self) -> int:
        return self.process.pid

    def started(self) -> None:
        """Wait for its "started" line: a SIGTERM before it would kill it undrained."""
        deadline = time.monotonic() + 60
        while "INFO jobsched.worker: started on" not in self.log.read_text():
            assert self.process.poll() is None, self.log.read_text()
            assert time.monotonic() < deadline, "the worker did not start within 60 s"
            time.sleep(0.05)

    def stop(self) -> str:
        """SIGTERM, as a deploy sends it; it must drain and exit 0. Its log."""
        self.started()
        self.process.send_signal(signal.SIGTERM)
        assert self.process.wait(timeout=60) == 0, self.log.read_text()
        return self.log.read_text()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


@pytest.fixture
def worker(store: str, tmp_path: Path) -> Iterator[Worker | None]:
    """`jobsched worker` beside the app on SQLite; None on the memory store,
    where the app runs its jobs itself. Only the tests that run a job ask
    for it: a producer answers the others alone."""
    if store == "memory":
        yield None
        return
    worker = Worker(store, tmp_path / "worker.log")
    try:
        yield worker
        if worker.process.poll() is None:  # not checked by the test: nothing ran
            assert "jobs ended here: none;" in worker.stop()
    finally:
        worker.kill()


def ran_in_the_worker(worker: Worker | None, ended: str) -> None:
    """On SQLite the jobs ended in `jobsched worker`, not in the app (a producer).

    ``ended`` as its stop line counts them: "1 completed, 1 failed".
    """
    if worker is not None:
        log = worker.stop()
        assert f"jobs ended here: {ended}; none cut short" in log, log


# ── FastAPI ───────────────────────────────────────────────────────────────


@pytest.fixture(params=["asyncio", "trio"])
def fastapi_client(request: pytest.FixtureRequest, store: str) -> Iterator[TestClient]:
    import fastapi_app

    with TestClient(fastapi_app.create_app(store), backend=request.param) as client:
        yield client


def test_fastapi_enqueues_and_the_route_returns_the_result(
    fastapi_client: TestClient, worker: Worker | None
) -> None:
    response = fastapi_client.post("/thumbnails/cat.png")
    assert response.status_code == 202
    job_id = response.json()["job_id"]
    assert job_id.startswith("job-")
    answer = fastapi_client.get(f"/thumbnails/jobs/{job_id}")
    assert (answer.status_code, answer.json()) == (200, {"result": "thumbnail of cat.png"})
    # A registered job: its row holds the function's name and JSON arguments.
    scheduler: js.JobScheduler = fastapi_client.app.state.scheduler  # type: ignore[attr-defined]
    assert fastapi_client.portal is not None
    stored = fastapi_client.portal.call(scheduler.fetch, job_id)
    assert (stored.name, stored.args_json) == (  # type: ignore[attr-defined]
        "shopjobs.make_thumbnail",
        '{"image":"cat.png"}',
    )
    ran_in_the_worker(worker, "1 completed")


def test_fastapi_a_failed_job_is_409_naming_its_error(
    fastapi_client: TestClient, worker: Worker | None
) -> None:
    job_id = fastapi_client.post("/thumbnails/cat.gif").json()["job_id"]
    answer = fastapi_client.get(f"/thumbnails/jobs/{job_id}")
    assert answer.status_code == 409
    assert answer.json() == {
        "detail": f"job {job_id} failed: NonRetryableError: not a PNG: 'cat.gif'"
    }
    ran_in_the_worker(worker, "1 failed")


def test_fastapi_the_same_idempotency_key_makes_one_job(
    fastapi_client: TestClient, worker: Worker | None
) -> None:
    key = {"Idempotency-Key": "order-42"}
    first = fastapi_client.post("/thumbnails/cat.png", headers=key)
    again = fastapi_client.post("/thumbnails/cat.png", headers=key)  # a client's retry
    assert (first.status_code, first.json()) == (202, {"job_id": "thumbnail-order-42"})
    assert (again.status_code, again.json()) == (202, {"job_id": "thumbnail-order-42"})
    other = fastapi_client.post("/thumbnails/cat.png", headers={"Idempotency-Key": "order-43"})
    assert other.json() == {"job_id": "thumbnail-order-43"}
    for job_id in ("thumbnail-order-42", "thumbnail-order-43"):
        answer = fastapi_client.get(f"/thumbnails/jobs/{job_id}")
        assert (answer.status_code, answer.json()) == (200, {"result": "thumbnail of cat.png"})
    scheduler: js.JobScheduler = fastapi_client.app.state.scheduler  # type: ignore[attr-defined]
    if worker is None:
        assert sorted(job.job_id for job in scheduler.jobs()) == [
            "thumbnail-order-42",
            "thumbnail-order-43",
        ]
    ran_in_the_worker(worker, "2 completed")  # three requests, two jobs


@pytest.mark.parametrize("key", ["", "k" * 101, "a/b", "a b"])
def test_fastapi_a_bad_idempotency_key_is_422(fastapi_client: TestClient, key: str) -> None:
    answer = fastapi_client.post("/thumbnails/cat.png", headers={"Idempotency-Key": key})
    assert answer.status_code == 422
    assert answer.json()["detail"][0]["loc"] == ["header", "idempotency-key"]


@pytest.mark.parametrize("job_id", ["job-999", "not-an-id"])
def test_fastapi_an_unknown_job_is_404(fastapi_client: TestClient, job_id: str) -> None:
    answer = fastapi_client.get(f"/thumbnails/jobs/{job_id}")
    assert (answer.status_code, answer.json()) == (404, {"detail": f"no job {job_id}"})


def test_fastapi_a_job_still_pending_after_the_wait_is_504(fastapi_client: TestClient) -> None:
    from shopjobs import make_thumbnail

    assert fastapi_client.portal is not None
    # On the app's loop, as a route would: the enqueue goes to its scheduler.
    late = make_thumbnail.options(delay=3600)
    job_id = fastapi_client.portal.call(late.enqueue, "late.png")
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


def test_flask_submits_a_thread_job_and_reports_it(flask_app: Flask, worker: Worker | None) -> None:
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
    ran_in_the_worker(worker, "1 completed")


def test_flask_a_failed_job_reports_its_error(flask_app: Flask, worker: Worker | None) -> None:
    client = flask_app.test_client()
    job_id = client.post("/signup/nobody").json["job_id"]
    assert flask_app.extensions["jobsched"].join(timeout=30)
    assert client.get(f"/jobs/{job_id}").json == {
        "status": "failed",
        "result": None,
        "error": "NonRetryableError: not an email address: 'nobody'",
    }
    ran_in_the_worker(worker, "1 failed")


def test_flask_an_unknown_job_is_404(flask_app: Flask) -> None:
    answer = flask_app.test_client().get("/jobs/job-999")
    assert answer.status_code == 404
    assert b"no job job-999" in answer.data


def test_flask_the_result_route_returns_the_result(flask_app: Flask, worker: Worker | None) -> None:
    client = flask_app.test_client()
    job_id = client.post("/signup/ann@example.com").json["job_id"]
    answer = client.get(f"/jobs/{job_id}/result")
    assert (answer.status_code, answer.json) == (200, {"result": "welcome sent to ann@example.com"})
    ran_in_the_worker(worker, "1 completed")


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


def test_flask_the_result_route_of_a_failed_job_is_409(
    flask_app: Flask, worker: Worker | None
) -> None:
    client = flask_app.test_client()
    job_id = client.post("/signup/nobody").json["job_id"]
    answer = client.get(f"/jobs/{job_id}/result")
    assert answer.status_code == 409
    assert f"job {job_id} failed: NonRetryableError: not an email address" in answer.text
    ran_in_the_worker(worker, "1 failed")


def test_flask_the_result_route_of_a_pending_job_is_504(flask_app: Flask) -> None:
    from shopjobs import send_welcome

    job_id = send_welcome.options(delay=3600).enqueue_sync("late@example.com")
    answer = flask_app.test_client().get(f"/jobs/{job_id}/result?wait=0.2")
    assert answer.status_code == 504
    assert f"job {job_id} has not finished after 0.2 s" in answer.text


def test_flask_the_same_idempotency_key_makes_one_job(
    flask_app: Flask, worker: Worker | None
) -> None:
    client = flask_app.test_client()
    key = {"Idempotency-Key": "signup-7"}
    first = client.post("/signup/ann@example.com", headers=key)
    again = client.post("/signup/ann@example.com", headers=key)  # a client's retry
    assert (first.status_code, first.json) == (202, {"job_id": "welcome-signup-7"})
    assert (again.status_code, again.json) == (202, {"job_id": "welcome-signup-7"})
    answer = client.get("/jobs/welcome-signup-7/result")
    assert (answer.status_code, answer.json) == (200, {"result": "welcome sent to ann@example.com"})
    if worker is None:
        scheduler: js.BackgroundScheduler = flask_app.extensions["jobsched"]
        assert [job.job_id for job in scheduler.jobs()] == ["welcome-signup-7"]
    ran_in_the_worker(worker, "1 completed")  # two requests, one job


@pytest.mark.parametrize("key", ["", "k" * 101, "a/b", "a b"])
def test_flask_a_bad_idempotency_key_is_400(flask_app: Flask, key: str) -> None:
    answer = flask_app.test_client().post(
        "/signup/ann@example.com", headers={"Idempotency-Key": key}
    )
    assert answer.status_code == 400
    assert "Idempotency-Key must be 1 to 100 letters, digits" in answer.text


# ── Django ────────────────────────────────────────────────────────────────


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _request(
    url: str, method: str = "GET", headers: dict[str, str] | None = None
) -> tuple[int, Any]:
    data = b"" if method == "POST" else None
    request = urllib.request.Request(url, method=method, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        body = error.read()
        return error.code, json.loads(body) if body.startswith(b"{") else body


class Site(NamedTuple):
    base: str  # the site's base URL
    worker: Worker


@pytest.fixture
def django_site(tmp_path: Path) -> Iterator[Site]:
    """runserver and `jobsched worker` on one SQLite file."""
    # As docs/recipes.md runs them: from the recipes' folder, the store in
    # JOBSCHED_STORE, nothing on PYTHONPATH (manage.py imports from its own).
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    env = {**os.environ, "JOBSCHED_STORE": url}
    env.pop("PYTHONPATH", None)
    env.pop("DJANGO_SETTINGS_MODULE", None)
    port = _free_port()
    server_log = tmp_path / "server.log"
    worker = Worker(url, tmp_path / "worker.log")
    # Its log goes to a file: runserver logs every request, and a full pipe
    # that nobody reads would block it.
    with server_log.open("w") as server_err:
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
        yield Site(base, worker)
    finally:
        if server.poll() is None:
            server.kill()
        server.wait()
        worker.kill()


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
def test_django_a_view_submits_and_the_job_completes(django_site: Site) -> None:
    base = django_site.base
    code, body = _request(f"{base}/signup/ann@example.com", method="POST")
    assert code == 202, body
    assert _finished(base, body["job_id"]) == {
        "status": "completed",
        "result": "welcome sent to ann@example.com",
        "error": None,
    }
    code, body = _request(f"{base}/signup/nobody", method="POST")
    assert _finished(base, body["job_id"]) == {
        "status": "failed",
        "result": None,
        "error": "NonRetryableError: not an email address: 'nobody'",
    }
    # The same Idempotency-Key twice (a client's retry) makes one job.
    key = {"Idempotency-Key": "signup-7"}
    for _ in range(2):
        code, body = _request(f"{base}/signup/bob@example.com", method="POST", headers=key)
        assert (code, body) == (202, {"job_id": "welcome-signup-7"})
    assert _finished(base, "welcome-signup-7")["result"] == "welcome sent to bob@example.com"
    code, body = _request(
        f"{base}/signup/bob@example.com", method="POST", headers={"Idempotency-Key": "a b"}
    )
    assert (code, body) == (
        400,
        {"error": "Idempotency-Key must be 1 to 100 letters, digits, '_', '.' or '-'"},
    )
    assert _request(f"{base}/jobs/job-999") == (404, {"error": "no job job-999"})
    assert _request(f"{base}/signup/ann@example.com")[0] == 405  # GET: POST only
    # The site only enqueues: the worker ran every job, the keyed one once.
    ran_in_the_worker(django_site.worker, "2 completed, 1 failed")


@pytest.mark.timeout(120)
def test_django_on_the_memory_store_the_site_runs_its_jobs(tmp_path: Path) -> None:
    """With no worker to run them (a test settings' store), the views' scheduler does."""
    script = (
        "import django\n"
        "django.setup()\n"
        "from django.test import Client\n"
        "from djangosite import views\n"
        "answer = Client().post('/signup/ann@example.com')\n"
        "assert answer.status_code == 202, answer\n"
        "print(views.scheduler().result(answer.json()['job_id'], timeout=30))\n"
        "views.scheduler().shutdown()\n"
    )
    env = {
        **os.environ,
        "JOBSCHED_STORE": "memory",
        "DJANGO_SETTINGS_MODULE": "djangosite.settings",
    }
    env.pop("PYTHONPATH", None)
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=RECIPES,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (done.returncode, done.stdout) == (0, "welcome sent to ann@example.com\n"), done.stderr


# ── Deploys ───────────────────────────────────────────────────────────────


def _wait_for(path: Path, log: Path) -> None:
    deadline = time.monotonic() + 60
    while not path.exists():
        assert time.monotonic() < deadline, f"no {path.name} after 60 s:\n{log.read_text()}"
        time.sleep(0.02)


@pytest.mark.timeout(240)  # three worker processes to start on a loaded machine
def test_a_deploy_hands_the_running_job_to_the_next_worker(tmp_path: Path) -> None:
    """The web tier and then the worker restarted mid-job: the job is handed
    back, not cancelled, and completes on the new worker."""
    import fastapi_app
    from recipe_deploy_jobs import render

    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    folder = tmp_path / "render"
    folder.mkdir()

    def deploy_worker(name: str) -> Worker:
        return Worker(
            url, tmp_path / f"{name}.log", grace=0.2, imports=["recipe_deploy_jobs"], path=TESTS
        )

    old = deploy_worker("old")
    try:
        with TestClient(fastapi_app.create_app(url)) as client:
            scheduler: js.JobScheduler = client.app.state.scheduler  # type: ignore[attr-defined]
            assert client.portal is not None
            job = js.FunctionJob(render, (str(folder),))
            job_id = client.portal.call(scheduler.enqueue, job)
            _wait_for(folder / f"started-{old.pid}", old.log)
        # The web server stopped (its producer with it); the job runs on.
        log = old.stop()  # SIGTERM mid-job: the grace runs out, the job goes back
        assert "jobs ended here: none; 1 cut short and handed back to the store" in log, log
        with TestClient(fastapi_app.create_app(url)) as client:  # the new web server
            scheduler = client.app.state.scheduler  # type: ignore[attr-defined]
            assert client.portal is not None
            # Before the new worker starts, which would claim it at once.
            back = client.portal.call(scheduler.fetch, job_id)
            assert (back.status, back.attempts) == (js.JobStatus.PENDING, 0)  # none used up
            new = deploy_worker("new")
            try:
                _wait_for(folder / f"started-{new.pid}", new.log)  # again, from its start
                (folder / "finish").touch()
                answer = client.get(f"/thumbnails/jobs/{job_id}", params={"wait": 60})
                assert (answer.status_code, answer.json()) == (
                    200,
                    {"result": f"rendered by pid {new.pid}"},
                )
                ran_in_the_worker(new, "1 completed")
            finally:
                new.kill()
    finally:
        old.kill()


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
