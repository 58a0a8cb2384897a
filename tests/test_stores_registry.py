"""Finding a store by URL scheme through the ``jobsched.stores`` entry points."""

from __future__ import annotations

from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
from fake_plugins import entry_point

import jobsched as js
from jobsched._exceptions import SchedulerError, StoreNotFoundError
from jobsched._jobs import _plugins
from jobsched.store import JobStore, mask_password, passwords_in
from jobsched.store import _registry as _stores
from jobsched_sqlite import SQLiteStore


def _ep(name: str, value: str, dist: str) -> EntryPoint:
    return entry_point(_stores.GROUP, name, value, dist)


def test_the_sqlite_store_is_found_by_its_scheme(tmp_path: Path) -> None:
    store = _stores.open_store(f"sqlite:///{tmp_path}/j.db", secret="s", lease=5)
    assert isinstance(store, SQLiteStore)
    assert store.secret == b"s" and store.lease == 5.0


@pytest.mark.parametrize("url", ["jobs.db", "sqlite:jobs.db", "://x", "", "SQLITE:///x"])
def test_malformed_urls(url: str) -> None:
    with pytest.raises(ValueError, match="malformed store URL"):
        _stores.open_store(url)


def test_a_url_must_be_a_string() -> None:
    with pytest.raises(TypeError, match="must be a string"):
        _stores.open_store(42)  # type: ignore[arg-type]


def test_an_unknown_first_party_scheme_names_the_extra(
    fake_entry_points: list[EntryPoint],
) -> None:
    with pytest.raises(StoreNotFoundError, match=r"jobsched-core\[postgres\]"):
        _stores.open_store("postgres://app:hunter2@db:5432/jobs")
    with pytest.raises(StoreNotFoundError, match=r"jobsched-core\[sqlite\]"):
        _stores.open_store("sqlite:///j.db")


def test_an_unknown_third_party_scheme_says_what_to_install(
    fake_entry_points: list[EntryPoint],
) -> None:
    with pytest.raises(StoreNotFoundError, match="'redis' store in the 'jobsched.stores'"):
        _stores.open_store("redis://localhost/0")


def test_passwords_never_reach_a_message(fake_entry_points: list[EntryPoint]) -> None:
    with pytest.raises(StoreNotFoundError) as info:
        _stores.open_store("postgresql://app:hunter2@db/jobs")
    assert "hunter2" not in str(info.value)
    with pytest.raises(ValueError, match="malformed") as bad:
        _stores.open_store("app:hunter2@db")
    assert "hunter2" not in str(bad.value)
    assert mask_password("postgresql://app:hunter2@db/x") == "postgresql://app:***@db/x"
    assert mask_password("postgresql://app@db/x") == "postgresql://app@db/x"


@pytest.mark.parametrize(
    ("url", "masked"),
    [
        ("postgresql://u@h/db?password=hunter2", "postgresql://u@h/db?password=***"),
        (
            "postgresql://u@h/db?sslmode=require&password=hunter2&application_name=x",
            "postgresql://u@h/db?sslmode=require&password=***&application_name=x",
        ),
        ("postgresql://u@h/db?sslpassword=hunter2", "postgresql://u@h/db?sslpassword=***"),
        ("postgresql://u@h/db?PASSWORD=hunter2", "postgresql://u@h/db?PASSWORD=***"),
        ("postgresql://u:hunter2@h/db?password=hunter2", "postgresql://u:***@h/db?password=***"),
        ("host=h password=hunter2 dbname=db", "host=h password=*** dbname=db"),
        ("host=h password = 'hun ter2' dbname=db", "host=h password = *** dbname=db"),
        ("host=h password='hun\\'ter2'", "host=h password=***"),
    ],
)
def test_every_form_of_password_is_masked(url: str, masked: str) -> None:
    assert mask_password(url) == masked
    assert "hunter2" not in mask_password(url) and "ter2" not in mask_password(url)


def test_the_passwords_in_a_url_as_written_and_decoded() -> None:
    assert passwords_in("postgresql://u:a%40b@h/db?password=se%63ret") == [
        "se%63ret",
        "secret",
        "a%40b",
        "a@b",
    ]
    assert passwords_in("postgresql://u@h/db") == []


def test_a_keyword_dsn_is_malformed_and_its_password_masked() -> None:
    with pytest.raises(ValueError, match="malformed store URL") as info:
        _stores.open_store("host=db user=app password=hunter2 dbname=jobs")
    assert "hunter2" not in str(info.value) and "password=***" in str(info.value)


def test_memory_opens_as_the_url_table_lists() -> None:
    """open_store("memory") is a JobStore a scheduler takes as store="memory"."""
    import anyio

    store = js.open_store("memory")
    assert isinstance(store, JobStore) and store.url == "memory"

    async def main() -> js.JobStatus:
        await store.open()
        await store.close()
        async with js.JobScheduler(store=store) as s:
            assert s._link is None  # in this process, as with store="memory"
            job_id = s.submit(js.FunctionJob(len, ("abc",)))
            await s.join()
            return s.get(job_id).status

    assert anyio.run(main) is js.JobStatus.COMPLETED


def test_the_memory_store_holds_nothing_of_its_own() -> None:
    import anyio

    store = js.open_store("memory")
    with pytest.raises(NotImplementedError, match="keeps no jobs of its own"):
        store.reserve_ids(1)
    with pytest.raises(NotImplementedError, match=r"\(fetch\)"):
        anyio.run(store.fetch, 1)
    with pytest.raises(TypeError, match="takes no options, got secret"):
        js.open_store("memory", secret="s")


def test_broken_store_plugins_name_their_distribution(
    fake_entry_points: list[EntryPoint],
) -> None:
    fake_entry_points.append(_ep("foo", "no_such_module_here:Store", "jobsched-store-foo"))
    with pytest.raises(SchedulerError, match="distribution jobsched-store-foo.*failed to load"):
        _stores.open_store("foo://x")
    fake_entry_points[:] = [_ep("foo", "fake_plugins:NOT_CALLABLE", "jobsched-store-foo")]
    _plugins.registered_in.cache_clear()
    with pytest.raises(SchedulerError, match="jobsched-store-foo.*is not callable"):
        _stores.open_store("foo://x")
    fake_entry_points[:] = [_ep("foo", "builtins:str", "jobsched-store-foo")]
    _plugins.registered_in.cache_clear()
    with pytest.raises(SchedulerError, match="jobsched-store-foo.*not a jobsched.JobStore"):
        _stores.open_store("foo://x")
    fake_entry_points[:] = [
        _ep("foo", "jobsched_sqlite:SQLiteStore", "dist-a"),
        _ep("foo", "builtins:str", "dist-b"),
    ]
    _plugins.registered_in.cache_clear()
    with pytest.raises(SchedulerError, match="several distributions .*dist-a, dist-b"):
        _stores.open_store("foo://x")


@pytest.mark.parametrize("lease", [0, -1, float("inf"), float("nan")])
def test_a_bad_lease_is_refused(lease: float) -> None:
    with pytest.raises(ValueError, match="lease must be a positive"):
        SQLiteStore("sqlite:///j.db", lease=lease)


def test_a_lease_must_be_a_number() -> None:
    with pytest.raises(TypeError, match="lease must be a number"):
        SQLiteStore("sqlite:///j.db", lease="30")  # type: ignore[arg-type]
    assert issubclass(SQLiteStore, JobStore)
