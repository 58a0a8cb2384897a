"""The arguments of a store's operator reads and retry, checked once for every store.

``JobStore.jobs``, ``attempts`` and ``retry`` are called by people (the CLI,
the dashboard, a script at a prompt), so a bad argument must fail the same
way whichever store is behind them, naming the argument and the fix. Left to
each store, a database answers with an error of its own, or with none at all
(``LIMIT 0`` is an empty page, which looks like an empty store). Every store
calls these before it does any work; a third-party store should too.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from .._enums import JobStatus
from .._jobs._text import check_text

#: The largest id or limit a store takes: its databases' integers are 64-bit
#: (a larger one failed deep in the driver, "bigint out of range").
LARGEST = 2**63 - 1


def check_jobs_args(
    *, statuses: Collection[JobStatus], limit: int, before: int | None
) -> tuple[tuple[JobStatus, ...], int, int | None]:
    """The arguments of :meth:`JobStore.jobs <jobsched.JobStore.jobs>`, checked;
    ``statuses`` as a tuple (read once, so an iterator passed anyway works).

    :raises TypeError: ``statuses`` is one status, is not a collection or
        holds anything but a :class:`JobStatus`; ``limit`` is not an int; ``before`` is
        neither a job id nor None.
    :raises ValueError: ``limit`` is below 1 or above 2**63 - 1; an id is out of that range.
    """
    checked = _check_statuses(statuses)
    limit = _check_limit(limit)
    if before is not None and not _is_int(before):
        raise TypeError(f"before must be a job id (an int) or None, got {before!r}")
    if before is not None:
        _check_id(before, "before")
    return checked, limit, before


def check_workflows_args(*, limit: int, before: int | None) -> tuple[int, int | None]:
    """The arguments of :meth:`JobStore.workflows <jobsched.store.JobStore.workflows>`, checked.

    :raises TypeError: ``limit`` is not an int; ``before`` is neither a
        workflow's number nor None.
    :raises ValueError: ``limit`` is below 1 or above 2**63 - 1; ``before`` is out of that range.
    """
    limit = _check_limit(limit)
    if before is not None and not _is_int(before):
        raise TypeError(f"before must be a workflow's number (an int) or None, got {before!r}")
    if before is not None:
        _check_id(before, "before")
    return limit, before


def check_page_args(
    *,
    statuses: Collection[JobStatus],
    name: str | None,
    executor: str | None,
    tenant: str | None,
    limit: int,
    before: int | None,
    scan: int,
    queue: str | None = None,
) -> tuple[tuple[JobStatus, ...], int, int | None]:
    """The arguments of :meth:`JobStore.job_page <jobsched.JobStore.job_page>`,
    checked; those it shares with ``jobs`` as :func:`check_jobs_args` returns them.

    :raises TypeError: a filter is neither a str nor None; ``scan`` is not an
        int; or as :func:`check_jobs_args`.
    :raises ValueError: ``scan`` is below 1 or above 2**63 - 1; a filter
        holds a character no store can keep (NUL, a lone surrogate); or as
        :func:`check_jobs_args`.
    """
    checked = check_jobs_args(statuses=statuses, limit=limit, before=before)
    filters = (("name", name), ("executor", executor), ("tenant", tenant), ("queue", queue))
    for what, value in filters:
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{what} must be a str (matched exactly) or None, got {value!r}")
        if value is not None:
            # No job holds such text (submit refuses it), and a database
            # would answer with an error of its own.
            check_text(what, value)
    if not _is_int(scan):
        raise TypeError(f"scan must be a positive int, got {scan!r}")
    if not 1 <= scan <= LARGEST:
        raise ValueError(f"scan must be from 1 to {LARGEST} (2**63 - 1), got {scan!r}")
    return checked


def check_arg_filters(args: Mapping[str, str] | None) -> dict[str, str]:
    """``job_page``'s ``args`` (parameter name -> the text its value must
    have), checked; an empty dict for None.

    :raises TypeError: ``args`` is not a mapping of str to str.
    :raises ValueError: a name is not a Python identifier (a parameter's
        name always is), or a value holds a character no store can keep.
    """
    if args is None:
        return {}
    if not isinstance(args, Mapping):
        raise TypeError(f"args must map parameter names to the text of their values, got {args!r}")
    checked: dict[str, str] = {}
    for key, value in args.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise TypeError(
                f"args must map parameter names (str) to the text of their values (str), "
                f"got {key!r}: {value!r}"
            )
        if not key.isidentifier():
            raise ValueError(
                f"args: {key!r} is not a parameter name; name one of the job "
                "function's parameters, e.g. to"
            )
        check_text(f"args[{key!r}]", value)
        checked[key] = value
    return checked


def arg_text(value: Any) -> str | None:
    """The text a filter compares an argument's JSON value with: a string as
    it is, anything else as its JSON (``5``, ``true``, ``[1, 2]``); None
    (matches nothing) for null. As PostgreSQL's ``->>`` gives it."""
    import json  # on first use: `import jobsched` does not pay for it

    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(", ", ": "), ensure_ascii=False)


def args_match(args: str | None, filters: Mapping[str, str]) -> bool:
    """Whether a row's ``args`` (JSON text, or None: a pickled job) has every
    parameter of ``filters`` with that text (:func:`arg_text`); a store
    that filters in Python calls it on each row."""
    if not filters:
        return True
    if args is None:
        return False
    import json

    try:
        bound = json.loads(args)
    except ValueError:
        return False
    if not isinstance(bound, dict):
        return False
    return all(key in bound and arg_text(bound[key]) == value for key, value in filters.items())


