"""The shop's jobs and their settings, declared once on a ``js.App``.

The web processes enqueue calls of these functions and ``jobsched worker
--app shopjobs:jobs`` runs them: both import this module, so they agree on
the store, the settings and the jobs' names. A registered job is stored as
its name (``shopjobs.send_welcome``) and its arguments as JSON, which the
CLI and the dashboard show as they are.
"""

from __future__ import annotations

import os
import time

import anyio

import jobsched as js

# The store from the environment, so each deploy (and each test) picks its own.
jobs = js.App(os.environ.get("JOBSCHED_STORE", "sqlite:///jobs.db"))


@jobs.job(queue="emails", retry=js.RetryPolicy(max_retries=5))
def send_welcome(email: str) -> str:
    """Blocking work (an SMTP call, say): runs on the thread executor, ``[thread]``."""
    if "@" not in email:
        # Fails at once: a retry would not make it an address.
        raise js.NonRetryableError(f"not an email address: {email!r}")
    time.sleep(0.01)
    return f"welcome sent to {email}"


@jobs.job
async def make_thumbnail(image: str) -> str:
    """Async work (an HTTP call, say): runs on the event loop, no extra needed."""
    await anyio.sleep(0.01)
    if not image.endswith(".png"):
        raise js.NonRetryableError(f"not a PNG: {image!r}")
    return f"thumbnail of {image}"
