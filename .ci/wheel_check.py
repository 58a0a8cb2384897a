"""Checks run inside a fresh virtual environment built from the wheels."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import sys

import anyio
from wheel_jobs import double  # beside this script, so on sys.path

import jobsched as js


def square(x: int) -> int:
    return x * x


async def core_only() -> None:
    """`pip install jobsched-core`: async jobs run; a process job is refused with the fix."""
    for plugin in ("jobsched_thread", "jobsched_process", "jobsched_dask"):
        assert importlib.util.find_spec(plugin) is None, f"{plugin} installed with the core"
    async with js.JobScheduler() as s:
        job_id = s.submit(js.FunctionJob(double, (21,)))
        try:
            s.submit(js.FunctionJob(square, (3,), executor="process"))
        except js.ExecutorNotFoundError as exc:
            message = str(exc)
        else:
            raise AssertionError("a process job was accepted without the process executor")
        assert 'pip install "jobsched-core[process]"' in message, message
        print(f"  refused as expected: {message}")
        await s.join()
    assert s.get(job_id).result == 42


async def process() -> None:
    """`pip install "jobsched-core[process]"`: the same process job runs."""
    async with js.JobScheduler() as s:
        job_id = s.submit(js.FunctionJob(square, (12,), executor="process"))
        await s.join()
    job = s.get(job_id)
    assert job.status is js.JobStatus.COMPLETED, (job.status, job.last_error)
    assert job.result == 144


class Render(js.BlockingJob):
    executor = "gpu"

    def run_sync(self) -> str:
        return f"rendered {self.name}"


async def plugin() -> None:
    """The guide's example plugin, from its wheel: a job on `gpu` runs on it."""
    async with js.JobScheduler() as s:
        job_id = s.submit(Render("frame 1"))
        await s.join()
    job = s.get(job_id)
    assert job.status is js.JobStatus.COMPLETED, (job.status, job.last_error)
    assert job.result == "rendered frame 1"
    assert "jobsched_gpu" in sys.modules, "the job ran without the plugin"
    assert importlib.util.find_spec("jobsched_thread") is None, "the plugin pulled in [thread]"


async def dask() -> None:
    """jobsched-core plus the jobsched-exec-dask wheel: found by its entry point, a job
    runs on a LocalCluster the plugin starts (in-process workers, to keep it light)."""
    (entry,) = importlib.metadata.entry_points(group="jobsched.executors", name="dask")
    plugin = entry.load()
    assert plugin.__module__.startswith("jobsched_dask"), plugin
    executor = plugin(n_workers=1, processes=False)
    async with js.JobScheduler(executors={"dask": executor}) as s:
        job_id = s.submit(js.FunctionJob(square, (11,), executor="dask"))
        await s.join()
    job = s.get(job_id)
    assert job.status is js.JobStatus.COMPLETED, (job.status, job.last_error)
    assert job.result == 121
    assert executor.client is None  # shut down with the scheduler


async def otel() -> None:
    """`pip install "jobsched-core[otel]"`: the API alone (the app brings the SDK); an
    instrumented scheduler runs on its no-op providers, and a job carries no headers."""
    import jobsched_otel

    assert importlib.util.find_spec("opentelemetry.trace") is not None
    assert importlib.util.find_spec("opentelemetry.sdk") is None, "[otel] pulled in the SDK"
    async with js.JobScheduler() as s:
        jobsched_otel.instrument(s)
        job_id = s.submit(js.FunctionJob(double, (4,)))
        await s.join()
    job = s.get(job_id)
    assert job.status is js.JobStatus.COMPLETED, (job.status, job.last_error)
    assert job.result == 8 and job.headers is None


async def postgres() -> None:
    """`pip install "jobsched-core[postgres]"`: a job goes through a PostgreSQL
    database (a new one on the local server, dropped after)."""
    import os

    import psycopg

    admin = "postgresql://postgres@127.0.0.1:5432/postgres"
    name = f"jobsched_wheel_{os.getpid()}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        store = js.open_store(f"postgresql://postgres@127.0.0.1:5432/{name}", secret="wheels")
        assert type(store).__module__.startswith("jobsched_postgres"), store
        async with js.JobScheduler(store=store) as s:
            job_id = await s.enqueue(js.FunctionJob(double, (21,)))
            await s.join()
            job = await s.fetch(job_id)
        assert job.status is js.JobStatus.COMPLETED, (job.status, job.last_error)
        assert job.result == 42
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


async def dashboard() -> None:
    """`pip install "jobsched-core[dashboard,sqlite]"`: the page and its script are served
    for a SQLite store a job ran on (one ASGI request each, no server, no socket)."""
    import tempfile

    from jobsched_dashboard import create_app

    url = f"sqlite:///{tempfile.mkdtemp()}/jobs.db"
    async with js.JobScheduler(store=url) as s:
        s.submit(js.FunctionJob(double, (21,)))
        await s.join()
    app = create_app(url, token="t")

    async def get(path: str) -> tuple[int, bytes]:
        sent: list[dict[str, object]] = []
        done = anyio.Event()
        requested = False
        scope = {"type": "http", "method": "GET", "path": path, "raw_path": path.encode(),
                 "query_string": b"", "headers": [], "http_version": "1.1", "scheme": "http",
                 "server": ("127.0.0.1", 80), "client": ("127.0.0.1", 1), "root_path": "",
                 "app": app}  # fmt: skip

        async def receive() -> dict[str, object]:
            # The request once; then, as a server would, a disconnect only
            # after the response (a file response listens for one meanwhile).
            nonlocal requested
            if not requested:
                requested = True
                return {"type": "http.request", "body": b"", "more_body": False}
            await done.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, object]) -> None:
            sent.append(message)
            if message["type"] == "http.response.body" and not message.get("more_body"):
                done.set()

        await app(scope, receive, send)
        status = next(m["status"] for m in sent if m["type"] == "http.response.start")
        body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
        return status, body  # type: ignore[return-value]

    store = app.state.store
    await store.open()
    try:
        status, page = await get("/")
        assert status == 200 and b"double" in page, (status, page[:300])
        status, script = await get("/static/dashboard.js")
        assert status == 200 and b"data-refresh" in script, status
    finally:
        await store.close()


if __name__ == "__main__":
    checks = {
        "core-only": core_only,
        "process": process,
        "plugin": plugin,
        "dask": dask,
        "otel": otel,
        "postgres": postgres,
        "dashboard": dashboard,
    }
    check = checks[sys.argv[1]]
    anyio.run(check)
    print(f"wheel check {sys.argv[1]}: ok")
