"""Reaching a PostgreSQL server: URL checks, keepalives, every connection's
timeouts, connecting (what a failure means is in ``_errors``)."""

from __future__ import annotations

import re
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from jobsched import StoreUnavailableError
from jobsched.store import mask_password, passwords_in

#: Seconds to wait for the server when connecting.
CONNECT_TIMEOUT = 10

#: Seconds any statement of the store (and so of the CLI's commands) waits
#: for a lock another session holds before it fails, rather than hang for
#: as long as that session keeps it (an operator's open ``SELECT ... FOR
#: UPDATE``). The claims and heartbeats skip locked rows and never wait; the
#: statements that do are the CLI's cancel and retry and a cascade's
#: dependents. Well under the default lease (30 s).
LOCK_TIMEOUT = 5.0
#: Seconds any statement of the store may run. The slowest in the benchmarks
#: take tens of milliseconds; one that runs this long is stuck, not busy.
STATEMENT_TIMEOUT = 60.0
#: TCP keepalives, so that a connection whose packets vanish (a network
#: partition, a host gone) fails within about a minute, not the kernel's two
#: hours. Keys of libpq's connection string (a URL's own values win).
KEEPALIVES = {
    "keepalives": 1,
    "keepalives_idle": 15,
    "keepalives_interval": 5,
    "keepalives_count": 4,
    "tcp_user_timeout": 60_000,
}


def conninfo_from_url(url: str) -> str:
    """The libpq connection string a ``postgresql://`` URL stands for.

    ``postgres://`` and ``postgresql+psycopg://`` (SQLAlchemy's spelling) name
    the same thing.

    :raises ValueError: the URL is not one libpq accepts.
    """
    masked = mask_password(url)
    match = re.match(r"^(postgresql|postgres)(\+[a-z0-9]+)?://", url)
    if match is None:
        raise ValueError(
            f"malformed PostgreSQL store URL {masked!r}: use "
            "postgresql://user:password@host:5432/database"
        )
    conninfo = "postgresql://" + url[match.end() :]
    try:
        params = conninfo_to_dict(conninfo)
    except psycopg.Error as exc:
        raise ValueError(
            f"malformed PostgreSQL store URL {masked!r}: {masked_error(exc, url)}; use "
            "postgresql://user:password@host:5432/database"
        ) from None
    port = params.get("port")
    if port is not None and not all(p.isdigit() for p in str(port).split(",")):
        raise ValueError(
            f"malformed PostgreSQL store URL {masked!r}: the port {port!r} is not a number"
        )
    # Left out, libpq falls back to its defaults (PGHOST, a local socket, a
    # database named after the user): a store created somewhere unintended.
    if not (params.get("host") or params.get("hostaddr")):
        raise ValueError(
            f"the PostgreSQL store URL {masked!r} names no host: use "
            "postgresql://user@host:5432/database (or ?host=/path/to/socket/dir)"
        )
    if not params.get("dbname"):
        raise ValueError(
            f"the PostgreSQL store URL {masked!r} names no database: use "
            "postgresql://user@host:5432/database"
        )
    return conninfo


def masked_error(exc: BaseException, url: str) -> str:
    """An error's message with the URL's password removed, wherever it appears."""
    text = mask_password(" ".join(str(exc).split()))
    for password in passwords_in(url):
        text = text.replace(password, "***")
    return text


def with_keepalives(conninfo: str) -> str:
    """``conninfo`` with :data:`KEEPALIVES` where it does not say otherwise."""
    params = conninfo_to_dict(conninfo)
    extra = {k: v for k, v in KEEPALIVES.items() if k not in params}
    return make_conninfo(conninfo, **extra)


#: The oldest PostgreSQL the store runs on (``server_version_num``): the
#: claims' and looks' snapshots (``xid8``, ``pg_current_xact_id()``,
#: ``pg_current_snapshot()``, see _frontier) are PostgreSQL 13's.
MIN_SERVER_VERSION = 130000


def server_version(conn: psycopg.Connection[Any]) -> int:
    """The server's ``server_version_num`` (120017 for 12.17)."""
    return conn.info.server_version


def require_version(conn: psycopg.Connection[Any], url: str) -> None:
    """Raise unless the server is at least :data:`MIN_SERVER_VERSION`: said
    at start, not as the schema's first statement that needs it failing.

    :raises StoreUnavailableError: the server is older; names both versions.
    """
    version = server_version(conn)
    if version < MIN_SERVER_VERSION:
        raise StoreUnavailableError(
            f"the PostgreSQL server of {mask_password(url)!r} is too old (server_version_num "
            f"{version}); jobsched-store-postgres needs PostgreSQL "
            "13 or later (its xid8 type and snapshot functions): upgrade the server"
        )


def configure(conn: psycopg.Connection[Any]) -> None:
    """Every connection's timeouts (:data:`LOCK_TIMEOUT`, :data:`STATEMENT_TIMEOUT`),
    and no parallel plans.

    Every statement of the store reads an index for a bounded number of
    rows; at a million rows the planner still chose parallel workers for
    the operator's reads (the recent attempts: 15 ms of it starting workers
    for 2 ms of work each, under load).
    """
    conn.execute(
        "SELECT set_config('lock_timeout', %s, false), set_config('statement_timeout', %s, false), "
        "set_config('max_parallel_workers_per_gather', '0', false)",
        (f"{round(LOCK_TIMEOUT * 1000)}ms", f"{round(STATEMENT_TIMEOUT * 1000)}ms"),
    )


def connect(conninfo: str, url: str, **kwargs: Any) -> psycopg.Connection[Any]:
    """A connection in autocommit mode, its timeouts set (:func:`configure`).

    :raises StoreUnavailableError: the server cannot be reached or refuses us;
        the message names the URL with its password masked.
    """
    try:
        conn = psycopg.connect(conninfo, autocommit=True, connect_timeout=CONNECT_TIMEOUT, **kwargs)
        try:
            configure(conn)
        except BaseException:
            conn.close()
            raise
        return conn
    except psycopg.Error as exc:
        raise StoreUnavailableError(
            f"cannot connect to the PostgreSQL store {mask_password(url)!r}: "
            f"{masked_error(exc, url)}; check that the server runs, and the host, port, user, "
            "password and database in the URL"
        ) from None
