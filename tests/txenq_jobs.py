"""Jobs and apps for the tests of enqueueing in your own transaction
(tests/test_txenqueue*.py): a job that records what it ran with."""

from __future__ import annotations

import os
import threading
from typing import Any

import jobsched as js

#: What the jobs ran with, in order (any thread).
RAN: list[Any] = []
_lock = threading.Lock()


async def record(tag: str, *rest: Any, extra: Any = None, **more: Any) -> str:
    """Note the call; return what it was called with."""
    with _lock:
        RAN.append((tag, rest, extra, more))
    return f"{tag}:{list(rest)}:{extra}:{sorted(more.items())}"


def record_sync(tag: str) -> str:
    """A blocking job, for a worker's thread executor."""
    with _lock:
        RAN.append((tag, (), None, {}))
    return tag


def make_app(url: str, **settings: Any) -> tuple[js.App, js.JobFunction[..., str]]:
    """An app on ``url`` with :func:`record` registered as ``tx.record``."""
    from pg import SECRET

    if url.startswith("postgresql"):
        settings.setdefault("secret", SECRET)
    app = js.App(url, **settings)
    return app, app.job(name="tx.record")(record)


#: What ``jobsched worker --app txenq_jobs:worker_app`` runs: the same job,
#: on the store the test names in TXENQ_STORE.
worker_app = js.App(os.environ.get("TXENQ_STORE", "memory"))
worker_app.job(name="tx.record")(record)
