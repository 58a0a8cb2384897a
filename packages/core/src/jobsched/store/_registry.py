"""Finding a store for a URL through the ``jobsched.stores`` entry-point group.

The URL's scheme names the store (``sqlite:///jobs.db`` -> ``sqlite``), the
way an executor's name names its plugin; a store's package is imported only
when a URL needs it.
"""

from __future__ import annotations

import abc
import re
from typing import Any, NoReturn

from .._exceptions import SchedulerError, StoreNotFoundError
from .._jobs import _plugins
from ._base import JobStore
from ._urls import mask_password

GROUP = "jobsched.stores"

# The stores this project publishes: scheme -> (extra, distribution).
_FIRST_PARTY = {
    "sqlite": ("sqlite", "jobsched-store-sqlite"),
    "postgresql": ("postgres", "jobsched-store-postgres"),
}
_SCHEME = re.compile(r"^([a-z][a-z0-9+.-]*)://")


def scheme_of(url: str) -> str:
    """The scheme that picks the store.

    :raises ValueError: ``url`` is not a string of the form ``scheme://...``.
    """
    if not isinstance(url, str):
        raise TypeError(f"a store URL must be a string, got {url!r}")
    match = _SCHEME.match(url)
    if match is None:
        raise ValueError(
            f"malformed store URL {mask_password(url)!r}: expected 'memory', "
            "'sqlite:///path/to/jobs.db' or 'postgresql://user@host:5432/db'"
        )
    scheme = match.group(1)
    # postgres:// is libpq's alias, and SQLAlchemy-style postgresql+psycopg://
    # names the same store.
    if scheme == "postgres" or scheme.startswith("postgresql+"):
        scheme = "postgresql"
    return scheme


class MemoryStore(JobStore):
    """What ``open_store("memory")`` returns: a scheduler given it keeps its
    jobs in its own process, exactly as with ``store="memory"``.

    It holds nothing itself (each scheduler has its own in-memory queue), so
    its store methods raise ``NotImplementedError``; open and close do nothing.
    """

    def __init__(self) -> None:
        super().__init__("memory")

    async def open(self) -> None:
        """Nothing to open: the scheduler keeps its jobs itself."""

    async def close(self) -> None:
        """Nothing to close."""


def _not_held(name: str) -> Any:
    def method(self: MemoryStore, *args: object, **kwargs: object) -> NoReturn:
        raise NotImplementedError(
            f"the 'memory' store keeps no jobs of its own ({name}): pass it to "
            "JobScheduler(store=...) and ask the scheduler, or use a durable store"
        )

    method.__name__ = name
    return method


for _name in sorted(MemoryStore.__abstractmethods__):
    setattr(MemoryStore, _name, _not_held(_name))
# Filled in above, where mypy cannot see it: hence the ignores on this class.
abc.update_abstractmethods(MemoryStore)  # type: ignore[type-abstract]


def open_store(url: str, **options: Any) -> JobStore:
    """A store for ``url``, not yet opened (the scheduler opens it when it starts).

    :param options: passed to the store: ``secret`` (str or bytes; default: the
        ``JOBSCHED_SECRET`` environment variable) and ``lease`` (seconds).
    :raises ValueError: the URL is malformed.
    :raises StoreNotFoundError: no installed store serves its scheme.
    """
    if url == "memory":
        if options:
            raise TypeError(
                f"the 'memory' store takes no options, got {', '.join(sorted(options))}"
            )
        return MemoryStore()  # type: ignore[abstract]
    scheme = scheme_of(url)
    eps = _plugins.registered_in(GROUP).get(scheme)
    if not eps:
        known = sorted(_plugins.registered_in(GROUP))
        extra = _FIRST_PARTY.get(scheme)
        if extra is not None:
            fix = f'pip install "jobsched-core[{extra[0]}]" (the {extra[1]} distribution)'
        else:
            fix = (
                f"install the distribution that publishes a {scheme!r} store in the "
                f"{GROUP!r} entry-point group"
            )
        raise StoreNotFoundError(
            f"no store serves {scheme}:// URLs (installed: "
            f"{', '.join(['memory', *known])}); to fix: {fix}"
        )
    factory, ep = _plugins.load_unique(eps, f"store plugin {scheme!r}", "uninstall all but one")
    if not callable(factory):
        raise SchedulerError(
            f"store plugin {scheme!r} (from {_plugins.dist_name(ep)}) is not callable; the "
            "entry point must name a JobStore class or a factory that returns one"
        )
    store = factory(url, **options)
    if not isinstance(store, JobStore):
        raise SchedulerError(
            f"store plugin {scheme!r} (from {_plugins.dist_name(ep)}) returned {store!r}, "
            "which is not a jobsched.JobStore"
        )
    return store
