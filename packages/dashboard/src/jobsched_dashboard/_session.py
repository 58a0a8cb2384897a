"""The action token, remembered for the browser's session after one action.

Typing the token for every cancel was the friction; keeping the token itself
in the browser would be the risk. After an action whose form carried the
right token, the answer sets a cookie holding an HMAC of the token under a
key made when the dashboard started: not the token, worthless to another
dashboard process and after a restart. The cookie is ``HttpOnly`` (no
script reads it), ``SameSite=Strict`` (a page on another site cannot make
the browser send it with a forged POST), ``Secure`` when the page came over
HTTPS, and has no expiry (it ends with the browser's session). An
``Authorization: Bearer`` header is never remembered: a script sends it
every time.

``SameSite`` is per *site*, and another port or a sibling subdomain is the
same site: a page on ``localhost:3000`` could post a form to the dashboard
on ``localhost:8080`` and the browser would send the cookie. So an action
the cookie alone vouches for must also show it came from the dashboard's
own pages: ``Sec-Fetch-Site: same-origin``, or an ``Origin`` naming the
dashboard's own host. Every current browser sends one of them with a POST;
a request with neither must carry the token.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import Response

#: The cookie's name.
COOKIE = "jobsched_session"


class Session:
    """Makes and checks the remembered-token cookie of one dashboard process."""

    def __init__(self, token: str) -> None:
        key = secrets.token_bytes(32)
        self._value = hmac.new(key, token.encode(), hashlib.sha256).hexdigest()

    def valid(self, request: Request) -> bool:
        """The request carries this process's cookie for the token."""
        given = request.cookies.get(COOKIE)
        return given is not None and hmac.compare_digest(given.encode(), self._value.encode())

    def vouches_for(self, request: Request) -> bool:
        """The cookie is this process's and the request came from the
        dashboard's own pages (see the module's docstring)."""
        return self.valid(request) and same_origin(request)

    def remember(self, request: Request, response: Response) -> None:
        """Set the cookie on ``response`` (an action that succeeded with the form's token)."""
        response.set_cookie(
            COOKIE,
            self._value,
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
            path="/",
        )


def same_origin(request: Request) -> bool:
    """The browser says the request came from a page of this origin."""
    fetched_from = request.headers.get("sec-fetch-site")
    if fetched_from is not None:
        return fetched_from == "same-origin"
    origin = request.headers.get("origin")
    if origin is None or origin == "null":
        return False
    return urlsplit(origin).netloc.lower() == request.headers.get("host", "").lower()