def check_attempts_args(
    *, since: float | None, job_id: int | None, limit: int
) -> tuple[float | None, int | None, int]:
    """The arguments of :meth:`JobStore.attempts <jobsched.JobStore.attempts>`, checked.

    :raises TypeError: ``limit`` is not an int; ``since`` is neither a number
        nor None; ``job_id`` is neither a job id nor None.
    :raises ValueError: ``limit`` is below 1 or above 2**63 - 1; an id is out of that range.
    """
    limit = _check_limit(limit)
    if since is not None and (isinstance(since, bool) or not isinstance(since, (int, float))):
        raise TypeError(f"since must be a wall-clock time in seconds or None, got {since!r}")
    if job_id is not None and not _is_int(job_id):
        raise TypeError(f"job_id must be a job id (an int) or None, got {job_id!r}")
    if job_id is not None:
        _check_id(job_id, "job_id")
    return since, job_id, limit


def check_retry_ids(ids: Collection[int]) -> list[int]:
    """The ids :meth:`JobStore.retry <jobsched.JobStore.retry>` takes, checked, as a
    list in the caller's order (read once, so an iterator passed anyway works).

    :raises TypeError: ``ids`` is one id, or not a collection; one is not an int.
    :raises ValueError: an id is below 0 or above 2**63 - 1.
    """
    # One id for a collection is the likely slip; a str would be read
    # letter by letter.
    if isinstance(ids, (int, str)):
        raise TypeError(
            f"retry takes a collection of job ids, got {ids!r}; wrap a single id in a list"
        )
    try:
        wanted = list(ids)
    except TypeError:
        raise TypeError(f"retry takes a collection of job ids, got {ids!r}") from None
    for job_id in wanted:
        if not _is_int(job_id):
            raise TypeError(f"retry takes job ids (ints), got {job_id!r}")
        _check_id(job_id, "a job id")
    return wanted


def check_limit(limit: int) -> int:
    """A read's ``limit`` (``JobStore.members``), checked.

    :raises TypeError: it is not an int.
    :raises ValueError: it is below 1 or above 2**63 - 1.
    """
    return _check_limit(limit)


def _is_int(value: object) -> bool:
    # True and False are ints to isinstance; as an id or a count they are a mistake.
    return isinstance(value, int) and not isinstance(value, bool)


def _check_limit(limit: int) -> int:
    if not _is_int(limit):
        raise TypeError(f"limit must be a positive int, got {limit!r}")
    if limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit!r}")
    if limit > LARGEST:
        raise ValueError(f"limit must be at most {LARGEST} (2**63 - 1), got {limit!r}")
    return limit


def _check_id(job_id: int, what: str) -> None:
    # Negative numbers are the ids given at submit (job_id=...), hashed.
    if not -LARGEST <= job_id <= LARGEST:
        raise ValueError(
            f"{what} must be a job's number, from -{LARGEST} to {LARGEST}, got {job_id!r}"
        )


def _check_statuses(statuses: Collection[JobStatus]) -> tuple[JobStatus, ...]:
    # One status for a collection is the likely slip: a JobStatus is not
    # iterable, and a str would be read letter by letter.
    if isinstance(statuses, (str, JobStatus)):
        raise TypeError(
            f"statuses must be a collection of JobStatus, got {statuses!r}; "
            "wrap a single status in a tuple"
        )
    try:
        checked = tuple(statuses)
    except TypeError:
        raise TypeError(f"statuses must be a collection of JobStatus, got {statuses!r}") from None
    for status in checked:
        if not isinstance(status, JobStatus):
            raise TypeError(
                f"statuses must hold JobStatus members, got {status!r}; "
                f"use e.g. JobStatus.FAILED (one of {', '.join(s.name for s in JobStatus)})"
            )
    return checked


def check_prune_args(
    keep: int | None, before: Mapping[JobStatus, float] | None
) -> dict[JobStatus, float]:
    """The arguments of :meth:`JobStore.prune <jobsched.JobStore.prune>`,
    checked; ``before`` as a dict (empty: no age rule).

    :raises TypeError: ``keep`` is neither an int nor None; a key of
        ``before`` is not a :class:`JobStatus`, or its cutoff not a number.
    :raises ValueError: ``keep`` is below 0; a status in ``before`` is not
        terminal (a prune never deletes an unfinished job).
    """
    if keep is not None and not _is_int(keep):
        raise TypeError(f"keep must be an int or None (no count bound), got {keep!r}")
    if keep is not None and keep < 0:
        raise ValueError(f"keep must be >= 0 (the finished jobs kept), got {keep!r}")
    cutoffs: dict[JobStatus, float] = {}
    for status, cutoff in (before or {}).items():
        if not isinstance(status, JobStatus):
            raise TypeError(f"before's keys must be JobStatus members, got {status!r}")
        if not status.is_terminal:
            raise ValueError(
                f"before names {status.value}, which is not terminal: a prune deletes "
                "only finished jobs (completed, failed, timed_out, cancelled)"
            )
        if isinstance(cutoff, bool) or not isinstance(cutoff, (int, float)):
            raise TypeError(f"before[{status.value}] must be a time (a float), got {cutoff!r}")
        cutoffs[status] = float(cutoff)
    return cutoffs
