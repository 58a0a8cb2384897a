"""``load_grace``: a stored job whose module a member lacks waits for one that has it.

During a deploy, a new producer may enqueue a job whose function only the
new workers have. An old worker that claims it must not fail it: it hands
it back uncounted (``JobStore.defer``), runnable again a little later, logs
one WARNING, and only once its ``load_grace`` is over does the job end
FAILED with the load error. Here one process plays both sides: the job's
module is importable while it is submitted, then taken away (no member of
this process can load it), then given back (as a new worker would have it).
The real-process version is in tests/test_cli_worker.py.
"""

from __future__ import annotations

import logging
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

import jobsched as js
from jobsched._engine._link import _timing

pytestmark = pytest.mark.anyio

S = js.JobStatus


@pytest.fixture(
    params=[
        pytest.param("asyncio", id="asyncio"),
        pytest.param("trio", id="trio"),
    ]
)
def anyio_backend(request: pytest.FixtureRequest) -> str:
    # Real clocks: the SQLite store works in threads, and the grace is wall time.
    return str(request.param)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'jobs.db'}"
    from pg import schema_url

    return schema_url(request.getfixturevalue("pg_session_database"))


def open_store(url: str) -> js.JobStore:
    from pg import SECRET

    return js.open_store(url, secret=SECRET)


@pytest.fixture
def module(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[ModuleSwitch]:
    """A job module of this test's own, importable until ``hide()``."""
    name = f"grace_jobs_{abs(hash(request.node.nodeid)):x}"
    folder = tmp_path / "code"
    folder.mkdir()
    (folder / f"{name}.py").write_text(
        textwrap.dedent(
            """
            def double(x):
                return 2 * x
            """
        )
    )
    switch = ModuleSwitch(name, str(folder))
    switch.show()
    yield switch
    switch.hide()


class ModuleSwitch:
    """Puts a module's folder on sys.path, or takes it (and the module) away."""

    def __init__(self, name: str, folder: str) -> None:
        self.name, self.folder = name, folder

    def show(self) -> None:
        if self.folder not in sys.path:
            sys.path.insert(0, self.folder)

    def hide(self) -> None:
        if self.folder in sys.path:
            sys.path.remove(self.folder)
        sys.modules.pop(self.name, None)

    def job(self) -> js.FunctionJob[Any]:
        import importlib

        fn = importlib.import_module(self.name).double
        return js.FunctionJob(fn, (21,), name="double")


async def enqueue(url: str, job: js.Job) -> str:
    """The job committed by a producer that runs nothing (so no member of
    this process holds its object: a worker must load it from the store)."""
    async with js.JobScheduler(store=open_store(url), num_workers=0) as producer:
        return await producer.enqueue(job)


async def wait_for(s: js.JobScheduler, job_id: str, done: Any) -> Any:
    """The stored job once ``done(job)`` holds (polled: another process's view)."""
    with anyio.fail_after(30):
        while True:
            job = await s.fetch(job_id)
            if done(job):
                return job
            await anyio.sleep(0.05)


@pytest.fixture
def quick_retry(monkeypatch: pytest.MonkeyPatch) -> None:
    """A job handed back comes back after 0.2 s, not 5 s: the tests wait less."""
    monkeypatch.setattr(_timing, "LOAD_RETRY", 0.2)


async def test_a_job_that_does_not_load_waits_uncounted_then_runs_where_it_loads(
    store_url: str, module: ModuleSwitch, quick_retry: None, caplog: pytest.LogCaptureFixture
) -> None:
    """The member hands it back (PENDING, attempts 0, last_error the load
    error), logs one WARNING for it however often it claims it again, and
    once the module is there it runs as attempt 1."""
    job_id = await enqueue(store_url, module.job())
    module.hide()
    caplog.set_level(logging.WARNING, logger="jobsched")
    async with js.JobScheduler(store=open_store(store_url), num_workers=2) as s:
        # Between two claims (every 0.2 s; each shows RUNNING until the
        # heartbeat writes the hand-back): waiting, uncounted, saying why.
        waiting = await wait_for(
            s,
            job_id,
            lambda j: j.status is S.PENDING and "cannot load the job" in (j.last_error or ""),
        )
        assert waiting.attempts == 0 and module.name in waiting.last_error
        assert "waiting for a member that can load it" in waiting.last_error
        # Claimed and handed back a few more times: never failed, logged once.
        await anyio.sleep(0.8)
        assert not (await s.fetch(job_id)).status.is_terminal
        assert s._load_handbacks == 1
        module.show()  # the new code is deployed
        ran = await wait_for(s, job_id, lambda j: j.status.is_terminal)
    assert (ran.status, ran.attempts, ran.result, ran.last_error) == (S.COMPLETED, 1, 42, None)
    warnings = [r for r in caplog.records if "handed back" in r.getMessage()]
    assert len(warnings) == 1, [r.getMessage() for r in caplog.records]
    (warning,) = warnings
    assert warning.levelno == logging.WARNING
    assert job_id in warning.getMessage() and module.name in warning.getMessage()
    assert "load_grace, 600s" in warning.getMessage(), warning.getMessage()


async def test_after_load_grace_the_job_fails_with_the_load_error(
    store_url: str, module: ModuleSwitch, quick_retry: None, caplog: pytest.LogCaptureFixture
) -> None:
    """With load_grace=0.5 the job is handed back, then fails once the
    grace is over: FAILED, one attempt, its last_error the load error and
    the grace; an ERROR line says so."""
    job_id = await enqueue(store_url, module.job())
    module.hide()
    async with js.JobScheduler(store=open_store(store_url), num_workers=1, load_grace=0.5) as s:
        failed = await wait_for(s, job_id, lambda j: j.status.is_terminal)
    assert failed.status is S.FAILED and failed.attempts == 1
    assert failed.last_error.startswith("cannot load the job: ")
    assert module.name in failed.last_error
    assert "no member loaded it within load_grace, 0.5s" in failed.last_error
    assert any(
        r.levelno == logging.ERROR and job_id in r.getMessage() and "load_grace" in r.getMessage()
        for r in caplog.records
    )


async def test_load_grace_zero_fails_at_once(
    store_url: str, module: ModuleSwitch, caplog: pytest.LogCaptureFixture
) -> None:
    """load_grace=0 is the old behaviour: the first member that cannot load
    the job fails it, with no hand-back."""
    job_id = await enqueue(store_url, module.job())
    module.hide()
    async with js.JobScheduler(store=open_store(store_url), num_workers=1, load_grace=0) as s:
        failed = await wait_for(s, job_id, lambda j: j.status.is_terminal)
        assert s._load_handbacks == 0
    assert (failed.status, failed.attempts) == (S.FAILED, 1)
    assert failed.last_error.startswith("cannot load the job: ")
    assert not any("handed back" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("grace", [-1, float("nan"), float("inf"), "600", True, None])
def test_load_grace_must_be_a_finite_number_of_seconds(grace: Any) -> None:
    """A bad load_grace is refused at construction, naming the value and the rule."""
    with pytest.raises(ValueError, match=r"load_grace must be a finite number of seconds >= 0"):
        js.JobScheduler(load_grace=grace)


def test_background_scheduler_takes_load_grace() -> None:
    """BackgroundScheduler passes load_grace on (and checks it the same way)."""
    with pytest.raises(ValueError, match="load_grace"):
        js.BackgroundScheduler(load_grace=-1)
    assert js.BackgroundScheduler(load_grace=5)._scheduler._load_grace == 5.0
