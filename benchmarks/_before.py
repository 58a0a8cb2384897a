"""``jobsched-before``: jobsched's own workloads on an earlier commit's code, in the same run.

A change that must not cost the hot paths anything (issue 36's restructuring
of the engine: W1, W2, W6, W7c8 and W10c8 within 5%) is judged by this code
over the code before it, repetition by repetition in one run (the suite's
pairs, :mod:`benchmarks._paired`): figures from different runs on this
loaded 2-core machine move by more than 5%.

The commit is ``$JOBSCHED_BEFORE`` (anything ``git rev-parse`` takes: a
branch, a tag, a hash), by default the merge base of ``HEAD`` and ``main``:
on a feature branch, the main it started from. On main itself that is
``HEAD``, so the two systems run the same code and their ratios show the
noise alone.

As :mod:`benchmarks._v01` does for 0.1, the child is jobsched's own (public
API only) with the commit's packages first on ``sys.path``: every
``packages/*/src`` of that commit (the core, the executors, the SQLite and
PostgreSQL stores) comes out of this checkout's history (``git archive``)
into a temporary folder, once per suite run. Entry points are the installed
ones; their targets are the copies, which shadow this checkout's. Offered:
the memory rows W1, W2 (its memory run too) and W6, and the stores at
concurrency 8, W7c8 and W10c8.
"""

from __future__ import annotations

import atexit
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

SYSTEM = "jobsched-before"
#: The environment variable naming the commit (default: the merge base with main).
ENV = "JOBSCHED_BEFORE"
#: The workloads this system runs; the rest are "n/a" in the table.
WORKLOADS = ("W1", "W2", "W2mem", "W6", "W7c8", "W10c8")

_ROOT = Path(__file__).parent.parent
#: commit -> the folders its packages were extracted to (once per process).
_extracted: dict[str, list[str]] = {}


def _git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=_ROOT, capture_output=True, text=True, check=False)


def commit(rev: str | None = None) -> str:
    """The full hash of the commit this system runs: ``rev``'s, else ``$JOBSCHED_BEFORE``'s.

    :param rev: anything ``git rev-parse`` takes; ``None`` (the suite's case)
        reads ``$JOBSCHED_BEFORE``, and without it takes the merge base.
    :raises RuntimeError: ``rev`` or ``$JOBSCHED_BEFORE`` names no commit here,
        or (neither given) there is no ``main`` to take the merge base with:
        the message says what to set.
    """
    if rev is not None:
        found = _git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
        if found.returncode != 0:
            raise RuntimeError(f"{rev!r} names no commit in this checkout")
        return found.stdout.strip()
    wanted = os.environ.get(ENV, "").strip()
    if wanted:
        found = _git("rev-parse", "--verify", "--quiet", f"{wanted}^{{commit}}")
        if found.returncode != 0:
            raise RuntimeError(f"{SYSTEM}: {ENV}={wanted!r} names no commit in this checkout")
        return found.stdout.strip()
    found = _git("merge-base", "HEAD", "main")
    if found.returncode != 0:
        raise RuntimeError(
            f"{SYSTEM} runs the merge base of HEAD and main by default and found none "
            f"(no main branch here?): set {ENV} to a commit"
        )
    return found.stdout.strip()


def pythonpath(rev: str | None = None) -> list[str]:
    """The folders that put the commit's packages first on ``sys.path``, extracted once.

    :param rev: the commit, as :func:`commit` takes it (``None``: the suite's).
    :raises RuntimeError: as :func:`commit`.
    """
    sha = commit(rev)
    if sha in _extracted:
        return _extracted[sha]
    listed = _git("ls-tree", "-r", "-d", "--name-only", sha, "packages")
    sources = sorted(
        line
        for line in listed.stdout.splitlines()
        if line.startswith("packages/") and line.count("/") == 2 and line.endswith("/src")
    )
    if listed.returncode != 0 or "packages/core/src" not in sources:
        raise RuntimeError(f"{SYSTEM}: commit {sha[:7]} has no packages/core/src")
    where = Path(tempfile.mkdtemp(prefix=f"jobsched-before-{sha[:7]}-"))
    atexit.register(shutil.rmtree, where, ignore_errors=True)
    archive = subprocess.run(
        ["git", "archive", "--format=tar", sha, *sources],
        cwd=_ROOT,
        capture_output=True,
        check=True,
    )
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(where, filter="data")
    _extracted[sha] = [str(where / source) for source in sources]
    return _extracted[sha]
