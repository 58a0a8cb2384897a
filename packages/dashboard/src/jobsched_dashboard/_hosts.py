"""The ``Host`` check: answer only the names the dashboard was bound to (DNS rebinding)."""

from __future__ import annotations

import ipaddress
from collections.abc import Collection

from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

#: In ``allowed_hosts``: also serve any IP address (a wildcard bind, whose
#: addresses are the machine's; DNS rebinding always sends a name).
ANY_IP = "*ip*"


def check_hosts(hosts: Collection[str] | None) -> frozenset[str] | None:
    """``allowed_hosts`` as :func:`host_of` gives names; None stays None (any host).

    :raises ValueError: ``hosts`` is a string, empty, or holds an empty name.
    """
    if hosts is None:
        return None
    if isinstance(hosts, str):
        raise ValueError(f"allowed_hosts must be a collection of names, got {hosts!r}")
    names = [str(h).strip().lower().strip("[]") for h in hosts]
    if not names or not all(names):
        raise ValueError(f"allowed_hosts must hold host names, got {list(hosts)!r}")
    return frozenset(names)


def host_of(header: str) -> str:
    """The name in a ``Host`` header: without its port, lower-case, an IPv6
    address without its brackets."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:].partition("]")[0]
    return header.rpartition(":")[0] if header.count(":") == 1 else header


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class HostCheck:
    """Answer only requests whose ``Host`` is one of ``hosts`` (400 otherwise)."""

    def __init__(self, app: ASGIApp, hosts: frozenset[str]) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            raw = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
            name = host_of(raw)
            if name not in self.hosts and not (ANY_IP in self.hosts and _is_ip(name)):
                served = ", ".join(sorted(h for h in self.hosts if h != ANY_IP))
                text = (
                    f"this dashboard does not serve the host {raw!r} (it serves {served}); "
                    "to serve that name, restart it with --allowed-host NAME\n"
                )
                response = Response(text, status_code=400, media_type="text/plain")
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)
