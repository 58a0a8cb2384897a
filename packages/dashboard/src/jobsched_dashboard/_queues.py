"""Named queues on the pages: the job list's reads filtered by queue."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from starlette.exceptions import HTTPException

from jobsched import JobStore
from jobsched.store import JobPage


async def job_page(store: JobStore, args: Mapping[str, Any], **page: Any) -> JobPage:
    """``store.job_page(**args, **page)``; a store written before queues,
    whose ``job_page`` takes no ``queue``, is a 501 saying so (as the CLI's
    ``jobs --queue`` says it) rather than a 500."""
    try:
        return await store.job_page(**args, **page)
    except TypeError as exc:
        if "queue" not in args:
            raise
        raise HTTPException(501, f"this store cannot filter jobs by queue ({exc})") from None
