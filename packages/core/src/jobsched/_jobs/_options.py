"""A job's options slot and the checks of its labels.

A job's deadline, tenant, rate key, headers, own id and named queue are
rarely set, and read only by EDF, fair share, rate limits, integrations and
queue filters: they share one slot (``Job._options``), 24 bytes per job
less. It holds the deadline alone (usually None), or (deadline, tenant,
rate_key, headers[, own_id[, queue]]): a payload stored before own ids or
queues holds a shorter tuple, read as none. And ``at=``, checked here for
every door that takes it (submit, a joined enqueue, a workflow's add).
"""

from __future__ import annotations

import re
import time
from typing import Any

from ._text import check_text

#: The queue of a job that names none (``jobsched.store.DEFAULT_QUEUE`` too).
DEFAULT_QUEUE = "default"

# Labels repeat across jobs (a tenant has many), so jobs with the same labels
# and no deadline share one options tuple; bounded, as labels need not repeat.
_shared_options: dict[tuple[Any, ...], tuple[Any, ...]] = {}
_SHARED_OPTIONS_MAX = 1024


def pack_options(
    deadline: Any,
    tenant: str | None,
    rate_key: str | None,
    headers: dict[str, str] | None = None,
    own_id: str | None = None,
    queue: str | None = None,
) -> Any:
    """What ``Job._options`` holds for these (see ``Job.deadline``);
    ``queue`` is None for the default queue."""
    if own_id is not None:  # a job's own: never shared
        if queue is None:
            return (deadline, tenant, rate_key, headers, own_id)
        return (deadline, tenant, rate_key, headers, own_id, queue)
    if (
        tenant is None
        and rate_key is None
        and headers is None
        and queue is None
        and type(deadline) is not tuple
    ):
        return deadline
    options: tuple[Any, ...] = (
        (deadline, tenant, rate_key, headers)
        if queue is None
        else (deadline, tenant, rate_key, headers, None, queue)
    )
    # Only exact strs: a str subclass equal to a cached label is another value.
    # Headers are a job's own (a dict, unhashable): never shared.
    if (
        headers is not None
        or deadline is not None
        or (tenant is not None and type(tenant) is not str)
        or (rate_key is not None and type(rate_key) is not str)
    ):
        return options
    shared = _shared_options.get(options)
    if shared is not None:
        return shared
    if len(_shared_options) < _SHARED_OPTIONS_MAX:
        _shared_options[options] = options
    return options


#: What a queue's name may be (the contract's "Queues").
_QUEUE_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,64}")


def check_queue(queue: object) -> str:
    """``queue``, checked: 1-64 characters of ``A-Z a-z 0-9 _ . -`` (so never
    a character a store cannot keep, see ``_text``).

    :raises ValueError: it is not such a name (a non-str included: the
        contract has one error for any bad queue).
    """
    if type(queue) is not str or _QUEUE_NAME.fullmatch(queue) is None:
        raise ValueError(
            f"queue must be a name of 1-64 characters from A-Z a-z 0-9 _ . - "
            f"(e.g. 'emails'), got {queue!r}"
        )
    return queue


def check_label(name: str, value: object) -> None:
    """A job's ``tenant`` or ``rate_key`` (``name``), checked.

    :raises TypeError: it is not a str.
    :raises ValueError: it is blank, or holds a character no store can keep.
    """
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string or None, got {value!r}")
    if not value.strip():
        raise ValueError(
            f"{name} must be a non-empty name or None, got {value!r}; use None for "
            f"jobs without a {name}"
        )
    check_text(name, value)


def queue_name(queue: object) -> str | None:
    """``queue`` as the options slot keeps it: None for the default queue.

    :raises ValueError: as :func:`check_queue`.
    """
    return None if queue == DEFAULT_QUEUE and type(queue) is str else check_queue(queue)


def delay_until(at: object, delay: float) -> float:
    """The delay in seconds that ``at=`` (an aware datetime) stands for; 0 if it is past."""
    from datetime import datetime

    if not isinstance(at, datetime):
        raise TypeError(f"at must be an aware datetime.datetime, got {at!r}")
    if at.tzinfo is None or at.utcoffset() is None:
        raise ValueError(
            f"at must be an aware datetime, got the naive {at!r}: give it a timezone, "
            "e.g. datetime.now(timezone.utc) + timedelta(minutes=5)"
        )
    if delay != 0:
        raise ValueError(f"pass at= or delay=, not both (got at={at!r} and delay={delay!r})")
    # Both sides on the wall clock: a scheduler's own clock may be virtual.
    return max(0.0, at.timestamp() - time.time())
