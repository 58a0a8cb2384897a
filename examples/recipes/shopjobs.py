"""The shop's jobs, in a module of their own: every process imports them by name.

A stored job is kept by reference (module and function name), so the web
process that enqueues it and the worker that runs it must both be able to
import this module (``jobsched worker --import shopjobs``).
"""

from __future__ import annotations

import time

import anyio

import jobsched as js


def send_welcome(email: str) -> str:
    """Blocking work (an SMTP call, say): runs on the thread executor, ``[thread]``."""
    if "@" not in email:
        # Fails at once: a retry would not make it an address.
        raise js.NonRetryableError(f"not an email address: {email!r}")
    time.sleep(0.01)
    return f"welcome sent to {email}"


async def make_thumbnail(image: str) -> str:
    """Async work (an HTTP call, say): runs on the event loop, no extra needed."""
    await anyio.sleep(0.01)
    if not image.endswith(".png"):
        raise js.NonRetryableError(f"not a PNG: {image!r}")
    return f"thumbnail of {image}"
