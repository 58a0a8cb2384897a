"""Registered jobs on the pages: their JSON arguments and result as JSON, the
job list's ``?arg=KEY=VALUE`` filter, and the overview's count of those
waiting for a member that knows their name (as ``jobsched stats`` says it).

A registered job's row holds its arguments as JSON (``StoredJob.args``) and
its result as ``b"J"`` and JSON: shown as they are stored, tags and all
(``{"$dt": ...}``), nothing decoded and nothing unpickled.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.exceptions import HTTPException

from jobsched.store import StoredJob, check_arg_filters

#: A registered job's result: this byte, then its JSON.
JSON_RESULT = b"J"


def pretty(text: str | bytes) -> str:
    """Stored JSON, indented; text that is not JSON as it is."""
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        return text if isinstance(text, str) else text.decode("utf-8", "replace")


def arguments(job: StoredJob) -> str | None:
    """A registered job's arguments, indented JSON; None for a pickled job."""
    return None if job.args is None else pretty(job.args)


def json_result(blob: bytes | None) -> str | None:
    """A registered job's result, indented JSON; None for any other result."""
    if blob is None or not blob.startswith(JSON_RESULT):
        return None
    return pretty(blob[1:])


def arg_filters(texts: list[str]) -> dict[str, str]:
    """The job list's ``?arg=KEY=VALUE`` parameters (blank ones skipped), as
    ``job_page``'s ``args``; a malformed one is a 400 saying how to write it."""
    filters: dict[str, str] = {}
    for text in texts:
        if not text.strip():
            continue
        key, sep, value = text.partition("=")
        key = key.strip()
        if not sep or not key:
            raise HTTPException(
                400,
                f"arg must be KEY=VALUE with KEY a parameter's name, got {text!r}; "
                "e.g. /jobs?arg=to=user5@example.com",
            )
        filters[key] = value
    try:
        return check_arg_filters(filters)
    except (TypeError, ValueError) as exc:
        raise HTTPException(400, f"{exc}; e.g. /jobs?arg=to=user5@example.com") from None


def describe(waiting: dict[str, int]) -> list[tuple[str, int, str]]:
    """(name, how many, the job list of its waiting jobs) for the overview."""
    from urllib.parse import urlencode

    return [
        (
            name,
            n,
            "/jobs?" + urlencode([("name", name), ("status", "pending"), ("status", "retry_wait")]),
        )
        for name, n in waiting.items()
    ]


def context(job: StoredJob) -> dict[str, Any]:
    """What the job page adds for a registered job (nothing for a pickled one)."""
    return {"arguments": arguments(job), "json_result": json_result(job.result)}
