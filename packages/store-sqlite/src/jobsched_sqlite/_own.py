"""Ids of the submitter's own (``submit(job_id=...)``) in the SQLite file.

The scheduler knows such a job by a negative number, a hash of the id
(:func:`jobsched._jobs._ids.own_number`). Used as the row's primary key, those
numbers land all over the jobs table's B-tree, and a batch of them rewrote
most of its pages (W17: 1.6-2.2x a plain batch's time, growing with the
table). So the row takes the next number in rowid order, as a plain job's
does, and the table ``own_ids`` maps it to the hash: ``job`` (the row, its
own rowid: appended in order) and ``own_key`` (the hash, UNIQUE: one job per
id, whichever member adds it first). Its rows are a few bytes each, so the
random keys touch few pages.

Every id crosses the store's interface as the scheduler knows it: the
negative hash. The store turns it into the row's number on the way in
(:func:`rows_of`) and back on the way out (:func:`ids_of`); deps, attempts
and the rows themselves hold row numbers. A file written by the previous
code may hold rows keyed by the hash itself, with no ``own_ids`` row: a
hash not in ``own_ids`` is its own row number, so those are still found.

The table is made by the first own-id job (``CREATE TABLE IF NOT EXISTS``,
as ``members``), without a schema version: a file without one reads as
holding no such job. A process of the previous code writing to the file does
not know the table, though: run one version on a file.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable

TABLE = (
    "CREATE TABLE IF NOT EXISTS own_ids (job INTEGER PRIMARY KEY, own_key INTEGER NOT NULL UNIQUE)"
)

#: Ids per look-up: under SQLite's oldest limit of parameters per statement (999).
CHUNK = 500


def has_table(conn: sqlite3.Connection) -> bool:
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'own_ids'"
    ).fetchone()
    return row is not None


def _pairs(conn: sqlite3.Connection, sql: str, values: list[int]) -> dict[int, int]:
    out: dict[int, int] = {}
    for start in range(0, len(values), CHUNK):
        part = values[start : start + CHUNK]
        out.update(conn.execute(sql.format(", ".join("?" * len(part))), part))
    return out


def rows_of(conn: sqlite3.Connection, ids: Iterable[int]) -> dict[int, int]:
    """The row numbers of the own-id jobs among ``ids`` (as the scheduler
    knows them) that ``own_ids`` maps; any other id is its own row number."""
    keys = list({i for i in ids if i < 0})
    if not keys or not has_table(conn):
        return {}
    return _pairs(conn, "SELECT own_key, job FROM own_ids WHERE own_key IN ({})", keys)


def ids_of(conn: sqlite3.Connection, rows: Iterable[int]) -> dict[int, int]:
    """The ids the scheduler knows of the own-id rows among ``rows``; any
    other row number is the job's id."""
    numbers = list({r for r in rows if r > 0})
    if not numbers or not has_table(conn):
        return {}
    return _pairs(conn, "SELECT job, own_key FROM own_ids WHERE job IN ({})", numbers)


def row_of(conn: sqlite3.Connection, job_id: int) -> int:
    """The row number of the job the scheduler knows as ``job_id``."""
    return rows_of(conn, (job_id,)).get(job_id, job_id)


def id_of(conn: sqlite3.Connection, row: int) -> int:
    """The id the scheduler knows the job in row ``row`` by."""
    return ids_of(conn, (row,)).get(row, row)


def take(conn: sqlite3.Connection, keys: list[int]) -> dict[int, int]:
    """Number the own-id keys among ``keys`` that no job holds: key -> its
    row's new number (the first of a key named twice). The UNIQUE key
    decides (``INSERT OR IGNORE``, under the write lock BEGIN IMMEDIATE
    took, so no other member adds a key meanwhile); the numbers are read
    back as one rowid range, where a look-up of each key first cost a
    random probe per key. A held key's number goes unused (a gap, as a
    reserved block's unused ids). A file of the previous code may hold rows
    keyed by the hash itself: those keys are held too."""
    wanted = list(dict.fromkeys(keys))
    # A rowid range: one seek, so a file without such rows pays no look-up.
    if conn.execute("SELECT 1 FROM jobs WHERE id < 0 LIMIT 1").fetchone() is not None:
        old = _pairs(conn, "SELECT id, id FROM jobs WHERE id IN ({})", wanted)
        wanted = [k for k in wanted if k not in old]
    if not wanted:
        return {}
    first = next_numbers(conn, len(wanted))
    conn.execute(TABLE)
    before = conn.total_changes
    try:
        # One statement over a JSON array: half the time of an executemany.
        conn.execute(
            "INSERT OR IGNORE INTO own_ids (job, own_key) SELECT ? + key, value FROM json_each(?)",
            (first, json.dumps(wanted)),
        )
    except sqlite3.OperationalError:  # a SQLite built without JSON
        conn.executemany(
            "INSERT OR IGNORE INTO own_ids (job, own_key) VALUES (?, ?)",
            enumerate(wanted, start=first),
        )
    if conn.total_changes - before == len(wanted):
        return dict(zip(wanted, range(first, first + len(wanted)), strict=True))  # none held
    return dict(
        conn.execute(
            "SELECT own_key, job FROM own_ids WHERE job >= ? AND job < ?",
            (first, first + len(wanted)),
        )
    )


def next_numbers(conn: sqlite3.Connection, count: int) -> int:
    """The first of ``count`` job numbers taken from the file's sequence,
    the one plain jobs are numbered from (``reserve_ids``), past any row's
    number too (a job added with a number never reserved: one seek)."""
    (last,) = conn.execute("SELECT max(id) FROM jobs").fetchone()
    (first,) = conn.execute(
        "UPDATE jobsched_meta SET value = max(value, ?) + ? WHERE key = 'next_id' "
        "RETURNING value - ?",
        ((last or 0) + 1, count, count),
    ).fetchone()
    return int(first)


def forget(conn: sqlite3.Connection, rows: list[int]) -> None:
    """Drop the own ids of deleted rows (a prune): the id may be used again."""
    numbers = [r for r in rows if r > 0]
    if not numbers or not has_table(conn):
        return
    for start in range(0, len(numbers), CHUNK):
        part = numbers[start : start + CHUNK]
        conn.execute(f"DELETE FROM own_ids WHERE job IN ({', '.join('?' * len(part))})", part)
