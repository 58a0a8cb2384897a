"""What a package index and `pip` see: version, project URLs, and the extras' pins."""

from __future__ import annotations

import re
from importlib.metadata import metadata, requires, version
from pathlib import Path

import pytest
from packaging.requirements import Requirement

import jobsched as js

ROOT = Path(__file__).resolve().parents[1]
DISTRIBUTIONS = {
    "jobsched-core": "core",
    "jobsched-exec-async": "exec-async",
    "jobsched-exec-thread": "exec-thread",
    "jobsched-exec-process": "exec-process",
    "jobsched-jobs-examples": "jobs-examples",
    "jobsched-store-sqlite": "store-sqlite",
    "jobsched-store-postgres": "store-postgres",
    "jobsched-exec-dask": "exec-dask",
    "jobsched-otel": "otel",
}
# The plugins the core's extras install: executors, stores and jobsched-otel.
EXECUTORS = [
    "jobsched-exec-async",
    "jobsched-exec-thread",
    "jobsched-exec-process",
    "jobsched-store-sqlite",
    "jobsched-store-postgres",
    "jobsched-exec-dask",
    "jobsched-otel",
]


def _pyproject_version(folder: str) -> str:
    text = (ROOT / "packages" / folder / "pyproject.toml").read_text()
    found = re.search(r'^version = "([^"]+)"$', text, flags=re.MULTILINE)
    assert found, f"no version in packages/{folder}/pyproject.toml"
    return found.group(1)


def test_version_is_the_distributions() -> None:
    """`jobsched.__version__` is the installed jobsched-core's version, as pyproject sets it."""
    assert js.__version__ == version("jobsched-core") == _pyproject_version("core")


def test_unknown_attribute_is_still_an_attribute_error() -> None:
    """The lazy attributes hook answers only for its own names."""
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        js.nope  # noqa: B018


@pytest.mark.parametrize("dist", DISTRIBUTIONS)
def test_every_distribution_has_project_urls(dist: str) -> None:
    """Each published distribution links its home page, docs, source and changelog."""
    urls = dict(u.split(", ", 1) for u in metadata(dist).get_all("Project-URL") or [])
    assert set(urls) == {"Homepage", "Documentation", "Source", "Changelog"}
    assert all(u.startswith("https://") for u in urls.values())


def test_core_extras_pin_the_matching_executor_versions() -> None:
    """Each executor the core requires admits this release's executor, not the next minor."""
    pinned = [Requirement(r) for r in requires("jobsched-core") or []]
    pinned = [r for r in pinned if r.name in EXECUTORS]
    assert {r.name for r in pinned} == set(EXECUTORS)
    for req in pinned:
        own = version(req.name)
        major, minor = (int(p) for p in own.split(".")[:2])
        assert req.specifier.contains(own), (req, own)
        assert not req.specifier.contains(f"{major}.{minor + 1}.0"), req


@pytest.mark.parametrize("dist", [*EXECUTORS, "jobsched-jobs-examples"])
def test_plugins_pin_the_core_minor_version(dist: str) -> None:
    """An executor accepts only the core minor version it was released with."""
    core = next(Requirement(r) for r in requires(dist) or [] if r.startswith("jobsched-core"))
    own = version("jobsched-core")
    major, minor = (int(p) for p in own.split(".")[:2])
    assert core.specifier.contains(own)
    assert not core.specifier.contains(f"{major}.{minor + 1}.0"), core
