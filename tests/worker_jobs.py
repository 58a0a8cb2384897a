"""Jobs for tests/test_cli_worker.py, run by `jobsched worker` subprocesses.

Each records its start (wall time, label, the worker's pid) in a file
named by its arguments, so a test sees when and where every job started,
across workers, without reading their logs.
"""

from __future__ import annotations

import os
import time


def record(log: str, label: str) -> str:
    """Appends ``<time> <label> <pid>`` to ``log`` (one write: O_APPEND)."""
    line = f"{time.time():.6f} {label} {os.getpid()}\n"
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)
    return label


def starts(log: str) -> list[tuple[float, str, int]]:
    """The recorded starts, oldest first: (time, label, pid)."""
    if not os.path.exists(log):
        return []
    out = []
    with open(log) as f:
        for line in f:
            when, label, pid = line.split()
            out.append((float(when), label, int(pid)))
    return sorted(out)


def fail(label: str) -> str:
    """Always raises: a failing job for the metrics' counts."""
    raise ValueError(f"{label} failed")
