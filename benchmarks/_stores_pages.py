"""Pages written per round of W7, by B-tree: jobsched's SQLite store against raw's loop.

Run as ``python -m benchmarks._stores_pages [JOBS]``. Unlike the timed rows it
counts, so it gives the same figures on a busy machine: with automatic
checkpoints off, every page a transaction changes is one frame appended to
the WAL, and each frame's header names its page, which ``dbstat`` maps to
the table or index it belongs to. A commit's fsync covers those frames, and a
checkpoint later writes each changed page again, so this is the write volume
the durability costs per job.

A round is what W7 repeats: for raw, a claim of 64 jobs and the completion of
64 in two transactions; for the store, one transaction holding the previous
round's 64 outcomes and the next claim of 64 (as its group commit writes
them for the scheduler). Both tables first get ``JOBS`` jobs in one insert,
whose pages are not counted. The store's prune runs every 1,024 finished jobs
and is counted apart; it keeps 1,000 (the default keeps 10,000, which this
short run would never exceed: a deleted row costs the same either way).
"""

from __future__ import annotations

import os
import sqlite3
import struct
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from benchmarks import _stores
from jobsched._enums import JobStatus
from jobsched.store import NewJob, Outcome
from jobsched_sqlite import _add, _claim, _outcomes, _schema, _sql

ROUNDS = 100
_FRAME_HEADER, _WAL_HEADER = 24, 32


def _frames(conn: sqlite3.Connection, wal: Path, since: int) -> Counter[str]:
    """B-tree name -> frames appended to ``wal`` after byte ``since``."""
    (page_size,) = conn.execute("PRAGMA page_size").fetchone()
    owner = dict(conn.execute("SELECT pageno, name FROM dbstat"))
    counts: Counter[str] = Counter()
    with open(wal, "rb") as f:
        f.seek(max(since, _WAL_HEADER))
        while header := f.read(_FRAME_HEADER):
            if len(header) < _FRAME_HEADER:
                break
            (page,) = struct.unpack(">I", header[:4])
            counts[owner.get(page, "(free)")] += 1
            f.seek(page_size, os.SEEK_CUR)
    return counts


def _measure(
    conn: sqlite3.Connection, wal: Path, round_: Callable[[], None], prune: Callable[[], None]
) -> tuple[Counter[str], Counter[str]]:
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    rounds, prunes = Counter[str](), Counter[str]()
    for i in range(ROUNDS):
        before = wal.stat().st_size if wal.exists() else 0
        round_()
        rounds += _frames(conn, wal, before)
        if (i + 1) % 16 == 0:  # 1,024 jobs
            before = wal.stat().st_size
            prune()
            prunes += _frames(conn, wal, before)
    return rounds, prunes


def _transaction(conn: sqlite3.Connection, work: Callable[[], object]) -> None:
    conn.execute("BEGIN IMMEDIATE")
    work()
    conn.execute("COMMIT")


def raw(folder: Path, jobs: int) -> tuple[Counter[str], Counter[str]]:
    path = folder / "raw.db"
    conn = _stores._raw_connect(path)
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    _stores._raw_insert(conn, jobs)

    def round_() -> None:
        rows: list[tuple[int, bytes]] = []
        _transaction(conn, lambda: rows.extend(conn.execute(_stores._RAW_CLAIM, (64,))))
        done = [(time.time(), job_id) for job_id, _ in rows]
        _transaction(conn, lambda: conn.executemany(_stores._RAW_DONE, done))

    return _measure(conn, Path(f"{path}-wal"), round_, lambda: None)


def store(folder: Path, jobs: int) -> tuple[Counter[str], Counter[str]]:
    path = folder / "store.db"
    conn = _schema.connect(path)
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    now = time.time()
    payload = b"\x00" * 100  # the size of W7's stored no-op job
    rows = [
        NewJob(i + 1, "noop", "async", (-1.0, float(i)), now, now, payload) for i in range(jobs)
    ]
    _transaction(conn, lambda: _add.add(conn, rows, now))
    owner = "vm:12345:0123abcd"  # the form new_owner() gives: host:pid:token
    outcomes: list[Outcome] = []

    def round_() -> None:
        nonlocal outcomes
        claimed = []

        def work() -> None:
            if outcomes:
                _outcomes.record(conn, owner, outcomes)
            at = time.time()
            claimed.extend(_claim.claim(conn, owner, 64, {"async": 64}, at, at + 30)[0])

        _transaction(conn, work)
        outcomes = [Outcome(c.id, c.attempt, JobStatus.COMPLETED, time.time()) for c in claimed]

    def prune() -> None:
        _transaction(conn, lambda: _sql.prune(conn, 1000, {}, 1000))

    return _measure(conn, Path(f"{path}-wal"), round_, prune)


def main(jobs: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        for name, run in (("raw", raw), ("store", store)):
            rounds, prunes = run(Path(folder), jobs)
            total = sum(rounds.values()) / ROUNDS
            parts = ", ".join(f"{n} {c / ROUNDS:.2f}" for n, c in rounds.most_common())
            print(f"{name}: {total:.1f} frames per round of 64 jobs ({parts})")
            if prunes:
                per = sum(prunes.values()) / (ROUNDS // 16)
                print(f"{name}: {per:.1f} frames per prune of about 1,000 jobs")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000)
