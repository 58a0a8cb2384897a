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
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

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
