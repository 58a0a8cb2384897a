"""``jobsched-0.1``: the memory workloads on jobsched 0.1's own code, in the same run.

0.1 is the code the first release's figures were measured on (the end of
issue 5, commit :data:`COMMIT`; there is no tag). A figure against it in the
same run says whether later work (the stores, queues, producers) cost the
in-memory path anything, which figures from different days and machines
cannot: W6 once looked twice as slow as 0.1 that way (issue 25).

The child is jobsched's own (:mod:`benchmarks._jobsched`, public API only)
with 0.1's core and async executor first on ``sys.path``: their sources come
out of this checkout's history (``git archive``) into a temporary folder,
once per suite run. The executor plugin is found through the installed
``jobsched.executors`` entry point, whose target (``jobsched_async``) 0.1's
copy shadows. Only workloads that 0.1's API and those two packages run are
offered: W1, W2 (its memory run too) and W6.
"""

from __future__ import annotations

import atexit
import io
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

SYSTEM = "jobsched-0.1"
#: The last commit of jobsched 0.1 (issue 5's end, 2026-11-30).
COMMIT = "63b9d9f20d083d9c574cb0d4eefad1fd6c3ef899"
#: The workloads this system runs; the rest are "n/a" in the table.
WORKLOADS = ("W1", "W2", "W2mem", "W6")
#: The packages whose 0.1 sources go first on the path.
_SOURCES = ("packages/core/src", "packages/exec-async/src")

_ROOT = Path(__file__).parent.parent
_extracted: list[str] = []


def pythonpath() -> list[str]:
    """The folders that put 0.1's code first on ``sys.path``, extracted once.

    :raises RuntimeError: this checkout's history lacks :data:`COMMIT` (a
        shallow clone, an export): the message says how to get it.
    """
    if _extracted:
        return _extracted
    found = subprocess.run(
        ["git", "cat-file", "-e", f"{COMMIT}^{{commit}}"],
        cwd=_ROOT,
        capture_output=True,
        check=False,
    )
    if found.returncode != 0:
        raise RuntimeError(
            f"{SYSTEM} needs commit {COMMIT[:7]} in this checkout's history "
            "(a full clone; `git fetch --unshallow` in a shallow one)"
        )
    where = Path(tempfile.mkdtemp(prefix="jobsched-0.1-"))
    atexit.register(shutil.rmtree, where, ignore_errors=True)
    archive = subprocess.run(
        ["git", "archive", "--format=tar", COMMIT, *_SOURCES],
        cwd=_ROOT,
        capture_output=True,
        check=True,
    )
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(where, filter="data")
    _extracted.extend(str(where / source) for source in _SOURCES)
    return _extracted
