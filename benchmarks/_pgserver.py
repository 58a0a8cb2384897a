"""What W19-W20 need of the PostgreSQL server: autovacuum on, dead tuples, a held xmin.

Autovacuum: a table's ``autovacuum_enabled`` storage parameter cannot turn
it on where the server has ``autovacuum = off`` ("the autovacuum daemon does
not run at all (except to prevent transaction ID wraparound) if the
autovacuum parameter is false; setting individual tables' storage
parameters does not override that", PostgreSQL's CREATE TABLE page), and
``autovacuum`` is a server-wide setting (context ``sighup``: not per
database, role or session). So where the server has it off,
:func:`autovacuum_on` switches it on with ``ALTER SYSTEM`` and
``pg_reload_conf()`` for the run and restores the server's own setting
after, saying so on standard error. Every other autovacuum setting stays the
server's (PostgreSQL's defaults on a stock server: naptime 1 min, scale
factor 0.2).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from benchmarks._postgres import SERVER

#: Seconds between samples of the tables' dead tuples.
SAMPLE = 1.0


def _admin() -> Any:
    import psycopg

    return psycopg.connect(f"{SERVER}/postgres", autocommit=True)


def _setting(conn: Any) -> str:
    row = conn.execute("SELECT setting FROM pg_settings WHERE name = 'autovacuum'").fetchone()
    return str(row[0])


@contextmanager
def autovacuum_on() -> Iterator[str]:
    """Autovacuum running on the server for the block; how it was arranged."""
    with _admin() as admin:
        row = admin.execute(
            "SELECT setting, sourcefile FROM pg_settings WHERE name = 'autovacuum'"
        ).fetchone()
    setting, sourcefile = row
    if setting == "on":
        yield "autovacuum: on (the server's own setting)"
        return
    by_alter_system = str(sourcefile or "").endswith("postgresql.auto.conf")
    with _admin() as admin:
        admin.execute("ALTER SYSTEM SET autovacuum = on")
        admin.execute("SELECT pg_reload_conf()")
    note = (
        "autovacuum: the server has it off; switched on server-wide for the run "
        "(ALTER SYSTEM SET autovacuum = on; SELECT pg_reload_conf()), restored after"
    )
    print(note, file=sys.stderr, flush=True)
    try:
        _await_setting("on")
        yield note
    finally:
        with _admin() as admin:
            if by_alter_system:
                admin.execute(f"ALTER SYSTEM SET autovacuum = {setting}")
            else:
                admin.execute("ALTER SYSTEM RESET autovacuum")
            admin.execute("SELECT pg_reload_conf()")
        _await_setting(setting)


def _await_setting(value: str) -> None:
    """Until a new session sees ``autovacuum = value`` (the reload is asynchronous)."""
    deadline = time.monotonic() + 30
    while True:
        with _admin() as admin:
            if _setting(admin) == value:
                return
        if time.monotonic() > deadline:
            raise RuntimeError(f"the server did not reload autovacuum = {value} within 30 s")
        time.sleep(0.1)


def table_stats(conn: Any) -> dict[str, int]:
    """Summed over the database's tables: dead tuples now, and the row
    versions made dead so far (updates and deletes), and HOT updates."""
    row = conn.execute(
        "SELECT coalesce(sum(n_dead_tup), 0), coalesce(sum(n_tup_upd + n_tup_del), 0), "
        "coalesce(sum(n_tup_hot_upd), 0), coalesce(sum(autovacuum_count), 0) "
        "FROM pg_stat_user_tables"
    ).fetchone()
    return {"dead": int(row[0]), "killed": int(row[1]), "hot": int(row[2]), "vacuums": int(row[3])}


class DeadSampler:
    """The database's dead tuples every :data:`SAMPLE` seconds, by the phase
    the caller says it is in (a thread and a connection of its own)."""

    def __init__(self, url: str) -> None:
        import psycopg

        self.phase = "start"
        self.samples: dict[str, list[int]] = {}
        self._conn = psycopg.connect(url, autocommit=True)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(SAMPLE):
            dead = table_stats(self._conn)["dead"]
            self.samples.setdefault(self.phase, []).append(dead)

    def stats(self) -> dict[str, int]:
        return table_stats(self._conn)

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self._conn.close()


@contextmanager
def held_xid(url: str) -> Iterator[int]:
    """An idle-in-transaction session holding an xid (so the xmin horizon
    stays put: no dead tuple after it can be removed) for the block."""
    import psycopg

    conn = psycopg.connect(url)
    try:
        row = conn.execute("SELECT txid_current()").fetchone()
        assert row is not None
        yield int(row[0])
    finally:
        conn.rollback()
        conn.close()
