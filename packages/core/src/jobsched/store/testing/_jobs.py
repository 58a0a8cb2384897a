"""The suite's jobs: importable by reference (a store keeps them pickled),
with their runs logged in a file, so a test sees what ran on any member."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import jobsched as js


def log_line(path: str, line: str) -> None:
    """Append one line atomically (O_APPEND), even across processes."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


class Note(js.AsyncJob):
    """Logs ``start``/``end`` lines with its id and attempt; returns ``value``."""

    def __init__(self, log: str, value: Any = None, **kw: Any) -> None:
        super().__init__(kw.pop("name", f"note {value!r}"), **kw)
        self.log = log
        self.value = value

    async def run(self) -> Any:
        log_line(self.log, f"start {self.job_id} {self.attempts}")
        log_line(self.log, f"end {self.job_id} {self.attempts}")
        return self.value


def make_note(log: str, value: Any = "beat") -> Note:
    """A schedule's factory (with functools.partial: importable, so storable)."""
    return Note(log, value, name=f"scheduled {value}")


def runs(log: str | Path) -> dict[str, list[tuple[str, int]]]:
    """job id -> [(start|end, attempt), ...] from a log."""
    seen: dict[str, list[tuple[str, int]]] = {}
    path = Path(log)
    if not path.exists():
        return seen
    for line in path.read_text().splitlines():
        what, job_id, attempt = line.split()
        seen.setdefault(job_id, []).append((what, int(attempt)))
    return seen
