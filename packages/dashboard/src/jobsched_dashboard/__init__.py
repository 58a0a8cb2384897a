"""The jobsched dashboard: a live web page for a store, served by ``jobsched dashboard``.

- ``_app``: the Starlette app (routes, the store's lifetime, the action token);
  every read goes through the :class:`jobsched.JobStore` interface, paged.
- ``_views``: what the page shows (counts, the throughput chart, the timeline
  and its lanes, the queue), pure functions of store rows and ``now``.
- ``_serve``: uvicorn, bound to 127.0.0.1 unless told otherwise.
- ``templates/``: Jinja2 with autoescaping; ``static/``: the stylesheet and
  the few lines of script that refresh the page.
"""

from ._app import create_app as create_app
from ._serve import serve as serve

__all__ = ["create_app", "serve"]
