"""Finding a store for a URL through the ``jobsched.stores`` entry-point group.

The URL's scheme names the store (``sqlite:///jobs.db`` -> ``sqlite``), the
way an executor's name names its plugin; a store's package is imported only
when a URL needs it.
"""

from __future__ import annotations

import functools
import re
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from ._exceptions import SchedulerError, StoreNotFoundError
from ._store import JobStore, mask_password

GROUP = "jobsched.stores"

# The stores this project publishes: scheme -> (extra, distribution).
_FIRST_PARTY = {
    "sqlite": ("sqlite", "jobsched-store-sqlite"),
    "postgresql": ("postgres", "jobsched-store-postgres"),
}
_SCHEME = re.compile(r"^([a-z][a-z0-9+.-]*)://")


@functools.cache
def _registered() -> dict[str, list[EntryPoint]]:
    found: dict[str, list[EntryPoint]] = {}
    for ep in entry_points(group=GROUP):
        if all(e.value != ep.value for e in found.get(ep.name, ())):
            found.setdefault(ep.name, []).append(ep)
    return found


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


def open_store(url: str, **options: Any) -> JobStore:
    """A store for ``url``, not yet opened (the scheduler opens it when it starts).

    :param options: passed to the store: ``secret`` (str or bytes; default: the
        ``JOBSCHED_SECRET`` environment variable) and ``lease`` (seconds).
    :raises ValueError: the URL is malformed.
    :raises StoreNotFoundError: no installed store serves its scheme.
    """
    scheme = scheme_of(url)
    eps = _registered().get(scheme)
    if not eps:
        known = sorted(_registered())
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
    if len(eps) > 1:
        owners = ", ".join(sorted(_dist_name(ep) for ep in eps))
        raise SchedulerError(
            f"store scheme {scheme!r} is registered by several distributions ({owners}); "
            "uninstall all but one"
        )
    ep = eps[0]
    try:
        factory = ep.load()
    except Exception as exc:
        raise SchedulerError(
            f"store plugin {scheme!r} ({ep.value}, from {_dist_name(ep)}) failed to load: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    store = factory(url, **options)
    if not isinstance(store, JobStore):
        raise SchedulerError(
            f"store plugin {scheme!r} (from {_dist_name(ep)}) returned {store!r}, "
            "which is not a jobsched.JobStore"
        )
    return store


def _dist_name(ep: EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    return dist.name if dist is not None else ep.value
