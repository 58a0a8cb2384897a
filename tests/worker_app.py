"""The app that tests/test_cli_worker.py's `jobsched worker --app worker_app:app` loads.

Its settings come from the environment the test gives the worker: the store
(WORKER_APP_STORE) and, for the override tests, a rate limit and a queue.

Until js.App is merged (issue 33, the app branch), a stand-in with the
interface the worker relies on (``settings()``, ``scheduler(**overrides)``,
``jobs``) takes its place; with js.App present the real one is used.
"""

from __future__ import annotations

import os
from typing import Any

import jobsched as js

if not hasattr(js, "App"):

    class _StandInApp:
        """``settings()`` and ``scheduler(**overrides)`` as the seam says."""

        def __init__(self, store: Any = "memory", **settings: Any) -> None:
            self._settings = {"store": store, **{k: v for k, v in settings.items() if v}}
            self.jobs: dict[str, Any] = {}

        def settings(self) -> dict[str, Any]:
            return dict(self._settings)

        def scheduler(self, **overrides: Any) -> js.JobScheduler:
            settings = {**self._settings, **overrides}
            options = {k: settings.pop(k) for k in ("lease", "secret") if k in settings}
            if options and isinstance(settings["store"], str):
                settings["store"] = js.open_store(settings["store"], **options)
            return js.JobScheduler(**settings)

    js.App = _StandInApp  # type: ignore[attr-defined]

app = js.App(  # type: ignore[attr-defined]
    store=os.environ.get("WORKER_APP_STORE", "memory"),
    rate_limits={"smtp": js.RateLimit(1, per=1.0)},
    queues=["emails"],
)
