"""Finding a store by URL scheme through the ``jobsched.stores`` entry points."""

from __future__ import annotations

from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
from fake_plugins import entry_point

from jobsched import _plugins, _stores
from jobsched._exceptions import SchedulerError, StoreNotFoundError
from jobsched._store import JobStore, mask_password
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
