"""The jobsched dashboard: a live web page for a store, served by ``jobsched dashboard``.

- ``_app``: the Starlette app: its routes, error pages and the store's lifetime
  (``_lifetime``: opened when it exists, never created).
- ``_pages`` and ``_actions``: the route handlers, GET and POST (the token);
  every read goes through the :class:`jobsched.JobStore` interface, paged
  (``_limits``), a page's reads concurrently.
- ``_params``: a request's query, path and form, checked; ``_hosts``: the
  ``Host`` check (DNS rebinding).
- ``_render``: templates, their filters, the timeline's bars, security headers.
- ``_views``: what the page shows (counts, the throughput chart, the timeline
  and its lanes, the queue), pure functions of store rows and ``now``.
- ``_payload``: a job's arguments and result, read without unpickling.
- ``_serve``: uvicorn, bound to 127.0.0.1 unless told otherwise.
- ``_command``: ``jobsched dashboard`` (the ``jobsched.commands`` entry point).
- ``templates/``: Jinja2 with autoescaping; ``static/``: the stylesheet and
  the few lines of script that refresh the page.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._app import create_app as create_app
    from ._serve import serve as serve

__all__ = ["create_app", "serve"]


def __getattr__(name: str) -> Any:
    # Imported when first used: `jobsched --help` imports this package for the
    # command (_command), and must not load Starlette, Jinja2 and uvicorn.
    if name == "create_app":
        from ._app import create_app

        return create_app
    if name == "serve":
        from ._serve import serve

        return serve
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
