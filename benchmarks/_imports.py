"""W0, import cost: ``import <package>`` timed in fresh interpreters.

Each system's figure is the best of ``size`` interpreters' times for its
top-level import (as timeit advises: on a shared machine the slower runs
measure the other load, not the import; the suite then takes the median of
the ratios over its repetitions); ``raw`` imports anyio, the runtime every system here
builds on, so the ratio says what jobsched adds on top of what any anyio
program pays anyway. The child that runs this module imports nothing under
test itself: each timing is in its own ``python -c``, after one untimed run
that writes the bytecode caches, as the first import after an install does:
a user's imports load ``.pyc`` files, and compiling from source would swamp
what is measured (so PYTHONDONTWRITEBYTECODE is dropped for these runs).
"""

from __future__ import annotations

import os
import subprocess
import sys

#: The package a user of each system imports first.
PACKAGES = {"raw": "anyio", "jobsched": "jobsched", "apscheduler4": "apscheduler"}

_TIMED = (
    "import time\nt0 = time.perf_counter()\nimport {package}\nprint(time.perf_counter() - t0)\n"
)


def import_seconds(package: str) -> float:
    """Seconds ``import package`` takes in a new interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", _TIMED.format(package=package)],
        capture_output=True,
        text=True,
        check=True,
        env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    )
    return float(done.stdout.strip().splitlines()[-1])


def run(system: str, size: int) -> dict[str, float]:
    """The best import time of ``system``'s package over ``size`` fresh interpreters."""
    package = PACKAGES[system]
    import_seconds(package)  # untimed: writes any stale .pyc files
    return {"import_ms": min(import_seconds(package) for _ in range(size)) * 1000}
