"""Serving the dashboard with uvicorn (what ``jobsched dashboard`` runs)."""

from __future__ import annotations

import ipaddress
import logging
import socket
from collections.abc import Collection

import anyio

from jobsched import JobStore

from ._app import create_app
from ._hosts import ANY_IP
from ._lifetime import check_exists


def serve(
    store_url: str,
    host: str = "127.0.0.1",
    port: int = 8000,
    token: str | None = None,
    allowed_hosts: Collection[str] = (),
) -> None:
    """Serve the dashboard for ``store_url`` until interrupted (Ctrl-C, SIGTERM).

    Binds the loopback interface by default: anyone who can reach the page
    can read job names and errors. Cancel and retry need ``token``. It
    answers only to the names it was bound to (see :func:`served_hosts`)
    and ``allowed_hosts``, so no web page can read it by DNS rebinding.

    :raises ValueError: the URL is malformed, ``token`` is empty or ``port``
        is out of range.
    :raises StoreNotFoundError: no installed store serves the URL's scheme.
    :raises StoreUnavailableError: the store cannot be opened, or there is no
        jobsched store at the URL, which it never creates (checked before the
        server starts, so the error is one line, not a failed startup).
    """
    import uvicorn  # the server only when serving: create_app alone does not need it

    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ValueError(f"port must be an integer from 0 to 65535, got {port!r}")
    if isinstance(allowed_hosts, str):
        raise ValueError(f"allowed_hosts must be a collection of names, got {allowed_hosts!r}")
    app = create_app(store_url, token=token, allowed_hosts=served_hosts(host, allowed_hosts))
    anyio.run(_check_opens, app.state.store)
    if not is_loopback(host):
        logging.getLogger("jobsched.dashboard").warning(
            "the dashboard listens on %s: anyone who reaches it can read job names and errors",
            host,
        )
    uvicorn.run(app, host=host, port=port, log_level="info", server_header=False)


async def _check_opens(store: JobStore) -> None:
    await check_exists(store)  # never create one: a mistyped URL fails here
    await store.open()
    await store.close()


def served_hosts(host: str, allowed: Collection[str] = ()) -> set[str]:
    """The ``Host`` names a dashboard bound to ``host`` answers to.

    ``host`` itself and ``allowed``; on loopback, ``localhost`` and the
    loopback addresses too; on a wildcard (``0.0.0.0``, ``::``, ``""``), also
    this machine's name and any IP address (the machine's own: a rebinding
    page always sends its domain name, never an address).
    """
    names = {host.strip().lower().strip("[]"), *(a.strip().lower().strip("[]") for a in allowed)}
    wildcard = host in ("", "0.0.0.0", "::")
    if wildcard or is_loopback(host):
        names |= {"localhost", "127.0.0.1", "::1"}
    if wildcard:
        names |= {socket.gethostname().lower(), socket.getfqdn().lower(), ANY_IP}
    names.discard("")
    return names


def is_loopback(host: str) -> bool:
    """True when ``host`` is a loopback address or ``localhost``."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
