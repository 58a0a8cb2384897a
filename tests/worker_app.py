"""The app that tests/test_cli_worker.py's `jobsched worker --app worker_app:app` loads.

Its settings come from the environment the test gives the worker: the store
(WORKER_APP_STORE) and, for the override tests, a rate limit and a queue.
"""

from __future__ import annotations

import os

import jobsched as js

app = js.App(
    store=os.environ.get("WORKER_APP_STORE", "memory"),
    rate_limits={"smtp": js.RateLimit(1, per=1.0)},
    queues=["emails"],
)

#: An app whose workers serve tenants by turns, a = 3 turns to b's 1.
fair = js.App(
    store=os.environ.get("WORKER_APP_STORE", "memory"),
    strategy=js.FairShareStrategy(weights={"a": 3}),
)
