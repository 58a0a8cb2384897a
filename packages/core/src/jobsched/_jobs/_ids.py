"""Job ids: jobsched's own (``job-<n>``), ids of the caller's own, and the
numbers a store knows both by."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from typing import Any

from ._text import check_text

# One counter numbers both job ids and submit order (``seq``): a job whose id
# is first needed at submit gets one int for both, instead of an id string
# and an int. Ids are unique across schedulers; seq grows in submit order.
_numbers = itertools.count(1)
next_number = _numbers.__next__


def id_number(job_id: object) -> int:
    """The number inside a job id ``"job-<n>"``, or the number an id of the
    caller's own (``submit(job_id=...)``) is known by; 0 (no job's) for
    anything else."""
    if isinstance(job_id, str):
        if job_id.startswith("job-"):
            digits = job_id[4:]
            # Only the exact form job_id gives: int() would also take "+7", " 7",
            # "0_7" or other scripts' digits, which would alias another job's id.
            if 0 < len(digits) < 20 and digits.isascii() and digits.isdigit() and digits[0] != "0":
                return int(digits)
        elif 0 < len(job_id) <= MAX_OWN_ID:
            return own_number(job_id)
    return 0


#: The longest id of your own that submit(job_id=...) takes.
MAX_OWN_ID = 200


def check_own_id(job_id: object) -> str:
    """``job_id`` if it can be an id of the caller's own, else TypeError or ValueError."""
    if not isinstance(job_id, str):
        raise TypeError(f"job_id must be a str or None, got {job_id!r}")
    if not job_id:
        raise ValueError("job_id must not be empty: pass a non-empty str, or None to number it")
    if len(job_id) > MAX_OWN_ID:
        raise ValueError(
            f"job_id must be at most {MAX_OWN_ID} characters, got {len(job_id)}: "
            f"{job_id[:40]!r}...; hash a longer key (hashlib.sha256(key).hexdigest())"
        )
    if job_id.startswith("job-"):
        raise ValueError(
            f"job_id {job_id!r} starts with 'job-', which jobsched's own ids use; "
            "choose another prefix (e.g. 'order-42')"
        )
    return check_text("job_id", job_id)


# Cached: a submit asks twice (is it held here? then the job's number).
@functools.lru_cache(maxsize=1024)
def own_number(job_id: str) -> int:
    """The number a store knows an id of the caller's own by: negative (numbered
    ids are positive), from a hash of the id, so every member computes the
    same one and the store's unique key makes the id unique. Two ids held at
    once share a number with a chance of about n² / 2⁶⁴ among n of them."""
    global _blake2b
    if _blake2b is None:
        # Loaded at the first use, not at import (hashlib: see test_import_cost);
        # an import statement on each call was half of this function's time.
        from hashlib import blake2b

        _blake2b = blake2b
    digest = _blake2b(job_id.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return -(int.from_bytes(digest, "big") >> 1) - 1


_blake2b: Callable[..., Any] | None = None
