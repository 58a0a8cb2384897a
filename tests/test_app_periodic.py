"""@app.periodic: schedules every worker the app builds keeps."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from app_jobs import nightly, tick, timed

import jobsched as js
from jobsched._app._periodic import Periodic


@pytest.mark.anyio
async def test_periodic_jobs_fire_on_the_apps_scheduler(
    store_kind: str, tmp_path: Path, request: pytest.FixtureRequest, clock: Callable[[], float]
) -> None:
    """A scheduler with workers registers the app's periodic jobs, under the
    job's name (or id=); an `every` schedule fires its registered job."""
    on_store: dict[str, Any] = {}
    if store_kind == "sqlite":
        on_store = {"store": f"sqlite:///{tmp_path / 'jobs.db'}"}
    elif store_kind == "postgres":
        from pg import SECRET, schema_url

        on_store = {
            "store": schema_url(request.getfixturevalue("pg_session_database")),
            "secret": SECRET,
        }
    async with timed.scheduler(clock=clock, **on_store) as s:
        ids = {info.id for info in await s.schedules()}
        assert ids == {"timed.tick", "nightly"}
        with anyio.fail_after(120):
            while True:
                done = [j for j in s.jobs() if j.name == "timed.tick" and j.status.is_terminal]
                if done:
                    break
                await anyio.sleep(0.05)
        assert done[0].result == "tick"
        await s.stop(cancel_running=True)


@pytest.mark.anyio
async def test_workers_starting_again_keep_a_schedules_next_fire(
    store_kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Each worker registers the app's schedules at its start; the same
    schedule again keeps its next fire, so deploys more frequent than an
    interval cannot keep it from firing."""
    if store_kind == "memory":
        # store_kind (not a parametrize of its own) for the durable runs'
        # real clock: trio's autojumping mock clock outruns a store's threads.
        pytest.skip("a memory schedule lives and dies with its scheduler")
    on_store: dict[str, Any] = {"store": f"sqlite:///{tmp_path / 'jobs.db'}"}
    if store_kind == "postgres":
        from pg import SECRET, schema_url

        on_store = {
            "store": schema_url(request.getfixturevalue("pg_session_database")),
            "secret": SECRET,
        }

    async def next_fires(workers: int) -> dict[str, Any]:
        async with timed.scheduler(num_workers=workers, **on_store) as s:
            fires = {info.id: info.next_fire for info in await s.schedules()}
            await s.stop(cancel_running=True)
        return fires

    async with timed.scheduler(num_workers=1, **on_store) as s:
        with anyio.fail_after(60):  # its first fire, at the worker's start
            while True:
                if any(j.name == "timed.tick" for j in s.jobs()):
                    break
                await anyio.sleep(0.05)
        await s.stop(cancel_running=True)
    stored = await next_fires(0)  # a producer registers nothing
    assert stored["timed.tick"] is not None
    assert await next_fires(1) == stored  # another worker's start changed nothing


def test_a_producer_registers_no_schedules(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Only schedulers with workers register the periodic jobs."""
    registered: list[str] = []
    monkeypatch.setattr(Periodic, "register", lambda self, s: registered.append(self.id))
    producer = timed.scheduler(store=f"sqlite:///{tmp_path / 'jobs.db'}", num_workers=0)
    assert registered == []
    worker = timed.scheduler(num_workers=1)
    assert sorted(registered) == ["nightly", "timed.tick"]
    anyio.run(producer.stop)
    del worker


def test_misfire_is_passed_on() -> None:
    """register() passes misfire= to schedule_cron/schedule_recurring."""

    class Spy:
        def __init__(self) -> None:
            self.calls: list[tuple[str, dict[str, Any]]] = []

        def schedule_cron(self, factory: Any, cron: str, **kw: Any) -> str:
            self.calls.append(("cron", kw))
            return kw["id"]

        def schedule_recurring(self, factory: Any, every: float, **kw: Any) -> str:
            self.calls.append(("every", kw))
            return kw["id"]

    spy = Spy()
    Periodic(tick, None, 5.0, None, "a", "coalesce").register(spy)  # type: ignore[arg-type]
    Periodic(tick, "* * * * *", None, "UTC", "b", "skip").register(spy)  # type: ignore[arg-type]
    Periodic(tick, None, 5.0, None, "c", "all").register(spy)  # type: ignore[arg-type]
    assert spy.calls == [
        ("every", {"id": "a", "misfire": "coalesce"}),
        ("cron", {"timezone": "UTC", "id": "b", "misfire": "skip"}),
        ("every", {"id": "c", "misfire": "all"}),
    ]


def test_the_factory_is_the_registered_job() -> None:
    """A fire builds the registered job (no arguments: defaults apply)."""
    job = nightly.job()
    assert job.name == "app_jobs.nightly"
    assert timed._periodic["nightly"].function is nightly


def test_periodic_errors() -> None:
    """Bad schedules are refused when declared, with what to do."""
    app = js.App()
    with pytest.raises(ValueError, match="exactly one"):
        app.periodic()
    with pytest.raises(ValueError, match="exactly one"):
        app.periodic(cron="* * * * *", every=5)
    with pytest.raises(ValueError, match="invalid cron expression 'not cron'"):
        app.periodic(cron="not cron")
    with pytest.raises(ValueError, match="positive, finite"):
        app.periodic(every=0)
    with pytest.raises(TypeError, match="number of seconds"):
        app.periodic(every="5")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="timezone=.UTC. applies to cron="):
        app.periodic(every=5, timezone="UTC")
    with pytest.raises(ValueError, match="misfire must be 'coalesce' .* got 'later'"):
        app.periodic(every=5, misfire="later")

    async def takes(x: int) -> None: ...

    with pytest.raises(TypeError, match="a schedule calls it with none"):
        app.periodic(every=5)(app.job(name="takes")(takes))
    fn = app.job(name="ok")(_none)
    app.periodic(every=5)(fn)
    with pytest.raises(ValueError, match="id 'ok' is registered already"):
        app.periodic(every=9)(fn)
    with pytest.raises(ValueError, match="registered with another App"):
        js.App().periodic(every=5)(fn)


async def _none() -> None: ...
