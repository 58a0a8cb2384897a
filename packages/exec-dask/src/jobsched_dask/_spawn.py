"""Dask worker processes that never import the application's ``__main__``.

A ``LocalCluster`` with processes starts each worker with multiprocessing
(``spawn`` by default, or ``forkserver``), whose child first re-runs the
parent's main module as ``__mp_main__`` so that pickles naming ``__main__``
resolve. In a script without an ``if __name__ == "__main__":`` guard that
re-runs the whole script in every worker: its module-level code runs again,
and its scheduler tries to start a cluster of its own there, which
multiprocessing refuses ("An attempt has been made to start a new process
before the current process has finished its bootstrapping phase"); the
nanny then restarts the worker, and the script runs once more each time.

The workers do not need the main module: distributed pickles anything that
refers to ``__main__`` with cloudpickle, by value, as jobsched ships its jobs.
So, as the process executor starts its workers with an entry point of its
own, the Nanny's worker processes are started without the main-module
fix-up: :func:`install` wraps multiprocessing's
``spawn.get_preparation_data`` (read by both ``spawn`` and ``forkserver``
at each start) to leave the main module out for the processes distributed's
Nanny names, and for no others.
"""

from __future__ import annotations

import functools
import multiprocessing.spawn
import threading
from collections.abc import Callable
from typing import Any

#: The name distributed's Nanny gives every worker process it starts.
NANNY_PROCESS = "Dask Worker process (from Nanny)"
#: What the fix-up reads: a module to import as ``__mp_main__``, or a script to run.
MAIN_KEYS = ("init_main_from_name", "init_main_from_path")

_lock = threading.Lock()


def without_main(
    get_preparation_data: Callable[[str], dict[str, Any]],
) -> Callable[[str], dict[str, Any]]:
    """``get_preparation_data`` that leaves the main module out for a Nanny's workers."""

    @functools.wraps(get_preparation_data)
    def prepared(name: str) -> dict[str, Any]:
        data = get_preparation_data(name)
        if name == NANNY_PROCESS:
            for key in MAIN_KEYS:
                data.pop(key, None)
        return data

    prepared._jobsched_without_main = True  # type: ignore[attr-defined]
    return prepared


def install() -> None:
    """Start the Nanny's worker processes without the main module from now on
    (once per process; idempotent)."""
    with _lock:
        current = multiprocessing.spawn.get_preparation_data
        if not getattr(current, "_jobsched_without_main", False):
            multiprocessing.spawn.get_preparation_data = without_main(current)  # type: ignore[assignment]
